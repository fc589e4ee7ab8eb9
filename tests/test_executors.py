"""The local executor: results, errors, timeouts, dying workers and the progress channel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import wait
from pathlib import Path

import pytest

from boanon.errors import InvalidOption, LogParseError, UnknownOption
from boanon.executors import LocalExecutor, TrialTimeout, WorkerLost, make_executor
from boanon.runners import make_runner, run_trial
from boanon.runners.base import TrialFailed

ROOT = Path(__file__).resolve().parents[1]
# A loop whose one trial returns a result that takes a minute to pickle: a Ctrl-C lands while the
# trial process is inside its send of the result (argv[1]: the file it touches once there).
SENDING_LOOP = """
import sys, time
from pathlib import Path
from boanon.executors import LocalExecutor

class SlowToSend:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        Path(self.marker).touch()
        time.sleep(60)
        return SlowToSend, (self.marker,)

def finish(marker):
    return SlowToSend(marker)

if __name__ == "__main__":
    executor = LocalExecutor(1, grace=5.0)
    future = executor.submit(finish, sys.argv[1])
    try:
        with executor:
            future.result()
    except KeyboardInterrupt:
        print(repr(future.exception()))
        sys.exit(130)
"""


def span(seconds: float) -> tuple[float, float, int]:
    """Sleep; when it ran and in which process."""
    start = time.time()
    time.sleep(seconds)
    return start, time.time(), os.getpid()


def bad_log() -> None:
    raise LogParseError("/logs/t0001/LOG", "no ops/sec line", 12)


def count_with(reporter, steps: int) -> int:
    """Report steps until told to stop (as a runner's progress hook does); the last step run."""
    for step in range(1, steps + 1):
        if not reporter(step, float(step)):
            return step
        time.sleep(0.05)
    return steps


def report_at_once(reporter, steps: int) -> float:
    """Report ``steps`` steps with no work between them; the seconds the reports took."""
    start = time.monotonic()
    for step in range(steps):
        reporter(step, float(step))
    return time.monotonic() - start


def run_past(flag: str, after: float, at_least: float) -> float:
    """Run until ``after`` seconds past the moment file ``flag`` appears, and ``at_least``
    seconds in all (a trial whose end the test sets by an event, not by a guess of how long
    something else takes); the seconds it ran."""
    start = time.monotonic()
    while not os.path.exists(flag):
        time.sleep(0.02)
    time.sleep(max(after, at_least - (time.monotonic() - start)))
    return time.monotonic() - start


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(2, grace=1.0) as ex:
        yield ex


def test_results_errors_and_concurrency(executor: LocalExecutor) -> None:
    futures = [executor.submit(span, 0.4) for _ in range(4)]
    failing = executor.submit(int, "x")
    unpicklable = executor.submit(bad_log)
    wait([*futures, failing, unpicklable])
    spans = sorted(f.result() for f in futures)
    assert len({pid for _, _, pid in spans}) == 4 and os.getpid() not in {p for *_, p in spans}
    # never more than two at once: each later pair starts after an earlier one ended
    for i, (start, _, _) in enumerate(spans[2:], start=2):
        assert start >= min(end for _, end, _ in spans[:i]) - 0.05
    with pytest.raises(ValueError, match="invalid literal"):
        failing.result()
    error = unpicklable.exception()
    assert isinstance(error, TrialFailed)
    assert "LogParseError: /logs/t0001/LOG:12: no ops/sec line" in str(error)


def test_hung_trial_is_killed_and_others_go_on(executor: LocalExecutor) -> None:
    start = time.monotonic()
    hung = executor.submit(span, 60, timeout=1.0)
    other = executor.submit(span, 0.2)
    assert other.result(timeout=30)[1] > 0
    error = hung.exception(timeout=30)
    assert isinstance(error, TrialTimeout) and "timed out after 1 s" in str(error)
    assert time.monotonic() - start < 15
    assert executor.submit(span, 0.0).result(timeout=30)  # the slot is free again


def test_dying_workers_fail_only_their_trial(executor: LocalExecutor) -> None:
    exits = executor.submit(os._exit, 3)
    aborts = executor.submit(os.abort)
    fine = executor.submit(span, 0.1)
    assert "exit status 3 before sending a result" in str(exits.exception(timeout=30))
    error = aborts.exception(timeout=30)
    assert isinstance(error, WorkerLost) and "killed by SIGABRT" in str(error)
    assert fine.result(timeout=30)


def test_timeout_terminates_a_command_runner_and_its_program(executor: LocalExecutor, tmp_path: Path,
                                                             processes_running) -> None:
    marker = "31.4159"  # a sleep nobody else runs
    runner = make_runner("command", command=["sleep", marker])
    future = executor.submit(run_trial, runner, {}, tmp_path / "t0000", timeout=1.5)
    deadline = time.monotonic() + 20
    while not processes_running(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(f"sleep {marker}"), "the program never started"
    assert isinstance(future.exception(timeout=30), TrialTimeout)
    deadline = time.monotonic() + 10  # SIGTERM -> the runner kills its program's group (slower under load)
    while processes_running(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(f"sleep {marker}") == []
    assert (tmp_path / "t0000" / "config.json").is_file()


def test_progress_channel_reports_and_stops(executor: LocalExecutor) -> None:
    channel = executor.progress_channel()
    try:
        future = executor.submit(count_with, channel.reporter(5), 400)
        seen: list[tuple[int, int, float]] = []
        deadline = time.monotonic() + 30
        while len(seen) < 3 and time.monotonic() < deadline:
            seen += channel.poll()
            time.sleep(0.05)
        channel.stop(5)
        last = future.result(timeout=30)
        assert seen[:3] == [(5, 1, 1.0), (5, 2, 2.0), (5, 3, 3.0)]
        assert 3 <= last < 400
        assert [r[1] for r in seen + channel.poll()][-1] == last
    finally:
        channel.close()


def test_a_trial_reporting_faster_than_the_loop_reads_is_not_held_back(executor: LocalExecutor) -> None:
    """The duplex pipe (a socket pair: each small report takes ~768 bytes of its ~208 KiB) held
    ~280 reports, and a trial reporting faster than the loop reads them (every 0.2 s) waited on
    the loop: 5000 reports took 2.4 s where the queue before took 0.01 s. Its reports go on a
    pipe of 256 KiB now (~7000 reports), and every one still arrives, in order."""
    channel = executor.progress_channel()
    try:
        future = executor.submit(report_at_once, channel.reporter(7), 5000)
        seen: list[tuple[int, int, float]] = []
        while not future.done():
            time.sleep(0.2)  # the parallel loop's poll interval
            seen += channel.poll()
        assert future.result() < 1.0
        seen += channel.poll()
        assert seen == [(7, step, float(step)) for step in range(5000)]
    finally:
        channel.close()


def test_shutdown_with_cancel_kills_running_work() -> None:
    ex = LocalExecutor(1, grace=0.5)
    running = ex.submit(span, 60)
    queued = ex.submit(span, 60)
    time.sleep(0.5)
    ex.shutdown(wait=True, cancel_futures=True)
    assert isinstance(running.exception(timeout=5), WorkerLost) and queued.cancelled()
    with pytest.raises(RuntimeError, match="after shutdown"):
        ex.submit(span, 0)


def test_make_executor_and_bad_arguments() -> None:
    ex = make_executor(3)
    try:
        assert isinstance(ex, LocalExecutor) and ex.max_workers == 3
        with pytest.raises(ValueError, match="timeout must be > 0"):
            ex.submit(span, 0, timeout=0)
    finally:
        ex.shutdown()


def test_ctrl_c_while_a_trial_sends_its_result_leaves_no_traceback(tmp_path: Path) -> None:
    """The loop's SIGTERM reached a trial process sending its result (a trial ending as the user
    pressed Ctrl-C); it raised KeyboardInterrupt there, which nothing caught: a traceback."""
    script, marker = tmp_path / "loop.py", tmp_path / "sending"
    script.write_text(SENDING_LOOP)
    proc = subprocess.Popen([sys.executable, str(script), str(marker)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole process group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert "WorkerLost" in out and "terminated" in out, out


def test_a_runner_option_refused_in_a_trial_process_reaches_the_loop_as_itself() -> None:
    """InvalidOption was rebuilt from its text alone (``__init__() missing 1 required positional
    argument: 'reason'``), so a runner made in a trial process (a callable's spec loaded there)
    that refused an option reached the loop as a TrialFailed, its option lost."""
    with LocalExecutor(1, grace=1.0) as executor:
        invalid = executor.submit(make_runner, "sgd", network="resnet").exception(timeout=60)
        unknown = executor.submit(make_runner, "sgd", netwrok="resnet").exception(timeout=60)
    assert type(invalid) is InvalidOption and (invalid.option, invalid.reason) == (
        "network", "unknown network 'resnet'; known: alexnet, googlenet, speechnet")
    assert str(invalid) == "option 'network': unknown network 'resnet'; known: alexnet, googlenet, speechnet"
    assert type(unknown) is UnknownOption and unknown.option == "netwrok"
    assert str(unknown) == unknown.reason and "(did you mean 'network'?)" in str(unknown)
