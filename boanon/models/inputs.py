"""What a node model sees of its parents, for training rows and for Monte-Carlo samples alike.

Parameter parents are encoded with :meth:`Space.encode` on the parent subset (unit scale, one-hot
categoricals); metric parents are standardised with the training mean and spread, which are kept
so that the same transformation applies when samples are pushed through the graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from boanon.space import Categorical, Space


@dataclass
class NodeInputs:
    """Parent values for ``C`` configurations and ``S`` Monte-Carlo samples.

    ``encoded`` is the (C, w) encoding of the parameter parents; ``raw`` maps every parent to an
    array that broadcasts to (S, C): parameters are (1, C), sampled metrics (S, C).
    """

    encoded: np.ndarray
    raw: dict[str, np.ndarray]
    n_samples: int = 1

    @property
    def n_configs(self) -> int:
        return self.encoded.shape[0]

    def rows(self, index: np.ndarray) -> NodeInputs:
        """The inputs of a subset of the configurations (e.g. one cross-validation fold)."""
        return NodeInputs(self.encoded[index], {p: v[:, index] for p, v in self.raw.items()}, self.n_samples)


@dataclass
class ConfigBatch:
    """Configurations encoded once (all parameters), sliced per node: encoding is Python-bound."""

    space: Space
    encoded: np.ndarray
    values: dict[str, np.ndarray]
    columns: dict[str, list[int]]

    @classmethod
    def of(cls, space: Space, configs: Sequence[Mapping[str, Any]]) -> ConfigBatch:
        """Encode ``configs``; raw values are numbers (booleans 0/1), NaN for categoricals."""
        values = {n: np.full(len(configs), np.nan) if isinstance(p, Categorical)
                  else np.array([float(c[n]) for c in configs]) for n, p in space.params.items()}
        return cls(space, space.encode(configs), values, _columns(space))

    def rows(self, mask: np.ndarray) -> ConfigBatch:
        return ConfigBatch(self.space, self.encoded[mask], {n: v[mask] for n, v in self.values.items()},
                           self.columns)

    def inputs(self, params: Sequence[str], n_samples: int = 1,
               metrics: Mapping[str, np.ndarray] | None = None) -> NodeInputs:
        """A node's inputs: its parameter parents from the batch, its metric parents as given."""
        cols = [j for p in params for j in self.columns[p]]
        raw = {p: self.values[p][None, :] for p in params}
        raw.update(metrics or {})
        return NodeInputs(self.encoded[:, cols], raw, n_samples)


def _columns(space: Space) -> dict[str, list[int]]:
    """The encoded columns of each parameter (one-hot categoricals span several)."""
    out, j = {}, 0
    for name, p in space.params.items():
        out[name] = list(range(j, j + p.width))
        j += p.width
    return out


@dataclass
class InputEncoder:
    """Turns :class:`NodeInputs` into a GP design matrix of shape (S * C, w)."""

    param_parents: list[str]
    metric_parents: list[str]

    def fit(self, inputs: NodeInputs) -> InputEncoder:
        """Learn each metric parent's centre and scale (parameters are encoded by the space)."""
        self.center_, self.scale_ = np.zeros(0), np.ones(0)
        if self.metric_parents:
            m = np.stack([np.ravel(inputs.raw[p]) for p in self.metric_parents], axis=1)
            self.center_ = m.mean(axis=0)
            spread = m.std(axis=0)
            self.scale_ = np.where(spread > 1e-12 * (1 + np.abs(self.center_)), spread, 1.0)
        return self

    @property
    def varies_by_sample(self) -> bool:
        """Whether inputs differ between Monte-Carlo samples (only metric parents do)."""
        return bool(self.metric_parents)

    def transform(self, inputs: NodeInputs) -> np.ndarray:
        """The design matrix; one row per (sample, configuration), samples outermost."""
        s = inputs.n_samples if self.varies_by_sample else 1
        c = inputs.n_configs
        blocks = [np.broadcast_to(inputs.encoded[None, :, :], (s, c, inputs.encoded.shape[1]))]
        for i, p in enumerate(self.metric_parents):
            v = np.broadcast_to(inputs.raw[p], (s, c))
            blocks.append(((v - self.center_[i]) / self.scale_[i])[:, :, None])
        return np.concatenate(blocks, axis=2).reshape(s * c, -1)
