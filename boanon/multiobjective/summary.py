"""Pareto flags, front and hypervolume of a table of finished trials, for status, export and plots."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from boanon.multiobjective.feasibility import OutputConstraint, observed_feasible
from boanon.multiobjective.hypervolume import hypervolume
from boanon.multiobjective.pareto import objective_matrix, pareto_mask, reference_point
from boanon.objectives import Objective
from boanon.table import PARETO, TRIAL, column
from boanon.units import count


def pareto_flags(table: pd.DataFrame, objectives: Sequence[Objective],
                 constraints: Sequence[OutputConstraint] = ()) -> pd.Series:
    """Per trial (indexed like ``table``): on the Pareto front of the feasible finished trials."""
    points = objective_matrix(table, objectives)
    mask = pareto_mask(points, observed_feasible(table, constraints))
    return pd.Series(mask, index=table.index, name=PARETO)


def front_table(table: pd.DataFrame, objectives: Sequence[Objective],
                constraints: Sequence[OutputConstraint] = ()) -> pd.DataFrame:
    """The front's trials, sorted by the first objective (best first), all their columns kept."""
    front = table[pareto_flags(table, objectives, constraints).to_numpy()]
    first = column("objective", objectives[0].name)
    return front.sort_values(first, ascending=objectives[0].direction == "minimize", kind="stable")


def table_hypervolume(table: pd.DataFrame, objectives: Sequence[Objective],
                      constraints: Sequence[OutputConstraint] = (),
                      ref_point: Sequence[float] | None = None) -> float:
    """Hypervolume of the feasible trials (reference point given in the objectives' units, or
    inferred from this table's own front)."""
    points = objective_matrix(table, objectives)
    ok = observed_feasible(table, constraints)
    if not np.any(ok & np.all(np.isfinite(points), axis=1)):
        return 0.0
    return hypervolume(points[ok], reference_point(objectives, ref_point, points, ok))


def hypervolume_trace(table: pd.DataFrame, objectives: Sequence[Objective], ref_point: Sequence[float],
                      constraints: Sequence[OutputConstraint] = ()) -> np.ndarray:
    """Hypervolume after each trial, in table order (a fixed reference point keeps it comparable)."""
    return np.array([table_hypervolume(table.iloc[: i + 1], objectives, constraints, ref_point)
                     for i in range(len(table))])


def format_feasible(table: pd.DataFrame, constraints: Sequence[OutputConstraint]) -> str:
    """How many finished trials meet the output constraints, and which bounds, for a run with one
    objective: it has no Pareto front (its best feasible trial is printed as the best)."""
    n = int(observed_feasible(table, constraints).sum())
    bounds = ", ".join(c.describe() for c in constraints)
    return f"feasible:   {n} of {count(len(table), 'finished trial')} meet the output constraints ({bounds})"


def format_front(table: pd.DataFrame, objectives: Sequence[Objective],
                 constraints: Sequence[OutputConstraint] = (), max_rows: int = 20) -> str:
    """A short text listing of the front for ``boanon status``."""
    front = front_table(table, objectives, constraints)
    cols = [TRIAL] + [column("objective", o.name) for o in objectives]
    header = (f"Pareto front: {len(front)} of {count(len(table), 'trial')}"
              + (f" (feasible: {int(observed_feasible(table, constraints).sum())})" if constraints else ""))
    if front.empty:
        return header
    shown = front[cols].head(max_rows).rename(columns=lambda c: c.split(":", 1)[-1])
    more = f"\n... {len(front) - max_rows} more" if len(front) > max_rows else ""
    return f"{header}\n{shown.to_string(index=False)}{more}"
