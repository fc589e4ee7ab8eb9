"""The task indicator: which workload (or machine) a trial ran on, as a parameter column.

Trials of a related task join the tuner's own trials in one tidy table with an extra
categorical parameter ``__task__`` (``target`` for the run being tuned). Any surrogate that
encodes categoricals then learns how much the tasks differ (a lengthscale on the indicator); the
coregionalised GP uses it as a task index instead. The search space gains the parameter pinned
to ``target`` by a constraint, so no candidate is ever proposed for the other task.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import pandas as pd

from boanon.graph import CausalGraph, Edge
from boanon.space import Categorical, Space
from boanon.table import TRIAL, column

TASK = "__task__"
TARGET = "target"
TASK_COLUMN = column("param", TASK)


def task_labels(table: pd.DataFrame) -> list[str]:
    """The tasks in a table, the target first (a table without the column is all target)."""
    if TASK_COLUMN not in table.columns:
        return [TARGET]
    others = sorted({str(v) for v in table[TASK_COLUMN].dropna()} - {TARGET})
    return [TARGET, *others]


def task_of(table: pd.DataFrame) -> np.ndarray:
    """Each trial's task label."""
    if TASK_COLUMN not in table.columns:
        return np.full(len(table), TARGET, dtype=object)
    return table[TASK_COLUMN].fillna(TARGET).astype(str).to_numpy(dtype=object)


def target_trials(table: pd.DataFrame) -> pd.DataFrame:
    """The run's own trials of a combined table (all of them without a task column): the
    incumbent, the Pareto front and feasibility are the target task's, never a related one's."""
    if TASK_COLUMN not in table.columns:
        return table
    return table[task_of(table) == TARGET]


def combine_tasks(own: pd.DataFrame, related: pd.DataFrame, label: str = "related") -> pd.DataFrame:
    """The tuner's trials (task ``target``) stacked on a related task's; trial ids of the related
    task are prefixed with its label so they never clash with the tuner's own. ``own`` may
    already hold other related tasks' trials (their labels are kept)."""
    if label == TARGET:
        raise ValueError(f"a related task cannot be called {TARGET!r}")
    related = related.copy()
    if TASK_COLUMN not in related.columns:
        related[TASK_COLUMN] = label
    related[TRIAL] = [f"{t}:{i}" for t, i in zip(related[TASK_COLUMN], related[TRIAL], strict=True)]
    own = own.copy()
    own[TASK_COLUMN] = own[TASK_COLUMN].fillna(TARGET) if TASK_COLUMN in own.columns else TARGET
    return pd.concat([own, related], ignore_index=True, sort=False)


def with_task(space: Space, labels: Sequence[str]) -> Space:
    """``space`` plus the task indicator, pinned to the target task by a constraint."""
    if TASK in space.params:
        return space
    choices = tuple(dict.fromkeys([TARGET, *labels]))
    if len(choices) < 2:
        raise ValueError("a task indicator needs a related task besides the target")
    params = [*space.params.values(), Categorical(TASK, choices, default=TARGET)]
    constraints = [c.expression for c in space.constraints] + [f"{TASK} == {TARGET!r}"]
    return Space(params, constraints)


def with_task_node(graph: CausalGraph) -> CausalGraph:
    """A copy of ``graph`` where the task indicator is a parent of every node that has parents:
    any learned mechanism may differ between workloads, and the models decide by how much."""
    out = copy.deepcopy(graph)
    if TASK in out.roles:
        return out
    out.roles[TASK] = "param"
    for node in [n for n, r in graph.roles.items() if r != "param" and graph.parents(n)]:
        out.edges.append(Edge(TASK, node))
    return out
