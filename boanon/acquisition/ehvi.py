"""Expected hypervolume improvement estimated from a model's joint Monte-Carlo samples.

The samples come from one pass of the DAG per draw, so objectives (and constrained outputs)
that share ancestors stay correlated within a draw; averaging the exact hypervolume improvement
of each draw keeps that correlation, which a product of per-objective marginals would lose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from boanon.acquisition.base import AcquisitionFunction, Problem, register_acquisition, stack_objectives
from boanon.acquisition.feasibility import feasible_samples
from boanon.multiobjective.hypervolume import hypervolume_improvement, nondominated_boxes
from boanon.multiobjective.pareto import pareto_mask, reference_point

if TYPE_CHECKING:
    from boanon.models import Surrogate


def expected_hypervolume_improvement(samples: np.ndarray, front: np.ndarray, ref: np.ndarray,
                                     feasible: np.ndarray | None = None) -> np.ndarray:
    """EHVI per configuration, all in the minimisation convention.

    ``samples`` is (n_samples, n_configs, n_objectives); ``front`` the observed feasible points
    (m, n_objectives); ``ref`` the reference point. ``feasible`` (n_samples, n_configs) zeroes
    the improvement of draws that break an output constraint. Configurations still running are
    the model's concern (:meth:`boanon.models.Surrogate.fantasize`), not this function's.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 3:
        raise ValueError(f"expected samples (n_samples, n_configs, n_objectives), got {samples.shape}")
    ref = np.asarray(ref, dtype=float)
    front = np.asarray(front, dtype=float).reshape(-1, len(ref))
    if samples.shape[2] != len(ref):
        raise ValueError(f"samples have {samples.shape[2]} objectives, the reference point {len(ref)}")
    hvi = hypervolume_improvement(samples, nondominated_boxes(front, ref))
    if feasible is not None:
        hvi = hvi * np.asarray(feasible, dtype=bool)
    return hvi.mean(axis=0)


def unbeaten_ref_point(problem: Problem) -> str:
    """Why a given reference point no feasible trial beats in every objective is likely a
    mistake: only draws below it count, and where none is, every candidate scores 0 and the
    search is blind (the run went on unwarned). One text per point, so it is said once."""
    given = problem.ref_point or ()
    point = ", ".join(f"{o.name}={v:g}" for o, v in zip(problem.objectives, given, strict=True))
    return (f"ref_point ({point}) is beaten in every objective by no feasible trial: only model draws "
            "below it improve anything, and where none is every candidate's EHVI is 0 and the search "
            "is blind; set it worse than the values you would accept")


@register_acquisition
class ExpectedHypervolumeImprovement(AcquisitionFunction):
    """EHVI of the candidates over the observed feasible front, weighted by feasibility: any
    number of objectives, with or without output constraints, once a trial is feasible."""

    name = "ehvi"

    def __init__(self, model: Surrogate | None, problem: Problem, rng: np.random.Generator | None = None):
        p = problem
        self.ref = reference_point(p.objectives, p.ref_point, p.observed, p.feasible)
        self.front = p.observed[pareto_mask(p.observed, p.feasible)]
        unbeaten = p.ref_point is not None and not np.any(np.all(self.front < self.ref, axis=1))
        self.warning = unbeaten_ref_point(p) if unbeaten else None
        """What the run should be told (once: the tuner warns, :attr:`boanon.tuner.Tuner.said`)."""
        super().__init__(model, problem, rng)

    @classmethod
    def applies(cls, problem: Problem) -> bool:
        return problem.scalarization is None and problem.n_feasible > 0

    def score(self, samples: Mapping[str, np.ndarray]) -> np.ndarray:
        p = self.problem
        return expected_hypervolume_improvement(stack_objectives(samples, p.objectives), self.front, self.ref,
                                                feasible_samples(samples, p.constraints))

    def describe(self) -> dict[str, Any]:
        p = self.problem
        return {"n_feasible_trials": p.n_feasible, "kind": self.name, "n_front": int(len(self.front)),
                "ref_point": [float(o.from_minimize(r)) for o, r in zip(p.objectives, self.ref, strict=True)],
                **({"warning": self.warning} if self.warning else {})}
