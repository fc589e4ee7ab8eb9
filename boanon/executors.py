"""Where trials run: a local process pool or a Dask cluster, behind one small interface.

Both executors follow :mod:`concurrent.futures`: ``submit(fn, *args, timeout=...)`` returns a
standard :class:`concurrent.futures.Future`, so the tuning loop waits with
:func:`concurrent.futures.wait` whatever the engine. What they add is what a tuning loop needs
from its workers and a plain pool lacks:

* a trial that runs past its ``timeout`` is killed and its future fails with :class:`TrialTimeout`
  (a thread or pool task cannot be killed, so each local trial gets its own process, and a hung
  Dask worker is restarted through its nanny);
* a worker that dies (a crash in native code, the OOM killer, a lost host) fails only its own
  trial, with :class:`WorkerLost` saying how, and the executor goes on;
* a progress channel (:class:`ProgressChannel`) carries ``(trial, step, value)`` reports from the
  running trial back to the loop and the loop's "stop" back to the trial, for early stopping.
"""

from __future__ import annotations

import contextlib
import dis
import fcntl
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import uuid
import warnings
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from boanon.runners.base import TrialFailed

# A trial process re-runs a main module started with ``python -m`` after the fork server imported
# it (to cache its imports); runpy's warning that it is already imported is expected there.
warnings.filterwarnings("ignore", message=r".*found in sys\.modules after import of package",
                        category=RuntimeWarning)

Report = tuple[int, int, float]
"""A progress report: (trial id, step, value)."""


class TrialTimeout(TrialFailed):
    """The trial ran past its timeout and was killed."""


class WorkerLost(TrialFailed):
    """The process or machine running the trial died or could no longer be reached."""


# --- progress ---------------------------------------------------------------------------------
class ProgressChannel(ABC):
    """Progress reports from running trials to the loop, and stop requests back.

    The loop calls :meth:`reporter` before submitting a trial and passes the (picklable) reporter
    along with it; the trial calls ``reporter(step, value)`` as it goes and stops when that
    returns False. The loop drains reports with :meth:`poll` and asks a trial to stop with
    :meth:`stop`; the trial sees it at its next report.
    """

    @abstractmethod
    def reporter(self, trial: int) -> Callable[[int, float], bool]:
        """A picklable callable for trial ``trial``: ``(step, value) -> keep going?``."""

    @abstractmethod
    def poll(self) -> list[Report]:
        """The reports that arrived since the last call, each trial's oldest first (never blocks)."""

    @abstractmethod
    def stop(self, trial: int) -> None:
        """Ask trial ``trial`` to stop at its next report."""

    @abstractmethod
    def forget(self, trial: int) -> None:
        """Release what the channel holds for a finished trial."""

    @abstractmethod
    def close(self) -> None:
        """Release the channel."""


REPORTS_PIPE_BYTES = 2**18
"""The size asked of a trial's reports pipe (Linux): ~7000 reports the loop, reading every
0.2 s, has not read yet before the trial waits for it (a pipe's default 64 KiB holds ~1800). No
more: a user's pipes share a quota (``fs.pipe-user-pages-soft``, 64 MiB), and past it every new
pipe of theirs, their programs' too, gets 8 KiB."""


@dataclass
class _LocalReporter:
    trial: int
    reports: Connection  # the write end of the trial's reports pipe
    stops: Connection  # the read end of the pipe its stop comes on
    stopped: bool = False

    def __call__(self, step: int, value: float) -> bool:
        with contextlib.suppress(OSError):  # the loop closed its ends: it is going away too
            self.reports.send((self.trial, int(step), float(value)))
            self.stopped = self.stopped or self.stops.poll()
        return not self.stopped


