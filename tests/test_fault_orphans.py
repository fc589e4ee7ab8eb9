"""Fault injection: a tuning loop SIGKILLed with trials in flight leaves no process running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")
# The system: records its own pid and its parent's (the trial process), then runs for a minute.
PROGRAM = ("import os, sys, time; open(sys.argv[1] + '/pids', 'w').write('%d %d' % (os.getpid(), "
           "os.getppid())); time.sleep(60)")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _running_pids(trials: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        files = [p for p in trials.glob("t*/pids") if p.read_text()]
        if len(files) >= n:
            return {int(pid) for f in files for pid in f.read_text().split()}
        time.sleep(0.05)
    raise AssertionError(f"{n} trials never started (loop exit status {proc.poll()})")


def _kill_loop_with_programs_running(tmp_path: Path, *options: str) -> set[int]:
    """Start ``boanon tune`` on the program above, SIGKILL it once 2 trials run; their pids."""
    config = tmp_path / "tune.yaml"
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=4, runner={"command": [sys.executable, "-c", PROGRAM, "{trial_dir}"]})
    config.write_text(yaml.safe_dump(data))
    workers = 2 if options else 1
    proc = subprocess.Popen([BOANON, "tune", str(config), "--budget", "4", "--store",
                             str(tmp_path / "run.db"), *options], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pids = _running_pids(tmp_path / "run.trials", workers, proc)
        assert all(alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()
    pids.discard(proc.pid)
    return pids


def _assert_all_die(pids: set[int], within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for pid in left:  # leave nothing behind for the next test either way
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes still running {within} s after the loop was killed: {left}"


def test_sigkill_of_a_parallel_run_leaves_no_trial_or_program_running(tmp_path: Path) -> None:
    pids = _kill_loop_with_programs_running(tmp_path, "--workers", "2")
    assert len(pids) == 4  # two programs and the two trial processes running them
    _assert_all_die(pids)
    with Store(tmp_path / "run.db") as s:
        assert s.counts()["running"] == 2  # the kill left them to be marked interrupted on resume


def test_sigkill_of_a_sequential_run_takes_its_program_down(tmp_path: Path) -> None:
    pids = _kill_loop_with_programs_running(tmp_path)
    assert len(pids) == 1  # the program (its parent was the loop itself)
    _assert_all_die(pids)
