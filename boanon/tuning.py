"""A tuning run as a library call: what ``boanon tune`` does, without the command line.

:func:`open_run` turns a :class:`TuneRequest` (a tuning YAML and the options that override it)
into a :class:`TuningRun`: the store created (or the one to resume checked), its writer lock
held, the runner, early stopping and related tasks read, the :class:`~boanon.tuner.Tuner` built.
A run that never starts (an error before its first trial, in :func:`open_run` or in the loop,
other than the store's own failure) leaves no store behind. :meth:`TuningRun.loop` then runs the trials on
the engine the request asks for (serial, parallel workers or Dask, or a stage plan), with SIGTERM
stopping as cleanly as Ctrl-C and the store's activity note saying where the run is.
:func:`run_tuning` does both. The command (:mod:`boanon.cli.tune`) only parses options and prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from boanon.config import TuneConfig, load_config
from boanon.early_stopping import EarlyStopper, parse_stopper
from boanon.errors import ConfigError, StoreError
from boanon.failures import FailureStreak, OutputWatch, TooManyFailures
from boanon.multitask import load_related
from boanon.parallel import supports_progress, tune_parallel
from boanon.planning.run import PlanFile, PlannedRun, load_plan, run_plan
from boanon.runners.base import Runner, handling_sigterm
from boanon.store import (
    CONFIG_NOTE,
    DIRECTORY_NOTE,
    MEMORY,
    RUNNING_TRIALS,
    TRIALS_NOTE,
    Store,
    StoredTrial,
    create_store_file,
    holds_a_run,
    remove_store,
)
from boanon.store import trials_dir as store_trials_dir
from boanon.store_lock import WriterLock
from boanon.tuner import Tuner


@dataclass
class TuneRequest:
    """A tuning YAML and what overrides it: the options of ``boanon tune`` (docs/tuning.md).
    ``store`` defaults to ``<CONFIG>.db`` in the current directory; ``resume`` continues the run
    stored there; ``max_failures`` same-error failures in a row stop the run (0: never)."""

    config_file: str | Path
    budget: int | None = None
    store: str | Path | None = None
    resume: bool = False
    seed: int | None = None
    strategy: str | None = None
    trials_dir: str | Path | None = None
    warm_start: Sequence[str | Path] = ()
    workers: int | None = None
    dask: str | None = None
    early_stopping: str | None = None
    trial_timeout: float | None = None
    plan_file: str | Path | None = None
    max_failures: int = 5

    @property
    def store_file(self) -> Path:
        return Path(self.store or Path(self.config_file).with_suffix(".db").name)


@dataclass
class TuningRun:
    """A run ready to loop (:func:`open_run`); a context manager that closes the store and releases
    its writer lock."""

    request: TuneRequest
    config: TuneConfig
    tuner: Tuner
    runner: Runner
    budget: int
    trials: Path
    plan: PlanFile | None = None
    stopper: EarlyStopper | None = None
    left_running: list[StoredTrial] = field(default_factory=list)
    """The trials a dead run left running, as :meth:`Tuner.resume` took them over."""
    resources: ExitStack = field(default_factory=ExitStack)
    created: bool = False
    """Whether :func:`open_run` made the store (a fresh start): the only store a failed loop may remove."""
    logged_in: Path | None = None
    """Where the run's earlier trials were logged, when not in ``trials`` (a resume without the
    first run's ``--trials-dir``; or a copied store, which must not log in its original's folder)."""

    @property
    def store_file(self) -> Path:
        return self.request.store_file

    def loop(self, callback: Callable[[StoredTrial], None] | None = None) -> PlannedRun | None:
        """Run trials until the budget counts them all, each passed to ``callback`` when stored;
        return the plan's outcome (with a plan). Ctrl-C or SIGTERM stores the running trials as
        interrupted and raises KeyboardInterrupt; :class:`TooManyFailures` (``max_failures``
        same-error failures in a row), a :class:`StoreError` (a full disk) and a BrokenPipeError
        from ``callback`` (its output closed) stop it, with every finished trial kept; the
        store's activity note says which."""
        tuner, request = self.tuner, self.request
        streak = FailureStreak(request.max_failures)
        outputs = [c.name for c in self.config.outputs]
        watch = OutputWatch(outputs, tuner.n_init, tuner.store.trials()) if outputs else None

        def told(trial: StoredTrial) -> None:
            if callback is not None:
                callback(trial)
            streak(trial)
            if watch is not None:
                watch(trial)

        tuner.store.set_activity(RUNNING_TRIALS)  # from the first trial: the design proposes nothing
        try:
            with sigterm_interrupts():
                outcome = self._run(told)
        except KeyboardInterrupt:
            tuner.store.set_activity("interrupted")
            raise
        except TooManyFailures as exc:
            tuner.store.set_activity(exc.activity)
            raise
        except BrokenPipeError:  # the callback's reader went away (`boanon tune | head`): not killed
            tuner.store.set_activity("stopped: its output closed")
            raise
        except StoreError:  # the store's own failure (a full disk): kept, resumed once fixed
            raise
        except Exception:
            self.discard_if_unstarted()
            raise
        tuner.store.set_activity("finished")
        return outcome

    def discard_if_unstarted(self) -> None:
        """Remove the store this run made when no trial got into it: a loop that fails before
        its first trial (an enqueued configuration the space refuses, an unreachable Dask
        scheduler), or a command that fails before its loop (``--dashboard`` on a port taken), is
        a run that could not start, and its empty store would refuse the next try ("a run is
        already stored here") and its resume once the YAML is fixed."""
        if not self.created:
            return
        try:
            if any(self.tuner.store.counts().values()):
                return
        except StoreError:  # unreadable: whatever it holds stays
            return
        self.tuner.store.close()
        remove_store(self.store_file)

    def _run(self, callback: Callable[[StoredTrial], None]) -> PlannedRun | None:
        """The loop on the engine asked for: a stage plan, parallel workers or Dask (also for
        early stopping and trial timeouts, which watch trials as they run), else serial."""
        request = self.request
        options: dict[str, Any] = {"trials_dir": self.trials, "adapter": self.config.adapter,
                                   "callback": callback}
        if self.plan is not None:
            return run_plan(self.plan, self.tuner, self.runner, stopper=self.stopper,
                            trial_timeout=request.trial_timeout, **options)
        if request.workers or request.dask or self.stopper or request.trial_timeout:
            tune_parallel(self.tuner, self.runner, self.budget, workers=self._workers(), dask=request.dask,
                          stopper=self.stopper, trial_timeout=request.trial_timeout, **options)
        else:
            self.tuner.optimize(self.runner, self.budget, **options)
        return None

    def _workers(self) -> int | None:
        """Trials in flight: ``--workers``; one where only a trial timeout or early stopping asks
        for processes to watch (the sequential loop's pace: trials of an expensive system run
        at once measure one another); a Dask cluster's threads without ``--workers``."""
        if self.request.workers or self.request.dask:
            return self.request.workers
        return 1

    def __enter__(self) -> TuningRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store, then release its writer lock: the run is over (or never started), so
        another ``tune`` may resume the store, and nothing of this process holds the file (a
        script or test calling the command in-process kept its connection open). Closing twice
        is harmless."""
        self.tuner.store.close()
        self.resources.close()


def open_run(request: TuneRequest) -> TuningRun:
    """Everything before the first trial (module docstring). Bad input raises a ValueError
    (a :class:`ConfigError` naming the file and field where there is one), and a store this
    call created is removed again, so the next try starts clean."""
    resources = ExitStack()
    created: Path | None = None
    store: Store | None = None
    try:
        config = load_config(request.config_file)
        plan = load_plan(request.plan_file, request.config_file, request.budget, request.workers,
                         request.dask, request.early_stopping) if request.plan_file else None
        budget = plan.plan.budget if plan else request.budget or config.budget
        early_stopping = plan.plan.early_stopping if plan else request.early_stopping
        if budget is None:
            raise ConfigError(request.config_file, "budget", "missing: set it in the file or pass --budget")
        store_file = request.store_file
        if str(store_file) == MEMORY:  # SQLite's name, not a file: nothing would be left to resume or read
            raise ValueError(f"--store: {MEMORY} is no file, and a tuning run is kept in one, to resume, "
                             "export and plot it: name one (default: <CONFIG>.db here), or in Python "
                             "run a Tuner without a store")
        trials = store_trials_dir(store_file, request.trials_dir)
        resources.enter_context(WriterLock(store_file))  # for the run's life
        check_fresh_or_resume(store_file, trials, request.resume)
        runner = config.make_runner()
        stopper = _stopper(early_stopping, config, runner)
        # the Tuner aligns the related tasks to the space
        related = [load_related(p) for p in (request.warm_start or config.warm_start)]
        created = None if request.resume else _create(store_file)
        store = Store(store_file, create=not request.resume)  # a run to resume must be there
        tuner = Tuner(config.space, config.objectives, graph=config.load_graph(),
                      knowledge=config.load_knowledge(), strategy=request.strategy or config.strategy,
                      seed=config.seed if request.seed is None else request.seed, n_init=config.n_init,
                      relearn_every=config.relearn_every, store=store,
                      output_constraints=config.outputs, warm_start=related,
                      related_outputs=config.related_outputs,
                      propose_options=config.propose_options(), budget=budget)
        left_running = tuner.resume() if request.resume else []  # a fresh store has nothing to take over
        if tuner.n_trials() > budget:  # a resume's (interrupted attempts do not count: they run again)
            raise BudgetBelowTrials(store_file, tuner.n_trials(), budget)
    except BaseException:
        if store is not None:
            store.close()
        if created is not None:  # any error, Ctrl-C too: a run that never started leaves no store
            remove_store(created)
        resources.close()  # the writer lock
        raise
    logged_in = tuner.store.note(TRIALS_NOTE)
    tuner.store.set_note(CONFIG_NOTE, str(Path(request.config_file).resolve()))
    tuner.store.set_note(TRIALS_NOTE, str(trials.resolve()))
    tuner.store.set_note(DIRECTORY_NOTE, str(Path.cwd()))
    return TuningRun(request, config, tuner, runner, budget, trials, plan, stopper, left_running, resources,
                     created=created is not None,
                     logged_in=Path(logged_in) if logged_in and Path(logged_in) != trials.resolve() else None)


def run_tuning(request: TuneRequest, callback: Callable[[StoredTrial], None] | None = None) -> TuningRun:
    """:func:`open_run` then :meth:`TuningRun.loop`: the finished run (its store closed, its lock
    released: read its trials with a new :class:`Store` of ``run.store_file``)."""
    with open_run(request) as run:
        run.loop(callback)
    return run


def _stopper(rule: str | None, config: TuneConfig, runner: Runner) -> EarlyStopper | None:
    """The early-stopping rule, refused for a runner that cannot report progress; it ranks the
    reports the way the runner says they are better (a RocksDB run minimising CPU time per
    operation reports ops/sec: ranked as the objective, the rule stopped the fastest trials)."""
    if rule is None:
        return None
    stopper = parse_stopper(rule, direction=runner.progress_direction or config.objectives[0].direction)
    if not supports_progress(runner):
        raise ConfigError(config.source, "runner", f"the {config.runner} runner does not report "
                          "progress, so --early-stopping cannot judge its trials")
    return stopper


def _create(store_file: Path) -> Path:
    """The new store's file, made by this call (:func:`create_store_file`), or AlreadyStored."""
    try:
        return create_store_file(store_file)
    except FileExistsError:
        raise AlreadyStored(store_file) from None


