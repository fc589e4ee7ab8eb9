"""Monte-Carlo expected improvement: the single-objective acquisition, also used on scalarisations.

:class:`ExpectedImprovement` improves on a plug-in incumbent, the best posterior mean among the
trials run so far: with noisy observations the best *observed* value is biased low, a known
weakness of plain EI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from boanon.acquisition.base import AcquisitionFunction, Problem, register_acquisition
from boanon.models.base import param_configs
from boanon.ties import stable_order

if TYPE_CHECKING:
    from boanon.models import Surrogate


def expected_improvement(samples: np.ndarray, best: float, feasible: np.ndarray | None = None) -> np.ndarray:
    """Monte-Carlo expected improvement below ``best`` of (n_samples, n_configs) samples; a
    sample that breaks an output constraint (``feasible`` False) improves nothing."""
    gain = np.clip(best - np.asarray(samples, dtype=float), 0.0, None)
    gain = np.where(np.isfinite(gain), gain, 0.0)
    if feasible is not None:
        gain = gain * feasible
    return gain.mean(axis=0)


@register_acquisition
class ExpectedImprovement(AcquisitionFunction):
    """EI of one objective without output constraints (preferred there to a one-dimensional EHVI:
    its incumbent is the model's, not a noisy observation)."""

    name = "ei"
    priority = 1
    needs_model = True

    def __init__(self, model: Surrogate | None, problem: Problem, rng: np.random.Generator | None = None):
        if model is None or rng is None:
            raise ValueError("expected improvement needs a model and a generator to find its incumbent")
        o = problem.objectives[0]
        observed = param_configs(model.space, problem.trials[problem.trials[f"objective:{o.name}"].notna()])
        # Screen with few samples, then re-estimate the five best: the minimum of noisy Monte-Carlo
        # means is biased low.
        means = o.to_minimize(np.nanmean(model.sample(observed, 16, rng)[o.name], axis=0))
        top = [observed[i] for i in stable_order(means)[:5]]
        self.best = float(np.nanmin(o.to_minimize(np.nanmean(model.sample(top, 128, rng)[o.name], axis=0))))
        super().__init__(model, problem, rng)

    @classmethod
    def applies(cls, problem: Problem) -> bool:
        return len(problem.objectives) == 1 and not problem.constraints

    def score(self, samples: Mapping[str, np.ndarray]) -> np.ndarray:
        o = self.problem.objectives[0]
        return expected_improvement(o.to_minimize(samples[o.name]), self.best)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.name, "incumbent": float(self.problem.objectives[0].from_minimize(self.best)),
                "incumbent_rule": "best posterior mean among observed trials"}
