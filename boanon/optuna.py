"""BoAnon inside Optuna: :class:`BoAnonSampler`, and Optuna trials replayed into a BoAnon tuner.

The sampler keeps no state of its own between calls: each relative sample rebuilds a
:class:`~boanon.tuner.Tuner` (in memory) from the study's trials and asks it, so several worker
processes sharing an Optuna storage (an RDB URL, a journal file) each propose from the whole
study, and a trial another worker is running is pending, as a trial in flight is to the Tuner,
from the moment its parameters are chosen. A trial's number is its position (its initial-design
point, its proposal's generator), so workers proposing at the same moment never share one, and a
worker first computes the proposals being made elsewhere for lower-numbered trials: they are
pending to its own.
Proposals are the Tuner's own (initial design, proposer, models, graph re-learn schedule);
only the learned graphs are cached, per process, keyed by the trials they were learned from.

What a trial logged reaches the graph as metrics: the user attribute ``metrics`` (a mapping of
name -> number) and every user attribute named ``metric:<name>``. Optuna's ``constraints_func``
values become outputs ``constraint_<i>`` bounded by ``max: 0`` (Optuna's feasibility). The
study's objectives take its metric names (``study.set_metric_names``), else ``value`` (one
objective) or ``value_<i>``: name them like an earlier BoAnon run's objectives to start warm
from its store.

Distributions map to BoAnon parameters one to one: float and int ranges keep their log scale,
a step is searched as a range and rounded to the grid on the way out, categorical choices are
searched by their labels (``str`` of each choice; prefixed with the index where two read the
same; two that are equal to Python, ``1`` and ``True``, are refused: Optuna records one as the
other), ``[False, True]`` is a boolean and a distribution with a single value is not searched.
This module imports Optuna; ``import boanon`` does not import it.
"""

from __future__ import annotations

import copy
import hashlib
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.samplers._base import _CONSTRAINTS_KEY, _process_constraints_after_trial
from optuna.search_space import IntersectionSearchSpace
from optuna.storages import BaseStorage
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState, create_trial

from boanon.acquisition.proposers import Proposer, make_proposer
from boanon.multiobjective import OutputConstraint
from boanon.multitask import TaskColumn, WarmStart, related_tasks
from boanon.objectives import Objective
from boanon.space import Bool, Categorical, Float, Int, Param, Space, SpaceTooLarge, equal_choices
from boanon.storage_urls import opened_storage, sqlite_file
from boanon.store import connect_read_only, create_store_file, remove_store
from boanon.store_lock import WriterLock
from boanon.strategies import DEFAULT_STRATEGY
from boanon.table import number_problem, two_roles
from boanon.tuner import LearnFailure, Tuner, check_settings, last_learn_point

METRICS_ATTR = "metrics"
"""The user attribute holding a trial's logged metrics (``{name: number}``)."""
METRIC_PREFIX = "metric:"
"""User attributes named ``metric:<name>`` are logged metrics too."""
CONSTRAINT_PREFIX = "constraint_"
"""``constraints_func``'s i-th value is the output ``constraint_<i>`` (feasible at or below 0)."""
SURROGATE_ATTR, REASON_ATTR = "boanon:surrogate", "boanon:reason"
"""System attributes of a trial BoAnon proposed: the surrogate that chose it, and why."""
PARAMS_ATTR = "boanon:params"
"""System attribute of a trial BoAnon proposed: the parameters, set as soon as they are chosen,
so other workers see them while the trial is still suggesting them one by one."""


# --- distributions <-> parameters ----------------------------------------------------------------
def labels(distribution: CategoricalDistribution) -> list[str]:
    """The labels BoAnon searches a categorical's choices by (readable and distinct)."""
    plain = [str(c) for c in distribution.choices]
    return plain if len(set(plain)) == len(plain) else [f"{i}:{c}" for i, c in enumerate(plain)]


def is_boolean(distribution: BaseDistribution) -> bool:
    choices = getattr(distribution, "choices", ())
    return len(choices) == 2 and all(isinstance(c, bool) for c in choices) and set(choices) == {False, True}


