"""Several tasks: related outputs modelled jointly, related workloads as warm starts."""

from boanon.multitask.icm import ICMGP
from boanon.multitask.surrogate import MultiTaskGPSurrogate, joint_candidate
from boanon.multitask.tasks import (
    TARGET,
    TASK,
    TASK_COLUMN,
    combine_tasks,
    target_trials,
    task_labels,
    task_of,
    with_task,
    with_task_node,
)
from boanon.multitask.warmstart import (
    RelatedTask,
    TaskColumn,
    WarmStart,
    align_to_space,
    distinct_labels,
    load_related,
    related_tasks,
)

__all__ = [
    "ICMGP", "TARGET", "TASK", "TASK_COLUMN", "MultiTaskGPSurrogate", "RelatedTask", "TaskColumn",
    "WarmStart", "align_to_space", "combine_tasks", "distinct_labels", "joint_candidate", "load_related",
    "related_tasks", "target_trials", "task_labels", "task_of", "with_task", "with_task_node",
]
