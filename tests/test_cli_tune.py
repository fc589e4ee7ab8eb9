"""``boanon tune``, ``status`` and ``export`` end to end, including a resume after SIGKILL; every
command's outputs refused up front when their directory is missing."""

from __future__ import annotations

import gc
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from boanon.adapters.ingest import ingest
from boanon.cli import main
from boanon.cli.outputs import directory_problem
from boanon.errors import ConfigError
from boanon.multiobjective import OutputConstraint
from boanon.results import is_feasible
from boanon.store import Store
from boanon.store_lock import lock_path
from boanon.table import read_table
from boanon.tuning import CONFIG_NOTE, AlreadyStored, TuneRequest, open_run, run_tuning

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


def _yaml(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(changes)
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the current directory


def test_tune_then_status_and_export(tmp_path: Path) -> None:
    config = _yaml(tmp_path, n_init=5)
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "5", "--store", str(store)])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("t000")]
    assert len(lines) == 5 and all("[init]" in ln and "best cost=" in ln for ln in lines)
    assert "best: t0000" in result.output or "best: t000" in result.output

    status = CliRunner().invoke(main, ["status", str(store)])
    assert status.exit_code == 0 and "5: 5 done, 0 stopped early, 0 failed" in status.output
    assert "best cost:" in status.output

    out = tmp_path / "trials.csv"
    export = CliRunner().invoke(main, ["export", str(store), "-o", str(out)])
    assert export.exit_code == 0, export.output
    exported = read_table(str(out))
    ingested = ingest(tmp_path / "run.trials").table  # the same trials, parsed from their logs
    assert list(exported.columns) == list(ingested.columns)
    pd.testing.assert_frame_equal(exported, ingested, check_dtype=False)

    again = CliRunner().invoke(main, ["tune", str(config), "--budget", "5", "--store", str(store)])
    assert again.exit_code != 0 and "pass --resume" in again.output
    missing = CliRunner().invoke(main, ["tune", str(config), "--store", str(tmp_path / "x.db"),
                                        "--resume"])
    assert missing.exit_code != 0 and "no store to resume" in missing.output


OUTPUTS = {  # every option a command writes to, in a command line that is otherwise fine
    "export -o": ["export", "{store}", "-o", "{out}.csv"],
    "export --best -o": ["export", "{store}", "--best", "-o", "{out}.yaml"],
    "export --optuna": ["export", "{store}", "--optuna", "sqlite:///{out}.db"],
    "plot -o": ["plot", "{store}", "--kind", "convergence", "-o", "{out}.png"],
    "status --plot": ["status", "{store}", "--plot", "{out}.png"],
    "learn -o": ["learn", "{trials}", "-o", "{out}.json"],
    "learn --render": ["learn", "{trials}", "-o", "{here}/graph.json", "--render", "{out}.dot"],
    "ingest -o": ["ingest", "{trials}", "-o", "{out}.csv"],
    "plan -o": ["plan", "{config}", "--deadline", "1h", "--instances", "{instances}", "--store",
                "{store}", "-o", "{out}.json"],
    "import -o": ["import", "sqlite:///{here}/optuna.db", "-o", "{out}.db"],
    "tune --store": ["tune", "{config}", "--budget", "1", "--store", "{out}.db"],
}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory, synthetic_run) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("outputs"), budget=6)


