"""The asynchronous parallel loop: budget, diverse pending proposals, failures, early stopping,
and a ``boanon tune --workers 2`` run killed mid-flight and resumed."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from boanon.config import load_config
from boanon.early_stopping import MedianStopping, SuccessiveHalving
from boanon.executors import LocalExecutor
from boanon.parallel import PROGRESS_FILE, optimize_parallel
from boanon.runners import make_runner
from boanon.store import Store
from boanon.targets.sgd import SgdRunner
from boanon.tuner import Tuner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # examples/ (trial processes inherit the path)

SYNTHETIC = ROOT / "examples" / "synthetic.yaml"


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(3, grace=1.0) as ex:
        yield ex


def synthetic_runner(**options):
    return make_runner("callable", function="examples.synthetic_system:evaluate", objectives=["cost"],
                       seed=0, **options)


def test_budget_counts_finished_trials_and_pending_proposals_differ(executor, tmp_path: Path,
                                                                     monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    config = load_config(SYNTHETIC)
    tuner = Tuner(config.space, config.objectives, strategy="gp", seed=1, n_init=3,
                  store=tmp_path / "run.db")
    in_flight_at_ask: list[int] = []
    ask = tuner.ask

    def counting_ask():
        in_flight_at_ask.append(tuner.store.counts()["running"])
        return ask()

    tuner.ask = counting_ask
    ended = optimize_parallel(tuner, synthetic_runner(delay=0.3), 7, executor, trials_dir=tmp_path / "t")
    trials = tuner.store.trials()
    assert len(ended) == 7 and [t.id for t in trials] == list(range(7))
    assert all(t.status == "done" for t in trials)
    assert max(in_flight_at_ask) == 2  # asked while two others ran: three in flight at once
    assert [t.surrogate == "init" for t in trials] == [True] * 3 + [False] * 4
    x = config.space.encode([t.config for t in trials], config.space.names)
    gaps = [np.linalg.norm(x[i] - x[j]) for i in range(7) for j in range(i)]
    assert min(gaps) > 0.05  # fantasised pending outcomes keep parallel suggestions apart


def test_timeouts_and_failures_are_stored_and_the_loop_goes_on(executor, tmp_path: Path,
                                                               monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    config = load_config(SYNTHETIC)
    tuner = Tuner(config.space, config.objectives, strategy="random", n_init=2, store=tmp_path / "r.db")
    start = time.monotonic()
    ended = optimize_parallel(tuner, synthetic_runner(delay=60), 3, executor, trials_dir=tmp_path / "t",
                              trial_timeout=1.0)
    assert time.monotonic() - start < 30
    assert [t.status for t in ended] == ["failed"] * 3
    assert all("timed out after 1 s" in t.error for t in ended)
    assert tuner.n_trials() == 3


def log_iterations(trial_dir: Path) -> int:
    path = trial_dir / "workers.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else gzip.open(f"{path}.gz", "rt").readlines()
    return len({json.loads(line)["iteration"] for line in lines})


def test_early_stopping_sgd_trials_are_stored_stopped_and_feed_the_table(executor, tmp_path: Path) -> None:
    config = load_config(ROOT / "examples" / "sgd.yaml")
    tuner = Tuner(config.space, config.objectives, strategy="random", seed=3, n_init=6,
                  store=tmp_path / "sgd.db")
    runner = SgdRunner(pace=0.003, network="googlenet", iterations=12, warmup=2, noise_seed=1)
    stopper = MedianStopping(min_trials=2, min_steps=3)
    trials_dir = tmp_path / "trials"
    optimize_parallel(tuner, runner, 6, executor, trials_dir=trials_dir, stopper=stopper)
    stopped = tuner.store.trials("stopped")
    done = tuner.store.trials("done")
    assert stopped and len(stopped) + len(done) == 6
    for t in stopped:
        assert "iteration_time" in t.objectives and t.metrics  # what it measured until stopped
        assert 3 <= log_iterations(trials_dir / t.name) < 12
        progress = (trials_dir / t.name / PROGRESS_FILE).read_text().splitlines()
        assert len(progress) >= 3 and json.loads(progress[0])["step"] == 0
    assert all(log_iterations(trials_dir / t.name) == 12 for t in done)
    assert set(tuner.table()["trial"]) == {t.name for t in stopped + done}
    # a resumed run replays the finished curves into a fresh stopper
    again = Tuner(config.space, config.objectives, strategy="random", seed=3, n_init=6,
                  store=tmp_path / "sgd.db")
    fresh = MedianStopping(min_trials=2, min_steps=3)
    optimize_parallel(again, runner, 6, executor, trials_dir=trials_dir, stopper=fresh)
    assert fresh.ended == {t.id for t in stopped + done} and not fresh.stopped


def test_ctrl_c_while_proposing_keeps_the_trials_that_had_ended(executor, tmp_path: Path,
                                                                 monkeypatch) -> None:
    """A Ctrl-C while the loop proposed the next configuration stored as interrupted the trials
    whose result had come back meanwhile (a Dask run's t0004, ended 3 s before), and the resume
    ran them again: an evaluation of an expensive system spent twice."""
    monkeypatch.chdir(ROOT)
    config = load_config(SYNTHETIC)
    tuner = Tuner(config.space, config.objectives, strategy="random", n_init=3, store=tmp_path / "r.db")
    ask, asks, in_flight = tuner.ask, [], []

    def interrupted_ask():
        asks.append(1)
        if len(asks) == 4:  # after a trial was told: the others end while this one is proposed
            in_flight.append(tuner.store.counts()["running"])
            time.sleep(4)
            raise KeyboardInterrupt
        if len(asks) > 1:
            time.sleep(1)  # the trials end one by one, not all at one wait
        return ask()

    tuner.ask = interrupted_ask
    with pytest.raises(KeyboardInterrupt):
        optimize_parallel(tuner, synthetic_runner(delay=0.3), 6, executor, trials_dir=tmp_path / "t")
    assert in_flight and in_flight[0] >= 1  # a trial ran on while the fourth was proposed
    assert [t.status for t in tuner.store.trials()] == ["done"] * 3


def test_a_trial_condemned_while_the_loop_fits_its_model_stops_then(executor, tmp_path: Path) -> None:
    """Progress was read only between proposals: a trial the rule condemned while the next
    proposal was being fitted ran to its end (a structured proposal takes seconds; on a loaded
    machine the README's ASHA run stopped none of 20 trials, every stop arriving too late)."""
    config = load_config(ROOT / "examples" / "sgd.yaml")
    tuner = Tuner(config.space, config.objectives, strategy="random", seed=0, n_init=2,
                  store=tmp_path / "sgd.db")
    ask = tuner.ask

    def slow_ask():  # a proposal whose model fit takes longer than the running trial
        if tuner.store.counts()["running"]:
            time.sleep(8)
        return ask()

    tuner.ask = slow_ask
    stopper = SuccessiveHalving(min_resource=2, reduction_factor=2)
    stopper.replay({-1: [(step, 0.1) for step in range(20)]})  # a far better trial ended before
    runner = SgdRunner(pace=0.01, network="googlenet", iterations=20, warmup=0, noise_seed=0)
    optimize_parallel(tuner, runner, 2, executor, trials_dir=tmp_path / "trials", stopper=stopper)
    first = tuner.store.trials()[0]  # ran ~3 s of iterations while the second was being asked for
    assert first.status == "stopped" and log_iterations(tmp_path / "trials" / first.name) < 20


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return status != "Z"


@pytest.mark.slow
def test_killed_parallel_run_resumes_without_losing_or_repeating_trials(tmp_path: Path) -> None:
    spec = yaml.safe_load(SYNTHETIC.read_text())
    spec["runner"]["options"]["delay"] = 1.5
    spec.update(strategy="random", n_init=3, budget=10)
    config = tmp_path / "slow.yaml"
    config.write_text(yaml.safe_dump(spec))
    store_file, trials = tmp_path / "run.db", tmp_path / "trials"
    boanon = [str(Path(sys.executable).with_name("boanon")), "tune", str(config), "--workers", "2",
              "--store", str(store_file), "--trials-dir", str(trials)]
    proc = subprocess.Popen(boanon, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            time.sleep(0.3)
            if store_file.is_file():
                with Store(store_file) as s:
                    counts = s.counts()
                if counts["done"] >= 3 and counts["running"] >= 1:
                    break
        else:
            pytest.fail("the run did not get going: " + proc.stdout.read().decode()[-2000:])
        workers = descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(store_file) as s:
        before = {t.id: t for t in s.trials()}
    done_before = {i: t for i, t in before.items() if t.status == "done"}
    in_flight = [i for i, t in before.items() if t.status == "running"]
    assert in_flight
    deadline = time.monotonic() + 30  # the fork server exits on EOF, then its children (pdeathsig)
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in workers if alive(p)], "trial processes outlived the killed run"

    resumed = subprocess.run([*boanon, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with Store(store_file) as s:
        after = s.trials()
        counts = s.counts()
    states = [(t.name, t.status, t.error, t.retry_of) for t in after]
    assert counts["done"] == 10 and counts["running"] == 0, states  # the budget counts finished trials
    assert counts["interrupted"] == len(in_flight)
    for i, t in done_before.items():  # finished trials kept as they were
        assert after[i].status == "done" and after[i].objectives == t.objectives
    retries = [t for t in after if t.retry_of is not None]
    assert sorted(t.retry_of for t in retries) == sorted(in_flight)  # each re-run exactly once
    assert all(t.config == before[t.retry_of].config for t in retries)
    configs = [json.dumps(t.config, sort_keys=True) for t in after if t.status == "done"]
    assert len(set(configs)) == len(configs)  # no finished configuration ran twice
    assert os.path.isdir(trials / after[-1].name)


README_ASHA = ["--workers", "4", "--early-stopping", "asha:min_resource=8,reduction_factor=2"]


def test_the_readme_early_stopping_example_stops_trials(tmp_path: Path, monkeypatch) -> None:
    """README: ``boanon tune examples/sgd.yaml --workers 4 --early-stopping asha:...`` (a shorter
    budget, and random proposals: the model's cost is not what is tested)."""
    from click.testing import CliRunner

    from boanon.cli import main

    monkeypatch.chdir(ROOT)
    store = tmp_path / "sgd.db"
    result = CliRunner().invoke(main, ["tune", "examples/sgd.yaml", *README_ASHA, "--budget", "8",
                                       "--strategy", "random", "--store", str(store)])
    assert result.exit_code == 0, result.output
    with Store(store) as s:
        stopped = s.counts()["stopped"]
    assert stopped >= 1 and f"early stopping (asha): {stopped} of 8 trials stopped\n" in result.output


def test_a_run_where_nothing_was_stopped_says_why(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from boanon.cli import main

    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["tune", "examples/sgd.yaml", "--workers", "2", "--budget", "2",
                                       "--early-stopping", "asha:min_resource=64", "--strategy",
                                       "random", "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    assert "early stopping (asha): 0 of 2 trials stopped; none because no trial reached step 64, " \
        "the first the rule judges (the furthest reached 29)" in result.output


@pytest.mark.parametrize("example, objective, ranked", [
    ("rocksdb-mixgraph.yaml", "cpu_micros_per_op", "maximize"),  # reports ops/sec, tunes CPU time
    ("sgd.yaml", "iteration_time", "minimize"),
])
def test_the_rule_ranks_progress_the_way_the_runner_reports_it(tmp_path: Path, monkeypatch, example,
                                                              objective, ranked) -> None:
    """The rule took the first objective's direction for every runner: the RocksDB runner reports
    each interval's ops/sec, so a run minimising CPU time per operation stopped the fastest trials."""
    from boanon.tuning import TuneRequest, open_run

    monkeypatch.chdir(ROOT)
    request = TuneRequest(f"examples/{example}", store=tmp_path / "run.db", workers=2,
                          early_stopping="asha:min_resource=2")
    with open_run(request) as run:
        assert run.config.objectives[0].name == objective
        assert run.stopper is not None and run.stopper.direction == ranked


def test_why_none_stopped_names_stops_that_came_too_late() -> None:
    stopper = SuccessiveHalving(min_resource=2, reduction_factor=2)
    assert stopper.why_none_stopped() == "no trial reported progress"
    for trial, value in ((0, 1.0), (1, 5.0)):
        for step in range(4):
            stopper.report(trial, step, value)
    assert stopper.stopped == {1}  # condemned; had it ended already, nothing was stopped
    assert stopper.why_none_stopped().startswith("the rule asked 1 trial to stop, but each had "
                                                 "ended before the request reached it")
    assert MedianStopping(min_steps=5).first_step() == 5 and stopper.first_step() == 2


def test_cli_rejects_early_stopping_without_progress_and_bad_specs(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from boanon.cli import main

    monkeypatch.chdir(ROOT)
    store = tmp_path / "x.db"
    result = CliRunner().invoke(main, ["tune", str(SYNTHETIC), "--early-stopping", "median",
                                       "--store", str(store)])
    assert result.exit_code != 0 and "does not report progress" in result.output
    assert not store.exists()  # nothing recorded for a run that never started
    result = CliRunner().invoke(main, ["tune", "examples/sgd.yaml", "--early-stopping",
                                       "asha:reduction_factor=1", "--store", str(store)])
    assert result.exit_code != 0 and "reduction_factor >= 2" in result.output


def test_a_trial_timeout_alone_runs_one_trial_at_a_time(tmp_path: Path) -> None:
    """``--trial-timeout`` (or ``--early-stopping``) without ``--workers`` watches each trial in
    its own process, one at a time as the sequential loop runs them: it ran as many at once as
    the machine has cores, so concurrent runs of an expensive system measured one another."""
    config = tmp_path / "tune.yaml"
    data = yaml.safe_load(SYNTHETIC.read_text())
    data["runner"]["options"]["delay"] = 1.0
    config.write_text(yaml.safe_dump({**data, "n_init": 3, "strategy": "random"}))
    store = tmp_path / "run.db"
    run = subprocess.run([sys.executable, "-m", "boanon", "tune", str(config), "--budget", "3",
                          "--trial-timeout", "60", "--store", str(store)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    with Store(store, read_only=True) as s:
        spans = sorted((t.started, t.finished) for t in s.trials())
    assert len(spans) == 3
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:], strict=False)), spans
