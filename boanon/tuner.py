"""The tuning loop: ask for a configuration, run it, tell the result, re-learn the structure.

A run starts with the default configuration and a space-filling (scrambled Sobol) design, then
asks :func:`boanon.acquisition.propose` for each next configuration. When the run's proposer
needs a graph and none is fixed, the causal graph is re-learned from the finished trials each
time they have grown by a tenth (at most ``relearn_every`` trials apart), the first time as soon
as there are enough trials to learn from (a budget-sized initial design can be smaller); when it
cannot be learned (a degenerate table) the proposer says what proposes instead (the structured
one: the plain GP) and the trial records why.

Everything lives in the :class:`~boanon.store.Store`, so a run rebuilds its state from the
store: a killed run resumes where it stopped (:meth:`Tuner.resume`, only when asked: opening a
store never touches its running trials), re-running only the trial that was interrupted.
Proposals draw from a generator seeded by ``(seed, trial position)``, so a seeded run is
reproducible, resumed or not.
"""

from __future__ import annotations

import copy
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boanon import units
from boanon.acquisition.propose import Proposal, propose
from boanon.acquisition.proposers import Proposer, make_proposer
from boanon.errors import ConfigError, LogParseError, Once, StoreError, check_options, refuse_unknown_keys
from boanon.failures import not_logged_error, objective_not_logged
from boanon.graph import CausalGraph
from boanon.interrupts import held_interrupts
from boanon.multiobjective import OutputConstraint, parse_output_constraints
from boanon.multitask import (
    RelatedTask,
    TaskColumn,
    WarmStart,
    align_to_space,
    distinct_labels,
    related_tasks,
)
from boanon.objectives import Objective, ObjectiveSpecs, parse_objectives
from boanon.results import ENQUEUED, INIT, best_trial
from boanon.runners.base import Runner, TrialFailed
from boanon.runners.trial import run_trial
from boanon.space import Space, require_space
from boanon.store import MEASURED, MEMORY, PROPOSING, RUNNING_TRIALS, Status, Store, StoredTrial, TrialState
from boanon.store import trials_dir as store_trials_dir
from boanon.strategies import DEFAULT_STRATEGY
from boanon.study import Study
from boanon.table import TrialRecord, Value, number_problem, record_problem, two_roles, with_objectives

DESIGN_SHARE = 3
"""At most one evaluation in this many of a known budget goes to the initial design."""