def _refused_output(args: list[str], small_run: Path, here: Path, directory: Path) -> str:
    """The last line of the usage error of ``args``' command writing into ``directory``, checked
    to come before any work (nothing printed, learned or drawn)."""
    where = {"store": small_run, "trials": small_run.with_suffix(".trials"), "here": here,
             "config": small_run.with_name("synthetic.yaml"),
             "instances": ROOT / "examples" / "instances.yaml", "out": directory / "out"}
    result = CliRunner().invoke(main, [a.format(**where) for a in args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Usage: ")
    return result.output.splitlines(keepends=True)[-1]


@pytest.mark.parametrize("args", OUTPUTS.values(), ids=list(OUTPUTS))
def test_an_output_into_a_missing_directory_is_refused_before_any_work(tmp_path: Path, small_run: Path,
                                                                       args: list[str]) -> None:
    missing = tmp_path / "nodir"
    assert f": directory {missing} does not exist\n" in _refused_output(args, small_run, tmp_path, missing)
    assert not missing.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory: nothing to refuse")
@pytest.mark.parametrize("args", OUTPUTS.values(), ids=list(OUTPUTS))
def test_an_output_into_a_directory_not_writable_is_refused_before_any_work(tmp_path: Path, small_run: Path,
                                                                            args: list[str]) -> None:
    locked = tmp_path / "locked"  # it failed only when the output was written, after all the work
    locked.mkdir(mode=0o555)
    line = _refused_output(args, small_run, tmp_path, locked)
    assert f": directory {locked} is not writable\n" in line


def test_an_existing_file_the_user_may_write_is_an_output_wherever_it_is() -> None:
    assert directory_problem("/dev/null") is None  # /dev is not writable for a user, /dev/null is


def test_an_output_under_a_file_is_refused_naming_the_file(tmp_path: Path, small_run: Path) -> None:
    result = CliRunner().invoke(main, ["export", str(small_run), "-o", str(small_run / "t.csv")])
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: Invalid value for '-o' / '--output': {small_run / 't.csv'}: "
                                  f"{small_run} is not a directory\n")


INPUTS = {  # an output named as the command's own input (or a link to it) was written over it
    "export -o": ["export", "{store}", "-o", "{link}"],
    "export --best -o": ["export", "{store}", "--best", "-o", "{store}"],
    "plot -o": ["plot", "{store}", "-o", "{link}"],
    "status --plot": ["status", "{store}", "--plot", "{store}"],
    "learn -o": ["learn", "{table}", "-o", "{table}"],
    "learn --render": ["learn", "{table}", "-o", "{out}", "--render", "{table}"],
    "ingest -o": ["ingest", "{table}", "-o", "{table}"],
}


@pytest.mark.parametrize("args", INPUTS.values(), ids=list(INPUTS))
def test_an_output_that_is_the_commands_input_is_refused_and_the_input_kept(tmp_path: Path,
                                                                            small_run: Path,
                                                                            args: list[str]) -> None:
    store = tmp_path / "run.db"  # `export run.db --best -o run.db` left a YAML file, no store
    store.write_bytes(small_run.read_bytes())
    (tmp_path / "link.png").symlink_to(store)
    table = tmp_path / "t.csv"
    assert CliRunner().invoke(main, ["export", str(small_run), "-o", str(table)]).exit_code == 0
    before = {p: p.read_bytes() for p in (store, table)}
    where = {"store": store, "link": tmp_path / "link.png", "table": table, "out": tmp_path / "g.json"}
    result = CliRunner().invoke(main, [a.format(**where) for a in args])
    assert result.exit_code == 2, result.output
    assert "is the file this command reads" in result.output.splitlines()[-1]
    assert {p: p.read_bytes() for p in before} == before


def test_a_related_output_no_related_task_logged_is_warned_of(tmp_path: Path, small_run: Path) -> None:
    table = tmp_path / "related.csv"  # a misspelt related output was modelled from nothing, unsaid
    assert CliRunner().invoke(main, ["export", str(small_run), "-o", str(table)]).exit_code == 0
    config = _yaml(tmp_path, strategy="multitask", n_init=2, warm_start=[str(table)],
                   related_outputs=["g0_m2", "g0_m2x"])
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2",
                                       "--store", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.output
    assert ("warning: related_outputs: 'g0_m2x' is logged by no related task (did you mean 'g0_m2'?); it "
            "teaches the model nothing until this run's trials log it\n") in result.stderr
    assert "'g0_m2' is logged" not in result.stderr


def test_seed_and_strategy_options_override_the_yaml(tmp_path: Path) -> None:
    config = _yaml(tmp_path, n_init=2)  # the YAML says structured, seed 0
    args = ["tune", str(config), "--budget", "4", "--strategy", "random", "--seed", "3"]
    runs = [CliRunner().invoke(main, [*args, "--store", str(tmp_path / f"run{i}.db")]) for i in (0, 1)]
    assert all(r.exit_code == 0 for r in runs), runs[0].output
    lines = [ln for ln in runs[0].output.splitlines() if ln.startswith("t000")]
    assert [ln.rsplit(" ", 1)[1] for ln in lines] == ["[init]"] * 2 + ["[random]"] * 2
    with Store(tmp_path / "run0.db") as store:
        assert (store.study().seed, store.study().strategy) == (3, "random")
        configs = [t.config for t in store.trials()]
    with Store(tmp_path / "run1.db") as store:
        assert [t.config for t in store.trials()] == configs  # same seed, same proposals


def test_failing_command_trials_are_reported(tmp_path: Path) -> None:
    script = "import sys, time; x = float(sys.argv[1]); time.sleep(5 if x > 0.5 else 0); sys.exit(1)"
    config = _yaml(tmp_path, n_init=3, runner={
        "command": [sys.executable, "-c", script, "{x0}"], "options": {"timeout": 1}})
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "3",
                                       "--store", str(tmp_path / "run.db")])
    assert result.exit_code == 1 and "Error: no trial succeeded (3 failed)" in result.output
    assert "export" not in result.output  # no best configuration to export (it suggested one)
    lines = [ln for ln in result.output.splitlines() if ln.startswith("t000")]
    assert len(lines) == 3 and all("FAILED" in ln for ln in lines)
    assert "exited with status 1" in lines[0]  # the default config, x0 = 0.5
    assert any("timed out after 1 s" in ln for ln in lines)
    with Store(tmp_path / "run.db") as store:
        assert store.counts()["failed"] == 3
        assert (tmp_path / "run.trials" / "t0000" / "stderr.txt").is_file()


def test_a_misspelt_runner_option_is_refused_before_any_trial(tmp_path: Path) -> None:
    # every trial failed with "evaluate() got an unexpected keyword argument 'n_parms'" until the
    # failure streak stopped the run; a registered runner's typo was a TypeError from its constructor
    store = tmp_path / "run.db"
    for runner, message in (
            ({"callable": "examples.synthetic_system:evaluate", "options": {"seed": 0, "n_parms": 12}},
             "runner.options.n_parms: examples.synthetic_system:evaluate has no option 'n_parms' (did you "
             "mean 'n_params'?); "
             "its options: seed, n_params, n_groups, delay"),
            ({"name": "sgd", "options": {"netwrok": "googlenet"}},
             "runner.options.netwrok: runner 'sgd' has no option 'netwrok' (did you mean 'network'?)")):
        config = _yaml(tmp_path, runner=runner)
        result = CliRunner().invoke(main, ["tune", str(config), "--budget", "3", "--store", str(store)])
        assert result.exit_code == 1 and f"{config}: {message}" in result.output, result.output
        assert not store.exists()


