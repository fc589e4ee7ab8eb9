"""Any acquisition weighted by the probability that the configuration runs.

A configuration that fails gains nothing, so the expected gain of trying it is the acquisition's
value times the probability that it runs (:class:`boanon.models.success.SuccessModel`): the
acquisitions are non-negative (EI, EHVI, a probability), so the product keeps their order where
nothing has failed nearby and discounts candidates beside failed ones. It wraps whatever
acquisition the problem chose rather than being one of them, since failures can come with any.
A registered acquisition with negative values (a log-improvement, a lower bound) would have its
order turned around beside failures; it is refused by name rather than silently misweighted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boanon.acquisition.build import Acquisition
from boanon.models.success import SuccessModel


class SuccessWeighted:
    """``acquisition(configs) * success.probability(configs)``."""

    def __init__(self, acquisition: Acquisition, success: SuccessModel):
        self.acquisition = acquisition
        self.success = success

    def __call__(self, configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
        value = np.asarray(self.acquisition(configs, n_samples), dtype=float)
        if np.any(value < 0):
            kind = self.acquisition.describe().get("kind", type(self.acquisition).__name__)
            raise ValueError(f"acquisition {kind!r} gave a negative value ({value.min():.3g}): weighting it "
                             "by the probability that a configuration runs, after a failed trial, needs "
                             "non-negative values (an expected improvement, a probability)")
        return value * self.success.probability(configs)

    def describe(self) -> dict[str, Any]:
        return {**self.acquisition.describe(),
                "success_weighted": {"n_ran": self.success.n_ran_, "n_failed": self.success.n_failed_}}