class AlreadyStored(ValueError):
    """A fresh run asked for a store that holds one."""

    def __init__(self, store_file: Path):
        super().__init__(f"{store_file}: a run is already stored here; pass --resume to continue it "
                         "or choose another --store")


class BudgetBelowTrials(ValueError):
    """A resume whose budget is below the trials the run has: a budget counts all the run's
    trials, so one meant as "N more" would otherwise end at once, having run none, as if done.
    (A budget equal to them resumes a finished run: it runs nothing and says the run is done.)"""

    def __init__(self, store_file: Path, trials: int, budget: int):
        super().__init__(f"{store_file}: the run has {trials} trials, more than the budget ({budget}): "
                         f"nothing was run; the budget counts all the run's trials, so --budget "
                         f"{trials + budget} runs {budget} more")


def check_fresh_or_resume(store_file: Path, trials: Path, resume: bool) -> None:
    """A resume needs its store; a fresh run needs no store and no other run's trials there."""
    if resume and not store_file.is_file():
        raise ValueError(f"{store_file}: no store to resume (drop --resume to start a run)")
    if not resume and store_file.exists():
        # a fresh start refused on another file (a YAML given as --store) must not send the user
        # to --resume, which refuses it too
        raise AlreadyStored(store_file) if holds_a_run(store_file) else ValueError(
            f"{store_file}: exists and holds no BoAnon run; a fresh run never overwrites a file: choose "
            "another --store")
    if not resume and trials.is_dir() and any(trials.iterdir()):
        raise ValueError(f"{trials}: holds trials of another run; remove it or pass another --trials-dir")


def sigterm_interrupts() -> AbstractContextManager[None]:
    """Inside, a polite kill (SIGTERM) stops the loop as Ctrl-C does (in the main thread only:
    Python runs signal handlers there)."""
    return handling_sigterm(_interrupt)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