def param_of(name: str, distribution: BaseDistribution) -> Param | None:
    """The BoAnon parameter searching ``distribution`` (None for a single value: nothing to search);
    the inverse of :func:`boanon.optuna_export.distribution`."""
    if distribution.single():
        return None
    equal = equal_choices(getattr(distribution, "choices", ()))
    if equal:  # Optuna stores a choice as the index of the first choice equal to it
        raise ValueError(f"parameter {name!r}: choices {equal[0]!r} and {equal[1]!r} are one value to "
                         f"Optuna ({equal[0]!r} == {equal[1]!r}): it records {equal[1]!r} as {equal[0]!r}, "
                         "so the trials could not tell which ran; make them differ (as strings, say)")
    if is_boolean(distribution):
        return Bool(name)
    if isinstance(distribution, CategoricalDistribution):
        return Categorical(name, tuple(labels(distribution)))
    if isinstance(distribution, IntDistribution):
        return Int(name, distribution.low, distribution.high, distribution.log)
    if isinstance(distribution, FloatDistribution):
        return Float(name, distribution.low, distribution.high, distribution.log)
    raise TypeError(f"parameter {name!r}: unsupported distribution {distribution!r}")


def to_boanon(distribution: BaseDistribution, value: Any) -> Any:
    """An Optuna parameter value as BoAnon's parameter holds it."""
    if is_boolean(distribution):
        return bool(value)
    if isinstance(distribution, CategoricalDistribution):
        return labels(distribution)[int(distribution.to_internal_repr(value))]
    return int(value) if isinstance(distribution, IntDistribution) else float(value)


def to_optuna(distribution: BaseDistribution, value: Any) -> Any:
    """A BoAnon value (or None for a single-valued distribution) as Optuna's: on the step's grid,
    within bounds, a plain Python int, float or choice."""
    if isinstance(distribution, CategoricalDistribution):
        if value is None:
            return distribution.choices[0]
        if is_boolean(distribution):
            return bool(value)
        return distribution.choices[labels(distribution).index(value)]
    assert isinstance(distribution, (FloatDistribution, IntDistribution))
    low, high, step = distribution.low, distribution.high, distribution.step
    v = low if value is None else float(value)
    if step is not None:
        v = low + round((v - low) / step) * step
    v = min(max(v, low), high)
    return int(round(v)) if isinstance(distribution, IntDistribution) else float(v)


def space_of(distributions: Mapping[str, BaseDistribution]) -> Space | None:
    """The BoAnon space searching ``distributions`` (None when none of them has two values)."""
    params = [p for p in (param_of(n, d) for n, d in distributions.items()) if p is not None]
    return Space(params) if params else None


# --- a study's trials as BoAnon's ----------------------------------------------------------------
def objectives_of(study: Study) -> list[Objective]:
    """The study's objectives, named by its metric names (else ``value`` / ``value_<i>``)."""
    directions = ["maximize" if d == StudyDirection.MAXIMIZE else "minimize" for d in study.directions]
    whole = getattr(study, "_study", study)  # HyperbandPruner's view of one bracket has no metric_names
    names = whole.metric_names or (["value"] if len(directions) == 1 else
                                   [f"value_{i}" for i in range(len(directions))])
    return [Objective(n, d) for n, d in zip(names, directions, strict=True)]


def logged_metrics(trial: FrozenTrial) -> dict[str, float]:
    """What the trial logged (:data:`METRICS_ATTR` and :data:`METRIC_PREFIX` user attributes)."""
    logged = trial.user_attrs.get(METRICS_ATTR, {})
    if not isinstance(logged, Mapping):
        raise ValueError(f"trial {trial.number}: user attribute {METRICS_ATTR!r} must map metric "
                         f"names to numbers, got {type(logged).__name__}")
    items = [*logged.items(), *((k[len(METRIC_PREFIX):], v) for k, v in trial.user_attrs.items()
                                if k.startswith(METRIC_PREFIX))]
    out: dict[str, float] = {}
    for name, value in items:  # the rule of Tuner.tell, said with the Optuna trial's number
        if number_problem(value):
            raise ValueError(f"trial {trial.number}: metric {name!r} must be a number, got {value!r}")
        out[str(name)] = value  # a NaN or one beyond 64 bits: tell fails the trial naming it
    return out


def constraint_values(trial: FrozenTrial) -> dict[str, float]:
    """The trial's ``constraints_func`` values as outputs ``constraint_<i>``."""
    values = trial.system_attrs.get(_CONSTRAINTS_KEY, ())
    return {f"{CONSTRAINT_PREFIX}{i}": float(v) for i, v in enumerate(values)}


def output_constraints(trials: Iterable[FrozenTrial]) -> list[OutputConstraint]:
    """One ``constraint_<i> <= 0`` per value ``constraints_func`` gave (the most any trial has)."""
    n = max((len(t.system_attrs.get(_CONSTRAINTS_KEY, ())) for t in trials), default=0)
    return [OutputConstraint(f"{CONSTRAINT_PREFIX}{i}", max=0.0) for i in range(n)]