@pytest.mark.parametrize("runner, error", [
    ({"name": "sgd", "options": {"network": "resnet"}},
     "runner.options.network: unknown network 'resnet'; known: alexnet, googlenet, speechnet"),
    ({"name": "command"}, "runner.options.command: missing (required by runner 'command'); given: none"),
    # an option of the wrong type was Python's bare words under `runner`
    ({"name": "rocksdb", "options": {"num": "many"}},
     "runner.options.num: expected an integer, got 'many' (str)"),
    ({"name": "sgd", "options": {"noise": "high"}},
     "runner.options.noise: expected a number, got 'high' (str)"),
    # "runner: invalid literal for int() with base 10: 'a'"; [1, 1.5] ran layers 1 and 1
    ({"name": "zigzag", "options": {"layers": ["a"]}},
     "runner.options.layers[0]: expected a Conv layer's index (an integer), got 'a' (str)"),
    ({"name": "zigzag", "options": {"layers": [12, 1.5]}},
     "runner.options.layers[1]: expected a Conv layer's index (an integer), got 1.5 (float)"),
])
def test_an_invalid_runner_option_is_named_once_before_any_trial(tmp_path: Path, runner: dict,
                                                                 error: str) -> None:
    """It read ``tune.yaml: runner: sgd runner options: network: ...`` (the runner's own field
    under the configuration's), and a missing option was named ``runner``."""
    store = tmp_path / "run.db"
    config = _yaml(tmp_path, runner=runner)
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "3", "--store", str(store)])
    assert result.exit_code == 1 and result.output == f"Error: {config}: {error}\n", result.output
    assert not store.exists()


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_a_misconfigured_runner_stops_the_run_and_exits_non_zero(tmp_path: Path, workers) -> None:
    config = _yaml(tmp_path, n_init=3, runner={  # an option of the wrong type: every trial fails the same way
        "callable": "examples.synthetic_system:evaluate", "options": {"seed": 0, "n_params": "twelve"}})
    store = tmp_path / "run.db"
    args = ["tune", str(config), "--budget", "30", "--store", str(store), *workers]
    result = CliRunner().invoke(main, [*args, "--max-consecutive-failures", "4"])
    assert result.exit_code == 1, result.output
    assert "Error: run stopped: 4 trials in a row failed with the same error, the last (t000" \
        in result.output and "unsupported operand type(s) for -: 'str' and 'int'" in result.output
    assert f"boanon tune {config} --store {store} --budget 30 {' '.join(workers)}".rstrip() \
        + " --max-consecutive-failures 4 --resume\n" in result.output  # the same job again
    with Store(store) as s:
        counts = s.counts()
    failed = counts["failed"]
    # with two workers the other trial in flight may fail too before the stop reaches it
    assert (failed == 4 if not workers else failed in (4, 5)) and counts["running"] == 0

    fixed = _yaml(tmp_path, n_init=3, runner={
        "callable": "examples.synthetic_system:evaluate", "options": {"seed": 0, "n_params": 12}})
    assert fixed == config
    resumed = CliRunner().invoke(main, [*args, "--budget", "6", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    with Store(store) as s:
        assert s.counts()["done"] == 6 - failed  # the failures spent part of the budget of 6


@pytest.mark.parametrize("spec, message", [
    ("median:min_steps=0", "early stopping 'median:min_steps=0': min_steps must be >= 1"),
    ("asha:min_resource=0",
     "early stopping 'asha:min_resource=0': need min_resource >= 1 and reduction_factor >= 2"),
])
def test_a_bad_early_stopping_setting_is_the_options_usage_error(tmp_path: Path, spec: str,
                                                                  message: str) -> None:
    # "Error: min_steps must be >= 1": neither the option nor the rule named
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(_yaml(tmp_path)), "--store", str(store), "--budget", "2",
                                       "--early-stopping", spec])
    assert result.exit_code == 2, result.output
    assert result.output.endswith(f"Error: Invalid value for '--early-stopping': {message}\n"), result.output
    assert not store.exists()


def test_config_errors_name_the_file_and_field(tmp_path: Path) -> None:
    config = _yaml(tmp_path, strategy="bayes")
    result = CliRunner().invoke(main, ["tune", str(config), "--store", str(tmp_path / "r.db")])
    assert result.exit_code != 0 and f"{config}: strategy: expected one of" in result.output


def test_a_warm_start_at_a_folder_of_datasets_lists_them_and_says_to_point_at_one(tmp_path: Path) -> None:
    store = tmp_path / "sgd.db"  # it said: run `boanon ingest datasets/rocksdb-mixgraph` (the first folder)
    result = CliRunner().invoke(main, ["tune", "examples/sgd.yaml", "--warm-start", "datasets", "--store",
                                       str(store)])
    datasets = sorted(d for d in (ROOT / "datasets").iterdir() if d.is_dir())
    assert result.exit_code == 1 and "boanon ingest" not in result.output and not store.exists()
    assert f"datasets: warm_start: holds {len(datasets)} datasets (with the adapter reading each), not the " \
           "trials of one: datasets/rocksdb-mixgraph (rocksdb), " in result.output
    assert "datasets/sgd-alexnet (sgd), datasets/sgd-googlenet (sgd), " in result.output
    assert "; point warm_start (or --warm-start) at one of them, a related task's" in result.output


def test_a_run_that_cannot_start_leaves_no_store(tmp_path: Path) -> None:
    config = _yaml(tmp_path, constraints=["x0 > 2"])  # no configuration satisfies it
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--store", str(store)])
    assert result.exit_code != 0 and "feasible configurations" in result.output
    assert not store.exists()


def _three_done_one_running(store: Path) -> bool:
    if not store.exists():
        return False
    with Store(store) as s:
        counts = s.counts()
    return counts["done"] >= 3 and counts["running"] >= 1


def _start_and_signal(tmp_path: Path, budget: int, sig: int,
                      options: tuple[str, ...] = ()) -> tuple[list[str], Path, int]:
    """Start ``boanon tune`` on a slow system, send ``sig`` once 3 trials are done and a fourth runs."""
    config = _yaml(tmp_path, n_init=budget, runner={
        "callable": "examples.synthetic_system:evaluate", "options": {"seed": 0, "delay": 0.4}})
    store = tmp_path / "run.db"
    args = [BOANON, "tune", str(config), "--budget", str(budget), "--store", str(store), *options]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 300  # generous: on a loaded machine the start alone took a minute
    while not _three_done_one_running(store) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if not _three_done_one_running(store):
        proc.kill()
        pytest.fail(f"the run never had 3 trials done and a fourth running (exit {proc.wait(30)})")
    proc.send_signal(sig)
    return args, store, proc.wait(30)


@pytest.mark.slow
def test_sigterm_stops_cleanly(tmp_path: Path) -> None:
    _, store, status = _start_and_signal(tmp_path, 10, signal.SIGTERM)
    assert status == 130
    with Store(store) as s:
        counts = s.counts()
        assert counts["running"] == 0 and counts["interrupted"] == 1 and counts["done"] >= 3


