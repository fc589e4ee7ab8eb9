"""What a run's stored trials mean: its goals, which trials are feasible, which is best.

Below the tuning loop and the views alike: the loop picks its incumbent with these, and the views
(status, report, dashboard, exports) show the same best trial without importing the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from boanon.multiobjective import OutputConstraint, parse_output_constraints
from boanon.objectives import Objective, parse_objectives
from boanon.store import Store, StoredTrial

INIT = "init"
"""The ``surrogate`` recorded for trials of the initial design."""


def study_goals(store: Store) -> tuple[list[Objective], list[OutputConstraint]]:
    """The run's objectives and output constraints, as its store recorded them (none before a run)."""
    study = store.study()
    if study is None:
        return [], []
    source = str(store.path)
    objectives = parse_objectives(study.objectives, source=source) if study.objectives else []
    return objectives, parse_output_constraints(study.outputs, source=source)


def is_feasible(trial: StoredTrial, constraints: Sequence[OutputConstraint]) -> bool:
    """Every output constraint holds on what the trial measured (an unmeasured output fails)."""
    return all(c.holds(trial.objectives.get(c.name, trial.metrics.get(c.name))) for c in constraints)


def best_trial(trials: Sequence[StoredTrial], objective: Objective,
               constraints: Sequence[OutputConstraint] = ()) -> StoredTrial | None:
    """The trial with the best value of ``objective`` among those that have one and meet every
    output constraint (an infeasible trial is no recommendation, however good its value)."""
    best: StoredTrial | None = None
    for t in trials:
        value = t.objectives.get(objective.name)
        if value is None or not is_feasible(t, constraints):
            continue
        if best is None or objective.better(value, best.objectives[objective.name]):
            best = t
    return best
