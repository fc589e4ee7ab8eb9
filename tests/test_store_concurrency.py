"""The store under parallel tuning: many trials finishing at once, stopped trials, old stores."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from boanon.store import SCHEMA_VERSION, Store
from boanon.table import TrialRecord


def _hammer(path: str, worker: int, n: int) -> list[int]:
    """Start and finish ``n`` trials from one process, as a parallel loop's writers would."""
    ids = []
    with Store(path) as store:
        for i in range(n):
            trial = store.start_trial({"worker": worker, "i": i})
            record = TrialRecord(trial.name, {"worker": worker, "i": i}, {"m": float(i)}, {"cost": 1.0 * i})
            if i % 5 == 4:
                store.fail_trial(trial.id, f"failure {worker}/{i}")
            else:
                store.finish_trial(trial.id, record, stopped=i % 5 == 3)
            ids.append(trial.id)
    return ids


def test_many_processes_and_threads_writing_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "run.db")
    Store(path).close()
    with ProcessPoolExecutor(4) as pool:
        futures = [pool.submit(_hammer, path, w, 25) for w in range(4)]
        from_threads: list[int] = []
        threads = [threading.Thread(target=lambda w=w: from_threads.extend(_hammer(path, w, 25)))
                   for w in range(10, 13)]
        for t in threads:
            t.start()
        ids = [i for f in futures for i in f.result()]
        for t in threads:
            t.join()
        ids += from_threads
    with Store(path) as store:
        trials = store.trials()
        assert len(trials) == 7 * 25 == len(set(ids))  # no lost write, no duplicate id
        assert [t.id for t in trials] == list(range(175))  # ids consecutive across processes
        counts = store.counts()
        assert counts == {"running": 0, "done": 105, "stopped": 35, "failed": 35, "interrupted": 0}
        table = store.to_table()  # stopped trials feed the model with what they measured
        assert len(table) == 140 and set(table["trial"]) >= {t.name for t in store.trials("stopped")}


def test_stopped_trial_ends_once(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        t = store.start_trial({"x": 1})
        store.finish_trial(t.id, TrialRecord(t.name, {"x": 1}, {"m": 2.0}, {"cost": 3.0}), stopped=True)
        stored = store.trial(t.id)
        assert stored.status == "stopped" and stored.objectives == {"cost": 3.0}
        assert [s.name for s in store.trials(("done", "stopped"))] == [t.name]
        with pytest.raises(ValueError, match="already stopped"):
            store.fail_trial(t.id, "late")


V1_TRIALS = """CREATE TABLE trials (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')), config TEXT NOT NULL,
    params TEXT, metrics TEXT, objectives TEXT, error TEXT, started TEXT NOT NULL, finished TEXT,
    graph_id INTEGER REFERENCES graphs(id), surrogate TEXT, reason TEXT, info TEXT,
    retry_of INTEGER REFERENCES trials(id))"""


def test_schema_1_store_is_migrated_keeping_its_trials(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
        "CREATE TABLE graphs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, json TEXT NOT NULL);"
        + V1_TRIALS + ";"
        "INSERT INTO trials (id, name, status, config, started, objectives) VALUES"
        " (0, 't0000', 'done', '{\"x\": 1}', '2026-01-01', '{\"cost\": 2.0}'),"
        " (1, 't0001', 'failed', '{\"x\": 2}', '2026-01-01', NULL);")
    conn.commit()
    conn.close()
    with Store(path) as store:
        assert [(t.name, t.status) for t in store.trials()] == [("t0000", "done"), ("t0001", "failed")]
        t = store.start_trial({"x": 3}, retry_of=1)
        store.finish_trial(t.id, TrialRecord(t.name, {"x": 3}, {}, {"cost": 1.0}), stopped=True)
        assert store.trial(t.id).status == "stopped"
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        assert version == (str(SCHEMA_VERSION),)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