@pytest.mark.slow
def test_resume_after_sigkill_loses_and_repeats_nothing(tmp_path: Path) -> None:
    budget = 10
    args, store, _ = _start_and_signal(tmp_path, budget, signal.SIGKILL)
    assert lock_path(store).exists()  # the killed run's lock file stays; its lock died with it
    with Store(store) as s:
        before = {t.id: t for t in s.trials("done")}
        assert 3 <= len(before) < budget
    resumed = subprocess.run([*args, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    with Store(store) as s:
        done = s.trials("done")
        # Nothing finished before the kill is lost or changed, nothing is run twice, budget honoured.
        assert {t.id: t for t in done if t.id in before} == before
        assert len(done) == budget
        configs = [tuple(t.config.values()) for t in done]
        assert len(set(configs)) == budget
        interrupted = [t for t in s.trials("failed") if t.interrupted]
        assert len(interrupted) <= 1
        for t in interrupted:  # the trial the kill interrupted ran again
            assert any(d.retry_of == t.id and d.config == t.config for d in done)
        assert s.counts()["running"] == 0


@pytest.mark.slow
def test_status_says_a_killed_runs_running_trial_runs_no_more_and_how_to_resume(tmp_path: Path) -> None:
    # it said "1 running" as if the run were alive (the dashboard said "killed?")
    _, store, _ = _start_and_signal(tmp_path, 6, signal.SIGKILL)
    result = CliRunner().invoke(main, ["status", str(store)])
    assert result.exit_code == 0, result.output
    resume = f"boanon tune {(tmp_path / 'tune.yaml').resolve()} --store {store} --budget 6 --resume"
    assert (f" 1 running (the tuning process has ended: killed? resume it with {resume} from {ROOT})"
            in result.output), result.output
    with Store(store) as s:
        assert s.activity()["killed"]


@pytest.mark.slow
def test_the_resume_command_status_gives_for_a_killed_run_does_the_same_job(tmp_path: Path) -> None:
    """It named the YAML and the store only: run as printed, it went on to the YAML's budget (30,
    not the 5 asked for) and wrote the trials beside the store, not in the run's --trials-dir."""
    trials = tmp_path / "logs"
    _, store, _ = _start_and_signal(tmp_path, 5, signal.SIGKILL, ("--trials-dir", str(trials)))
    result = CliRunner().invoke(main, ["status", str(store)])
    said = re.search(r"resume it with (.*) from (.*)\)", result.output)
    assert said, result.output
    assert "--budget 5" in said[1] and f"--trials-dir {trials}" in said[1], said[1]
    resumed = subprocess.run(shlex.split(said[1].replace("boanon", BOANON, 1)), cwd=said[2],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with Store(store) as s:
        names = {t.name for t in s.trials("done")}
    assert len(names) == 5 and names <= {p.name for p in trials.iterdir()}, names


@pytest.mark.slow
def test_the_resume_command_of_a_killed_warm_run_gives_each_related_task(tmp_path: Path) -> None:
    """A repeated option was printed as a tuple (``--warm-start "('a.db', 'b.db')"``), a path that
    does not exist: the command status gave for a killed warm-started run could not resume it."""
    related = []
    for name in ("a", "b"):  # two related runs, one task each
        related.append(tmp_path / f"{name}.db")
        made = CliRunner().invoke(main, ["tune", str(_yaml(tmp_path, n_init=2)), "--budget", "2",
                                         "--store", str(related[-1]), "--seed", str(len(related))])
        assert made.exit_code == 0, made.output
    options = ("--warm-start", str(related[0]), "--warm-start", str(related[1]))
    _, store, _ = _start_and_signal(tmp_path, 5, signal.SIGKILL, options)
    result = CliRunner().invoke(main, ["status", str(store)])
    said = re.search(r"resume it with (.*) from (.*)\)", result.output)
    assert said, result.output
    resumed = subprocess.run(shlex.split(said[1].replace("boanon", BOANON, 1)), cwd=said[2],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "warm start: 2 trials of 'a'" in resumed.stdout and "of 'b'" in resumed.stdout, resumed.stdout
    with Store(store) as s:
        assert s.counts()["done"] == 5


def test_status_of_a_run_that_ended_says_nothing_of_a_kill(tmp_path: Path) -> None:
    config = _yaml(tmp_path, n_init=2)
    store = tmp_path / "run.db"
    ended = subprocess.run([BOANON, "tune", str(config), "--budget", "2", "--store", str(store)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert ended.returncode == 0, ended.stderr
    result = CliRunner().invoke(main, ["status", str(store)])
    assert "0 running\n" in result.output and "killed" not in result.output, result.output


def test_a_resume_with_a_budget_below_the_runs_trials_says_so_and_runs_nothing(tmp_path: Path) -> None:
    # it printed "3 of 2 trials done (resumed)", the best trial, and exited 0
    config = _yaml(tmp_path, n_init=3)
    store = tmp_path / "run.db"
    args = ["tune", str(config), "--store", str(store)]
    assert CliRunner().invoke(main, [*args, "--budget", "3"]).exit_code == 0
    result = CliRunner().invoke(main, [*args, "--budget", "2", "--resume"])
    assert result.exit_code == 1
    assert result.output == (f"Error: {store}: the run has 3 trials, more than the budget (2): nothing "
                             "was run; the budget counts all the run's trials, so --budget 5 runs 2 more\n")
    done = CliRunner().invoke(main, [*args, "--budget", "3", "--resume"])  # a finished run, resumed: done
    assert done.exit_code == 0 and "3 of 3 trials done (resumed)" in done.output, done.output
    with Store(store) as s:
        assert len(s.trials()) == 3
    assert not lock_path(store).exists()  # the refused resume let go of the store


def test_a_multiobjective_run_whose_every_trial_failed_says_so_without_a_traceback(tmp_path: Path) -> None:
    # the summary drew the Pareto front of no trial: KeyError "the table has no column 'objective:cost'"
    data = yaml.safe_load((ROOT / "examples" / "synthetic-multiobjective.yaml").read_text())
    (tmp_path / "broken.py").write_text("def evaluate(config):\n    raise RuntimeError('broken')\n")
    data["runner"] = {"callable": f"{tmp_path / 'broken.py'}:evaluate"}  # every trial raises
    config = tmp_path / "mo.yaml"
    config.write_text(yaml.safe_dump(data))
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store)])
    assert result.exit_code == 1 and not isinstance(result.exception, KeyError), result.output
    assert result.output.endswith(f"Error: no trial succeeded (2 failed); see boanon status {store}\n"), \
        result.output


def test_misnamed_objective_stops_after_one_trial_and_resumes_once_fixed(tmp_path: Path) -> None:
    config = _yaml(tmp_path, n_init=4, objectives=[{"name": "costs", "direction": "minimize"}])
    store = tmp_path / "run.db"
    args = ["tune", str(config), "--budget", "4", "--store", str(store)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert ("t0000: objective 'costs' missing: it is not among the values the trial logged (cost, "
            in result.output)
    assert "did you mean 'cost'?" in result.output and "--resume" in result.output, result.output
    with Store(store) as s:
        assert (s.counts()["failed"], s.counts()["done"]) == (1, 0)  # stopped after the first trial
    _yaml(tmp_path, n_init=4)  # the name fixed
    result = CliRunner().invoke(main, [*args, "--resume"])
    assert result.exit_code == 0, result.output
    with Store(store) as s:
        assert (s.counts()["failed"], s.counts()["done"]) == (1, 3)
        assert s.study().objectives[0]["name"] == "cost"
        failed, rerun = s.trials()[:2]  # the default ran again first: the baseline explain and plots need
        assert (rerun.config, rerun.status, rerun.retry_of) == (failed.config, "done", failed.id)
    result = CliRunner().invoke(main, ["explain", str(store)])
    assert result.exit_code == 0 and "no finished trial of the default" not in result.output, result.output
    fresh = tmp_path / "fresh.db"  # the re-run default holds the first design point: no Sobol point skipped
    assert CliRunner().invoke(main, [*args[:-2], "--store", str(fresh)]).exit_code == 0
    with Store(store) as s, Store(fresh) as f:
        assert [t.config for t in s.trials("done")] == [t.config for t in f.trials("done")][:3]


def test_a_misnamed_output_stops_the_run_after_its_design_and_resumes_once_fixed(tmp_path: Path) -> None:
    store = tmp_path / "run.db"  # it ended in a traceback at the first model proposal
    config = _yaml(tmp_path, n_init=2, outputs=[{"name": "g0_laod", "max": 1.5}])
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "4", "--store", str(store)])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert ("run stopped: output 'g0_laod' (outputs:) is not among the values the 2 measured trials "
            "logged (did you mean 'g0_load'?): every trial is infeasible without it") in result.output
    with Store(store) as s:
        assert [t.status for t in s.trials()] == ["done", "done"]
    config = _yaml(tmp_path, n_init=2, outputs=[{"name": "g0_load", "max": 1.5}])
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "4", "--store", str(store),
                                       "--resume"])
    assert result.exit_code == 0, result.output
    with Store(store) as s:
        assert len(s.trials("done")) == 4
    config = _yaml(tmp_path, n_init=2, outputs=[{"name": "g0_load", "max": 9.5}])  # now it was logged
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "5", "--store", str(store),
                                       "--resume"])
    assert result.exit_code == 1 and "outputs: differs from the run recorded" in result.output