def default_n_init(space: Space, budget: int | None = None) -> int:
    """A few space-filling trials, more for larger spaces, always including the default; with a
    known ``budget``, at most a :data:`DESIGN_SHARE` of it (and at least two): a design of 7 in a
    budget of 10 left the model three proposals."""
    n = int(min(10, max(5, len(space) // 2)))
    return n if budget is None else min(n, max(2, int(budget) // DESIGN_SHARE))


RELEARN_SHARE = 10
"""The graph is re-learned once the finished trials have grown by this share (1/10) since it
was last learned, at least one trial and at most ``relearn_every`` later."""


def relearn_period(learned_at: int, every: int) -> int:
    """Finished trials to wait after learning from ``learned_at`` before learning again. Early,
    one trial is a large share of the evidence: a relation exact from 12 trials should shape the
    13th proposal, not the 16th; later a trial changes little and learning costs more."""
    return min(every, max(1, learned_at // RELEARN_SHARE))


def last_learn_point(first: int, n: int, every: int) -> int:
    """The last point of the learning schedule that starts at ``first``, up to ``n`` trials."""
    m = first
    while m + relearn_period(m, every) <= n:
        m += relearn_period(m, every)
    return m


@dataclass
class Trial:
    """A configuration handed out by :meth:`Tuner.ask`: run it, then :meth:`Tuner.tell` the result."""

    id: int
    name: str
    config: dict[str, Value]
    surrogate: str
    reason: str
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LearnFailure:
    """A failed attempt to learn the structure: from how many trials, and the learner's error
    (``"ConfigError: ..."``), for whoever reports it (the CLI warns once per error)."""

    trials: int
    error: str

    def __str__(self) -> str:
        return f"learning from {self.trials} trials failed: {self.error}"


@dataclass
class _Plan:
    """What to run next, with the graph it came from and the interrupted trial it repeats."""

    proposal: Proposal
    graph_id: int | None = None
    retry_of: int | None = None


class Tuner(AbstractContextManager):
    """Structured Bayesian optimisation over ``space`` towards ``objectives``.

    ``proposer`` (:mod:`boanon.acquisition.proposers`) is the strategy, injected as Optuna injects
    a sampler: it says which models compete to propose and whether the loop learns a graph for it;
    ``strategy`` names a registered one instead (:data:`boanon.strategies.STRATEGIES`); neither:
    :class:`~boanon.acquisition.proposers.StructuredProposer`. ``graph`` fixes the causal graph
    (``knowledge`` is then applied to it); without it the graph is learned from the trials under
    ``knowledge``. ``store`` is a :class:`Store`, a path to one (created or resumed) or None for
    an in-memory run. ``learn_options`` go to :func:`boanon.learners.learn`, ``propose_options``
    to :func:`boanon.acquisition.propose`. ``output_constraints`` bound metrics or objectives
    (trials breaking them are infeasible; each an :class:`OutputConstraint` or its
    ``{name, max, min}`` mapping; bounds no value meets are refused); ``warm_start`` holds
    one related task's trials or several, each a :class:`RelatedTask` or a path that
    :func:`boanon.multitask.load_related` reads: each is modelled as a task of its own, and the
    first graph among them is the starting structure. ``related_outputs`` name logged quantities
    to model jointly with the objectives (the ``multitask`` strategy; a related task may have
    measured only these). ``budget`` (the evaluations the run will have, when known)
    sizes the default initial design (:func:`default_n_init`; a resumed run keeps the design its
    store recorded) and tells proposals whether the run ends within their early phase
    (:func:`boanon.acquisition.propose`).
    """

    def __init__(self, space: Space, objectives: ObjectiveSpecs,
                 graph: CausalGraph | None = None, knowledge: Any = None, strategy: str | None = None,
                 seed: int = 0, n_init: int | None = None, relearn_every: int = 5,
                 store: Store | str | Path | None = None,
                 learn_options: Mapping[str, Any] | None = None,
                 propose_options: Mapping[str, Any] | None = None,
                 output_constraints: Sequence[OutputConstraint | Mapping[str, Any]] = (),
                 warm_start: WarmStart = None,
                 related_outputs: Sequence[str] = (), budget: int | None = None,
                 proposer: Proposer | None = None):
        check_settings(n_init, relearn_every, learn_options, propose_options)
        self.proposer = _proposer(strategy, proposer)
        self.space = require_space(space, "Tuner")
        self.objectives = parse_objectives(objectives)
        clash = two_roles(self.space.names, [o.name for o in self.objectives])
        if clash:  # the model found no parameter of that name, after the initial design
            raise ConfigError("Tuner", "objectives", f"{clash!r} is both a parameter and an objective: "
                              "a quantity has one role")
        self.knowledge = knowledge
        self.seed = int(seed)
        self.output_constraints = parse_output_constraints(output_constraints, "Tuner", "output_constraints")
        self.related_outputs = list(related_outputs)
        self.related = self._aligned(warm_start)
        self.budget = budget
        self.relearn_every = int(relearn_every)
        self.learn_options = dict(learn_options or {})
        self.propose_options = dict(propose_options or {})
        self._owns_store = not isinstance(store, Store)
        self.store = store if isinstance(store, Store) else Store(MEMORY if store is None else store)
        try:
            self._open_run(graph, n_init)
        except BaseException:  # a store it opened and then refused (another run's, say) stays not open
            self.close()
            raise

    def _open_run(self, graph: CausalGraph | None, n_init: int | None) -> None:
        """Record the study in the store (or check it against a resumed run's) and take up the
        run's state from it: design, graph, re-learn schedule."""
        self.n_init = self._design_size(n_init, self.budget)
        self.store.init_study(self.study())
        self.fixed_graph = graph is not None
        self.graph: CausalGraph | None = self._starting_graph(graph)
        self._graph_id = self.store.add_graph(self.graph) if self.graph is not None else None
        self.learn_note = ""  # why the structure is not (or no longer) learned
        self.learn_failure: LearnFailure | None = None  # the last attempt's, if it failed
        self._design = self._initial_design()
        self._running: dict[int, StoredTrial] = {}
        self._queue: deque[_Plan] = deque()  # configurations to run before any proposal
        if not self.fixed_graph:
            self._restore_learned_graph()
        # the re-learn schedule: finished trials at the last attempt to learn the graph (-1: none);
        # a graph's metadata keeps it for a resumed run
        self.learn_attempted_at: int = -1 if self.graph is None or self.fixed_graph else \
            int(self.graph.metadata.get("learned_from_trials", -1))
        self.said = Once()
        """The warnings this run was given (a reference point no trial beats, the command's
        structure-learning failure): each said once per run."""

    def close(self) -> None:
        """Close the store this tuner opened from a path (or in memory); a :class:`Store` passed
        in is its caller's to close. The tuner cannot ask or tell after."""
        if self._owns_store:
            self.store.close()

    def __exit__(self, *exc: object) -> None:  # AbstractContextManager's __enter__ gives the tuner
        self.close()

    def _aligned(self, warm_start: WarmStart) -> tuple[RelatedTask, ...]:
        """The related tasks, each aligned to this run's space, objectives and outputs."""
        related = related_tasks(warm_start)
        distinct_labels(related)
        names = [o.name for o in self.objectives]
        return tuple(align_to_space(t, self.space, names, self._constrained(), self.related_outputs)
                     for t in related)

    def _design_size(self, n_init: int | None, budget: int | None) -> int:
        """``n_init``, else the size a resumed run recorded (perhaps run on with another budget:
        the same design), else :func:`default_n_init` (a warm start already knows the landscape:
        the default and two more)."""
        recorded = self.store.study()
        if n_init is None and recorded is not None and recorded.n_init is not None:
            n_init = recorded.n_init
        elif n_init is None:
            n_init = default_n_init(self.space, budget) if not self.related \
                else min(3, default_n_init(self.space, budget))
        return int(n_init)

    def _starting_graph(self, graph: CausalGraph | None) -> CausalGraph | None:
        """A fixed ``graph`` with this run's roles and the knowledge applied; else the first
        related task's learned graph (re-learned once the run has ``relearn_every`` trials of its own)."""
        if graph is not None:
            graph = self._own_roles(graph)
            return graph if self.knowledge is None else self.knowledge.apply(graph)
        learned_before = next((t for t in self.related if t.graph is not None), None)
        if learned_before is None:
            return None
        graph = copy.deepcopy(learned_before.graph)
        graph.metadata.setdefault("learned_from_trials", len(learned_before.table))
        return graph

    # --- state --------------------------------------------------------------------------------
    @property
    def strategy(self) -> str:
        """The registered name of the run's proposer (what the store records)."""
        return self.proposer.name

    def study(self) -> Study:
        """What makes two runs the same run (checked when a store is resumed)."""
        return Study(space=self.space.to_dict(), constraints=[c.expression for c in self.space.constraints],
                     objectives=[o.to_dict() for o in self.objectives], seed=self.seed,
                     strategy=self.strategy, n_init=self.n_init, relearn_every=self.relearn_every,
                     outputs=[c.to_dict() for c in self.output_constraints],
                     warm_start=self._sources() if self.related else None,
                     related_outputs=self.related_outputs)

    def _sources(self) -> str | list[str]:
        """Where the related tasks came from (one as a string, as runs with one always stored it)."""
        sources = [t.source for t in self.related]
        return sources[0] if len(sources) == 1 else sources

    def n_trials(self) -> int:
        """Trials that count against the budget: finished (done, stopped early or failed) ones
        and those running (interrupted attempts are not counted: their configuration runs again)."""
        counts = self.store.counts()
        return counts["done"] + counts["stopped"] + counts["failed"] + counts["running"]

    def table(self, statuses: tuple[Status, ...] = MEASURED) -> pd.DataFrame:
        """The finished trials as the tidy table the models read: the run's objectives (and the
        outputs it constrains) are the objectives, any other result the system logged is a
        metric (:func:`with_objectives`). ``statuses=("done",)`` leaves out trials stopped early."""
        return with_objectives(self.store.to_table(statuses), [o.name for o in self.objectives],
                               self._constrained())

    def _constrained(self) -> list[str]:
        return [c.name for c in self.output_constraints]

    def _own_roles(self, graph: CausalGraph) -> CausalGraph:
        """``graph`` with the roles of this run's table (a graph learned or stored by another)."""
        return graph.with_objectives([o.name for o in self.objectives], self._constrained())

    def best(self, objective: str | None = None) -> StoredTrial | None:
        """The feasible finished trial with the best value of ``objective`` (default: the first)."""
        by_name = {o.name: o for o in self.objectives}
        if objective is not None and objective not in by_name:
            raise KeyError(f"unknown objective {objective!r}; objectives: {list(by_name)}")
        return best_trial(self.store.trials("done"), by_name[objective or self.objectives[0].name],
                          self.output_constraints)

    def _initial_design(self) -> list[tuple[dict[str, Value], str]]:
        """The default configuration (when feasible) then scrambled Sobol points, each with what it is."""
        default = self.space.default()
        start = [default] if self.space.is_feasible(default) else []
        rng = np.random.default_rng(self.seed)
        sobol = self.space.sample(self.n_init - len(start), rng) if self.n_init > len(start) else []
        return [(c, "the default configuration") for c in start] + \
            [(c, "space-filling Sobol design") for c in sobol]

    def _restore_learned_graph(self) -> None:
        """On resume, keep using the last graph the run learned (and when it learned it)."""
        for t in reversed(self.store.trials()):
            if t.graph_id is not None:
                self.graph = self._own_roles(self.store.graph(t.graph_id))
                self._graph_id = t.graph_id
                return

    def resume(self) -> list[StoredTrial]:
        """Take over a stopped run: mark the trials a dead run left ``running`` interrupted and
        run every interrupted trial's configuration again (once, first); return the trials that
        were left running, as they are now. Only on an explicit resume (``boanon tune --resume``)
        and only with no other process running trials on this store: its running trials would
        be taken for a dead run's.

        A trial that failed only because the YAML misnamed an objective (which stops the run
        after it) is run again too, once: its configuration, the default, is the baseline that
        ``explain`` and the plots compare with, and no model would propose it again."""
        left_running = self.store.trials("running")
        trials = self.store.trials()
        retried = {t.retry_of for t in trials}
        misnamed = [t for t in trials if t.state is TrialState.FAILED and objective_not_logged(t.error)
                    and t.id not in retried]

        def again(t: StoredTrial, why: str) -> _Plan:
            return _Plan(Proposal(t.config, t.surrogate or INIT, why, t.info), t.graph_id, retry_of=t.id)

        self._queue.extendleft(reversed(
            [again(t, f"re-run of interrupted trial {t.name}") for t in self.store.recover()]
            + [again(t, f"re-run of {t.name}: its objective was misnamed") for t in misnamed]))
        return [self.store.trial(t.id) for t in left_running]

    # --- ask ----------------------------------------------------------------------------------
    def enqueue(self, config: Mapping[str, Any], reason: str = "enqueued by the user") -> None:
        """Run ``config`` next (before any proposal), e.g. a configuration an expert suggests.
        It is checked here, naming the parameter at fault, rather than at the :meth:`ask` that
        would have dropped it; a name the space does not have is refused, not ignored (a typo)."""
        refuse_unknown_keys(config, set(self.space.names), "enqueue")
        checked = self.space.validate(config, source="enqueue")
        self._queue.append(_Plan(Proposal(checked, ENQUEUED, reason)))

    def ask(self, position: int | None = None) -> Trial:
        """The next configuration to run, recorded in the store as ``running``. ``position``, the
        trial's place in the run, picks its initial-design point and seeds its proposal (default:
        the trials so far); a caller that numbers trials itself passes the number, which stays
        distinct where trials so far do not (Optuna workers asking at the same time)."""
        plan = self._plan(position)
        p = plan.proposal
        config = self.space.validate(p.config, source=f"proposal ({p.surrogate})")
        with held_interrupts():  # stored and noted as running together: a clean stop finds it
            stored = self.store.start_trial(config, p.surrogate, p.reason, p.info, plan.graph_id,
                                            plan.retry_of)
            self._running[stored.id] = stored
        return Trial(stored.id, stored.name, stored.config, p.surrogate, p.reason, p.info)

    def _plan(self, position: int | None) -> _Plan:
        if self._queue:
            return self._queue.popleft()
        position = self.n_trials() if position is None else position
        point = self._design_point(position)
        if point is not None:
            config, what = point
            return _Plan(Proposal(config, INIT, f"initial design: {what}"))
        self.store.set_activity(PROPOSING)  # learning and proposing can take a minute: views say so
        try:
            return self._propose(self.table(), np.random.default_rng([self.seed, position]))
        finally:
            self.store.set_activity(RUNNING_TRIALS)

    def _design_point(self, position: int) -> tuple[dict[str, Value], str] | None:
        """The initial-design point of the trial at ``position``, None past the design. A failed
        trial whose configuration ran again (:meth:`resume`'s misnamed default) and its re-run
        hold one point, not two; finding them reads every trial, so only while the failures
        could still put ``position`` inside the design (not at every proposal of a long run)."""
        if position >= len(self._design) + self.store.counts()["failed"]:
            return None
        trials = self.store.trials()
        retried = {t.retry_of for t in trials}
        index = position - sum(t.state is TrialState.FAILED and not t.interrupted and t.id in retried
                               for t in trials)
        return self._design[index] if index < len(self._design) else None

    def _propose(self, table: pd.DataFrame, rng: np.random.Generator) -> _Plan:
        proposer, note = self.proposer, ""
        tasks = TaskColumn(self.related)  # the models see related tasks' trials beside the run's
        table, space = tasks.table(table), tasks.space(self.space)
        uses_graph = self.uses_graph
        if uses_graph:
            self._maybe_learn(table)
            if self.graph is None:
                proposer, note = proposer.without_graph(self.learn_note)
        graph = tasks.graph(self.graph if uses_graph else None)
        pending = tasks.own([t.config for t in self._running.values()])
        failed = tasks.own([t.config for t in self.store.trials(Status.FAILED)])
        proposal = propose(space, table, self.objectives, graph=graph, proposer=proposer, rng=rng,
                           pending=pending, failed=failed, constraints=self.output_constraints,
                           related_outputs=self.related_outputs, design_trials=self.n_init,
                           budget=self.budget, **self.propose_options)
        proposal.reason = note + proposal.reason
        warning = proposal.info.get("acquisition", {}).get("warning")
        if warning and self.said.first(warning):
            warnings.warn(warning, UserWarning, stacklevel=2)
        return _Plan(proposal, self._graph_id if graph is not None else None)

    @property
    def uses_graph(self) -> bool:
        """Whether proposals need a graph (the proposer says: :meth:`Proposer.needs_graph`)."""
        return self.proposer.needs_graph(self.related_outputs)

    def _maybe_learn(self, table: pd.DataFrame) -> None:
        """Re-learn the graph when :func:`relearn_period` says (not when it is fixed)."""
        if self.fixed_graph:
            return
        from boanon.learners import MIN_LEARN_TRIALS

        n = len(table)
        if n < MIN_LEARN_TRIALS:  # not an attempt: the first is made as soon as there are enough
            self.learn_note = (f"{units.count(n, 'finished trial')}: structure learning needs "
                               f"{MIN_LEARN_TRIALS}")
            return
        last = self.learn_attempted_at  # a failed attempt also waits a period to retry
        if last >= 0 and n - last < relearn_period(last, self.relearn_every):
            return
        self.learn_graph(table)

    def learn_graph(self, table: pd.DataFrame) -> None:
        """Learn the graph from ``table`` (the run's finished trials with any related task's) now,
        whatever the schedule; a failed attempt keeps the last graph and says why in ``learn_note``.
        Public for callers that rebuild a tuner and replay its schedule (the Optuna sampler)."""
        n = len(table)
        self.learn_attempted_at = n
        from boanon.learners import LEARN_FAILURES, learn

        try:
            result = learn(table, self.knowledge, seed=self.seed, **self.learn_options)
        except LEARN_FAILURES as exc:  # trials that give no graph must not stop the run: keep the last
            self.adopt_graph(None, n, LearnFailure(n, f"{type(exc).__name__}: {exc}"))
            return
        self.adopt_graph(result.graph, n)

    def adopt_graph(self, graph: CausalGraph | None, learned_at: int,
                    failure: LearnFailure | None = None) -> None:
        """Use ``graph``, learned from the first ``learned_at`` rows of the table, as if this tuner
        had learned it (``None``: that attempt failed, as ``failure`` says); the next re-learn is
        due :func:`relearn_period` trials later."""
        self.learn_attempted_at, self.learn_failure = learned_at, failure
        self.learn_note = "" if failure is None else str(failure)
        if graph is None:
            return
        self.graph = graph
        self.graph.metadata["learned_from_trials"] = learned_at
        self._graph_id = self.store.add_graph(self.graph)

    # --- tell ---------------------------------------------------------------------------------
    def tell(self, trial_id: int,
             result: TrialRecord | Mapping[str, float] | BaseException | str | None = None, *,
             failure: BaseException | str | None = None, stopped: bool = False) -> StoredTrial:
        """Record what trial ``trial_id`` gave.

        ``result`` is the adapter's :class:`TrialRecord`, a flat ``{name: value}`` dict, or the
        failure: an exception or a message (also accepted as ``failure=``). A value named as one
        of the run's objectives is that objective even where the adapter calls it a metric. Values
        follow :func:`~boanon.table.measurement_problem`, as a log's do: a dict's value that is no
        number (``True``, ``"3.5"``) is refused, the trial left running; a NaN, an infinity or a
        value beyond 64 bits fails the trial naming it; None is no value. A result lacking an
        objective is stored as a failure saying so. ``stopped``: an early-stopping
        rule ended the trial; it is stored as ``stopped`` and its values still feed the model.
        """
        if (result is None) == (failure is None):
            raise TypeError("tell() needs exactly one of result or failure")
        result = failure if result is None else result
        with held_interrupts():  # forgotten and stored as ended together: never left running
            trial = self._running.pop(trial_id, None) or self.store.trial(trial_id)
            return store_result(self.store, self.space, self.objectives, trial, result, stopped)

    # --- the loop -----------------------------------------------------------------------------
    def optimize(self, runner: Runner, budget: int, trials_dir: str | Path | None = None,
                 adapter: str | None = None,
                 callback: Callable[[StoredTrial], None] | None = None) -> list[StoredTrial]:
        """Run trials until ``budget`` of them count (see :meth:`n_trials`); return this call's.

        Each trial runs in ``trials_dir/<trial name>/`` (default: ``<store>.trials`` beside the
        store file) and is parsed by ``adapter`` (default: the runner's). A failing trial is
        stored with its error and the loop goes on; Ctrl-C stores the running trial as
        ``interrupted`` and re-raises, and a resumed run re-runs it.
        """
        root = store_trials_dir(self.store, trials_dir)
        done: list[StoredTrial] = []
        with self.storing_interrupted():
            while self.n_trials() < budget:
                trial = self.ask()
                try:
                    record = run_trial(runner, trial.config, root / trial.name, adapter)
                except Exception as exc:  # any failure of one trial is that trial's, not the run's
                    stored = self.tell(trial.id, exc)
                else:
                    stored = self.tell(trial.id, record)
                done.append(stored)
                if callback is not None:
                    callback(stored)
        return done

    @contextmanager
    def storing_interrupted(self) -> Iterator[None]:
        """Around a loop of asks and tells: when Ctrl-C (or an error) escapes it, the trials
        asked for inside and not told about are stored as interrupted, wherever it fell (also
        between storing a trial and starting it), so a resumed run runs them again. When the
        store refuses that too (a full disk), they stay ``running``, which a resume also takes
        for interrupted, and the error that stopped the loop is the one raised."""
        asked_before = set(self._running)
        try:
            yield
        except BaseException:
            for trial_id in set(self._running) - asked_before:
                with suppress(StoreError):
                    self._running.pop(trial_id)
                    self.store.interrupt_trial(trial_id)
            raise


def _proposer(strategy: str | None, proposer: Proposer | None) -> Proposer:
    """The run's proposer: the one given, else the strategy named (the registry's), else structured."""
    if strategy is not None and proposer is not None:
        raise TypeError("give a proposer or a strategy's name, not both")
    return proposer if proposer is not None else make_proposer(strategy or DEFAULT_STRATEGY)


def check_settings(n_init: int | None, relearn_every: int, learn_options: Mapping[str, Any] | None,
                   propose_options: Mapping[str, Any] | None, n_init_name: str = "n_init") -> None:
    """Refuse settings no run can use, before its first trial (the Tuner's, and the Optuna
    sampler's when it is made, its ``n_init`` named ``n_init_name``): a misspelt propose option
    was a TypeError at the first proposal, and a misspelt learn option a failure to learn, the
    plain GP for the whole run."""
    if n_init is not None and int(n_init) < 1:
        raise ValueError(f"{n_init_name} must be >= 1")
    if relearn_every < 1:
        raise ValueError("relearn_every must be >= 1")
    check_options(propose, propose_options or {}, "propose")
    if learn_options:
        from boanon.learners import check_learn_options

        check_learn_options(learn_options)


def store_result(store: Store, space: Space, objectives: Sequence[Objective], trial: StoredTrial,
                 result: TrialRecord | Mapping[str, float] | BaseException | str,
                 stopped: bool = False) -> StoredTrial:
    """End the running ``trial`` in ``store`` with ``result`` as :meth:`Tuner.tell` describes it
    (also used for trials run outside the loop, e.g. ``boanon explain --measure``)."""
    if isinstance(result, (BaseException, str)):
        store.fail_trial(trial.id, _reason(result))
        return store.trial(trial.id)
    if not isinstance(result, TrialRecord):
        result = TrialRecord(trial.name, dict(trial.config), _told_values(trial, result))
    metrics, values = dict(result.metrics), dict(result.objectives)
    for o in objectives:  # the run's objectives decide (run_role): a logged metric can be tuned as is
        if o.name not in values and o.name in metrics:
            values[o.name] = metrics.pop(o.name)
    params = {**result.params, **trial.config}
    clash = two_roles(space.names, [*metrics, *values])
    if clash:  # refused before anything is stored, as a value that is no number
        raise ConfigError(f"tell({trial.name})", clash, "is both a parameter and a result: a quantity "
                          "has one role")
    space.validate({n: params[n] for n in space.names}, source=f"trial {trial.name}")
    problem = record_problem(TrialRecord(trial.name, {}, metrics, values))  # as a log's would
    missing = [o.name for o in objectives if o.name not in values]
    unlogged = [name for name in missing if name not in metrics]
    if problem:
        store.fail_trial(trial.id, problem)
    elif unlogged and (values or metrics) and not any(store.counts()[s] for s in MEASURED):
        store.fail_trial(trial.id, not_logged_error(unlogged[0], [*values, *metrics]))
    elif missing:
        store.fail_trial(trial.id, _missing_objective(missing[0], values))
    else:
        numbers = [{k: float(v) for k, v in d.items()} for d in (metrics, values)]
        store.finish_trial(trial.id, TrialRecord(trial.name, params, *numbers), stopped=stopped)
    return store.trial(trial.id)


def _told_values(trial: StoredTrial, result: Any) -> dict[str, Any]:
    """A told ``{name: value}`` dict, None (no value) left out as a null in a log is. A value
    that is no number (:func:`~boanon.table.number_problem`: text, a boolean) is refused naming
    it, before anything is stored: the trial stays running, to be told again. A NaN or infinite
    number is a measurement gone wrong, which fails the trial in :func:`store_result`."""
    where = f"tell({trial.name})"
    if not isinstance(result, Mapping):
        raise ConfigError(where, "result", "expected a TrialRecord, a {name: value} dict or a failure, "
                          f"got {type(result).__name__}")
    values = {str(name): _scalar(value) for name, value in result.items() if value is not None}
    for name, value in values.items():
        if number_problem(value):
            raise ConfigError(where, name, f"expected a number, got {value!r}")
    return values


def _scalar(value: Any) -> Any:
    """A 0-d array or tensor (``np.array(2.0)``, a torch scalar: what a model or a loss hands
    over) as the Python number it holds; anything else as it is."""
    return value.item() if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)) \
        else value


def _missing_objective(name: str, values: Mapping[str, float]) -> str:
    """Why a trial without a value of objective ``name`` failed."""
    return f"objective {name!r} missing from the trial's output (it gave objectives {sorted(values)})"


def _reason(failure: BaseException | str) -> str:
    """A one-line error for the store: runner and adapter errors speak for themselves."""
    if isinstance(failure, str):
        return failure
    if isinstance(failure, (TrialFailed, LogParseError)):
        return str(failure)
    return f"{type(failure).__name__}: {failure}"