class _LocalChannel(ProgressChannel):
    """Two pipes per trial: its reports come back on one, a stop goes out on the other. Pipes,
    not a multiprocessing queue and events: those hold named semaphores, which a loop killed by
    SIGKILL left to multiprocessing's resource tracker, and it warned of "leaked semaphore
    objects" on the terminal after every ``kill -9`` of a run with early stopping. Not a duplex
    pipe (a socket pair): each small report takes ~768 bytes of its ~208 KiB, and a trial that
    reported faster than the loop reads (every 0.2 s) waited on the loop after ~280 reports."""

    def __init__(self, context: multiprocessing.context.BaseContext):
        self._context = context
        self._conns: dict[int, tuple[Connection, Connection]] = {}  # trial: (reports in, stop out)

    def reporter(self, trial: int) -> _LocalReporter:
        reports, theirs = self._context.Pipe(duplex=False)
        stops, stop = self._context.Pipe(duplex=False)
        with contextlib.suppress(AttributeError, OSError):  # not Linux, or over the user's pipe quota
            fcntl.fcntl(reports.fileno(), fcntl.F_SETPIPE_SZ, REPORTS_PIPE_BYTES)
        self._conns[trial] = reports, stop
        return _LocalReporter(trial, theirs, stops)

    def poll(self) -> list[Report]:
        out = []
        for reports, _ in self._conns.values():
            with contextlib.suppress(EOFError, OSError):  # a trial process that died
                while reports.poll():
                    out.append(reports.recv())
        return out

    def stop(self, trial: int) -> None:
        if trial in self._conns:
            with contextlib.suppress(OSError):  # it ended meanwhile
                self._conns[trial][1].send(None)

    def forget(self, trial: int) -> None:
        for conn in self._conns.pop(trial, ()):
            conn.close()

    def close(self) -> None:
        for trial in list(self._conns):
            self.forget(trial)


# --- the interface ----------------------------------------------------------------------------
class Executor(ABC):
    """Runs functions elsewhere, ``max_workers`` at a time; see the module docstring."""

    max_workers: int

    @abstractmethod
    def submit(self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None,
               **kwargs: Any) -> Future:
        """Schedule ``fn(*args, **kwargs)``; past ``timeout`` seconds of running it is killed."""

    @abstractmethod
    def progress_channel(self) -> ProgressChannel:
        """A channel whose reporters work inside this executor's workers."""

    @abstractmethod
    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop the executor; with ``cancel_futures`` running work is killed and queued work dropped."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        """Waits even on an error (Ctrl-C): the killed work is reaped before the loop exits (a
        grace period at most), not raced by the interpreter's own exit."""
        self.shutdown(wait=True, cancel_futures=exc[0] is not None)


def _settle(future: Future, result: Any = None, exception: BaseException | None = None) -> bool:
    """Complete ``future`` unless something else (a timeout, a cancel) already did."""
    try:
        if exception is not None:
            future.set_exception(exception)
        else:
            future.set_result(result)
    except InvalidStateError:
        return False
    return True


# --- local processes ---------------------------------------------------------------------------
def _child_main(conn: Connection, lifeline: Connection, grace: float, fn: Callable[..., Any],
                args: tuple, kwargs: dict) -> None:
    """Entry point of a trial process: run ``fn`` and send back its result or its error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the loop's to handle, not the trial's
    signal.signal(signal.SIGTERM, _on_sigterm)  # terminate -> runners clean up (kill programs)
    threading.Thread(target=_die_with_loop, args=(lifeline, grace), name="boanon-lifeline",
                     daemon=True).start()
    try:
        conn.send(("started",))  # the trial's timeout counts from here: start-up is not its work
    except OSError:  # the loop is gone
        return
    message = _outcome(fn, args, kwargs)
    try:
        conn.send(message)
    except OSError:  # the loop is gone: nobody to tell
        return
    except Exception as exc:  # an unpicklable result
        conn.send(("error", TrialFailed(f"cannot send the result back: {exc}"), traceback.format_exc()))
    conn.close()


_in_trial = False
"""Whether this trial process is inside the trial's function (see :func:`_on_sigterm`)."""


def _outcome(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """The message for the loop: ``fn``'s result, or its error (a SIGTERM while it runs too)."""
    global _in_trial
    try:
        _in_trial = True
        try:
            return ("ok", fn(*args, **kwargs))
        finally:
            _in_trial = False
    except BaseException as exc:  # noqa: BLE001  (every failure goes back to the loop)
        return ("error", _portable(exc), traceback.format_exc())


def _on_sigterm(signum: int, frame: object) -> None:
    """Inside the trial's function, a KeyboardInterrupt: the runner kills its program and
    cleans up. Anywhere else (starting up, sending the result, exiting) the plain death by
    SIGTERM: the loop has given up on the trial, and a KeyboardInterrupt there escaped
    ``_child_main`` and printed a traceback on the user's terminal (a Ctrl-C just as a trial
    ended)."""
    if _in_trial:
        raise KeyboardInterrupt
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _die_with_loop(lifeline: Connection, grace: float) -> None:
    """Block until the loop's end of ``lifeline`` closes (the loop exited or was killed: only it
    holds that end), then stop as on a timeout: SIGTERM (runners kill their programs), SIGKILL
    after ``grace`` seconds. A parent-death signal cannot do this: the parent of a trial process
    is the fork server, which outlives a killed loop."""
    with contextlib.suppress(EOFError, OSError):
        while True:
            lifeline.recv_bytes()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace)
    os.kill(os.getpid(), signal.SIGKILL)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`TrialFailed` carrying its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return TrialFailed(f"{type(exc).__name__}: {exc}")
    return exc


