"""The trial store: one SQLite file holding a whole tuning run.

Every trial is written when it starts (status ``running``) and again when it ends (``done`` with
its parameters, metrics and objectives; ``stopped`` early by an early-stopping rule, with what it
measured until then; or ``failed`` with its error), so a run killed at any
moment loses nothing that finished: ``--resume`` reads the file back, marks the trials that were
left ``running`` as ``interrupted`` and runs their configurations again, once: a
configuration the run died on twice is failed for good (it may be what kills the run).

The file is shared safely between processes: WAL journal, a busy timeout, every write in a short
``BEGIN IMMEDIATE`` transaction, and retries when SQLite still reports the database as locked.
Graphs are stored once each (keyed by their hash) and referenced by the trials that used them.

A store is untrusted input: ``read_only=True`` (``status``, ``export``, a warm start) opens it
through SQLite's ``mode=ro`` and never creates or changes a file (with ``follow=True``, the
dashboard's way of watching a live run, SQLite may leave ``-wal``/``-shm`` files beside an idle
store; the database file itself is never changed); a file that is not a BoAnon
store is refused rather than given BoAnon's tables; and a damaged database or a row that does not
decode (hand-edited JSON, wrong types) is a :class:`~boanon.errors.StoreError` naming the store
and the row, never a traceback from deep inside.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from boanon.errors import ConfigError, StoreError
from boanon.graph import CausalGraph
from boanon.study import Study
from boanon.table import TrialRecord, records_to_table

SCHEMA_VERSION = 3  # 2: status "stopped"; 3: status "interrupted" (was "failed" + an error text)
INTERRUPTED = "interrupted"
"""The error of a trial whose run was stopped (Ctrl-C, SIGTERM); its configuration runs again on
resume."""
DIED = "interrupted: the run died while it ran"
"""The error of a trial a dead run left ``running`` (SIGKILL, a crash in native code, the OOM
killer); its configuration runs again on resume, unless it was already the re-run of one."""
DIED_TWICE = "the run died twice while this configuration ran"
"""The start of the error of a failed trial whose configuration was running both times a run died."""
RERUN = (INTERRUPTED, DIED)
"""The errors of interrupted trials: which stop it was (stores before schema 3 wrote them on
``failed`` trials, read as interrupted)."""


class TrialState(str, Enum):
    """Where a trial stands, as the ``status`` column stores it: the one encoding the type hints,
    the column's CHECK and every reader use. ``INTERRUPTED``: the run stopped or died under the
    trial (its error says which); its configuration runs again on resume."""

    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__
    __hash__ = str.__hash__  # a state and its text are one key: ``counts()[TrialState.DONE]``


Status = TrialState
STATUSES: tuple[TrialState, ...] = tuple(TrialState)
"""The ``status`` column's values."""
MEASURED = (TrialState.DONE, TrialState.STOPPED)
"""Statuses of trials whose metrics feed the model."""
ACTIVITY_NOTE = "activity"  # what the tuning process does now (Store.set_activity)
PROPOSING, RUNNING_TRIALS = "proposing", "running trials"
AT_WORK = (PROPOSING, RUNNING_TRIALS)
"""The activities of a tuning loop at work: one whose process is gone was killed."""
CONFIG_NOTE, TRIALS_NOTE, DIRECTORY_NOTE = "config_file", "trials_dir", "run_directory"
"""Notes ``boanon tune`` keeps: where the run's YAML and trial directories are, and the directory it
was started in, which the YAML's relative paths are relative to (``boanon explain --measure``, and
``boanon status``'s way to resume a killed run)."""
RESUME_NOTE = "resume_command"
"""The note of how the run is continued (``boanon status`` of a killed run): its command line's
options kept."""
_LEGACY_STATE = (f"CASE WHEN status = 'failed' AND error IN ({', '.join(repr(e) for e in RERUN)})"
                 f" THEN '{TrialState.INTERRUPTED.value}' ELSE status END")
