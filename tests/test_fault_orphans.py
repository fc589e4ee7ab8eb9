"""Fault injection: a tuning loop SIGKILLed or interrupted with trials in flight leaves no process
running, and a Ctrl-C exits cleanly with a resume command that does the same job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")
# The system: records its own pid and its parent's (the trial process), then runs for a minute.
PROGRAM = ("import os, sys, time; open(sys.argv[1] + '/pids', 'w').write('%d %d' % (os.getpid(), "
           "os.getppid())); time.sleep(60)")
# A launcher: starts a worker of its own (a shell script's child), records both pids, waits.
LAUNCHER = ("import os, subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(60)']); open(sys.argv[1] + '/pids', 'w').write('%d %d' % "
            "(os.getpid(), c.pid)); time.sleep(60)")


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


def _as_a_foreground_job() -> None:
    """Ctrl-C as a terminal's foreground job gets it: a test run started in the background
    (``make test &``, nohup, a CI runner) ignores SIGINT, and its children inherit that, so the
    loop never saw the test's Ctrl-C and the test failed only when run in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, *options: str, program: str = PROGRAM) -> tuple[subprocess.Popen, set[int]]:
    """Start ``boanon tune`` on ``program`` (in its own session, as a shell would) and wait
    until its trials run: the loop, and the pids the programs recorded."""
    config = tmp_path / "tune.yaml"
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=4, runner={"command": [sys.executable, "-c", program, "{trial_dir}"]})
    config.write_text(yaml.safe_dump(data))
    proc = subprocess.Popen([BOANON, "tune", str(config), "--budget", "4", "--store",
                             str(tmp_path / "run.db"), *options], cwd=ROOT, start_new_session=True,
                            preexec_fn=_as_a_foreground_job, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pids = _running_pids(tmp_path / "run.trials", 2 if "--workers" in options else 1, proc)
        assert all(alive(p) for p in pids)
    except BaseException:
        proc.kill()
        raise
    pids.discard(proc.pid)
    return proc, pids


def _kill_loop_with_programs_running(tmp_path: Path, *options: str, program: str = PROGRAM) -> set[int]:
    """Start ``boanon tune`` on ``program``, SIGKILL it once its trials run; their pids."""
    proc, pids = _start(tmp_path, *options, program=program)
    proc.kill()
    proc.communicate()
    return pids


def _assert_all_die(pids: set[int], within: float = 5.0) -> None:
    """Gone ``within`` seconds: a trial noticing the loop's death, its runner's clean-up and
    the grace period before SIGKILL (2 s) on a loaded machine; before the fix they ran on."""
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


@pytest.mark.parametrize("options", [(), ("--workers", "2")], ids=["sequential", "workers"])
def test_sigkill_of_the_loop_takes_down_what_the_program_started_too(tmp_path: Path, options) -> None:
    # the program's own parent-death signal reached it alone: its worker ran on, for a minute
    pids = _kill_loop_with_programs_running(tmp_path, *options, program=LAUNCHER)
    assert len(pids) == 2 * (2 if options else 1)  # each program and the worker it started
    _assert_all_die(pids)


def test_sigkill_of_a_parallel_run_with_early_stopping_leaves_no_semaphore_to_warn_of(tmp_path: Path) -> None:
    """The local progress channel was a multiprocessing queue and an event per trial: named
    semaphores, which the killed loop could not unlink, so multiprocessing's resource tracker
    printed "There appear to be 8 leaked semaphore objects to clean up at shutdown"."""
    proc = subprocess.Popen([BOANON, "tune", "examples/sgd.yaml", "--budget", "8", "--workers", "2",
                             "--early-stopping", "median", "--store", str(tmp_path / "run.db")],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(list((tmp_path / "run.trials").glob("t*/progress.jsonl"))) < 2:  # both reporting
        assert time.monotonic() < deadline and proc.poll() is None, "no two trials reported progress"
        time.sleep(0.1)
    proc.kill()
    _, err = proc.communicate(timeout=60)  # once the tracker, which holds stderr too, is gone
    assert "leaked" not in err and "resource_tracker" not in err, err


# A runner that dies right after starting the program: the guard, then a shell that starts a worker.
DIES_AT_ONCE = ("import os, subprocess, sys; "
                "from boanon.runners.command import GroupGuard; guard = GroupGuard().__enter__(); "
                "p = subprocess.Popen(['sh', '-c', 'sleep ' + sys.argv[1] + ' & sleep 300'], "
                "start_new_session=True, preexec_fn=guard.arming(os.getpid())); os._exit(0)")


def test_a_runner_dying_as_the_program_starts_still_takes_its_group_down(processes_running) -> None:
    # the guard's signal handler read the runner's lines itself and could miss the group the
    # main flow had just read: what the program started was left 1 time in 20
    markers = [f"299.{i:03d}" for i in range(12)]
    runners = [subprocess.Popen([sys.executable, "-c", DIES_AT_ONCE, m], cwd=ROOT) for m in markers]
    for r in runners:
        r.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(processes_running(f"sleep {m}") for m in markers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for m in markers for pid in processes_running(f"sleep {m}")]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_ctrl_c_exits_cleanly_with_a_resume_command_keeping_the_options(tmp_path: Path) -> None:
    options = ("--workers", "2", "--max-consecutive-failures", "3")
    proc, pids = _start(tmp_path, *options)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole process group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    hint = err.split("continue with\n", 1)[1].splitlines()[0].strip()
    assert hint == (f"boanon tune {tmp_path / 'tune.yaml'} --store {tmp_path / 'run.db'} --budget 4 "
                    "--workers 2 --max-consecutive-failures 3 --resume")
    _assert_all_die(pids, within=0.5)  # reaped before the loop exited, or just after
    with Store(tmp_path / "run.db") as s:
        assert s.counts()["interrupted"] == 2 and s.counts()["running"] == 0