@dataclass
class _Task:
    future: Future
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict
    timeout: float | None
    process: Any = None
    conn: Connection | None = None
    deadline: float = float("inf")  # when it is terminated (SIGTERM): its timeout once started
    kill_due: float = float("inf")  # when a terminated process is killed (SIGKILL)
    started: bool = False  # the process said it is about to run the function
    outcome: tuple | None = field(default=None, repr=False)


class LocalExecutor(Executor):
    """Each task in its own process, at most ``max_workers`` at once.

    A process per trial costs a fork from a server that imported ``preload`` once (``forkserver``;
    by default the main module and the runners: a trial process re-runs the main module, and
    without its imports cached every trial would import them again) and buys isolation: a hung
    trial is terminated (SIGTERM, so a command runner kills its program; SIGKILL after ``grace``
    seconds) and a crashing one takes only itself down. Trial processes die with the loop: each
    watches a pipe only the loop writes to and stops when it closes, so a killed run (even by
    SIGKILL) leaves nothing running, and the fork server dies with the loop
    (:mod:`boanon.forkserver_guard`). A trial's ``timeout`` counts from when its process is ready
    to run it; a process that takes over ``start_timeout`` seconds to get there is killed too.
    """

    def __init__(self, max_workers: int | None = None, grace: float = 2.0,
                 preload: tuple[str, ...] | None = None, start_timeout: float = 60.0):
        self.max_workers = int(max_workers or os.cpu_count() or 1)
        if self.max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self.grace = float(grace)
        self.start_timeout = float(start_timeout)
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        self._context = multiprocessing.get_context(method)
        if method == "forkserver":
            self._context.set_forkserver_preload(["boanon.forkserver_guard",
                                                  *(preload or _default_preload())])
            # started from this thread, not the monitor's: the server dies with the thread that
            # started it (forkserver_guard), and the caller's thread is the one that lives as long
            from multiprocessing import forkserver
            forkserver.ensure_running()
        self._queue: deque[_Task] = deque()
        self._active: list[_Task] = []
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = self._context.Pipe(duplex=False)
        self._lifeline, self._lifeline_w = self._context.Pipe(duplex=False)  # see _die_with_loop
        self._closing = False
        self._monitor = threading.Thread(target=self._run, name="boanon-local-executor", daemon=True)
        self._monitor.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None,
               **kwargs: Any) -> Future:
        if self._closing:
            raise RuntimeError("cannot submit after shutdown")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be > 0 seconds")
        future: Future = Future()
        with self._lock:
            self._queue.append(_Task(future, fn, args, kwargs, timeout))
        self._wake()
        return future

    def progress_channel(self) -> ProgressChannel:
        return _LocalChannel(self._context)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._lock:
            if cancel_futures:
                for task in self._queue:
                    task.future.cancel()
                self._queue.clear()
                for task in self._active:
                    self._terminate(task, "the executor was shut down")
            self._closing = True
        self._wake()
        if wait:
            self._monitor.join()

    # --- the monitor thread -------------------------------------------------------------------
    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send_bytes(b"x")

    def _run(self) -> None:
        while True:
            with self._lock:
                self._start_queued()
                if self._closing and not self._active and not self._queue:
                    self._lifeline_w.close()
                    return
                waitables: list[Any] = [self._wake_r]
                for task in self._active:
                    waitables += [task.conn, task.process.sentinel]
                now = time.monotonic()
                due = min((min(t.deadline, t.kill_due) for t in self._active), default=float("inf"))
            ready = wait(waitables, timeout=None if due == float("inf") else max(0.0, due - now))
            if self._wake_r in ready:
                with contextlib.suppress(EOFError, OSError):
                    while self._wake_r.poll():
                        self._wake_r.recv_bytes()
            with self._lock:
                self._collect(set(ready))
                self._enforce_deadlines()

    def _start_queued(self) -> None:
        while self._queue and len(self._active) < self.max_workers and not self._closing:
            task = self._queue.popleft()
            if not task.future.set_running_or_notify_cancel():
                continue
            receiver, sender = self._context.Pipe(duplex=False)
            task.process = self._context.Process(target=_child_main, name="boanon-trial", daemon=False,
                                                 args=(sender, self._lifeline, self.grace, task.fn,
                                                       task.args, task.kwargs))
            try:
                task.process.start()
            except Exception as exc:
                receiver.close()
                _settle(task.future, exception=WorkerLost(f"cannot start a worker process: {exc}"))
                continue
            finally:
                sender.close()
            task.conn = receiver
            if task.timeout is not None:  # until it says it started (see _collect)
                task.deadline = time.monotonic() + self.start_timeout + task.timeout
            self._active.append(task)

    def _collect(self, ready: set[Any]) -> None:
        for task in list(self._active):
            exited = task.process.sentinel in ready
            while task.outcome is None and (exited or task.conn in ready) and task.conn.poll():
                message = _receive(task.conn)
                if message[0] != "started":
                    task.outcome = message
                    continue
                task.started = True
                if task.timeout is not None and task.deadline != float("inf"):  # not terminated
                    task.deadline = time.monotonic() + task.timeout
            if task.outcome is None and not exited:
                continue
            task.process.join(timeout=self.grace)  # a child that sent its result exits at once
            if task.process.is_alive():
                task.process.kill()
                task.process.join()
            self._finish(task)

    def _finish(self, task: _Task) -> None:
        self._active.remove(task)
        task.conn.close()
        outcome = task.outcome or ("dead",)
        if outcome[0] == "ok":
            _settle(task.future, outcome[1])
        elif outcome[0] == "error":
            _settle(task.future, exception=outcome[1])
        else:  # a no-op when a timeout or a shutdown already failed the future
            _settle(task.future, exception=WorkerLost(
                f"worker process {task.process.pid} died ({_exit_reason(task.process.exitcode)})"))
        task.process.close()

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for task in self._active:
            if now >= task.deadline:
                _settle(task.future, exception=TrialTimeout(
                    f"trial timed out after {task.timeout:g} s and was killed"
                    if task.started else f"trial process did not start within "
                    f"{self.start_timeout:g} s and was killed"))
                self._terminate(task, f"timed out after {task.timeout:g} s")
            elif now >= task.kill_due:
                task.kill_due = float("inf")
                task.process.kill()

    def _terminate(self, task: _Task, why: str) -> None:
        """SIGTERM now (runners clean up), SIGKILL after the grace period."""
        _settle(task.future, exception=WorkerLost(f"trial process terminated: {why}"))
        task.deadline = float("inf")
        if task.process.is_alive():
            task.kill_due = time.monotonic() + self.grace
            task.process.terminate()


