"""Pareto dominance on observed trials: fronts, ranks and the hypervolume reference point.

Everything here works in the minimisation convention (a row is a point, a column an objective,
smaller is better); :func:`objective_matrix` is where a table and its objectives' directions
turn into that convention, so directions flip a sign in exactly one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from boanon.errors import ConfigError
from boanon.multiobjective.feasibility import finite_number
from boanon.objectives import Objective
from boanon.table import column


def objective_matrix(table: pd.DataFrame, objectives: Sequence[Objective]) -> np.ndarray:
    """The table's objective values as an (n_trials, n_objectives) matrix to be minimised.

    A trial missing an objective (a failed run) holds NaN in that row.
    """
    cols = []
    for o in objectives:
        col = column("objective", o.name)
        if col not in table.columns:
            raise KeyError(f"the table has no column {col!r} (objectives: {[ob.name for ob in objectives]})")
        cols.append(o.to_minimize(pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)))
    return np.column_stack(cols) if cols else np.empty((len(table), 0))


def dominates(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether ``a`` Pareto-dominates ``b`` (no worse everywhere, better somewhere); broadcasts."""
    return np.all(a <= b, axis=-1) & np.any(a < b, axis=-1)


def pareto_mask(points: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Which rows of ``points`` (minimised) are non-dominated among the valid, finite rows.

    Rows with a NaN, or with ``valid`` False (e.g. infeasible trials), are never on the front
    and never dominate anything. Equal points do not dominate each other: both stay.
    """
    points = np.asarray(points, dtype=float)
    if points.ndim != 2:
        raise ValueError(f"expected an (n_points, n_objectives) matrix, got shape {points.shape}")
    ok = np.all(np.isfinite(points), axis=1)
    if valid is not None:
        ok &= np.asarray(valid, dtype=bool)
    mask = np.zeros(len(points), dtype=bool)
    idx = np.flatnonzero(ok)
    if idx.size:
        cand = points[idx]
        dominated = dominates(cand[:, None, :], cand[None, :, :]).any(axis=0)
        mask[idx[~dominated]] = True
    return mask


def nondominated_ranks(points: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Non-dominated sorting: 0 for the Pareto front, 1 for the front once it is removed, ...

    Invalid rows (NaN, or ``valid`` False) get rank -1.
    """
    points = np.asarray(points, dtype=float)
    remaining = np.all(np.isfinite(points), axis=1)
    if valid is not None:
        remaining &= np.asarray(valid, dtype=bool)
    ranks = np.full(len(points), -1, dtype=int)
    rank = 0
    while remaining.any():
        front = pareto_mask(points, remaining)
        ranks[front] = rank
        remaining &= ~front
        rank += 1
    return ranks


def pareto_front(points: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """The non-dominated rows themselves, without duplicates, sorted by the first objective."""
    front = np.unique(np.asarray(points, dtype=float)[pareto_mask(points, valid)], axis=0)
    return front[np.lexsort(front.T[::-1])] if len(front) else front


def infer_reference_point(points: np.ndarray, valid: np.ndarray | None = None,
                          margin: float = 0.1) -> np.ndarray:
    """A hypervolume reference point (minimised) just beyond the front's worst values.

    It is the nadir of the Pareto front pushed out by ``margin`` times the front's range in each
    objective, so that the extreme points of the front still add volume. Where the front has no
    spread (one point) the margin is taken relative to the value's magnitude, or 1.
    """
    front = pareto_front(points, valid)
    if not len(front):
        raise ValueError("cannot infer a reference point: no valid (finite, feasible) point")
    nadir, ideal = front.max(axis=0), front.min(axis=0)
    spread = nadir - ideal
    spread = np.where(spread > 0, spread, np.where(np.abs(nadir) > 0, np.abs(nadir), 1.0))
    return nadir + margin * spread


def reference_point(objectives: Sequence[Objective], given: Sequence[float] | None = None,
                    points: np.ndarray | None = None, valid: np.ndarray | None = None,
                    margin: float = 0.1) -> np.ndarray:
    """The reference point in the minimisation convention: ``given`` (in the objectives' own
    units and directions) if there is one, else inferred from ``points``."""
    if given is not None:
        given = [float(v) for v in given]
        if len(given) != len(objectives):
            raise ValueError(f"the reference point has {len(given)} values for {len(objectives)} objectives")
        return np.array([o.to_minimize(v) for o, v in zip(objectives, given, strict=True)])
    if points is None:
        raise ValueError("either a reference point or observed points are needed")
    return infer_reference_point(points, valid, margin)


def parse_ref_point(spec: Sequence[float] | Mapping[str, float] | None, objectives: Sequence[Objective],
                    source: str = "config", field_name: str = "ref_point") -> list[float] | None:
    """A reference point from a config file: a list in objective order or ``{objective: value}``,
    in the objectives' own units (None: inferred from the trials)."""
    if spec is None:
        return None
    names = [o.name for o in objectives]
    fields = [f"{field_name}[{i}]" for i in range(len(names))]
    if isinstance(spec, Mapping):
        fields = [f"{field_name}.{n}" for n in names]
        if set(spec) != set(names):
            raise ConfigError(source, field_name, f"needs exactly one value per objective {names}, "
                              f"got {sorted(spec)}")
        spec = [spec[n] for n in names]
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or len(spec) != len(names):
        raise ConfigError(source, field_name, f"expected {len(names)} numbers (one per objective {names})")
    return [finite_number(v, source, f) for v, f in zip(spec, fields, strict=True)]