"""A row's state in SQL, also in a store written before schema 3 opened read-only (not migrated)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
    id INTEGER PRIMARY KEY,
    created TEXT NOT NULL,
    spec TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS graphs (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ({statuses})),
    config TEXT NOT NULL,
    params TEXT,
    metrics TEXT,
    objectives TEXT,
    error TEXT,
    started TEXT NOT NULL,
    finished TEXT,
    graph_id INTEGER REFERENCES graphs(id),
    surrogate TEXT,
    reason TEXT,
    info TEXT,
    retry_of INTEGER REFERENCES trials(id)
);
CREATE INDEX IF NOT EXISTS trials_status ON trials(status);
""".replace("{statuses}", ", ".join(f"'{s.value}'" for s in STATUSES))

T = TypeVar("T")
MEMORY = ":memory:"
"""SQLite's name for a database in memory (a run that leaves no file)."""
_SQLITE_FULL = 13
"""SQLite's result code for a full disk (``sqlite3.SQLITE_FULL`` from Python 3.11)."""


def trials_dir(store: Store | str | Path, given: str | Path | None = None) -> Path:
    """Where a run's trial logs go: ``given`` when set, else ``<store>.trials`` beside the store
    file; an in-memory store, which has no file to sit beside, has a temporary directory for its
    life (:meth:`Store.scratch_trials`)."""
    if given:
        return Path(given)
    if isinstance(store, Store):
        return store.scratch_trials() if store.in_memory else store.path.with_suffix(".trials")
    if str(store) == MEMORY:
        raise ValueError("an in-memory store's trial folders are its Store object's: pass the Store")
    return Path(store).with_suffix(".trials")


def _remove_scratch(path: Path, owner: int) -> None:
    """Remove an in-memory store's trial folders, in the process that made them only (a forked
    child that exits through Python runs its parent's finalizers too)."""
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


def trial_name(trial_id: int) -> str:
    """The trial's name in the table and its directory name: ``t0007``."""
    return f"t{trial_id:04d}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def dump_json(value: Any, sort_keys: bool = False) -> str:
    """JSON that round-trips floats exactly and keeps key order (parameters stay in space order);
    NaN/inf become null (they are not JSON)."""
    return json.dumps(_finite(value), sort_keys=sort_keys, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic):
        return _finite(value.item())
    return value


@dataclass
class StoredTrial:
    """One row of the ``trials`` table, decoded."""

    id: int
    name: str
    status: Status
    config: dict[str, Any]
    started: str
    finished: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    graph_id: int | None = None
    surrogate: str | None = None
    reason: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    retry_of: int | None = None

    @property
    def state(self) -> TrialState:
        return TrialState(self.status)

    @property
    def interrupted(self) -> bool:
        return self.status == TrialState.INTERRUPTED

    @property
    def ran_until(self) -> str | None:
        """When the trial stopped running, where known (None while it runs): a trial a dead run
        left ``running`` was closed when the store was next recovered, so its ``finished`` says
        when the run came back, not when it died."""
        died = self.error is not None and self.error.startswith((DIED, DIED_TWICE))
        return None if died else self.finished

    def record(self) -> TrialRecord:
        """The trial as the adapter gave it (values that were NaN or infinite left out)."""
        def kept(values: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in values.items() if v is not None}
        return TrialRecord(self.name, kept(self.params), kept(self.metrics), kept(self.objectives))