def _receive(conn: Connection) -> tuple:
    try:
        return conn.recv()
    except (EOFError, OSError):
        return ("dead",)
    except Exception as exc:  # a result that does not unpickle here
        return ("error", TrialFailed(f"cannot read the trial's result: {exc}"), "")


def _default_preload() -> list[str]:
    """The main module (by path, and by name when run with ``python -m``), the modules it
    imports, and the runners.

    A trial process re-runs the main module. The fork server is meant to import it once, but
    Python (3.11 here) passes the server no main path, so it never does: each trial re-ran a
    console script's ``from boanon.cli import main`` in full, seconds per trial. With the main
    module's own imports in the server, that re-run is a lookup in ``sys.modules``."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    return ["__main__", *([name] if name else []), *_imports_of(main), "boanon.parallel",
            "boanon.targets"]


def _imports_of(module: Any) -> list[str]:
    """The modules ``module``'s top-level code imports (read from its compiled source) that
    this process has loaded."""
    path = getattr(module, "__file__", None)
    if not path:
        return []
    try:
        code = compile(Path(path).read_bytes(), path, "exec")
    except (OSError, SyntaxError, ValueError):
        return []
    names = {i.argval for i in dis.get_instructions(code) if i.opname == "IMPORT_NAME"}
    return sorted(n for n in names if isinstance(n, str) and n in sys.modules)


def _exit_reason(exitcode: int | None) -> str:
    if exitcode is None:
        return "exit status unknown"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode} before sending a result"


# --- Dask -------------------------------------------------------------------------------------
@dataclass
class _DaskReporter:
    trial: int
    queue_name: str
    event_prefix: str

    def __call__(self, step: int, value: float) -> bool:
        from distributed import Event, Queue

        Queue(self.queue_name).put((self.trial, int(step), float(value)))
        return not Event(f"{self.event_prefix}-{self.trial}").is_set()


class _DaskChannel(ProgressChannel):
    """A Dask queue for reports and one Dask event per trial for stops (scheduler-side, so it
    works across hosts without a shared filesystem)."""

    def __init__(self, client: Any):
        from distributed import Queue

        name = f"boanon-progress-{uuid.uuid4().hex[:12]}"
        self._client = client
        self._queue = Queue(name, client=client)
        self._queue_name, self._prefix = name, f"{name}-stop"
        self._stopped: set[int] = set()

    def reporter(self, trial: int) -> _DaskReporter:
        return _DaskReporter(trial, self._queue_name, self._prefix)

    def poll(self) -> list[Report]:
        if self._queue.qsize() == 0:
            return []
        return [tuple(r) for r in self._queue.get(batch=True)]

    def stop(self, trial: int) -> None:
        from distributed import Event

        Event(f"{self._prefix}-{trial}", client=self._client).set()
        self._stopped.add(trial)

    def forget(self, trial: int) -> None:
        """Drop the trial's stop event from the scheduler (events live until cleared)."""
        from distributed import Event

        if trial in self._stopped:
            self._stopped.discard(trial)
            Event(f"{self._prefix}-{trial}", client=self._client).clear()

    def close(self) -> None:
        for trial in list(self._stopped):
            self.forget(trial)