def replay(tuner: Tuner, trials: Iterable[FrozenTrial], distributions: Mapping[str, BaseDistribution],
           reason: Callable[[FrozenTrial], str] = lambda t: f"Optuna trial {t.number}",
           keep_times: bool = False) -> int:
    """Record ``trials`` in ``tuner`` as it would have recorded them, in order: a complete trial
    with its values, logged metrics and constraint values, a running one as running (a pending
    configuration: its parameters, else those BoAnon proposed for it), a failed one as failed and
    a pruned one as stopped at its last intermediate value (single objective; failed otherwise).
    Trials without a value within ``distributions`` for each of its parameters, and waiting ones,
    are left out; ``keep_times``: an ended trial is stored with the times Optuna recorded, not
    the replay's. Returns how many were recorded."""
    names = [o.name for o in tuner.objectives]
    recorded = 0
    for t in trials:
        params = None if t.state == TrialState.WAITING else params_within(t, distributions)
        if params is None:
            continue
        config = {n: to_boanon(d, params[n]) for n, d in distributions.items() if not d.single()}
        tuner.enqueue(config, reason(t))
        asked = tuner.ask()
        recorded += 1
        logged, constrained = logged_metrics(t), constraint_values(t)
        outputs = {**logged, **constrained}
        if t.state == TrialState.RUNNING:
            continue
        own = {**{n: "an objective of the study (study.set_metric_names)" for n in names},
               **{n: f"the output of a constraints_func value ({CONSTRAINT_PREFIX}<i>)"
                  for n in [*(c.name for c in tuner.output_constraints), *constrained]}}
        _refuse_two_roles(t, logged, own)  # the replay's own output would overwrite what the trial logged
        _refuse_two_roles(t, outputs, dict.fromkeys(config, "a parameter"))  # before the Tuner's tell does
        if t.state == TrialState.COMPLETE and t.values is not None:
            tuner.tell(asked.id, {**outputs, **dict(zip(names, map(float, t.values), strict=True))})
        elif t.state == TrialState.PRUNED and len(names) == 1 and t.intermediate_values:
            last = t.intermediate_values[max(t.intermediate_values)]
            tuner.tell(asked.id, {**outputs, names[0]: float(last)}, stopped=True)
        else:
            tuner.tell(asked.id, failure=f"Optuna trial {t.number} ended {t.state.name}")
        if keep_times and t.datetime_start is not None:
            tuner.store.set_times(asked.id, t.datetime_start, t.datetime_complete)
    return recorded


def _refuse_two_roles(trial: FrozenTrial, metrics: Iterable[str], named: Mapping[str, str]) -> None:
    """Refuse a metric of Optuna trial ``trial`` named like another quantity of the replay
    (``named``: each name, and what it is), naming the trial: a quantity has one role."""
    taken = two_roles(metrics, named)
    if taken:
        raise ValueError(f"trial {trial.number}: metric {taken!r} is named like {named[taken]}: a quantity "
                         "has one role (log it under another name)")


def search_space(study: Study) -> dict[str, BaseDistribution]:
    """The study's intersection search space in the order the trials suggest its parameters (Optuna
    sorts it by name): the Tuner's design and encoding follow the space's order, so a study
    replays the Tuner's run only in its order. Computed afresh (a pass over the trials, as the
    replay makes anyway): Optuna's cached one belongs to the first study it saw, and a sampler
    reused for a second study searched that one's space (in memory) or refused it (a storage)."""
    space = IntersectionSearchSpace(include_pruned=True).calculate(study)
    first = next((t for t in study.get_trials(deepcopy=False) if set(space) <= set(t.distributions)), None)
    order = list(first.distributions) if first is not None else []
    position = {n: i for i, n in enumerate(order)}
    return {n: space[n] for n in sorted(space, key=lambda n: (position.get(n, len(order)), n))}