class Store:
    """A tuning run in one SQLite file (created on first use).

    One :class:`Store` object may be shared by threads; several processes may open the same file.
    """

    def __init__(self, path: str | Path, timeout: float = 30.0, retries: int = 20,
                 read_only: bool = False, create: bool = True, follow: bool = False):
        self.path = Path(path)
        self.retries = retries
        self.read_only = read_only
        self.closed = False
        self._lock = threading.RLock()
        self._scratch: tuple[Path, weakref.finalize] | None = None  # an in-memory store's trial folders
        if (read_only or not create) and not self.path.is_file():
            raise StoreError(self.path, "store", "no such file")
        try:
            self._conn = connect_read_only(self.path, timeout, follow) if read_only else \
                sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(self.path, "store", f"cannot open it ({exc})") from None
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._check_kind(empty_ok=create and not read_only)
            if not read_only:
                self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
                self._write(self._migrate)  # before foreign keys are on: a migration rebuilds tables
                self._conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            self._conn.close()
            raise

    def _check_kind(self, empty_ok: bool) -> None:
        """Refuse a file that is not a BoAnon store: not SQLite, damaged, another program's
        database (it would gain BoAnon's tables), or empty where a run must already be."""
        with self._read() as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if {"meta", "trials"} <= tables:
            with self._read() as conn:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None or not str(row[0]).isdigit():
                raise StoreError(self.path, "meta", "no schema version: not a BoAnon run store")
            if int(row[0]) > SCHEMA_VERSION:
                raise ConfigError(self.path, "schema_version",
                                  f"store has schema version {row[0]}; this BoAnon reads "
                                  f"versions up to {SCHEMA_VERSION}")
        elif {"studies", "version_info"} <= tables:  # a likely mix-up: say how to make a store of it
            raise StoreError(self.path, "store", "not a BoAnon run store but an Optuna storage: "
                             f"`boanon import sqlite:///{self.path} --study NAME -o RUN.db` copies a "
                             "study into a new store")
        elif tables:
            raise StoreError(self.path, "store", "not a BoAnon run store (a database with tables "
                             + ", ".join(sorted(tables)[:5]) + ")")
        elif not empty_ok:
            raise StoreError(self.path, "store", "not a BoAnon run store (an empty database: no run "
                             "was ever recorded here)")

    # --- plumbing ------------------------------------------------------------------------------
    @property
    def in_memory(self) -> bool:
        return str(self.path) == MEMORY

    def scratch_trials(self) -> Path:
        """An in-memory store's trial folders: one temporary directory (``boanon-trials-*``),
        made when first asked for and removed when the store closes or is collected, or at exit.
        Nothing outlives the store to read them (its trials go with it, and a stored trial
        records no folder), so they were only ever left behind, one directory per loop; a run
        whose logs are to be kept names its ``trials_dir`` (never removed) or a store file."""
        with self._lock:
            if self._scratch is None:
                path = Path(tempfile.mkdtemp(prefix="boanon-trials-"))
                self._scratch = path, weakref.finalize(self, _remove_scratch, path, os.getpid())
            return self._scratch[0]

    def close(self) -> None:
        with self._lock:
            if not self.read_only:
                self._checkpoint()
            self._conn.close()
            self.closed = True
            if self._scratch is not None:
                self._scratch[1]()

    def _checkpoint(self) -> None:
        """Copy the WAL's trials into the database file before a writer lets go of it. SQLite does
        so on the last connection's close only: a run that ends while a reader has the store open
        (``boanon dashboard``, ``tune --dashboard``) left every trial in ``run.db-wal`` and a
        4 KiB ``run.db``, so a copy of ``run.db`` (to share or ``explain --measure`` it) held no
        run. ``PASSIVE`` never waits for a reader; a failure (a full disk) leaves the WAL, which
        still holds every trial, as it was."""
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn``, retrying with back-off while SQLite says the database is locked or busy."""
        for attempt in range(self.retries + 1):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if attempt == self.retries or not _is_lock(exc):
                    raise
                time.sleep(min(0.05 * 2 ** attempt, 2.0))
        raise AssertionError("unreachable")

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one immediate (write-locking) transaction, retried when locked."""
        if self.read_only:
            raise StoreError(self.path, "store", "opened read-only: nothing can be recorded")
        def attempt() -> T:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(self._conn)
                    # a COMMIT that fails (locked under a rollback journal) leaves the transaction
                    # open: roll it back too, or the retry's BEGIN fails for good
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                return out
        with self._damage_named():
            return self._retry(attempt)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._damage_named():
            yield self._conn

    @contextmanager
    def _damage_named(self) -> Iterator[None]:
        """SQLite's errors on a damaged or foreign file as one error naming the store (a lock
        that outlasts the retries stays what it is)."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _is_lock(exc):
                raise
            if self.closed:  # this process's use after close(): the file is not at fault
                raise StoreError(self.path, "store", "closed (Store.close, Tuner.close or the end of "
                                 "their with block): open it again to read or write") from None
            if _is_full(exc):  # SQLite rolled the write back: what was committed is intact
                raise StoreError(self.path, "store", f"disk full: cannot write to it (SQLite: {exc}); "
                                "nothing stored before was lost: free space, then resume") from None
            raise StoreError(self.path, "store", f"not a BoAnon run store, or damaged "
                             f"(SQLite: {exc})") from None

    def version(self) -> tuple[int, int]:
        """Changes whenever anything is committed to the store, by this connection or another
        (SQLite's ``data_version`` and this connection's change count): a reader's cache of
        what it read stays valid while the version does."""
        with self._read() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes

    def _migrate(self, conn: sqlite3.Connection) -> None:
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
            if has_meta else None
        version = None if row is None else int(row["value"])  # checked by _check_kind
        rebuild = version is not None and version < SCHEMA_VERSION
        if rebuild:  # the status CHECK changed: rebuild the trials table
            conn.execute("ALTER TABLE trials RENAME TO trials_v1")
            conn.execute("DROP INDEX IF EXISTS trials_status")
        for statement in filter(str.strip, _SCHEMA.split(";")):
            conn.execute(statement)
        if rebuild:  # interrupted trials were failed ones with an error in RERUN
            conn.execute("INSERT INTO trials SELECT * FROM trials_v1")
            conn.execute("DROP TABLE trials_v1")
            conn.execute(f"UPDATE trials SET status = {_LEGACY_STATE}")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    # --- notes --------------------------------------------------------------------------------
    def set_note(self, key: str, value: str) -> None:
        """Keep a note about the run that is not part of its specification (e.g. where its tuning
        YAML is, for ``boanon explain --measure``); a resume may change it."""
        self._write(lambda conn: conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                              (f"note:{key}", value)))

    def set_activity(self, state: str) -> None:
        """Record what the process tuning this run does now (``proposing``, ``running trials``,
        ``finished``, ``interrupted``...), since when, and which process it is: the dashboard, a
        view of the store in this process or another, says so (a proposal can take a minute)."""
        self.set_note(ACTIVITY_NOTE, dump_json({"state": state, "since": _now(), "pid": os.getpid(),
                                                "host": socket.gethostname()}))

    def activity(self) -> dict[str, Any] | None:
        """The last :meth:`set_activity`, with ``alive``: False when its process is known to be
        gone (same host, no such process), else True or None (another host: unknown); and
        ``killed``: gone while at work (:data:`AT_WORK`), not having said it ended (the views
        say so: a running trial of it runs no more)."""
        text = self.note(ACTIVITY_NOTE)
        if not text:
            return None
        try:
            out = json.loads(text)
        except ValueError:
            return None
        alive = None
        if out.get("host") == socket.gethostname() and isinstance(out.get("pid"), int):
            try:
                os.kill(out["pid"], 0)
                alive = True
            except ProcessLookupError:
                alive = False
            except PermissionError:  # someone else's process: it exists
                alive = True
        return {**out, "alive": alive, "killed": alive is False and out.get("state") in AT_WORK}

    def note(self, key: str) -> str | None:
        """A note kept by :meth:`set_note` (None when there is none)."""
        with self._read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (f"note:{key}",)).fetchone()
        return None if row is None else str(row["value"])

    # --- the study ------------------------------------------------------------------------------
    def study(self) -> Study | None:
        """The run's recorded specification (space, objectives, seed, strategy...), if any."""
        with self._read() as conn:
            row = conn.execute("SELECT id, spec FROM studies ORDER BY id LIMIT 1").fetchone()
        return None if row is None else self._study(row)

    def _study(self, row: sqlite3.Row) -> Study:
        where = f"studies row {row['id']}"
        try:
            return Study.from_dict(_json(row["spec"], self.path, where, "spec"))
        except ValueError as exc:
            raise StoreError(self.path, where, str(exc)) from None

    def init_study(self, study: Study) -> None:
        """Record ``study`` for a new run, or check that a resumed run has the same ``study``.

        A mismatch is a :class:`ConfigError` naming the fields that differ, so a run is never
        resumed with another search space, objective, seed or strategy by mistake. The one
        exception: the objectives may change while no trial has been measured (a misnamed
        objective stops a run after its first trial; the run resumes with the name fixed), and
        the outputs while one of them was logged by no measured trial (every trial was
        infeasible under them: a misnamed output stops a run after its initial design).
        """
        study = Study.from_dict(json.loads(dump_json(study.to_dict())))  # as it reads back
        text = dump_json(study.to_dict())

        def init(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT id, spec FROM studies ORDER BY id LIMIT 1").fetchone()
            if row is None:
                conn.execute("INSERT INTO studies (created, spec) VALUES (?, ?)", (_now(), text))
                return
            recorded = self._study(row)
            differ = recorded.differs(study)
            measured = conn.execute("SELECT COUNT(*) FROM trials WHERE status IN (?, ?)",
                                    [s.value for s in MEASURED]).fetchone()[0]
            if (differ == ["objectives"] and not measured) or \
                    (differ == ["outputs"] and self._an_output_unlogged(conn, recorded.outputs)):
                conn.execute("UPDATE studies SET spec = ? WHERE id = ?", (text, row["id"]))
            elif differ:
                raise ConfigError(self.path, ", ".join(differ), "differs from the run recorded in "
                                  f"this store{recorded.contrast(study, differ)}; resume with the "
                                  "same configuration or use another store")
        self._write(init)

    def _an_output_unlogged(self, conn: sqlite3.Connection, outputs: list[dict[str, Any]]) -> bool:
        """Whether one of the run's ``outputs`` was logged by no measured trial."""
        logged: set[str] = set()
        rows = conn.execute("SELECT id, metrics, objectives FROM trials WHERE status IN (?, ?)",
                            [s.value for s in MEASURED])
        for row in rows:
            for col in ("metrics", "objectives"):
                logged |= set(_json(row[col], self.path, f"trials row {row['id']}", col))
        return any(o.get("name") not in logged for o in outputs)

    # --- graphs ---------------------------------------------------------------------------------
    def add_graph(self, graph: CausalGraph) -> int:
        """Store ``graph`` once (identical graphs share a row) and return its id."""
        text = dump_json(graph.to_dict(), sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()

        def add(conn: sqlite3.Connection) -> int:
            conn.execute("INSERT OR IGNORE INTO graphs (sha256, json) VALUES (?, ?)", (digest, text))
            return int(conn.execute("SELECT id FROM graphs WHERE sha256 = ?", (digest,)).fetchone()[0])
        return self._write(add)

    def last_graph_id(self) -> int | None:
        """The graph of the latest trial that used one (the structure a run goes on with), else the
        last graph stored (a fixed graph before its first structured trial), else None."""
        with self._read() as conn:
            row = conn.execute("SELECT graph_id FROM trials WHERE graph_id IS NOT NULL"
                               " ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                row = conn.execute("SELECT MAX(id) FROM graphs").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def graph(self, graph_id: int) -> CausalGraph:
        with self._read() as conn:
            row = conn.execute("SELECT json FROM graphs WHERE id = ?", (graph_id,)).fetchone()
        if row is None:
            raise KeyError(f"{self.path}: no graph with id {graph_id}")
        where = f"graphs row {graph_id}"
        try:
            return CausalGraph.from_dict(_json(row["json"], self.path, where, "json"), source=where)
        except ValueError as exc:
            raise StoreError(self.path, where, str(exc)) from None

    # --- trials ---------------------------------------------------------------------------------
    def start_trial(self, config: Mapping[str, Any], surrogate: str | None = None,
                    reason: str | None = None, info: Mapping[str, Any] | None = None,
                    graph_id: int | None = None, retry_of: int | None = None) -> StoredTrial:
        """Record a trial about to run; ids are consecutive from 0 across all processes."""
        started = _now()

        def start(conn: sqlite3.Connection) -> int:
            trial_id = int(conn.execute("SELECT COALESCE(MAX(id) + 1, 0) FROM trials").fetchone()[0])
            conn.execute(
                "INSERT INTO trials (id, name, status, config, started, graph_id, surrogate, reason,"
                " info, retry_of) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (trial_id, trial_name(trial_id), dump_json(dict(config)), started, graph_id, surrogate,
                 reason, dump_json(dict(info or {})), retry_of))
            self._check_readable(conn, trial_id)
            return trial_id
        return self.trial(self._write(start))

    def finish_trial(self, trial_id: int, record: TrialRecord, stopped: bool = False) -> None:
        """Mark a running trial done with what its logs gave (``stopped``: ended early by an
        early-stopping rule; what it measured until then still feeds the model)."""
        numbers = [{k: float(v) if isinstance(v, bool) else v for k, v in values.items()}  # as the reader
                   for values in (record.metrics, record.objectives)]                     # checks them
        self._end(trial_id, TrialState.STOPPED if stopped else TrialState.DONE,
                  (dump_json(record.params), dump_json(numbers[0]), dump_json(numbers[1]), None))

    def fail_trial(self, trial_id: int, error: str) -> None:
        """Mark a running trial failed with its error (the run goes on)."""
        self._end(trial_id, TrialState.FAILED, (None, None, None, error))

    def interrupt_trial(self, trial_id: int, error: str = INTERRUPTED) -> None:
        """Mark a running trial interrupted: the run stopped under it (``error`` says how); its
        configuration runs again on resume."""
        self._end(trial_id, TrialState.INTERRUPTED, (None, None, None, error))

    def set_times(self, trial_id: int, started: datetime, finished: datetime | None) -> None:
        """Record when an ended trial ran elsewhere (an imported Optuna trial): its copy's own
        times were the import's, so ``status`` said a study ran in 0 s and ``boanon plan`` took
        milliseconds for its trial durations. Naive times are local, as Optuna records them."""
        times = [None if t is None else t.astimezone(timezone.utc).isoformat(timespec="milliseconds")
                 for t in (started, finished)]

        def update(conn: sqlite3.Connection) -> None:
            if conn.execute("UPDATE trials SET started = ?, finished = COALESCE(?, finished) WHERE id = ?"
                            " AND status != 'running'", (*times, trial_id)).rowcount != 1:
                raise ValueError(f"{self.path}: no ended trial with id {trial_id}")
        self._write(update)

    def _end(self, trial_id: int, status: Status, values: tuple[str | None, ...]) -> None:
        def end(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT status FROM trials WHERE id = ?", (trial_id,)).fetchone()
            if row is None:
                raise KeyError(f"{self.path}: no trial with id {trial_id}")
            if row["status"] != "running":
                raise ValueError(f"{self.path}: trial {trial_name(trial_id)} is already "
                                 f"{row['status']}; only a running trial can end")
            conn.execute("UPDATE trials SET status = ?, params = ?, metrics = ?, objectives = ?,"
                         " error = ?, finished = ? WHERE id = ?",
                         (status.value, *values, _now(), trial_id))
            self._check_readable(conn, trial_id)
        self._write(end)

    def _check_readable(self, conn: sqlite3.Connection, trial_id: int) -> None:
        """A store never holds a row its own reader refuses (a NaN parameter stored as null would
        make every later ``status`` and ``--resume`` refuse the store): decode the row just
        written, inside its transaction, whose rollback a refusal causes."""
        try:
            self._decode(conn.execute("SELECT * FROM trials WHERE id = ?", (trial_id,)).fetchone())
        except StoreError as exc:
            raise StoreError(self.path, f"trial {trial_name(trial_id)}",
                             f"not recorded: it would not read back ({exc.reason})") from None

    def trial(self, trial_id: int) -> StoredTrial:
        with self._read() as conn:
            row = conn.execute("SELECT * FROM trials WHERE id = ?", (trial_id,)).fetchone()
        if row is None:
            raise KeyError(f"{self.path}: no trial with id {trial_id}")
        return self._decode(row)

    def trials(self, status: Status | tuple[Status, ...] | None = None) -> list[StoredTrial]:
        """All trials (or those with ``status``, one or several) in id order."""
        query, args = "SELECT * FROM trials", ()
        if status is not None:
            args = tuple(TrialState(s).value for s in ((status,) if isinstance(status, str) else status))
            query += f" WHERE {_LEGACY_STATE} IN ({', '.join('?' * len(args))})"
        with self._read() as conn:
            rows = conn.execute(query + " ORDER BY id", args).fetchall()
        return [self._decode(r) for r in rows]

    def recover(self) -> list[StoredTrial]:
        """After a kill: mark ``running`` trials interrupted (:data:`DIED`); return every
        interrupted trial not yet run again, oldest first.

        A trial left running that was itself the re-run of one a dead run left running is failed
        for good instead: its configuration was running both times the run died, so it may be
        what kills it (a callable that crashes the loop would otherwise be re-run forever).
        Call it only when no other process is running trials on this store.
        """
        def recover(conn: sqlite3.Connection) -> None:
            rows = conn.execute("SELECT t.id, t.name, o.name AS origin FROM trials AS t LEFT JOIN"
                                " trials AS o ON o.id = t.retry_of AND o.error = ?"
                                " WHERE t.status = 'running'", (DIED,)).fetchall()
            for row in rows:
                state, error = (TrialState.INTERRUPTED, DIED) if row["origin"] is None else (
                    TrialState.FAILED,
                    f"{DIED_TWICE} (as {row['origin']} and "
                    f"{row['name']}): it may crash the run (native code, memory); not run again")
                conn.execute("UPDATE trials SET status = ?, error = ?, finished = ?"
                             " WHERE id = ?", (state.value, error, _now(), row["id"]))
        self._write(recover)
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM trials AS t WHERE status = 'interrupted' AND NOT EXISTS"
                " (SELECT 1 FROM trials AS r WHERE r.retry_of = t.id) ORDER BY id").fetchall()
        return [self._decode(r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Trials by state: one key per :class:`TrialState` (each trial counted once)."""
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_LEGACY_STATE} AS state, COUNT(*) FROM trials"
                                " GROUP BY state").fetchall()
        out = {s.value: 0 for s in TrialState}
        out.update({r[0]: int(r[1]) for r in rows})
        return out

    def _decode(self, row: sqlite3.Row) -> StoredTrial:
        """One ``trials`` row, checked: a hand-edited or damaged row is named, not a traceback."""
        where = f"trials row {row['id']}"
        try:
            decoded = {k: _json(row[k], self.path, where, k, none_ok=k != "config")
                       for k in ("config", "params", "metrics", "objectives", "info")}
            trial = StoredTrial(
                id=row["id"], name=row["name"], status=_state(row["status"], row["error"]),
                started=row["started"],
                finished=row["finished"], error=row["error"], graph_id=row["graph_id"],
                surrogate=row["surrogate"], reason=row["reason"], retry_of=row["retry_of"],
                **{k: v or {} for k, v in decoded.items()})
        except IndexError as exc:  # a column dropped by hand
            raise StoreError(self.path, where, f"missing column ({exc})") from None
        problem = _row_problem(trial)
        if problem:
            raise StoreError(self.path, where, problem)
        return trial

    def to_table(self, statuses: tuple[Status, ...] = MEASURED) -> pd.DataFrame:
        """The measured (done or stopped) trials as the tidy table (the shape ``boanon ingest``
        gives); failed trials are left out (``trials(status="failed")`` lists them with their
        errors). The models learn from stopped trials too; the best trial and the Pareto front
        are read from ``statuses=("done",)``: a run cut short measured only part of itself."""
        return records_to_table(t.record() for t in self.trials(statuses))


def connect_read_only(path: Path, timeout: float, follow: bool = False) -> sqlite3.Connection:
    """``mode=ro``: SQLite cannot write the file. With no ``-wal`` file beside it no process has
    the store open (WAL removes it on the last close), and ``immutable=1`` keeps SQLite from
    creating the ``-wal``/``-shm`` files a read-only reader of a WAL database would leave; a
    reader that ``follow``s a run (the dashboard) must see later writes, so it never is (and
    may leave those side files beside an idle store)."""
    idle = not follow and not Path(f"{path}-wal").exists()
    uri = path.resolve().as_uri() + ("?mode=ro&immutable=1" if idle else "?mode=ro")
    return sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                           check_same_thread=False)


def _is_full(exc: sqlite3.DatabaseError) -> bool:
    """SQLITE_FULL: the disk (or the file system's quota) is full."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    return code == _SQLITE_FULL if code is not None else "database or disk is full" in str(exc)


def _is_lock(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _json(text: Any, path: Path, where: str, column: str, none_ok: bool = False) -> Any:
    """A JSON object column of a row, or a :class:`StoreError` naming the store, row and column."""
    if text is None and none_ok:
        return None
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreError(path, where, f"{column} is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise StoreError(path, where, f"{column} is JSON {type(value).__name__}, expected an object")
    return value


def _state(status: Any, error: Any) -> TrialState | Any:
    """The row's state (a store before schema 3, read-only, wrote an interrupted trial as failed
    with an error in :data:`RERUN`); a status no state has stays as it is, for the row check."""
    if status == TrialState.FAILED and error in RERUN:
        return TrialState.INTERRUPTED
    return TrialState(status) if status in STATUSES else status


def _row_problem(t: StoredTrial) -> str | None:
    """What is wrong with a decoded trial row (types a hand edit can break), or None."""
    if not isinstance(t.id, int) or t.name != trial_name(t.id):
        return f"id {t.id!r} and name {t.name!r} do not match"
    if t.status not in STATUSES:
        return f"status {t.status!r} is not one of {[s.value for s in STATUSES]}"
    for column in ("metrics", "objectives"):
        for key, value in getattr(t, column).items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                return f"{column}: {key!r} is {value!r}, not a number"
    for key, value in {**t.params, **t.config}.items():  # a logged parameter may be unknown (NaN)
        if not isinstance(value, (str, int, float, bool)) and not (value is None and key not in t.config):
            return f"parameter {key!r} is {value!r}, not a number, string or boolean"
    for column in ("started", "finished"):
        value = getattr(t, column)
        if value is None and column == "finished":
            continue
        try:
            datetime.fromisoformat(value)
        except (TypeError, ValueError):
            return f"{column} {value!r} is not a date and time"
    for column in ("graph_id", "retry_of"):
        if getattr(t, column) is not None and not isinstance(getattr(t, column), int):
            return f"{column} {getattr(t, column)!r} is not a row id"
    for column in ("error", "surrogate", "reason"):
        if getattr(t, column) is not None and not isinstance(getattr(t, column), str):
            return f"{column} {getattr(t, column)!r} is not text"
    return None


def holds_a_run(path: str | Path) -> bool:
    """Whether the file at ``path`` is a BoAnon run's store (opened read-only, nothing written):
    False for a file that is none (a YAML, an Optuna storage, an empty database). A store of
    another schema version raises its :class:`ConfigError`."""
    try:
        Store(path, read_only=True).close()
    except StoreError:
        return False
    return True


def create_store_file(store_file: str | Path) -> Path:
    """Create the empty file of a new store, failing with :class:`FileExistsError` if anything is
    there: a writer may remove (:func:`remove_store`) only the store it made itself, and one that
    checked first and opened after could lose a race to another writer and delete the winner's
    store. Any other failure is a :class:`StoreError` naming the file."""
    try:
        os.close(os.open(store_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        raise
    except OSError as exc:
        raise StoreError(store_file, "store", f"cannot open it ({exc.strerror})") from None
    return Path(store_file)


def remove_store(store_file: str | Path) -> None:
    """Remove a closed store and its SQLite ``-wal``/``-shm`` files, never raising: the error
    that made its writer give up (a run that never started, an import cut short) is the one to
    report."""
    for path in (Path(store_file), Path(f"{store_file}-wal"), Path(f"{store_file}-shm")):
        with suppress(OSError):
            path.unlink(missing_ok=True)
