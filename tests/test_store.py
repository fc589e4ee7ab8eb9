"""The SQLite trial store: lifecycle, recovery after a kill, graphs, concurrency, tidy table."""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from boanon.adapters.table import read_table_file
from boanon.errors import ConfigError, StoreError
from boanon.graph import CausalGraph, Edge
from boanon.space import Float, Space
from boanon.store import _SCHEMA, DIED, INTERRUPTED, Store, TrialState
from boanon.study import Study
from boanon.synthetic import SyntheticSystem
from boanon.table import TrialRecord, records_to_table

SPEC = Study(space={"x": {"type": "float", "low": 0, "high": 1}}, objectives=[], seed=0, strategy="random")


def test_lifecycle_and_table(tmp_path: Path) -> None:
    system = SyntheticSystem(n_params=4, n_groups=2, seed=1)
    configs = system.space.sample(3, __import__("numpy").random.default_rng(0))
    with Store(tmp_path / "run.db") as store:
        store.init_study(SPEC)
        records = []
        for config in configs[:2]:
            trial = store.start_trial(config, surrogate="init", reason="design", info={"k": 1.5})
            assert trial.status == "running" and trial.finished is None
            record = system.record(trial.name, config)
            store.finish_trial(trial.id, record)
            records.append(record)
        failed = store.start_trial(configs[2])
        store.fail_trial(failed.id, "boom")
        assert [t.name for t in store.trials()] == ["t0000", "t0001", "t0002"]
        assert store.trial(failed.id).error == "boom"
        assert store.counts() == {"running": 0, "done": 2, "stopped": 0, "failed": 1, "interrupted": 0}
        table = store.to_table()
    # Reopened, the file gives back exactly what the records say, in the ingest shape.
    with Store(tmp_path / "run.db") as store:
        assert store.study() == SPEC
        assert store.trial(0).info == {"k": 1.5} and store.trial(0).surrogate == "init"
        expected = records_to_table(records)
        assert list(table.columns) == list(expected.columns)
        assert table.equals(expected)
        assert store.to_table().equals(expected)


