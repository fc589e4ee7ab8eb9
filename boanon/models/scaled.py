"""A node that scales one of its metric parents: ``y = parent * g(other parents)``, ``g`` a GP.

Systems compose their measurements by products as often as by sums: a total is a count times a
cost per item (bytes written are the bytes ingested times a write amplification the settings
decide), a stage's output is its input times a factor of its own settings (BOFN's Alpine2 chain).
A stationary GP over (parent, settings) learns such a node only near the combinations the trials
already visited and reverts to its mean elsewhere, so a chain of them loses the product a few
links down; the ratio ``y / parent`` is a function of the other parents alone, learned from every
trial. The DAG surrogate's safety net offers this model for each metric parent of a node and keeps
it only where it predicts the node better held out, through the chain as the acquisition uses it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from boanon.models.inputs import NodeInputs
from boanon.models.nodes import NodeModel, ParentsGP
from boanon.nodespec import register_node_kind

MIN_SCALE = 1e-3
"""Trials whose scaling parent is within this share of its median magnitude of zero do not
train the ratio (it is undefined there, and noise divided by almost nothing would dominate)."""
MIN_RATIO_ROWS = 2
"""Fewer trials with a usable scale (a cross-validation fold, or a view refitting a recorded
model on a run's first trials, where a worker that did nothing logged a zero): the node is
modelled as a GP over all its parents instead, as the graph's own model would be."""


def usable_scale(scale: np.ndarray) -> np.ndarray:
    """Where a scaling metric's values can divide: known and not within :data:`MIN_SCALE` of its
    median magnitude of zero (the ratio is undefined there)."""
    return np.isfinite(scale) & (np.abs(scale) > MIN_SCALE * np.median(np.abs(scale)))


@register_node_kind
class ScaledNode(NodeModel):
    """``y = scale * g(the other parents)``, with ``g`` a GP fitted to ``y / scale``."""

    kind = "scaled"
    description = "a metric parent times a Gaussian process of the other parents"

    def __init__(self, param_parents: list[str], metric_parents: list[str], scale: str):
        if scale not in metric_parents:
            raise ValueError(f"the scaling parent {scale!r} is not a metric parent {metric_parents}")
        if not param_parents and len(metric_parents) < 2:
            raise ValueError(f"nothing but {scale!r} to scale: the ratio would be a constant")
        super().__init__(param_parents, metric_parents)
        self.scale = scale
        self._ratio_gp = ParentsGP(param_parents, [m for m in metric_parents if m != scale])
        self._plain_gp = ParentsGP(param_parents, metric_parents)

    def _ratio_data(self, inputs: NodeInputs, y: np.ndarray) -> tuple[NodeInputs, np.ndarray] | None:
        """The rows whose scale is usable and their ratios ``y / scale``; None when too few are."""
        scale = np.ravel(inputs.raw[self.scale])
        usable = usable_scale(scale)
        if usable.sum() < MIN_RATIO_ROWS:
            return None
        return inputs.rows(usable), y[usable] / scale[usable]

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> ScaledNode:
        ratio = self._ratio_data(inputs, y)
        self.ratio_ = ratio is not None
        if ratio is not None:
            self._ratio_gp.fit(*ratio)
        else:
            self._plain_gp.fit(inputs, y)
        return self

    def refit(self, inputs: NodeInputs, y: np.ndarray) -> ScaledNode:
        ratio = self._ratio_data(inputs, y)
        if self.ratio_ != (ratio is not None):
            return copy.copy(self).fit(inputs, y)  # the other form: its hyperparameters are fitted anew
        other = copy.copy(self)
        if ratio is not None:
            other._ratio_gp = self._ratio_gp.refitted(*ratio)
        else:
            other._plain_gp = self._plain_gp.refitted(inputs, y)
        return other

    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if not self.ratio_:
            return self._plain_gp.predict(inputs, noise)
        mean, var = self._ratio_gp.predict(inputs, noise)
        scale = inputs.raw[self.scale]
        return scale * mean, scale**2 * var

    def describe(self) -> dict[str, Any]:
        gp = self._ratio_gp if self.ratio_ else self._plain_gp
        return {**super().describe(), **gp.describe(), "scale": self.scale, "ratio": self.ratio_}

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "scale": self.scale}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> ScaledNode:
        return cls(list(spec["param_parents"]), list(spec["metric_parents"]), str(spec["scale"]))
