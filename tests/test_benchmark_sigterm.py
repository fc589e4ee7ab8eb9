"""A benchmark or tuning loop killed while db_bench runs leaves no db_bench (with SIGTERM, no DB) behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")
def test_a_terminated_rocksdb_benchmark_kills_db_bench_and_removes_its_db(tmp_path: Path,
                                                                         processes_running) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    log = tmp_path / "bench.log"
    command = [sys.executable, "-m", "benchmarks.run", "--problems", "rocksdb", "--tuners", "random",
               "--seeds", "1", "--budget", "3", "--out", str(tmp_path / "out"), "--no-plots"]
    with log.open("wb") as out:  # the child keeps its own copy of the descriptor
        bench = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (dbs := list(tmp.glob("boanon-rocksdb-*"))) or not processes_running(str(dbs[0])):
            assert bench.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "db_bench never started"
            time.sleep(0.05)
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if bench.poll() is None:
            bench.kill()
    left = processes_running(str(dbs[0]))
    for pid in left:  # a failing run must not leave them to the next test either
        os.kill(pid, signal.SIGKILL)
    assert left == []  # before the fix db_bench ran on, orphaned
    assert not dbs[0].exists()


@pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")
def test_a_sigkilled_rocksdb_tuning_loop_takes_db_bench_down(tmp_path: Path, processes_running) -> None:
    """``boanon tune`` runs a sequential trial in the loop's process: SIGKILLed, it had no chance to
    kill db_bench, which ran on to its end, orphaned (its DB is left for the temporary
    directory's clean-up: a killed process removes nothing)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    config = yaml.safe_load((ROOT / "examples" / "rocksdb.yaml").read_text())
    config.pop("warm_start")
    config["runner"]["options"].update(num=2_000_000, reads=1_000_000)
    (tmp_path / "tune.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "TMPDIR": str(tmp), "OPENBLAS_NUM_THREADS": "1"}
    loop = subprocess.Popen([str(Path(sys.executable).parent / "boanon"), "tune", str(tmp_path / "tune.yaml"),
                             "--store", str(tmp_path / "run.db"), "--budget", "2"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (dbs := list(tmp.glob("boanon-rocksdb-*"))) or not processes_running(str(dbs[0])):
            assert loop.poll() is None and time.monotonic() < deadline, "db_bench never started"
            time.sleep(0.05)
        loop.kill()
        loop.wait(timeout=30)
        deadline = time.monotonic() + 10
        while processes_running(str(dbs[0])) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        if loop.poll() is None:
            loop.kill()
    left = processes_running(str(dbs[0]))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_the_harness_called_in_process_leaves_the_callers_sigterm_handler(tmp_path: Path) -> None:
    """Only ``python -m benchmarks.run`` turns SIGTERM into SystemExit; ``main()`` called from
    another program (a test, a notebook) leaves that program's handler alone."""
    from benchmarks.run import main

    before = signal.getsignal(signal.SIGTERM)
    main(["--problems", "synthetic", "--tuners", "random", "--seeds", "1", "--budget", "2",
          "--out", str(tmp_path / "out"), "--no-plots"])
    assert signal.getsignal(signal.SIGTERM) is before
