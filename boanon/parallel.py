"""Asynchronous parallel tuning: several trials in flight, a new one the moment any finishes.

The loop keeps ``executor.max_workers`` trials running. Whenever one ends it is told to the
:class:`~boanon.tuner.Tuner` and a new configuration is asked for at once; the tuner passes the
configurations still running to ``propose(..., pending=...)``, whose fantasised outcomes keep
parallel suggestions apart (no waiting for a batch, no near-duplicates). The budget counts
finished trials: no trial is started once running plus finished ones reach it.

Early stopping: when the runner reports progress (it has a ``progress`` attribute, as the
``sgd`` runner does), every report travels over the executor's progress channel to the loop,
goes to an :class:`~boanon.early_stopping.EarlyStopper`, and is appended to
``<trial dir>/progress.jsonl`` on the loop's machine, so a resumed run knows the curves of the
trials already finished. A trial the rule stops ends at its next report; its partial log is
parsed and stored with status ``stopped``.

Killed mid-flight, a run loses nothing finished: the store holds every ended trial, and on
resume the trials left running are marked interrupted and their configurations run again.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boanon.adapters.files import json_lines
from boanon.early_stopping import EarlyStopper
from boanon.executors import Executor, ProgressChannel, make_executor
from boanon.runners.base import Runner
from boanon.runners.trial import run_trial_stopping
from boanon.store import MEASURED, StoredTrial
from boanon.store import trials_dir as store_trials_dir
from boanon.table import TrialRecord, Value

if TYPE_CHECKING:  # the tuner's imports (scipy) are not needed where trials run
    from boanon.tuner import Trial, Tuner

PROGRESS_FILE = "progress.jsonl"
"""Per trial directory: one ``{"step": s, "value": v}`` line per progress report."""


def supports_progress(runner: Runner) -> bool:
    """A runner reports progress when it has a ``progress`` attribute: a callable
    ``(step, value) -> bool | None`` it calls as it runs, stopping when it returns False."""
    return hasattr(runner, "progress")


def run_trial_task(runner: Runner, config: dict[str, Value], trial_dir: str, adapter: str | None,
                   reporter: Callable[[int, float], bool] | None = None) -> tuple[TrialRecord, bool]:
    """One trial on a worker: :func:`~boanon.runners.run_trial`, reporting progress through
    ``reporter`` when given. Returns the parsed trial and whether the runner stopped it early."""
    if reporter is not None:
        runner = copy.copy(runner)
        runner.progress = reporter  # type: ignore[attr-defined]
    return run_trial_stopping(runner, config, Path(trial_dir), adapter)


def optimize_parallel(tuner: Tuner, runner: Runner, budget: int, executor: Executor,
                      trials_dir: str | Path | None = None, adapter: str | None = None,
                      stopper: EarlyStopper | None = None, trial_timeout: float | None = None,
                      callback: Callable[[StoredTrial], None] | None = None,
                      poll_interval: float = 0.2) -> list[StoredTrial]:
    """Run trials on ``executor`` until ``budget`` of them count; return this call's, in the
    order they ended.

    A trial that fails, times out (``trial_timeout`` seconds) or loses its worker is stored as
    failed with the reason and the loop goes on. On Ctrl-C (or any error of the loop itself)
    the trials in flight are stored as interrupted, to run again on resume, and it re-raises;
    the caller's ``with executor:`` then kills them.
    """
    root = store_trials_dir(tuner.store, trials_dir)
    channel = executor.progress_channel() if stopper is not None and supports_progress(runner) else None
    if stopper is not None:
        stopper.replay(_progress_curves(tuner, root))
    running: dict[Future, Trial] = {}
    ended: list[StoredTrial] = []
    try:
        # the trials running and any asked for, not submitted, stored as interrupted; the ended kept
        with tuner.storing_interrupted(), _keeping_ended(tuner, running):
            while True:
                while len(running) < executor.max_workers and tuner.n_trials() < budget:
                    with _following(channel, stopper, root, list(running.values()), poll_interval):
                        trial = tuner.ask()  # seconds of model fitting: the running go on meanwhile
                    reporter = channel.reporter(trial.id) if channel is not None else None
                    running[executor.submit(run_trial_task, runner, trial.config, str(root / trial.name),
                                            adapter, reporter, timeout=trial_timeout)] = trial
                if not running:
                    return ended
                finished, _ = wait(running, timeout=poll_interval if channel is not None else None,
                                   return_when=FIRST_COMPLETED)
                if channel is not None and stopper is not None:
                    _follow_progress(channel, stopper, root, running.values())
                told = [_tell(tuner, running.pop(future), future) for future in finished]
                ended += told
                for stored in told:  # all stored first: a callback that raises loses none
                    if channel is not None and stopper is not None:
                        stopper.end(stored.id)
                        channel.forget(stored.id)
                    if callback is not None:
                        callback(stored)
    finally:
        if channel is not None:
            channel.close()


@contextmanager
def _keeping_ended(tuner: Tuner, running: dict[Future, Trial]) -> Iterator[None]:
    """When the loop stops (a Ctrl-C while it proposes the next configuration), store the trials
    in ``running`` whose result had come back: they ran to their end, and were marked interrupted
    and run again on resume. One that ended in an error is left to be interrupted: at a Ctrl-C
    that error may be the interrupt's own. An error storing one is dropped: the loop's is raised."""
    try:
        yield
    except BaseException:
        for future, trial in running.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                with suppress(Exception):
                    _tell(tuner, trial, future)
        raise


def _tell(tuner: Tuner, trial: Trial, future: Future) -> StoredTrial:
    error = future.exception()
    if error is not None:
        return tuner.tell(trial.id, error)
    record, stopped = future.result()
    return tuner.tell(trial.id, record, stopped=stopped)


def _follow_progress(channel: ProgressChannel, stopper: EarlyStopper, root: Path,
                     running: Any) -> None:
    """Record the reports that arrived and ask the trials the rule condemns to stop."""
    names = {t.id: t.name for t in running}
    for trial_id, step, value in channel.poll():
        if trial_id not in names:
            continue  # a late report of a trial that already ended
        path = root / names[trial_id] / PROGRESS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"step": step, "value": value}) + "\n")
        if stopper.report(trial_id, step, value):
            channel.stop(trial_id)


@contextmanager
def _following(channel: ProgressChannel | None, stopper: EarlyStopper | None, root: Path,
               running: list[Trial], poll_interval: float) -> Iterator[None]:
    """Follow the progress of the ``running`` trials on a thread while the loop is busy inside:
    asking for the next configuration fits the models for seconds, and a trial the rule condemned
    meanwhile used to run to its end before its reports were read (an sgd run under ASHA on a
    loaded machine stopped none of its 20 trials: every stop came after the trial had ended)."""
    if channel is None or stopper is None or not running:
        yield
        return
    done, failed = threading.Event(), []

    def follow() -> None:
        try:
            while not done.wait(poll_interval):
                _follow_progress(channel, stopper, root, running)
        except Exception as exc:  # raised in the loop, not lost with the thread
            failed.append(exc)

    thread = threading.Thread(target=follow, name="boanon-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
    if failed:
        raise failed[0]


def _progress_curves(tuner: Tuner, root: Path) -> dict[int, list[tuple[int, float]]]:
    """The progress of the run's measured trials, from their ``progress.jsonl`` files."""
    curves = {}
    for trial in tuner.store.trials(MEASURED):
        path = root / trial.name / PROGRESS_FILE
        if path.is_file():  # complete: the loop writes a report before it tells the trial's end
            curves[trial.id] = [(int(p["step"]), float(p["value"])) for _, p in json_lines(path)]
    return curves


def tune_parallel(tuner: Tuner, runner: Runner, budget: int, workers: int | None = None,
                  dask: str | None = None, stopper: EarlyStopper | None = None,
                  trial_timeout: float | None = None, trials_dir: str | Path | None = None,
                  adapter: str | None = None,
                  callback: Callable[[StoredTrial], None] | None = None) -> list[StoredTrial]:
    """:func:`optimize_parallel` on the executor that ``workers`` and ``dask`` name (local
    processes, a Dask scheduler address, or ``local`` for a Dask cluster on this machine)."""
    with make_executor(workers, dask) as executor:
        return optimize_parallel(tuner, runner, budget, executor, trials_dir=trials_dir,
                                 adapter=adapter, stopper=stopper, trial_timeout=trial_timeout,
                                 callback=callback)
