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
ENQUEUED = "user"
"""The ``surrogate`` recorded for configurations a user enqueued (or an Optuna study imported)."""
ABLATION = "ablation"
"""The ``surrogate`` recorded with the trials ``boanon explain --measure`` runs."""
RANDOM = "random"
"""The ``surrogate`` recorded for a configuration drawn at random (the random strategy, or too
few trials to model)."""
_ORIGINS = {INIT: "from the initial design", ENQUEUED: "enqueued (by the user or an import)",
            ABLATION: "an ablation measurement (boanon explain --measure)", RANDOM: "drawn at random"}


def origin(surrogate: str | None) -> str:
    """Where a trial's configuration came from, in words: the stored ``surrogate`` names a model
    only for a model's proposals ("proposed by init" would say a model proposed a design point)."""
    if surrogate is None:
        return "of unrecorded origin"
    return _ORIGINS.get(surrogate, f"proposed by the {surrogate} surrogate")


def study_goals(store: Store) -> tuple[list[Objective], list[OutputConstraint]]:
    """The run's objectives and output constraints, as its store recorded them (none before a run)."""
    study = store.study()
    if study is None:
        return [], []
    source = str(store.path)
    objectives = parse_objectives(study.objectives, source=source) if study.objectives else []
    return objectives, parse_output_constraints(study.outputs, source=source)


def broken(trial: StoredTrial, constraints: Sequence[OutputConstraint]) -> list[OutputConstraint]:
    """The output constraints that do not hold on what the trial measured (an unmeasured output
    breaks its constraint)."""
    return [c for c in constraints if not c.holds(trial.objectives.get(c.name, trial.metrics.get(c.name)))]


def is_feasible(trial: StoredTrial, constraints: Sequence[OutputConstraint]) -> bool:
    """Every output constraint holds on what the trial measured (an unmeasured output fails)."""
    return not broken(trial, constraints)


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
