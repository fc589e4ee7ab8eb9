"""A coregionalised GP surrogate over several outputs and workloads (the Surrogate protocol).

Related outputs (objectives and constrained metrics driven by the same parameters) and related
workloads are tasks of one :class:`~boanon.multitask.icm.ICMGP`: task = (output, workload).
``sample`` draws all outputs of the target workload jointly, so EHVI and the probability of
feasibility see their learned correlation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.multiobjective.feasibility import output_values
from boanon.multitask.icm import ICMGP
from boanon.multitask.tasks import TARGET, TASK, task_labels, task_of
from boanon.space import Space
from boanon.table import column


class MultiTaskGPSurrogate:
    """``fit(table)`` then ``sample(configs, n_samples, rng) -> {output: (n_samples, n_configs)}``.

    ``outputs`` are objective or metric names. ``rank`` bounds the rank of the task covariance's
    low-rank part (None: full).
    """

    name = "multitask-gp"

    def __init__(self, space: Space, outputs: Sequence[str], rank: int | None = None, seed: int = 0):
        if not outputs:
            raise ValueError("a multi-task surrogate needs at least one output")
        self.space = space
        self.outputs = list(outputs)
        self.rank = rank
        self.seed = seed
        self.inputs = [n for n in space.names if n != TASK]

    def _encode(self, table_or_configs: pd.DataFrame | Sequence[Mapping[str, Any]]) -> np.ndarray:
        if isinstance(table_or_configs, pd.DataFrame):
            configs = [{n: row[column("param", n)] for n in self.inputs}
                       for _, row in table_or_configs.iterrows()]
        else:
            configs = list(table_or_configs)
        return self.space.encode(configs, self.inputs)

    def fit(self, table: pd.DataFrame) -> MultiTaskGPSurrogate:
        self.workloads = task_labels(table)
        x = self._encode(table)
        workload = np.array([self.workloads.index(t) for t in task_of(table)])
        xs, ts, ys = [], [], []
        for k, name in enumerate(self.outputs):
            y = output_values(table, name)
            ok = np.isfinite(y)
            xs.append(x[ok])
            ts.append(k * len(self.workloads) + workload[ok])
            ys.append(y[ok])
        if not sum(len(y) for y in ys):
            raise ValueError(f"no finished trial measured any of {self.outputs}")
        self.model = ICMGP(len(self.outputs) * len(self.workloads), self.rank, seed=self.seed)
        self.model.fit(np.vstack(xs), np.concatenate(ts), np.concatenate(ys))
        return self

    def _rows(self, configs: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        x = self._encode(configs)
        target = self.workloads.index(TARGET) if TARGET in self.workloads else 0
        tasks = np.repeat(np.arange(len(self.outputs)) * len(self.workloads) + target, len(x))
        return np.tile(x, (len(self.outputs), 1)), tasks

    def sample(self, configs: Sequence[Mapping[str, Any]], n_samples: int,
               rng: np.random.Generator) -> dict[str, np.ndarray]:
        x, tasks = self._rows(configs)
        draws = self.model.sample(x, tasks, n_samples, rng)
        draws = draws.reshape(n_samples, len(self.outputs), len(configs))
        return {name: draws[:, k, :] for k, name in enumerate(self.outputs)}

    def predict(self, configs: Sequence[Mapping[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Posterior mean and standard deviation per output, for reports."""
        x, tasks = self._rows(configs)
        mean, sd = self.model.predict(x, tasks)
        n = len(configs)
        return {name: (mean[k * n:(k + 1) * n], sd[k * n:(k + 1) * n]) for k, name in enumerate(self.outputs)}

    def output_correlation(self) -> pd.DataFrame:
        """Learned correlation between outputs on the target workload."""
        target = self.workloads.index(TARGET) if TARGET in self.workloads else 0
        idx = [k * len(self.workloads) + target for k in range(len(self.outputs))]
        corr = self.model.task_correlation()[np.ix_(idx, idx)]
        return pd.DataFrame(corr, index=self.outputs, columns=self.outputs)