def test_a_trial_ends_once(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        t = store.start_trial({"x": 0.1})
        store.fail_trial(t.id, "crash")
        with pytest.raises(ValueError, match="already failed"):
            store.finish_trial(t.id, TrialRecord(t.name, {"x": 0.1}, {}, {"y": 1.0}))
        with pytest.raises(KeyError):
            store.fail_trial(99, "nope")


def test_resume_checks_the_study(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        store.init_study(SPEC)
        store.init_study(replace(SPEC))  # same run: fine
        with pytest.raises(ConfigError, match="seed, strategy"):
            store.init_study(replace(SPEC, seed=1, strategy="gp"))


def test_a_unit_declared_later_does_not_make_another_run(tmp_path: Path) -> None:
    """Units are how values are shown: a store written before the YAML declared ``unit: s`` (the
    SGD examples did) resumes under it; anything tuned that differs is still refused."""
    before = replace(SPEC, objectives=[{"name": "t", "direction": "minimize"}])
    after = replace(SPEC, space={"x": {**SPEC.space["x"], "unit": "MiB"}},
                    objectives=[{"name": "t", "direction": "minimize", "unit": "s"}])
    with Store(tmp_path / "run.db") as store:
        store.init_study(before)
        t = store.start_trial({"x": 0.1})
        store.finish_trial(t.id, TrialRecord(t.name, {"x": 0.1}, {}, {"t": 1.0}))
        store.init_study(after)
        with pytest.raises(ConfigError, match="objectives"):
            store.init_study(replace(after, objectives=[{"name": "t", "direction": "maximize", "unit": "s"}]))


def test_recover_marks_running_interrupted_once(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        done = store.start_trial({"x": 0.1})
        store.finish_trial(done.id, TrialRecord(done.name, {"x": 0.1}, {}, {"y": 1.0}))
        killed = store.start_trial({"x": 0.2})
    with Store(tmp_path / "run.db") as store:
        again = store.recover()
        assert [t.id for t in again] == [killed.id] and again[0].interrupted
        assert store.trial(killed.id).error == DIED
        assert store.counts()["interrupted"] == 1
        # Still not re-run (a second kill before the retry started): offered again.
        assert [t.id for t in store.recover()] == [killed.id]
        retry = store.start_trial(again[0].config, retry_of=killed.id)
        store.finish_trial(retry.id, TrialRecord(retry.name, {"x": 0.2}, {}, {"y": 0.5}))
        assert store.recover() == []
        assert store.to_table()["trial"].tolist() == ["t0000", "t0002"]


def test_a_read_only_store_reads_and_refuses_writes(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        store.init_study(SPEC)
        store.start_trial({"x": 0.1})
    with Store(tmp_path / "run.db", read_only=True) as store:
        assert [t.config for t in store.trials()] == [{"x": 0.1}] and store.study() == SPEC
        with pytest.raises(StoreError, match="run.db: store: opened read-only"):
            store.start_trial({"x": 0.2})
    with pytest.raises(StoreError, match="missing.db: store: no such file"):
        Store(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


def test_a_configuration_the_run_died_on_twice_is_failed_not_rerun(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        stopped = store.start_trial({"x": 0.1})
        store.interrupt_trial(stopped.id)  # Ctrl-C: not a death of the run
        retry = store.start_trial({"x": 0.1}, retry_of=stopped.id)  # then the run died on it
        assert [t.id for t in store.recover()] == [retry.id]
        assert store.trial(retry.id).error == DIED
        second = store.start_trial({"x": 0.1}, retry_of=retry.id)  # and died on it again
        assert store.recover() == []
        error = store.trial(second.id).error
        assert error.startswith("the run died twice while this configuration ran (as t0001 and t0002)")
        assert not store.trial(second.id).interrupted and store.counts()["interrupted"] == 2


def test_identical_graphs_are_stored_once(tmp_path: Path) -> None:
    g = CausalGraph(roles={"x": "param", "y": "objective"}, edges=[Edge("x", "y", 0.5, 0.9)])
    with Store(tmp_path / "run.db") as store:
        a, b = store.add_graph(g), store.add_graph(CausalGraph.from_dict(g.to_dict()))
        assert a == b
        assert store.add_graph(CausalGraph(roles={"x": "param"})) != a
        assert store.graph(a).to_dict() == g.to_dict()


def test_non_finite_values_are_left_out(tmp_path: Path) -> None:
    with Store(tmp_path / "run.db") as store:
        t = store.start_trial({"x": 0.1})
        store.finish_trial(t.id, TrialRecord(t.name, {"x": 0.1}, {"m": float("nan")}, {"y": 2.0}))
        assert store.trial(t.id).record().metrics == {}


def _writer(path: str, n: int) -> None:
    with Store(path) as store:
        for i in range(n):
            t = store.start_trial({"x": i})
            store.finish_trial(t.id, TrialRecord(t.name, {"x": i}, {}, {"y": float(i)}))


def test_concurrent_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "run.db")
    Store(path).close()
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, 25)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Store(path) as store:
        trials = store.trials()
        assert len(trials) == 75 and all(t.status == "done" for t in trials)
        assert [t.id for t in trials] == list(range(75))


def test_export_matches_ingest_of_the_same_records(tmp_path: Path) -> None:
    system = SyntheticSystem(n_params=4, n_groups=2, seed=3)
    table = system.sample_table(5)
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    with Store(tmp_path / "run.db") as store:
        for rec in read_table_file(path):
            t = store.start_trial(rec.params)
            store.finish_trial(t.id, TrialRecord(t.name, rec.params, rec.metrics, rec.objectives))
        out = store.to_table()
    assert list(out.columns) == list(table.columns)
    assert (out.drop(columns="trial").to_numpy() == table.drop(columns="trial").to_numpy()).all()


def test_a_file_that_is_not_a_store_is_named(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from boanon.cli import main

    table = tmp_path / "trials.csv"
    table.write_text("trial,param:x,objective:y\nt0,1,2\n")
    with pytest.raises(ConfigError, match="trials.csv: store: not a BoAnon run store"):
        Store(table)
    for command in ("status", "export"):
        result = CliRunner().invoke(main, [command, str(table)])
        assert result.exit_code == 1 and "not a BoAnon run store" in result.output, result.output
    assert table.read_text() == "trial,param:x,objective:y\nt0,1,2\n"


def test_a_commit_that_finds_the_database_locked_is_retried(tmp_path: Path) -> None:
    """Under a rollback journal, COMMIT waits for readers to leave and may fail "locked" itself;
    the write is then rolled back and retried (not stuck in an open transaction) and lands once."""
    with Store(tmp_path / "run.db", timeout=0.05) as store:
        store._conn.execute("PRAGMA journal_mode = DELETE")
        store.start_trial({"x": 0.0})
        reader = sqlite3.connect(tmp_path / "run.db", isolation_level=None, check_same_thread=False)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM trials").fetchone()  # holds a shared lock
        release = threading.Timer(0.3, reader.execute, ("COMMIT",))
        release.start()
        try:
            trial = store.start_trial({"x": 0.5})  # its COMMIT is refused until the reader ends
        finally:
            release.join()
            reader.close()
        assert [t.config for t in store.trials()] == [{"x": 0.0}, {"x": 0.5}]
        assert trial.name == "t0001" and not store._conn.in_transaction


def test_trial_state_tells_interrupted_from_failed(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.init_study(SPEC)
        ids = [store.start_trial({"a": i}).id for i in range(4)]
        store.fail_trial(ids[0], "boom")
        store.interrupt_trial(ids[1])
        store.finish_trial(ids[2], TrialRecord("t", {"a": 2}, {}, {"cost": 1.0}), stopped=True)
        states = [store.trial(i).state for i in ids]
    assert states == [TrialState.FAILED, TrialState.INTERRUPTED, TrialState.STOPPED, TrialState.RUNNING]


def test_what_a_trial_logs_is_read_back_unknown_parameters_and_boolean_metrics_included(tmp_path):
    # the store wrote rows its reader refused: a logged parameter that is NaN (written as null)
    # and a boolean metric
    with Store(tmp_path / "run.db") as store:
        trial = store.start_trial({"x": 0.1})
        store.finish_trial(trial.id, TrialRecord(trial.name, {"x": 0.1, "logged": float("nan")},
                                                 {"flag": True}, {"cost": 1.0}))
        (back,) = store.trials()
        assert back.metrics["flag"] == 1.0 and back.params.get("logged") is None


@pytest.mark.parametrize("config", [{"x": float("inf")}, {"x": float("nan")}, {"x": [1, 2]}])
def test_a_row_its_reader_would_refuse_is_never_written(tmp_path: Path, config) -> None:
    path = tmp_path / "run.db"
    with Store(path) as store:
        with pytest.raises(StoreError, match=r"trial t0000: not recorded: it would not read back "
                                             r"\(parameter 'x' is "):
            store.start_trial(config)
        assert store.trials() == []  # rolled back
        trial = store.start_trial({"x": 1.0})
        with pytest.raises(StoreError, match="trial t0000: not recorded"):
            store.finish_trial(trial.id, TrialRecord(trial.name, {"x": 1.0, "y": {"a": 1}}, {}, {"c": 1.0}))
    with Store(path, read_only=True) as store:  # the reader reads every row, still running
        assert [t.status for t in store.trials()] == ["running"]


def test_a_store_before_schema_3_reads_its_interrupted_trials_as_interrupted(tmp_path: Path) -> None:
    """Schema 2 wrote an interrupted trial as ``failed`` with an error in RERUN: read-only it
    reads as interrupted; opened for writing it is migrated to the ``interrupted`` status."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA.replace(", 'interrupted'", ""))
    conn.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    for i, error in enumerate([INTERRUPTED, DIED, "boom"]):
        conn.execute("INSERT INTO trials (id, name, status, config, started, error) VALUES"
                     " (?, ?, 'failed', '{}', '2026-01-01T00:00:00', ?)", (i, f"t{i:04d}", error))
    conn.commit()
    conn.close()
    with Store(path, read_only=True) as store:
        assert [t.status for t in store.trials()] == ["interrupted", "interrupted", "failed"]
        assert [t.id for t in store.trials("interrupted")] == [0, 1]
        assert store.counts()["interrupted"] == 2 and store.counts()["failed"] == 1
    with Store(path) as store:
        assert [t.id for t in store.recover()] == [0, 1]
    conn = sqlite3.connect(path)
    assert [r[0] for r in conn.execute("SELECT status FROM trials ORDER BY id")] == \
        ["interrupted", "interrupted", "failed"]
    conn.close()


def test_a_store_written_before_the_study_record_reads_resumes_and_shows(tmp_path: Path) -> None:
    """Older runs stored the spec without n_init, relearn_every or constraints (and a later
    version may add fields): the record reads them whole, and an unknown field is kept."""
    from boanon.cli.status import summary
    from boanon.report import read_run
    from boanon.tuner import Tuner

    old = {"space": {"x": {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5}},
           "objectives": [{"name": "cost", "direction": "minimize"}], "seed": 4, "strategy": "gp",
           "from_the_future": {"a": 1}}
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.start_trial({"x": 0.25})
        store.finish_trial(0, TrialRecord("t0000", {"x": 0.25}, {}, {"cost": 1.0}))
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO studies (created, spec) VALUES ('2026-01-01T00:00:00', ?)", (json.dumps(old),))
    conn.commit()
    conn.close()
    with Store(path, read_only=True) as store:
        study = store.study()
        assert (study.seed, study.strategy, study.n_init, study.constraints) == (4, "gp", None, [])
        assert study.extra == {"from_the_future": {"a": 1}} and study.to_dict() == {**old, "constraints": []}
        assert "strategy gp, seed 4, 1 parameters" in summary(store)
        assert read_run(store).space.names == ["x"]
    # resumed by this version: the stored record is the run's; the design size it lacks is kept
    # from the caller, so only the fields the old record did not have differ
    with pytest.raises(ConfigError, match="from_the_future, n_init, relearn_every"):
        Tuner(Space([Float("x", 0.0, 1.0, default=0.5)]), ["cost"], strategy="gp", seed=4, store=path)


def test_a_run_ending_while_a_reader_watches_leaves_its_trials_in_the_database_file(tmp_path: Path) -> None:
    """A run whose store closes while a dashboard reads it left every trial in ``run.db-wal`` (SQLite
    copies the WAL back only on the last connection's close) and a 4 KiB ``run.db``: a copy of the
    file alone held no run. The writer now copies the WAL into the file as it closes."""
    import shutil

    path = tmp_path / "run.db"
    store = Store(path)
    store.init_study(SPEC)
    for x in (0.1, 0.2, 0.3):
        trial = store.start_trial({"x": x})
        store.finish_trial(trial.id, TrialRecord(trial.name, {"x": x}, {}, {"y": x * 2}))
    watcher = Store(path, read_only=True, follow=True)  # the dashboard's way of reading a live run
    assert len(watcher.trials()) == 3
    store.close()
    watcher.close()
    shutil.copyfile(path, tmp_path / "copy.db")  # the file alone, as `cp run.db` or a mail takes it
    with Store(tmp_path / "copy.db", read_only=True) as copy:
        assert copy.study() == SPEC
        assert [t.objectives["y"] for t in copy.trials()] == [0.2, 0.4, 0.6]