def _call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return fn(*args, **kwargs)


class DaskExecutor(Executor):
    """Trials as tasks of a Dask cluster: ``address`` of a running scheduler
    (``tcp://host:8786``) or a cluster object of any Dask deployment (the caller keeps it and
    closes it), or None for a local cluster of ``n_workers`` processes on 127.0.0.1.

    A worker that dies fails its trial at once with :class:`WorkerLost`. A trial past its timeout
    fails with :class:`TrialTimeout` and its worker is restarted through its nanny, the only way
    to stop a task stuck in a Dask worker. The local cluster runs one thread per worker with
    ``distributed.scheduler.allowed-failures = 0`` (a trial that kills its worker is not retried
    elsewhere) and ``worker-saturation = 1.0`` (no trial waits on a worker behind another, so a
    restart takes down only the hung trial); docs/parallel.md shows the same for a remote cluster.
    """

    def __init__(self, address: Any = None, n_workers: int | None = None,
                 connect_timeout: float = 30.0):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("the Dask executor needs dask.distributed: "
                              "pip install 'boanon[dask]'") from exc
        self._cluster = None
        if address is None or address == "local":
            self._cluster = local_cluster(n_workers or os.cpu_count() or 1)
            self.client = Client(self._cluster)
        else:  # a scheduler's address, or a cluster object of any Dask deployment
            try:
                self.client = Client(address, timeout=connect_timeout)
            except OSError as exc:
                raise WorkerLost(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
        threads = sum(self.client.nthreads().values())
        self.max_workers = int(n_workers or threads or 1)
        self._keys = itertools.count()
        self._lock = threading.Lock()
        self._tasks: dict[str, tuple[Any, Future, float | None]] = {}  # key -> (dask future, ours, timeout)
        self._started: dict[str, tuple[float, str]] = {}  # key -> (when seen running, worker)
        self._expired: set[str] = set()
        self._closing = threading.Event()
        # restarting a worker takes seconds: on the watchdog's thread, no other trial's clock
        # started meanwhile, and a trial that began then could run past its timeout unfailed;
        # one restart at a time, as before (two at once left the first waiting past a minute)
        self._restarter = ThreadPoolExecutor(1, thread_name_prefix="boanon-dask-restart")
        self._watchdog = threading.Thread(target=self._watch, name="boanon-dask-timeouts", daemon=True)
        self._watchdog.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, timeout: float | None = None,
               **kwargs: Any) -> Future:
        if self._closing.is_set():
            raise RuntimeError("cannot submit after shutdown")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be > 0 seconds")
        future: Future = Future()
        future.set_running_or_notify_cancel()
        key = f"boanon-{getattr(fn, '__name__', 'task')}-{next(self._keys)}-{uuid.uuid4().hex[:8]}"
        task = self.client.submit(_call, fn, args, kwargs, key=key, pure=False)
        with self._lock:
            self._tasks[key] = (task, future, None if timeout is None else float(timeout))
        task.add_done_callback(lambda t: self._done(t, future))
        return future

    def _done(self, task: Any, future: Future) -> None:
        with self._lock:
            self._tasks.pop(task.key, None)
            self._started.pop(task.key, None)
            if task.key in self._expired:  # the watchdog settles a trial past its timeout
                self._expired.discard(task.key)
                return
        if task.status == "finished":
            try:
                _settle(future, task.result())
            except Exception as exc:  # the result could not be fetched: the worker holding it went
                _settle(future, exception=WorkerLost(f"the trial's result was lost: {exc}"))
        elif task.status == "error":
            exc = task.exception()
            if type(exc).__name__ == "KilledWorker":
                exc = WorkerLost(f"the Dask worker running the trial died or was lost ({exc})")
            _settle(future, exception=exc)
        else:
            _settle(future, exception=WorkerLost(
                f"the trial's task was {task.status} (lost connection to the Dask scheduler?)"))

    def _watch(self) -> None:
        """Start a trial's clock when the scheduler runs it; restart the worker of a trial past its
        timeout."""
        while not self._closing.wait(0.5):
            with self._lock:
                timed = {k: v for k, v in self._tasks.items() if v[2] is not None}
            if not timed:
                continue
            try:
                processing = self.client.processing()
            except Exception:  # the scheduler is unreachable: the futures will report it
                continue
            now = time.monotonic()
            for worker, keys in processing.items():
                for key in keys:
                    if key in timed:
                        self._started.setdefault(key, (now, worker))
            for key, (task, future, timeout) in timed.items():
                started = self._started.get(key)
                if started is None or now - started[0] < timeout:
                    continue
                with self._lock:
                    self._tasks.pop(key, None)
                    self._expired.add(key)  # its cancellation is not a lost connection
                task.cancel()
                self._restarter.submit(self._restart, started[1], future, timeout)

    def _restart(self, worker: str, future: Future, timeout: float) -> None:
        """Restart the worker of a trial past its timeout, then fail the trial: not before, or
        the loop's next trial could land on the worker being restarted."""
        with contextlib.suppress(Exception):  # blocks until the worker is back
            self.client.restart_workers([worker], raise_for_error=False)
        _settle(future, exception=TrialTimeout(
            f"trial timed out after {timeout:g} s; its Dask worker {worker} was restarted"))

    def progress_channel(self) -> ProgressChannel:
        return _DaskChannel(self.client)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self._closing.set()
        self._watchdog.join()
        self._restarter.shutdown(wait=True)
        if cancel_futures:
            with self._lock:
                tasks = [t for t, _, _ in self._tasks.values()]
            with contextlib.suppress(Exception):
                self.client.cancel(tasks)
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def local_cluster(n_workers: int) -> Any:
    """A Dask cluster of ``n_workers`` single-threaded processes on 127.0.0.1, with the scheduler
    settings a tuning loop needs (see :class:`DaskExecutor`)."""
    import dask
    from distributed import LocalCluster

    # its nannies run in this process: a timed-out trial's restart is the loop's doing, which the
    # trial's failure says ("its Dask worker ... was restarted"), not warnings among the trial lines
    logging.getLogger("distributed.nanny").addFilter(_not_restarting)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0}):
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                            host="127.0.0.1", dashboard_address=None, preload=[__name__])


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each worker process of :func:`local_cluster` as it starts:
    Ctrl-C is the loop's to handle, not the trial's (as in a local trial process). A terminal's
    Ctrl-C reaches every process of its group, and each worker it reached died printing a
    traceback, and the scheduler warnings about it, over the loop's own message. A trial's
    task cancelled is the loop's doing too (a timeout, the run stopping), not a warning."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed.worker.state_machine").addFilter(_not_cancelled)


def _not_cancelled(record: logging.LogRecord) -> bool:
    return not record.getMessage().endswith("ended with CancelledError")


def _not_restarting(record: logging.LogRecord) -> bool:
    """Not the nanny's account of a restart the watchdog asked for (a hung trial's worker is
    killed, then started again)."""
    message = record.getMessage()
    return not (message.startswith("Restarting worker")
                or message.startswith("Worker process still alive after"))


def make_executor(workers: int | None = None, dask: str | None = None) -> Executor:
    """The executor for ``--workers N`` / ``--dask ADDRESS|local``: local processes unless a Dask
    scheduler address (or ``local``: a Dask cluster on 127.0.0.1) is given. Without ``workers`` a
    Dask executor keeps one trial per worker thread of the cluster busy."""
    if dask is not None:
        return DaskExecutor(None if dask == "local" else dask, n_workers=workers)
    return LocalExecutor(workers)