def params_within(trial: FrozenTrial, distributions: Mapping[str, BaseDistribution]) -> dict[str, Any] | None:
    """The trial's value of each parameter of ``distributions``: the one it set with that
    distribution or, while it runs, the one BoAnon proposed for it (:data:`PARAMS_ATTR`: a trial
    suggests its parameters one by one, and other workers must see them all from the start);
    None when any is missing or lies outside its distribution (a value ``study.enqueue_trial``
    fixed outside it: Optuna runs it with a warning, and the Tuner's space refuses it)."""
    proposed = trial.system_attrs.get(PARAMS_ATTR, {}) if trial.state == TrialState.RUNNING else {}
    values: dict[str, Any] = {}
    for name, d in distributions.items():
        if name in trial.params and trial.distributions[name] == d:
            values[name] = trial.params[name]
        elif name not in trial.params and name in proposed:
            values[name] = proposed[name]
        else:
            return None
    return values if contained(values, distributions) else None


def contained(values: Mapping[str, Any], distributions: Mapping[str, BaseDistribution]) -> bool:
    """Whether each value lies in its distribution, as Optuna checks a trial's parameters (in
    bounds, on the step's grid, one of the choices): a proposal made for another distribution of
    the same name is not this one's."""
    try:
        create_trial(state=TrialState.RUNNING, params=dict(values), distributions=dict(distributions))
    except (TypeError, ValueError):  # outside its distribution, not a number, not one of the choices
        return False
    return True


def being_proposed(trials: Iterable[FrozenTrial], before: int) -> list[FrozenTrial]:
    """Running trials numbered below ``before`` with no parameter and no proposal yet: Optuna
    samples a trial's parameters at its first suggestion, so their workers are choosing them
    now (or will be soon), unseen by this one."""
    return [t for t in trials if t.state == TrialState.RUNNING and t.number < before and not t.params
            and PARAMS_ATTR not in t.system_attrs]