def test_objectives_stay_fixed_once_a_trial_is_measured(tmp_path: Path) -> None:
    config = _yaml(tmp_path, n_init=2)
    store = tmp_path / "run.db"
    args = ["tune", str(config), "--budget", "2", "--store", str(store)]
    assert CliRunner().invoke(main, args).exit_code == 0
    _yaml(tmp_path, n_init=2, objectives=[{"name": "cost", "direction": "maximize"}])
    result = CliRunner().invoke(main, [*args, "--budget", "3", "--resume"])
    assert result.exit_code == 1 and "objectives: differs from the run recorded" in result.output


def test_a_resume_with_another_space_names_the_parameters_and_keys_that_differ(tmp_path: Path) -> None:
    """It said only "space: differs from the run recorded in this store": which of the parameters
    the YAML changed since the run started (a bound, a default, one added) was to be guessed."""
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    args = ["--store", str(tmp_path / "run.db"), "--budget", "2"]
    made = CliRunner().invoke(main, ["tune", str(_yaml(tmp_path, n_init=2, strategy="random")), *args])
    assert made.exit_code == 0, made.output
    space = data["space"]
    first, *_, last = space
    space[first] = {**space[first], "high": 0.8}
    space["extra"] = {"type": "bool"}
    del space[last]
    changed = _yaml(tmp_path, n_init=2, strategy="random", space=space)
    result = CliRunner().invoke(main, ["tune", str(changed), *args, "--resume"])
    assert result.exit_code == 1 and "space: differs from the run recorded" in result.output
    for part in (f"space.{first}.high: stored 1.0, given 0.8", f"space.{last}: stored {{",
                 "given none", "space.extra: stored none, given {\"type\": \"bool\"}"):
        assert part in result.output, (part, result.output)


def test_a_resume_with_another_warm_start_says_the_stored_and_the_given_sources(tmp_path: Path) -> None:
    """It said only "warm_start: differs from the run recorded in this store": which source the
    run was started with, the one thing to pass to resume it, was to be guessed."""
    related = []
    for name in ("a", "b"):
        related.append(tmp_path / f"{name}.db")
        made = CliRunner().invoke(main, ["tune", str(_yaml(tmp_path, n_init=2, strategy="random")),
                                         "--budget", "2", "--store", str(related[-1])])
        assert made.exit_code == 0, made.output
    args = ["tune", str(_yaml(tmp_path, n_init=2, strategy="random")), "--store", str(tmp_path / "run.db")]
    made = CliRunner().invoke(main, [*args, "--budget", "2", "--warm-start", str(related[0])])
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(main, [*args, "--budget", "3", "--warm-start", str(related[1]), "--resume"])
    assert result.exit_code == 1
    assert (f"warm_start: differs from the run recorded in this store (warm_start: stored "
            f"\"{related[0]}\", given \"{related[1]}\"); resume with") in result.output, result.output
    result = CliRunner().invoke(main, [*args, "--budget", "3", "--resume"])
    assert f"(warm_start: stored \"{related[0]}\", given none)" in result.output, result.output


