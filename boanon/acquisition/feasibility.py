"""Feasibility of candidates under output constraints, from a model's joint Monte-Carlo samples.

The probability of feasibility is the fraction of joint samples in which all constraints hold at
once, so constraints on correlated outputs (sharing ancestors in the DAG) are not treated as
independent (:mod:`boanon.multiobjective.feasibility` judges the trials that ran). While no
trial that ran is feasible, :class:`ProbabilityOfFeasibility` is the acquisition, so the search
first finds the feasible region.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from boanon.acquisition.base import AcquisitionFunction, Problem, register_acquisition
from boanon.multiobjective.feasibility import OutputConstraint


def feasible_samples(samples: Mapping[str, np.ndarray],
                     constraints: Sequence[OutputConstraint]) -> np.ndarray | None:
    """(n_samples, n_configs): all constraints hold in that joint sample; None without constraints."""
    if not constraints:
        return None
    missing = [c.name for c in constraints if c.name not in samples]
    if missing:
        raise KeyError(f"the model gave no samples for constrained output(s) {missing}; "
                       f"it sampled {sorted(samples)}")
    ok = np.ones(np.shape(samples[constraints[0].name]), dtype=bool)
    for c in constraints:
        ok &= c.holds(samples[c.name])
    return ok


def probability_of_feasibility(samples: Mapping[str, np.ndarray],
                               constraints: Sequence[OutputConstraint]) -> np.ndarray:
    """Per configuration, the probability that all constraints hold jointly (1 without any)."""
    ok = feasible_samples(samples, constraints)
    if ok is None:
        n = np.shape(next(iter(samples.values())))[1] if samples else 0
        return np.ones(n)
    return ok.mean(axis=0)


@register_acquisition
class ProbabilityOfFeasibility(AcquisitionFunction):
    """Under output constraints, before any trial is feasible: there is no front to improve yet."""

    name = "probability_of_feasibility"

    @classmethod
    def applies(cls, problem: Problem) -> bool:
        return bool(problem.constraints) and problem.n_feasible == 0

    def score(self, samples: Mapping[str, np.ndarray]) -> np.ndarray:
        return probability_of_feasibility(samples, self.problem.constraints)

    def describe(self) -> dict[str, Any]:
        return {"n_feasible_trials": self.problem.n_feasible, "kind": self.name}