# --- the sampler ---------------------------------------------------------------------------------
class TrialSeededRandomSampler(RandomSampler):
    """Optuna's :class:`~optuna.samplers.RandomSampler` drawing each value from a generator seeded
    by ``(seed, trial number, parameter name)``: workers in several processes share the seed, and
    one generator per process gave their different trials the same values."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.seed = seed

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        key = [self.seed, trial.number, zlib.crc32(param_name.encode())]
        drawn = RandomSampler(seed=int(np.random.SeedSequence(key).generate_state(1)[0]))
        return drawn.sample_independent(study, trial, param_name, param_distribution)


class BoAnonSampler(BaseSampler):
    """BoAnon's :class:`~boanon.tuner.Tuner` as an Optuna sampler.

    Parameters in every finished trial with the same distribution (Optuna's intersection search
    space) are sampled together by the Tuner; any other is sampled independently by
    ``independent_sampler`` (default: :class:`TrialSeededRandomSampler`, seeded per trial),
    except in the study's first trial, which runs each distribution's middle: the default
    configuration the Tuner starts from. ``n_startup_trials`` is the Tuner's ``n_init`` (its
    initial design: the default, then scrambled Sobol points); ``budget``, the trials the study
    will run when known (Optuna never tells a sampler ``n_trials``), is the Tuner's ``budget``:
    it sizes the design when ``n_startup_trials`` does not, and a run that ends within the early
    phase keeps its switches until flipping them has paid, as the Tuner's does; ``seed`` seeds
    proposals as the Tuner's ``seed`` does (one generator per trial number: its position).
    ``constraints_func`` is Optuna's (values <= 0 are feasible); ``warm_start`` takes BoAnon
    stores, dataset directories or CSV tables (or :class:`~boanon.multitask.RelatedTask` objects)
    as the Tuner's ``warm_start:``.
    ``strategy`` (a registered strategy's name, resolved once, or a proposer object: the Tuner's
    ``proposer``), ``graph``, ``knowledge``, ``relearn_every``, ``learn_options`` and
    ``propose_options`` go to the Tuner.
    """

    def __init__(self, *, n_startup_trials: int | None = None, budget: int | None = None,
                 seed: int | None = None,
                 constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
                 warm_start: WarmStart = (),
                 strategy: str | Proposer = DEFAULT_STRATEGY, graph: Any = None, knowledge: Any = None,
                 relearn_every: int = 5, learn_options: Mapping[str, Any] | None = None,
                 propose_options: Mapping[str, Any] | None = None,
                 independent_sampler: BaseSampler | None = None):
        check_settings(n_startup_trials, relearn_every, learn_options, propose_options, "n_startup_trials")
        self.seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % (2**31))
        self.n_startup_trials = n_startup_trials
        self.budget = budget
        self.constraints_func = constraints_func
        self.related = related_tasks(warm_start)
        self.tuner_options = {"proposer": make_proposer(strategy), "graph": graph, "knowledge": knowledge,
                              "relearn_every": relearn_every, "learn_options": learn_options,
                              "propose_options": propose_options}
        self.independent_sampler = independent_sampler or TrialSeededRandomSampler(self.seed)
        self._graphs: dict[str, tuple[Any, LearnFailure | None]] = {}  # graphs by what they came from
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as Optuna's samplers are (a study sent to another process, a saved searcher):
        without the lock, which does not pickle; each copy guards its own graph cache."""
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def reseed_rng(self) -> None:
        self.independent_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return search_space(study)

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if not search_space:
            return {}
        if space_of(search_space) is None:
            return {n: to_optuna(d, None) for n, d in search_space.items()}
        with self.tuner(study, search_space, exclude=trial.number) as tuner:  # one per proposal: closed
            proposal = tuner.ask(position=trial.number)
        params = {n: to_optuna(d, proposal.config.get(n)) for n, d in search_space.items()}
        for key, value in ((PARAMS_ATTR, params), (SURROGATE_ATTR, proposal.surrogate),
                           (REASON_ATTR, proposal.reason)):
            study._storage.set_trial_system_attr(trial._trial_id, key, value)
        return params

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        if trial.number == 0:  # the Tuner's first trial: the default configuration
            return default_value(param_name, param_distribution)
        return self.independent_sampler.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self.independent_sampler.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        if self.constraints_func is not None:
            _process_constraints_after_trial(self.constraints_func, study, trial, state)
        self.independent_sampler.after_trial(study, trial, state, values)

    # --- the tuner, rebuilt ----------------------------------------------------------------------
    def tuner(self, study: Study, search_space: Mapping[str, BaseDistribution],
              exclude: int | None = None) -> Tuner:
        """A Tuner holding the study's trials over ``search_space`` (all but trial ``exclude``),
        with the graph it would have learned by now: its :meth:`~boanon.tuner.Tuner.ask` at
        ``exclude``'s number is the sampler's proposal for that trial. Trials numbered below it
        whose workers are choosing their parameters now (:func:`being_proposed`) are asked for
        first, at their numbers: the proposals those workers are making (they are deterministic),
        pending to this trial's as they would be to a serial Tuner's. The caller closes it (a
        context manager): its in-memory store holds a copy of the study's trials."""
        space = space_of(search_space)
        if space is None:
            raise ValueError("the search space has no parameter with two or more values")
        trials = [t for t in study.get_trials(deepcopy=False) if t.number != exclude]
        tuner = Tuner(space, objectives_of(study), seed=self.seed, n_init=self.n_startup_trials,
                      budget=self.budget,
                      output_constraints=output_constraints(trials) if self.constraints_func else (),
                      warm_start=self.related, **self.tuner_options)
        try:
            replay(tuner, trials, search_space)
            if tuner.uses_graph and not tuner.fixed_graph and tuner.n_trials() >= tuner.n_init:
                self._replay_learning(tuner)
            if exclude is not None:
                for t in being_proposed(trials, before=exclude):
                    tuner.ask(position=t.number)
        except BaseException:  # a study the replay refuses leaves no store open
            tuner.close()
            raise
        return tuner

    def _replay_learning(self, tuner: Tuner) -> None:
        """Give ``tuner`` the graph a serial Tuner would hold now: learned from the first ``m``
        finished trials, ``m`` the last point of its schedule (first at ``n_init``, then
        :func:`boanon.tuner.relearn_period` apart; not before the learner's minimum), counting
        the related tasks' trials as it does."""
        from boanon.learners import MIN_LEARN_TRIALS

        own = tuner.table()
        n_related = sum(len(t.table) for t in tuner.related)
        n, first = len(own) + n_related, max(tuner.n_init + n_related, MIN_LEARN_TRIALS)
        if n < MIN_LEARN_TRIALS:  # the serial Tuner makes no attempt yet (its ask says why)
            return
        m = n if n < first else last_learn_point(first, n, tuner.relearn_every)
        table = TaskColumn(tuner.related).table(own.iloc[:m - n_related])
        key = hashlib.sha1(table.to_csv(index=False).encode()).hexdigest()
        with self._lock:
            cached = self._graphs.get(key)
        if cached is None:
            tuner.learn_graph(table)
            learned = tuner.graph if tuner.learn_attempted_at == m and tuner.learn_failure is None else None
            with self._lock:
                self._graphs[key] = (copy.deepcopy(learned), tuner.learn_failure)
        else:
            graph, failure = cached
            tuner.adopt_graph(copy.deepcopy(graph), m, failure)


