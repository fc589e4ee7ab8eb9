"""A BoAnon run written into an Optuna storage, for optuna-dashboard and Optuna's plots.

Optuna's storages (an RDB URL such as ``sqlite:///optuna.db``, or a journal file) are what its
dashboard and ``optuna.visualization`` read, so the run is copied in as a finished Optuna study:
one Optuna trial per BoAnon trial, with the space's distributions, the objectives as the
study's values (named), BoAnon's own fields (trial name, surrogate, reason, error,
feasibility) as user attributes, and the output constraints as Optuna's constraint values
(feasible when <= 0), so its dashboard and samplers see which trials are feasible. Running
trials are left out (export again when they end); a trial stopped early is PRUNED, a failed
one FAIL. Needs the ``optuna`` extra (``pip install 'boanon[optuna]'``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from boanon.multiobjective import OutputConstraint
from boanon.report import RunView
from boanon.results import is_feasible
from boanon.space import Bool, Categorical, Float, Int, Param
from boanon.store import StoredTrial

STORE_ATTR = "boanon_store"
"""The study user attribute naming the store it was exported from (a later export replaces it)."""


def distribution(param: Param) -> Any:
    """The Optuna distribution of a BoAnon parameter."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    if isinstance(param, Bool):
        return CategoricalDistribution([False, True])
    if isinstance(param, Categorical):
        return CategoricalDistribution(list(param.choices))
    if isinstance(param, Int):
        return IntDistribution(param.low, param.high, log=param.log)
    assert isinstance(param, Float)
    return FloatDistribution(param.low, param.high, log=param.log)


CONSTRAINTS_KEY = "constraints"
"""The system attribute where Optuna's samplers (``constraints_func``) keep a trial's constraint
values, and where optuna-dashboard reads feasibility from."""


def constraint_values(trial: StoredTrial, constraints: Sequence[OutputConstraint]) -> list[float]:
    """Optuna's convention: one value per bound, feasible when <= 0 (the amount by which the
    output exceeds ``max`` or falls short of ``min``); an output the trial did not measure is
    infinitely infeasible."""
    out = []
    for c in constraints:
        value = trial.objectives.get(c.name, trial.metrics.get(c.name))
        value = float("nan") if value is None else float(value)
        for bound, sign in ((c.max, 1.0), (c.min, -1.0)):
            if bound is not None:
                out.append(float("inf") if not math.isfinite(value) else sign * (value - bound))
    return out


def export_to_optuna(run: RunView, storage: str, study_name: str | None = None) -> tuple[str, int]:
    """Write ``run`` into the Optuna ``storage`` as study ``study_name`` (default: the store's
    file name) and return the name and the number of trials written. A study of that name
    exported from the same store before is replaced; any other one is left alone (ValueError)."""
    import optuna

    from boanon.storage_urls import opened_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no "A new study created" on stderr
    with opened_storage(storage) as opened:
        name = study_name or run.store.path.stem
        path = str(run.store.path.resolve())
        try:
            old = optuna.load_study(study_name=name, storage=opened)
        except KeyError:
            old = None
        if old is not None:
            if old.user_attrs.get(STORE_ATTR) != path:
                raise ValueError(f"{storage} already holds a study {name!r} that is not an export of "
                                 f"{run.store.path}; choose another study name")
            optuna.delete_study(study_name=name, storage=opened)
        study = optuna.create_study(storage=opened, study_name=name,
                                    directions=[o.direction for o in run.objectives])
        with warnings.catch_warnings():  # experimental since Optuna 3.2, and what the dashboard shows
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names([o.name for o in run.objectives])
        study.set_user_attr(STORE_ATTR, path)
        distributions = {n: distribution(p) for n, p in run.space.params.items()}
        trials = [_frozen(t, run, distributions) for t in run.trials if t.status != "running"]
        study.add_trials(trials)
        return name, len(trials)


def _frozen(trial: StoredTrial, run: RunView, distributions: dict[str, Any]) -> Any:
    from optuna.trial import TrialState, create_trial

    state = {"done": TrialState.COMPLETE, "stopped": TrialState.PRUNED}.get(trial.status, TrialState.FAIL)
    values = None if state != TrialState.COMPLETE else \
        [float(trial.objectives[o.name]) for o in run.objectives]
    attrs = {"boanon_trial": trial.name, "surrogate": trial.surrogate, "reason": trial.reason,
             "feasible": trial.status == "done" and is_feasible(trial, run.constraints)}
    if trial.error:
        attrs["error"] = trial.error
    if state == TrialState.PRUNED:
        attrs["objectives_when_stopped"] = trial.objectives
    system_attrs = {CONSTRAINTS_KEY: constraint_values(trial, run.constraints)} \
        if run.constraints and state == TrialState.COMPLETE else None
    frozen = create_trial(state=state, values=values, params=dict(trial.config), distributions=distributions,
                          user_attrs=attrs, system_attrs=system_attrs)
    frozen.datetime_start = datetime.fromisoformat(trial.started)
    frozen.datetime_complete = datetime.fromisoformat(trial.finished) if trial.finished else None
    return frozen
