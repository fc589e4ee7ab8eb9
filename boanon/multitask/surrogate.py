"""A coregionalised GP surrogate over several outputs and workloads (the Surrogate protocol).

Related outputs (objectives and constrained metrics driven by the same parameters) and related
workloads are tasks of one :class:`~boanon.multitask.icm.ICMGP`: task = (output, workload).
``sample`` draws all outputs of the target workload jointly, so EHVI and the probability of
feasibility see their learned correlation.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import pandas as pd

from boanon.models.base import Config, Surrogate, param_configs
from boanon.multitask.icm import ICMGP
from boanon.multitask.tasks import TARGET, TASK, TASK_COLUMN, task_labels, task_of
from boanon.objectives import Objective
from boanon.space import Space


class MultiTaskGPSurrogate(Surrogate):
    """``fit(table)`` then ``sample(configs, n_samples, rng) -> {output: (n_samples, n_configs)}``.

    Models the objectives and the extra ``outputs`` (metric or objective names) jointly. A
    ``__task__`` parameter in the table (a warm start) makes every (output, workload) pair a task.
    ``rank`` bounds the rank of the task covariance's low-rank part (None: full). The fit has one
    optimiser start, at the priors' centre (it runs at every proposal, and a second start rarely
    changed the cross-validation), so it draws nothing at random and needs no seed.
    """

    name = "multitask-gp"
    NEEDS_FIT = (*Surrogate.NEEDS_FIT, "output_correlation")

    def __init__(self, space: Space, objectives: Sequence[Objective], outputs: Sequence[str] = (),
                 rank: int | None = None):
        super().__init__(space, objectives, outputs)
        self.rank = rank

    @property
    def inputs(self) -> list[str]:
        """The parameters the GP reads: all but the task indicator (the task index instead)."""
        return [n for n in self.space.names if n != TASK]

    def _data(self, table: pd.DataFrame, check: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = self.space.encode(param_configs(self.space, table, check=check), self.inputs)
        workload = np.array([self.workloads_.index(t) for t in task_of(table)])
        xs, ts, ys = [], [], []
        for k, name in enumerate(self.outputs):
            col = self.node_column(name)
            if col not in table.columns:
                raise ValueError(f"table has no column for output {name!r}")
            y = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
            ok = np.isfinite(y)
            xs.append(x[ok])
            ts.append(k * len(self.workloads_) + workload[ok])
            ys.append(y[ok])
        if not sum(len(y) for y in ys):
            raise ValueError(f"no finished trial measured any of {self.outputs}")
        return np.vstack(xs), np.concatenate(ts), np.concatenate(ys)

    def fit(self, table: pd.DataFrame) -> MultiTaskGPSurrogate:
        self.table_ = table
        self.workloads_ = task_labels(table)
        n_tasks = len(self.outputs) * len(self.workloads_)
        self.model_ = ICMGP(n_tasks, self.rank, restarts=1).fit(*self._data(table))
        return self

    def refit(self, table: pd.DataFrame) -> MultiTaskGPSurrogate:
        other = copy.copy(self)
        other.table_ = table
        other.model_ = self.model_.condition(*other._data(table, check=False))  # checked by fit
        return other

    def _rows(self, configs: Sequence[Config]) -> tuple[np.ndarray, np.ndarray]:
        """Design rows for every (output, configuration); a configuration's ``__task__`` (the
        target when absent) picks its workload, so held-out related trials are predicted as such."""
        x = self.space.encode(list(configs), self.inputs)
        labels = [c.get(TASK, TARGET) for c in configs]  # the target is always workload 0
        workload = np.array([self.workloads_.index(t) if t in self.workloads_ else 0 for t in labels])
        tasks = (np.arange(len(self.outputs))[:, None] * len(self.workloads_) + workload[None, :]).ravel()
        return np.tile(x, (len(self.outputs), 1)), tasks

    def sample(self, configs: Sequence[Config], n_samples: int, rng: np.random.Generator,
               noise: bool = False) -> dict[str, np.ndarray]:
        x, tasks = self._rows(configs)
        draws = self.model_.sample(x, tasks, n_samples, rng, noise=noise)
        draws = draws.reshape(n_samples, len(self.outputs), len(configs))
        return {name: draws[:, k, :] for k, name in enumerate(self.outputs)}

    def output_correlation(self) -> pd.DataFrame:
        """Learned correlation between outputs on the target workload."""
        target = self.workloads_.index(TARGET) if TARGET in self.workloads_ else 0
        idx = [k * len(self.workloads_) + target for k in range(len(self.outputs))]
        corr = self.model_.task_correlation()[np.ix_(idx, idx)]
        return pd.DataFrame(corr, index=self.outputs, columns=self.outputs)

    def describe(self) -> dict:
        return {**super().describe(), "tasks": len(self.outputs) * len(self.workloads_),
                "workloads": list(self.workloads_),
                "output_correlation": self.output_correlation().round(3).to_dict()}


#: Above this many (output, trial) rows the coregionalised GP costs seconds per proposal.
MAX_JOINT_ROWS = 300


def joint_candidate(space: Space, table: pd.DataFrame, objectives: Sequence[Objective],
                    outputs: Sequence[str] = ()) -> MultiTaskGPSurrogate | None:
    """The coregionalised GP as a candidate surrogate where it can help and stays cheap: several
    outputs (objectives plus constrained outputs) or a related task, and at most
    :data:`MAX_JOINT_ROWS` rows to fit; else None."""
    n_outputs = len({o.name for o in objectives} | set(outputs))
    if n_outputs < 2 and TASK_COLUMN not in table.columns:
        return None
    if n_outputs * len(table) > MAX_JOINT_ROWS:
        return None
    return MultiTaskGPSurrogate(space, objectives, outputs)
