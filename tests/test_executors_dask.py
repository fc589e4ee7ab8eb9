"""The Dask executor on a local cluster on 127.0.0.1: results, errors, a hung trial, a dying
worker, the progress channel and the parallel loop."""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from concurrent.futures import wait
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from test_executors import count_with, run_past  # noqa: E402  (workers import it by module)

from boanon.config import load_config  # noqa: E402
from boanon.executors import DaskExecutor, TrialTimeout, WorkerLost  # noqa: E402
from boanon.parallel import optimize_parallel  # noqa: E402
from boanon.runners import make_runner  # noqa: E402
from boanon.tuner import Tuner  # noqa: E402

pytestmark = pytest.mark.slow  # a cluster of two worker processes takes 5-20 s to start
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dask_executor():
    with DaskExecutor(None, n_workers=2) as ex:
        yield ex


def test_results_errors_hung_and_dying_workers(dask_executor: DaskExecutor) -> None:
    assert dask_executor.max_workers == 2
    assert dask_executor.submit(operator.add, 1, 2).result(timeout=60) == 3
    with pytest.raises(ValueError, match="invalid literal"):
        dask_executor.submit(int, "x").result(timeout=60)
    start = time.monotonic()
    hung = dask_executor.submit(time.sleep, 120, timeout=1.0)
    error = hung.exception(timeout=60)
    assert isinstance(error, TrialTimeout) and "timed out after 1 s" in str(error)
    assert time.monotonic() - start < 30
    dies = dask_executor.submit(os._exit, 3)
    error = dies.exception(timeout=60)
    assert isinstance(error, WorkerLost) and "died" in str(error)
    # the cluster recovers: both workers (restarted by their nannies) run trials again
    futures = [dask_executor.submit(operator.mul, i, 2) for i in range(4)]
    wait(futures, timeout=60)
    assert [f.result() for f in futures] == [0, 2, 4, 6]


def test_a_trial_begun_while_another_worker_restarts_still_times_out(dask_executor: DaskExecutor,
                                                                      tmp_path: Path) -> None:
    """The watchdog restarted a timed-out trial's worker on its own thread (seconds): no other
    trial's clock started meanwhile, so a trial begun then ended "done" past its 1 s timeout.
    The second trial starts once the first one's worker is seen down, inside its restart (a
    fixed sleep could land before or after it, or, with an earlier test's worker still
    restarting, before the first trial timed out). It ends 0.3 s after the restart, before the
    old watchdog's next look, and no sooner than 2.5 s in (past 1 s and the 0.5 s polls): the
    old code fails whenever a restart lasts over about a second (4-5 s here)."""
    def up() -> int:
        return len(dask_executor.client.nthreads())

    _until(lambda: up() == 2, "both workers up (an earlier test's restart over)")
    hung = dask_executor.submit(time.sleep, 120, timeout=1.0)
    _until(lambda: up() < 2 or hung.done(), "the hung trial's worker to go down for its restart")
    assert not hung.done(), "the hung trial ended before its worker went down"
    restarted = tmp_path / "restarted"
    slow = dask_executor.submit(run_past, str(restarted), 0.3, 2.5, timeout=1.0)
    # each fails once its worker is back, or once distributed gives up waiting for it: 120 s (4 x
    # its connect timeout), seen for either restart under load (slow's 60 s failed 1 run in 6)
    assert isinstance(hung.exception(timeout=180), TrialTimeout)
    restarted.touch()
    assert isinstance(slow.exception(timeout=180), TrialTimeout)


def _until(condition: Callable[[], bool], what: str, within: float = 60.0) -> None:
    """Wait for ``condition`` (polled every 20 ms), failing after ``within`` seconds saying ``what``."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"waited {within:g} s for {what}"
        time.sleep(0.02)


def test_progress_channel_reports_and_stops(dask_executor: DaskExecutor) -> None:
    channel = dask_executor.progress_channel()
    try:
        future = dask_executor.submit(count_with, channel.reporter(9), 2000)
        seen: list = []
        deadline = time.monotonic() + 60
        while len(seen) < 3 and time.monotonic() < deadline:
            seen += channel.poll()
            time.sleep(0.1)
        assert seen[:3] == [(9, 1, 1.0), (9, 2, 2.0), (9, 3, 3.0)]
        channel.stop(9)
        assert 3 <= future.result(timeout=60) < 2000
    finally:
        channel.close()


def test_parallel_loop_on_dask(dask_executor: DaskExecutor, tmp_path: Path) -> None:
    config = load_config(ROOT / "examples" / "synthetic.yaml")
    runner = make_runner("callable", function=f"{ROOT / 'examples' / 'synthetic_system.py'}:evaluate",
                         objectives=["cost"], seed=0, delay=0.2)
    tuner = Tuner(config.space, config.objectives, strategy="random", n_init=2, store=tmp_path / "d.db")
    ended = optimize_parallel(tuner, runner, 5, dask_executor, trials_dir=tmp_path / "trials")
    assert sorted(t.id for t in ended) == list(range(5)) and all(t.status == "done" for t in ended)
    assert (tmp_path / "trials" / "t0004" / "result.json").is_file()  # same host: logs where asked


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with pytest.raises(WorkerLost, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", connect_timeout=2)


def test_ctrl_c_on_a_local_cluster_run_prints_only_the_loop_s_message(tmp_path: Path) -> None:
    # a terminal's Ctrl-C reaches the whole process group: each Dask worker process died printing
    # a KeyboardInterrupt traceback, and the scheduler logged the tasks lost with them
    import signal
    import subprocess
    import sys

    import yaml

    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data["runner"]["options"]["delay"] = 1.0  # trials are running when Ctrl-C comes
    (tmp_path / "tune.yaml").write_text(yaml.safe_dump(data))
    args = [sys.executable, "-m", "boanon", "tune", str(tmp_path / "tune.yaml"), "--dask", "local",
            "--workers", "2", "--budget", "20", "--store", str(tmp_path / "r.db")]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,  # a group of its own, as a terminal's job
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        trial_lines = (line for line in proc.stdout if line.startswith("t0"))
        next(trial_lines), next(trial_lines)  # the workers are up and running trials
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and "interrupted: running trials are stored as interrupted" in err, err
    assert "Traceback" not in err and "distributed." not in err, err


def test_a_timed_out_trial_on_a_local_cluster_prints_no_dask_warning(tmp_path: Path) -> None:
    # the nanny's "distributed.nanny - WARNING - Restarting worker" came among the trial lines
    import subprocess
    import sys

    import yaml

    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data["runner"]["options"]["delay"] = 30.0
    (tmp_path / "tune.yaml").write_text(yaml.safe_dump(data))
    done = subprocess.run([sys.executable, "-m", "boanon", "tune", str(tmp_path / "tune.yaml"), "--dask",
                           "local", "--workers", "1", "--trial-timeout", "1", "--budget", "1", "--store",
                           str(tmp_path / "r.db")], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert "FAILED (trial timed out after 1 s; its Dask worker" in done.stdout, done.stdout + done.stderr
    assert "distributed." not in done.stderr, done.stderr