def test_an_infinite_bound_is_refused_before_any_trial(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data["space"]["x3"]["high"] = float("inf")
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump(data))
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store)])
    assert result.exit_code == 1, result.output
    assert f"{config}: space.x3.high: expected a finite number, got inf" in result.output
    assert not store.exists()


@pytest.mark.parametrize("spec, message", [
    ({"type": "int", "low": 1, "high": 10, "default": 2.5}, "expected an integer in [1, 10], got 2.5"),
    ({"type": "bool", "default": "maybe"}, "expected a boolean, got 'maybe'"),
    ({"type": "float", "low": 0, "high": 1, "default": "0.5"}, "expected a number in [0.0, 1.0], got '0.5'"),
])
def test_a_default_of_the_wrong_type_is_refused_before_any_store(tmp_path: Path, spec: dict,
                                                                 message: str) -> None:
    """It used to fail the first trial's proposal with a traceback, leaving an empty store that
    refused the corrected YAML ("a run is already stored here") and its resume ("space: differs")."""
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data["space"]["x5"] = spec
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump(data))
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "1", "--store", str(store)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{config}: space.x5.default: {message}" in result.output
    assert not store.exists()
    fixed = _yaml(tmp_path)
    result = CliRunner().invoke(main, ["tune", str(fixed), "--budget", "1", "--store", str(store)])
    assert result.exit_code == 0, result.output


# --- run_tuning: the same, called from Python without the command line ------------------------
def test_run_tuning_runs_the_yaml_into_its_store_and_releases_it(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    seen = []
    run = run_tuning(TuneRequest(_yaml(tmp_path, n_init=3), budget=4, store=store, strategy="random", seed=2),
                     callback=seen.append)
    assert [t.name for t in seen] == ["t0000", "t0001", "t0002", "t0003"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the loop's handler is gone with it
    with Store(store) as s:
        assert s.counts()["done"] == 4 and s.activity()["state"] == "finished"
        assert (s.study().strategy, s.study().seed) == ("random", 2)
        assert s.note(CONFIG_NOTE) == str((tmp_path / "tune.yaml").resolve())
    assert run.store_file == store  # closed with the run: read again
    with open_run(TuneRequest(_yaml(tmp_path, n_init=3), budget=6, store=store, resume=True,
                                strategy="random", seed=2)) as resumed:
        resumed.loop()  # the lock of the first run was released: the store can be written again
        assert resumed.tuner.n_trials() == 6
    with pytest.raises(AlreadyStored, match="a run is already stored here"):
        open_run(TuneRequest(_yaml(tmp_path), budget=4, store=store))


def test_a_run_that_cannot_start_leaves_no_store_and_no_lock_held(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    with pytest.raises(ConfigError, match="strategy: expected one of"):
        open_run(TuneRequest(_yaml(tmp_path, strategy="bayes"), budget=4, store=store))
    # the Tuner refuses it after the store was created: the store goes again
    with pytest.raises(ValueError, match="feasible configurations"):
        open_run(TuneRequest(_yaml(tmp_path, constraints=["x0 > 2"]), budget=4, store=store))
    assert not store.exists()
    with open_run(TuneRequest(_yaml(tmp_path), budget=4, store=store)) as run:  # nothing holds it
        assert run.tuner.n_trials() == 0


def _refuse_to_ask(*args: object, **kwargs: object) -> None:
    raise ConfigError("proposal", "x5", "expected a number in [0.0, 1.0], got 2.0")


def test_a_loop_that_fails_before_its_first_trial_leaves_no_store(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is made before the loop: a loop that failed before storing a trial (here a
    proposal the space refuses) left it empty, refusing the next fresh start."""
    store = tmp_path / "run.db"
    request = TuneRequest(_yaml(tmp_path), budget=2, store=store)
    with open_run(request) as run:
        monkeypatch.setattr(run.tuner, "ask", _refuse_to_ask)
        with pytest.raises(ConfigError, match=r"x5: expected a number in \[0.0, 1.0\], got 2.0"):
            run.loop()
        assert not store.exists()
    with open_run(request) as run:  # starts clean: nothing refuses it
        run.loop()
        assert [t.name for t in run.tuner.store.trials()] == ["t0000", "t0001"]
    with open_run(TuneRequest(_yaml(tmp_path), budget=3, store=store, resume=True)) as run:
        monkeypatch.setattr(run.tuner, "ask", _refuse_to_ask)
        with pytest.raises(ConfigError):
            run.loop()
    with Store(store) as kept:  # a run with trials keeps every one
        assert kept.counts()["done"] == 2


def test_ctrl_c_while_a_fresh_run_opens_leaves_no_store(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C after the store was made but before the run began (while its related tasks load or
    its Tuner is built) left an empty store that refused the next fresh start."""
    import boanon.tuning

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(boanon.tuning, "Tuner", interrupted)
    store = tmp_path / "run.db"
    with pytest.raises(KeyboardInterrupt):
        open_run(TuneRequest(_yaml(tmp_path), budget=2, store=store))
    assert not store.exists()


def test_an_unreachable_dask_scheduler_is_one_error_and_leaves_no_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # it was a traceback ending in WorkerLost
    from boanon.executors import DaskExecutor

    monkeypatch.setattr(DaskExecutor.__init__, "__defaults__", (None, None, 2.0))  # a 2 s connect timeout
    store = tmp_path / "run.db"
    result = CliRunner().invoke(main, ["tune", str(_yaml(tmp_path)), "--budget", "2", "--store", str(store),
                                       "--dask", "tcp://127.0.0.1:9"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "run stopped: cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.output
    assert "start again (no trial ran: no store was kept)" in result.output and not store.exists()


def test_a_budget_the_initial_design_fills_is_said(tmp_path: Path) -> None:
    # it ran 3 design trials under "strategy structured" and said nothing of the model never proposing
    config = _yaml(tmp_path, n_init=6)
    args = ["tune", str(config), "--store"]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "r.db"), "--budget", "3"])
    assert result.exit_code == 0, result.output
    assert ("warning: n_init (6) is not below the budget (3): every trial is from the initial design and "
            "no structured model proposes one (lower n_init or raise the budget)") in result.output
    again = CliRunner().invoke(main, [*args, str(tmp_path / "s.db"), "--budget", "8"])
    assert again.exit_code == 0 and "warning: n_init" not in again.output


def test_a_resume_that_logs_elsewhere_than_the_run_did_says_so(tmp_path: Path) -> None:
    """A run started with ``--trials-dir logs`` and resumed without it: the new trials' folders
    went beside the store, apart from the run's first ones, without a word."""
    config = _yaml(tmp_path, n_init=3, strategy="random")
    store, logs = tmp_path / "run.db", tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tune = [BOANON, "tune", str(config), "--store", str(store)]
    first = subprocess.run([*tune, "--budget", "2", "--trials-dir", str(logs)], cwd=ROOT, capture_output=True,
                           text=True, timeout=300, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    resumed = subprocess.run([*tune, "--budget", "3", "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=300, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (f"warning: the run logged its trials in {logs}; these go to {tmp_path / 'run.trials'} "
            f"(--trials-dir {logs} keeps them together)") in resumed.stderr, resumed.stderr


def test_a_fresh_run_on_a_file_that_is_no_run_says_so_and_leaves_it(tmp_path: Path) -> None:
    """``--store tune.yaml`` (the arguments swapped): it said "a run is already stored here; pass
    --resume to continue it", and --resume then said the file is no store."""
    config = _yaml(tmp_path, n_init=2)
    before = config.read_bytes()
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(config)])
    assert result.exit_code == 1, result.output
    assert f"{config}: exists and holds no BoAnon run" in result.output and "--resume" not in result.output
    assert config.read_bytes() == before


def test_a_run_in_memory_is_refused_naming_the_store_option(tmp_path: Path, monkeypatch) -> None:
    """``--store :memory:`` (SQLite's in-memory name) ran, then pointed at ``boanon status
    :memory:``, which can read nothing, and left a ':memory:' lock file; then it failed with "an
    in-memory store's trial folders are its Store object's: pass the Store", naming no option."""
    monkeypatch.chdir(tmp_path)
    config = _yaml(tmp_path, n_init=1)
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # its system is imported from here
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "1", "--store", ":memory:"])
    assert result.exit_code == 1, result.output
    assert result.output == ("Error: --store: :memory: is no file, and a tuning run is kept in one, to "
                             "resume, export and plot it: name one (default: <CONFIG>.db here), or in "
                             "Python run a Tuner without a store\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "tune.yaml"]


def test_status_and_export_of_a_run_whose_output_no_trial_logged(tmp_path: Path) -> None:
    store = tmp_path / "run.db"  # both were a KeyError traceback
    config = _yaml(tmp_path, n_init=2, outputs=[{"name": "g0_laod", "max": 1.5}])
    CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store)])
    status = CliRunner().invoke(main, ["status", str(store)])
    assert status.exit_code == 0 and "feasible:   0 of 2 finished trials meet the output constraints " \
        "(g0_laod <= 1.5)" in status.output
    export = CliRunner().invoke(main, ["export", str(store), "-o", "-"])
    assert export.exit_code == 0 and export.output.splitlines()[1].startswith("t0000,False,")


