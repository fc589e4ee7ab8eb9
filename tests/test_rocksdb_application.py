"""The rocksdb adapter on log directories as an application that embeds RocksDB leaves them: no
db_bench stdout, ``LOG`` plus ``LOG.old.*``, several ``OPTIONS-NNNNNN`` or a copied ``OPTIONS``,
objectives from the user's file or from the LOG's statistics dumps. The logs are real: two opens
of one database by db_bench (as two sessions of an application), made here in a few seconds."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from boanon.adapters import get_adapter, ingest
from boanon.adapters.ingest import detect_adapter
from boanon.errors import LogParseError

pytestmark = pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")
MiB = 1 << 20


def _db_bench(db: Path, *flags: str) -> None:
    done = subprocess.run(["db_bench", f"--db={db}", "--statistics=1", "--stats_dump_period_sec=1",
                           "--num=20000", *flags], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    """Session 1 writes (256 KiB write buffers), session 2 reopens with 1 MiB buffers and only
    reads, for two seconds (so that a periodic stats dump comes after some reads)."""
    db = tmp_path_factory.mktemp("app") / "db"
    _db_bench(db, "--benchmarks=fillrandom", f"--write_buffer_size={MiB // 4}")
    _db_bench(db, "--benchmarks=readrandom", "--use_existing_db=1", "--duration=2",
              f"--write_buffer_size={MiB}")
    return db


def _trial(database: Path, directory: Path, options: str = "all") -> Path:
    """Copy the database's logs as a user would: every LOG and OPTIONS file, or the newest
    OPTIONS file copied as ``OPTIONS``."""
    directory.mkdir(parents=True)
    for log in database.glob("LOG*"):
        shutil.copy(log, directory / log.name)
    files = sorted(database.glob("OPTIONS-*"))
    assert len(files) >= 2  # one per open: the newest is the one in force
    if options == "all":
        for f in files:
            shutil.copy(f, directory / f.name)
    else:
        shutil.copy(files[-1], directory / "OPTIONS")
    return directory


def test_log_old_and_several_options_files_the_newest_in_force(database, tmp_path):
    trial = _trial(database, tmp_path / "t1")
    assert list(trial.glob("LOG.old.*"))
    assert detect_adapter([trial]).name == "rocksdb"
    record = get_adapter("rocksdb").parse_trial(trial)
    assert record.params["write_buffer_size"] == MiB  # session 2's, not session 1's 256 KiB
    m = record.metrics
    # the LOG's last statistics dump, of session 2 only (LOG.old.* holds session 1's writes)
    assert m["uptime_seconds"] >= 1 and m["number_keys_read"] > 0 and m["number_keys_written"] == 0
    assert m["number_keys_read_per_sec"] == pytest.approx(m["number_keys_read"] / m["uptime_seconds"])
    assert 0 <= m["block_cache_hit_ratio"] <= 1 and "db_get_micros_p99" in m
    assert record.objectives == {}  # no db_bench stdout, no objectives file: a run names a metric


def test_a_copied_options_file_and_the_users_objectives(database, tmp_path):
    # a trial whose options file is named OPTIONS used to be refused ("no RocksDB OPTIONS file")
    trial = _trial(database, tmp_path / "t2", options="copied")
    (trial / "objectives.json").write_text(json.dumps({"requests_per_sec": 1250.5, "p99_ms": 3.2}))
    record = get_adapter("rocksdb").parse_trial(trial)
    assert record.params["write_buffer_size"] == MiB
    assert record.objectives == {"requests_per_sec": 1250.5, "p99_ms": 3.2}

    (trial / "objectives.json").unlink()
    (trial / "objectives.csv").write_text("requests_per_sec,p99_ms\n990,4.5\n")
    assert get_adapter("rocksdb").parse_trial(trial).objectives == {"requests_per_sec": 990.0, "p99_ms": 4.5}

    (trial / "objectives.csv").write_text("requests_per_sec,p99_ms\n990,fast\n")
    with pytest.raises(LogParseError, match=r"objectives.csv:2: objective 'p99_ms': expected a finite"):
        get_adapter("rocksdb").parse_trial(trial)


def test_a_directory_of_application_trials_ingests_as_a_table(database, tmp_path):
    root = tmp_path / "runs"
    for k, value in enumerate((1000.0, 1100.0)):
        trial = _trial(database, root / f"trial-{k}")
        (trial / "objectives.json").write_text(json.dumps({"requests_per_sec": value}))
    table = ingest(root).table
    assert list(table["objective:requests_per_sec"]) == [1000.0, 1100.0]
    assert (table["param:write_buffer_size"] == MiB).all()
    assert (table["metric:number_keys_read_per_sec"] > 0).all()


def test_without_statistics_or_objectives_the_error_says_what_is_missing(tmp_path):
    db = tmp_path / "db"
    done = subprocess.run(["db_bench", f"--db={db}", "--benchmarks=fillrandom", "--num=1000"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    trial = tmp_path / "t"
    trial.mkdir()
    for f in [*db.glob("LOG*"), *db.glob("OPTIONS-*")]:
        shutil.copy(f, trial / f.name)
    with pytest.raises(LogParseError, match="no db_bench stdout, no objectives.json/.csv, and no statistics"):
        get_adapter("rocksdb").parse_trial(trial)


def test_an_application_run_by_the_command_runner_keeps_its_own_stdout(database, tmp_path):
    # the command runner leaves config.json and the application's stdout.txt beside its files
    trial = _trial(database, tmp_path / "t")
    (trial / "config.json").write_text(json.dumps({"write_buffer_size": MiB}))
    (trial / "stdout.txt").write_text("my-app 1.2: opened RocksDB at /data/db\nserved 1250 requests/s\n")
    (trial / "objectives.json").write_text(json.dumps({"requests_per_sec": 1250.0}))
    assert detect_adapter([trial]).name == "rocksdb"
    record = get_adapter("rocksdb").parse_trial(trial)
    assert record.objectives == {"requests_per_sec": 1250.0} and record.metrics["number_keys_read"] > 0


def test_an_application_printing_entries_is_not_taken_for_db_bench_output(database, tmp_path):
    # only a benchmark's result line says db_bench: an application may print "Entries: N" too
    trial = _trial(database, tmp_path / "t")
    (trial / "app.out").write_text("my-app 1.2\nEntries:    1000000\nserved 1250 requests/s\n")
    (trial / "objectives.json").write_text(json.dumps({"requests_per_sec": 1250.0}))
    assert get_adapter("rocksdb").parse_trial(trial).objectives == {"requests_per_sec": 1250.0}
