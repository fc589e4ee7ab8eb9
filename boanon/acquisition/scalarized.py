"""The expected improvement of a scalarisation of several objectives (ParEGO's acquisition).

The objectives are normalised by the observed feasible front's ideal and nadir points and
folded by the :class:`~boanon.multiobjective.Scalarization`; the incumbent is the best folded
value among the feasible trials. Cheaper than EHVI in many objectives, and a weighting steers the
search to one part of the front.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from boanon.acquisition.base import AcquisitionFunction, Problem, register_acquisition, stack_objectives
from boanon.acquisition.ei import expected_improvement
from boanon.acquisition.feasibility import feasible_samples
from boanon.failures import NotFoldable
from boanon.multiobjective.pareto import pareto_mask
from boanon.table import TRIAL

if TYPE_CHECKING:
    from boanon.models import Surrogate


@register_acquisition
class ScalarizedExpectedImprovement(AcquisitionFunction):
    """EI of the problem's scalarisation, weighted by feasibility, once a trial is feasible."""

    name = "scalarized_ei"

    def __init__(self, model: Surrogate | None, problem: Problem, rng: np.random.Generator | None = None):
        p = problem
        if p.scalarization is None:
            raise ValueError("the scalarized_ei acquisition needs a scalarization")
        self.scalarization = p.scalarization
        _refuse_unfoldable(p)
        front = p.observed[pareto_mask(p.observed, p.feasible)]
        self.ideal, self.nadir = front.min(axis=0), front.max(axis=0)
        self.signs = [o.sign for o in p.objectives]
        folded = self.scalarization(p.observed[p.feasible], self.ideal, self.nadir, self.signs)
        self.best = float(np.min(folded))
        super().__init__(model, problem, rng)

    @classmethod
    def applies(cls, problem: Problem) -> bool:
        return problem.scalarization is not None and problem.n_feasible > 0

    def score(self, samples: Mapping[str, np.ndarray]) -> np.ndarray:
        y = self.scalarization.of_draws(stack_objectives(samples, self.problem.objectives), self.ideal,
                                        self.nadir, self.signs)
        return expected_improvement(y, self.best, feasible_samples(samples, self.problem.constraints))

    def describe(self) -> dict[str, Any]:
        return {"n_feasible_trials": self.problem.n_feasible,
                "kind": f"{self.name}:{self.scalarization.kind}", "best_scalarized": self.best,
                "weights": list(self.scalarization.weights or [])}


def _refuse_unfoldable(p: Problem) -> None:
    """Raise :class:`NotFoldable` for the first feasible trial whose measured objectives the
    problem's scalarisation cannot fold (:meth:`Scalarization.measured_problem`), naming it."""
    names = [o.name for o in p.objectives]
    for row in np.flatnonzero(p.feasible):
        problem = p.scalarization.measured_problem(dict(zip(names, p.observed[row].tolist(), strict=True)))
        if problem:
            trial = p.trials[TRIAL].iloc[row] if TRIAL in p.trials else f"row {row}"
            raise NotFoldable(f"trial {trial}: {problem}")