def test_one_objective_under_an_output_constraint_has_a_best_and_no_pareto_front(tmp_path: Path) -> None:
    """A run of one objective with an ``outputs:`` bound: tune and status printed "Pareto front:
    1 of 6 trials" (a front of one objective is its best trial, and tune then never said "best");
    they say the best and how many trials met the bound."""
    store = tmp_path / "run.db"
    config = _yaml(tmp_path, n_init=6, outputs=[{"name": "g0_load", "max": 0.95}])
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "6", "--store", str(store)])
    status = CliRunner().invoke(main, ["status", str(store)])
    assert result.exit_code == 0 and status.exit_code == 0, result.output + status.output
    with Store(store, read_only=True) as stored:
        feasible = sum(is_feasible(t, [OutputConstraint("g0_load", max=0.95)]) for t in stored.trials("done"))
    assert 0 < feasible < 6  # the default breaks the bound (g0_load 0.98); some of the design meets it
    line = f"feasible:   {feasible} of 6 finished trials meet the output constraints (g0_load <= 0.95)"
    for text in (result.output, status.output):
        assert "Pareto" not in text and line in text, text
    assert "best: t000" in result.output and "best cost: " in status.output


def test_a_structure_the_annotations_keep_from_being_learned_is_warned_of_once(tmp_path: Path) -> None:
    ann = tmp_path / "ann.yaml"  # the run went on with the plain GP, said only in the stored reasons
    ann.write_text("require:\n  - x0 -> g0_m22\n")
    config = _yaml(tmp_path, n_init=3, annotations=str(ann))
    result = CliRunner().invoke(main, ["tune", str(config), "--budget", "8",
                                       "--store", str(tmp_path / "r.db")])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: structure learning")]
    assert warnings == [f"warning: structure learning failed (ConfigError: {ann}: require: edge x0 -> "
                        "g0_m22: unknown node 'g0_m22' (did you mean 'g0_m2'?)); the plain GP proposes "
                        "until it succeeds: fix the cause, then resume"]