def default_value(name: str, distribution: BaseDistribution) -> Any:
    """Parameter ``name``'s middle, as BoAnon's default configuration takes it."""
    param = param_of(name, distribution)
    return to_optuna(distribution, None if param is None else param.from_unit(0.5))


# --- a study into a store ------------------------------------------------------------------------
def import_study(storage: str, study_name: str | None, store: str | Path, seed: int = 0) -> tuple[Tuner, int]:
    """Copy the finished trials of Optuna study ``study_name`` (in ``storage``, e.g.
    ``sqlite:///optuna.db``; None when it holds one study) into a new BoAnon store at ``store``,
    as :func:`replay` records them, over the study's intersection search space; return the
    tuner on that store (a ``boanon tune`` run can resume it, a later one start warm from it)
    and the number of trials copied. The other direction is ``boanon export --optuna``.

    The store is written under its writer lock (:class:`~boanon.store_lock.WriterLock`: a live
    run or another import there is refused) into a file this call creates; an import that fails
    removes that file only, never one another writer made meanwhile."""
    if Path(store).exists():  # said before the study is read; the file's creation checks again
        raise _exists_already(store)
    _require_optuna_file(storage)
    with opened_storage(storage) as opened:  # read whole, then closed
        study = load_existing_study(opened, storage, study_name)
        trials = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
        distributions, objectives = search_space(study), objectives_of(study)
    try:
        space = space_of(distributions)
    except SpaceTooLarge as exc:  # named as a space the Tuner refuses was (below)
        raise ValueError(f"study {study.study_name!r} in {storage}: {exc}") from None
    if space is None:
        raise ValueError(f"study {study.study_name!r} in {storage} has no parameter that every finished "
                         "trial set with the same distribution and two or more values")
    with WriterLock(store):  # no run or other import writes there meanwhile
        try:
            created = create_store_file(store)
        except FileExistsError:  # made since the check above: another writer's, left alone
            raise _exists_already(store) from None
        tuner: Tuner | None = None
        try:  # a Tuner that refuses the study has closed the store it made
            tuner = Tuner(space, objectives, seed=seed, store=created,
                          output_constraints=output_constraints(trials))
            n = replay(tuner, trials, distributions, keep_times=True,
                       reason=lambda t: f"imported from Optuna study {study.study_name!r}, trial {t.number}")
        except BaseException as exc:  # Ctrl-C too: an import cut short leaves no store to refuse the next
            if tuner is not None:
                tuner.close()
            remove_store(created)
            if isinstance(exc, ValueError):  # a trial's metrics, a space the Tuner refuses: name the study
                raise ValueError(f"study {study.study_name!r} in {storage}: {exc}") from None
            raise
    return tuner, n


def _exists_already(store: str | Path) -> ValueError:
    return ValueError(f"{store} exists already; import into a new store")


def load_existing_study(opened: BaseStorage, storage: str, study_name: str | None) -> Study:
    """Optuna study ``study_name`` (None: the only one there) in ``opened``, the storage at URL
    ``storage`` opened after :func:`_require_optuna_file` (``optuna.load_study`` creates the
    database a mistyped sqlite path names, and its tables in any other database), changing
    nothing; a mistyped study name is named, where Optuna says only 'Record does not exist.'"""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = optuna.get_all_study_names(opened)
    if not names:
        raise ValueError(f"{storage} holds no study")
    if study_name is None and len(names) > 1:
        raise ValueError(f"{storage} holds several studies, name one (--study): {', '.join(names)}")
    if study_name is not None and study_name not in names:
        raise ValueError(f"no study {study_name!r} in {storage}; studies there: {', '.join(names)}")
    return optuna.load_study(study_name=names[0] if study_name is None else study_name, storage=opened)


def _require_optuna_file(storage: str) -> None:
    """A sqlite URL must name an existing Optuna database, which Optuna would otherwise create."""
    file = sqlite_file(storage)
    if file is None:
        return
    path = Path(file)
    if not path.is_file():
        raise ValueError(f"{storage}: {path} does not exist")
    if not _has_optuna_tables(path):
        raise ValueError(f"{storage}: {path} is not an Optuna storage (a BoAnon store needs no import)")


def _has_optuna_tables(path: Path) -> bool:
    try:
        with closing(connect_read_only(path, timeout=5.0)) as db:
            return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'version_info'"
                              ).fetchone() is not None
    except sqlite3.DatabaseError:  # not a database at all
        return False
