"""One score for several objectives and output constraints, from a model's joint samples.

It turns a surrogate's joint samples (``{name: (n_samples, n_configs)}``, the Surrogate
protocol's output) and the finished trials into one score per candidate, to be maximised:
EHVI over the observed feasible front by default, or the expected improvement of a
scalarisation. While no observed trial is feasible, the score is the probability of
feasibility, so the search first finds the feasible region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.acquisition.ehvi import expected_hypervolume_improvement
from boanon.acquisition.ei import expected_improvement
from boanon.acquisition.feasibility import feasible_samples
from boanon.multiobjective.feasibility import OutputConstraint, observed_feasible
from boanon.multiobjective.pareto import objective_matrix, pareto_mask, reference_point
from boanon.multiobjective.scalarize import Scalarization
from boanon.objectives import Objective


def stack_objectives(samples: Mapping[str, np.ndarray], objectives: Sequence[Objective]) -> np.ndarray:
    """(n_samples, n_configs, n_objectives) in the minimisation convention."""
    missing = [o.name for o in objectives if o.name not in samples]
    if missing:
        raise KeyError(f"the model gave no samples for objective(s) {missing}")
    return np.stack([o.to_minimize(samples[o.name]) for o in objectives], axis=-1)


def score_candidates(samples: Mapping[str, np.ndarray], table: pd.DataFrame,
                     objectives: Sequence[Objective], constraints: Sequence[OutputConstraint] = (),
                     ref_point: Sequence[float] | None = None,
                     scalarization: Scalarization | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Scores (n_configs,) to maximise, and plain-data info on how they were computed.

    ``table`` holds the finished trials; ``ref_point`` is in the objectives' own units and
    directions (inferred from the feasible front when None). Configurations still running are
    already in the model that drew ``samples`` (:meth:`boanon.models.Surrogate.fantasize`).
    """
    y = stack_objectives(samples, objectives)
    observed = objective_matrix(table, objectives)
    ok = observed_feasible(table, constraints) & np.all(np.isfinite(observed), axis=1)
    feasible = feasible_samples(samples, constraints)
    pof = np.ones(y.shape[1]) if feasible is None else feasible.mean(axis=0)
    info: dict[str, Any] = {"n_feasible_trials": int(ok.sum())}
    if not ok.any():
        if not constraints:
            raise ValueError("no finished trial has all objectives measured: nothing to improve on")
        return pof, {**info, "kind": "probability_of_feasibility", "probability_of_feasibility": pof}
    if scalarization is not None:
        front = observed[pareto_mask(observed, ok)]
        ideal, nadir = front.min(axis=0), front.max(axis=0)
        signs = [o.sign for o in objectives]
        best = float(np.min(scalarization(observed[ok], ideal, nadir, signs)))
        values = expected_improvement(scalarization(y, ideal, nadir, signs), best, feasible)
        return values, {**info, "kind": f"scalarized_ei:{scalarization.kind}", "best_scalarized": best,
                        "weights": list(scalarization.weights or []), "probability_of_feasibility": pof}
    ref = reference_point(objectives, ref_point, observed, ok)
    front = observed[pareto_mask(observed, ok)]
    values = expected_hypervolume_improvement(y, front, ref, feasible)
    return values, {**info, "kind": "ehvi", "n_front": int(len(front)),
                    "ref_point": [float(o.from_minimize(r)) for o, r in zip(objectives, ref, strict=True)],
                    "probability_of_feasibility": pof}