@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_a_closed_output_pipe_stops_the_run_cleanly_saying_how_to_resume(tmp_path: Path, workers) -> None:
    # `boanon tune ... | head -n 2` ended with status 1 and nothing said: no traceback, no word on
    # stderr, the store's activity still "running trials" (status: "killed?")
    config = _yaml(tmp_path, strategy="random")
    args = [sys.executable, "-m", "boanon", "tune", str(config), "--budget", "12", "--store", "run.db",
            *workers]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tune = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.Popen(["head", "-n", "2"], stdin=tune.stdout, stdout=subprocess.PIPE)
    tune.stdout.close()  # head alone reads it: its exit closes the pipe
    shown, _ = head.communicate(timeout=300)
    said = tune.stderr.read().decode()
    assert tune.wait(timeout=300) == 141, said
    assert len(shown.decode().splitlines()) == 2
    assert "Traceback" not in said and "Exception ignored" not in said
    assert "standard output closed: the run stopped (" in said
    resume = said.splitlines()[-1].strip()
    assert resume == shlex.join(["boanon", "tune", str(config), "--store", "run.db", "--budget", "12",
                                 *workers, "--resume"])
    with Store(tmp_path / "run.db") as store:
        counts, activity = store.counts(), store.activity()
    assert counts["running"] == 0 and 0 < counts["done"] < 12
    assert activity is not None and activity["state"] == "stopped: its output closed"
    resumed = subprocess.run([*args, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    with Store(tmp_path / "run.db") as store:
        assert store.counts()["done"] == 12



def test_an_output_closed_after_the_run_closed_ends_quietly(tmp_path: Path) -> None:
    # `tune --dashboard --dashboard-keep N | reader`: a reader gone after the summary, while the
    # page stayed up, met a run whose store was closed: "store: closed" and status 1, not 141
    config = _yaml(tmp_path, strategy="random")
    code = (f"import click\nfrom boanon.cli import tune\nfrom boanon.tuning import TuneRequest, run_tuning\n"
            f"run = run_tuning(TuneRequest({str(config)!r}, budget=3, store='run.db'))\n"
            "with click.Context(click.Command('tune')):\n    tune._output_closed(run)\n")
    ended = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert ended.returncode == 141 and ended.stderr == "", ended.stderr

# --- in-process commands close what they open ----------------------------------------------------
def interrupt_after_the_default(config: dict) -> dict:
    """A runner that measures the default (the first trial) and is interrupted at the next."""
    if set(config.values()) != {0.5}:
        raise KeyboardInterrupt
    return {"cost": 1.0}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_commands_run_in_process_leave_no_descriptor_on_their_stores(tmp_path: Path,
                                                                    descriptors_held) -> None:
    """``main([...])`` from Python (a script, a test) returned with the tune's store, the
    dashboard's view of it and the Optuna storage of an export or import still open (closed only
    by the garbage collector, if ever: disabled here), on success, on error and on Ctrl-C."""
    pytest.importorskip("optuna")
    config, store = _yaml(tmp_path, n_init=3), tmp_path / "run.db"
    stopping = tmp_path / "stopping.yaml"
    stopping.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), "runner": {
        "callable": f"{__name__}:interrupt_after_the_default"}}))
    commands = {
        "tune": ["tune", str(config), "--budget", "3", "--store", str(store)],
        "tune --resume": ["tune", str(config), "--budget", "4", "--store", str(store), "--resume"],
        "tune --resume below its trials": ["tune", str(config), "--budget", "2", "--store", str(store),
                                           "--resume"],
        "tune --dashboard": ["tune", str(config), "--budget", "2", "--store", str(tmp_path / "d.db"),
                             "--dashboard", "--dashboard-port", "0", "--dashboard-keep", "0"],
        "tune, Ctrl-C": ["tune", str(stopping), "--budget", "3", "--store", str(tmp_path / "i.db")],
        "status": ["status", str(store)],
        "export --optuna": ["export", str(store), "--optuna", f"sqlite:///{tmp_path}/optuna.db"],
        "import": ["import", f"sqlite:///{tmp_path}/optuna.db", "-o", str(tmp_path / "imported.db")],
        "dashboard of a store and a non-store": ["dashboard", str(store), str(config), "--port", "0"],
    }
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            left_open = {}
            for name, args in commands.items():
                before = descriptors_held(tmp_path)
                CliRunner().invoke(main, args, catch_exceptions=False)
                left_open[name] = descriptors_held(tmp_path) - before
            assert left_open == dict.fromkeys(commands, set())
            gc.collect()  # an unclosed sqlite3 connection warns as it is collected (Python 3.13)
    finally:
        gc.enable()
    with Store(store, read_only=True) as s:  # they ran: resumed to 4 trials, exported, imported
        assert s.counts()["done"] == 4
    with Store(tmp_path / "i.db", read_only=True) as s:
        assert s.counts()["interrupted"] == 1
    assert (tmp_path / "imported.db").is_file()


def _interrupted(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_ctrl_c_while_the_dashboard_is_made_closes_its_view_of_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, descriptors_held) -> None:
    """``tune --dashboard`` opened its view of the store, then made the server: a Ctrl-C (or any
    error) while it was made left the view's store open in a process that goes on."""
    import boanon.dashboard.app

    monkeypatch.setattr(boanon.dashboard.app, "Dashboard", _interrupted)  # Ctrl-C as the server is made
    config, store = _yaml(tmp_path), tmp_path / "run.db"
    before = descriptors_held(tmp_path)
    gc.disable()  # only the command may close what it opened
    try:
        result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store),
                                           "--dashboard", "--dashboard-port", "0"])
        left_open = descriptors_held(tmp_path) - before
    finally:
        gc.enable()
    assert result.exit_code == 1 and result.output.endswith("Aborted!\n"), result.output
    assert left_open == set()
    assert not store.exists()  # a run that never started: its empty store would refuse the next try


def test_a_dashboard_that_cannot_listen_leaves_no_store(tmp_path: Path) -> None:
    """``--dashboard`` on a port taken stopped the command before its first trial and kept the
    fresh run's empty store, which refused the next try ("a run is already stored here")."""
    config, store = _yaml(tmp_path), tmp_path / "run.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store),
                                           "--dashboard", "--dashboard-port", str(port)])
    refused = f"Error: --dashboard: the dashboard could not listen on 127.0.0.1:{port} (port taken?)\n"
    assert result.exit_code == 1 and result.output.endswith(refused), result.output
    assert not store.exists()
    again = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store)])
    assert again.exit_code == 0, again.output
