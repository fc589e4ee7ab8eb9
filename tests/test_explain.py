"""``boanon explain``: the ablation path from the default to the best, measured on the real system
with --measure, and the metrics that moved along the graph."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from boanon.cli import main
from boanon.explain import START, ablation_path, metric_moves
from boanon.graph import CausalGraph
from boanon.report import fit_surrogate, read_run
from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


@pytest.fixture(scope="module")
def run_db(tmp_path_factory, synthetic_run) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("explain"), budget=10)


def test_the_path_goes_from_the_default_to_the_best_one_greedy_change_at_a_time(run_db):
    with Store(run_db) as store:
        run = read_run(store)
        default = run.default()
        best = min((t for t in run.done if t is not default), key=lambda t: t.objectives["cost"])
        surrogate = fit_surrogate(run)
    path = ablation_path(surrogate, default.config, best.config, run.objectives[0])
    assert path["param"].iloc[0] == START and path["config"].iloc[0] == default.config
    assert path["config"].iloc[-1] == best.config
    differ = [n for n in run.space.names if default.config[n] != best.config[n]]
    assert sorted(path["param"].iloc[1:]) == sorted(differ)
    for before, after in zip(path["config"].iloc[:-1], path["config"].iloc[1:], strict=True):
        assert sum(before[n] != after[n] for n in run.space.names) == 1
    cost = run.objectives[0]  # minimised: a gain is a drop of the predicted mean
    assert path["gain"].sum() == pytest.approx(path["mean"].iloc[0] - path["mean"].iloc[-1])
    assert path["share"].iloc[1:].sum() == pytest.approx(1.0)
    # greedy: the first step is the single change the model likes best (same seed, same samples)
    singles = [{**default.config, n: best.config[n]} for n in differ]
    means = surrogate.predict(singles, np.random.default_rng(0), 256)[cost.name][0]
    assert path["param"].iloc[1] == differ[int(np.argmin(means))]


def test_explain_prints_the_path_and_the_moved_metrics(run_db):
    with Store(run_db) as store:
        best_is_default = read_run(store).best().name == "t0000"
    result = CliRunner().invoke(main, ["explain", str(run_db)])
    assert result.exit_code == 0, result.output
    if best_is_default:  # on this seed nothing beat the default in 10 trials: it says so
        assert "t0000 has the default configuration" in result.output
        assert "no trial beats the default yet" in result.output
    result = CliRunner().invoke(main, ["explain", str(run_db), "--trial", "t0006"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "t0006 (cost=" in out and "against the default t0000" in out
    assert "ablation path, greedy by the" in out
    assert "metrics that moved (observed, default -> this trial" in out
    assert " 1. x" in out and "measured" in out  # the ends were measured by the run itself


def test_a_default_that_breaks_an_output_constraint_is_said_to(tmp_path, synthetic_run):
    """The default (g0_load 0.98) breaks g0_load <= 0.6: the header read "against the default
    t0000 (cost=11.83)", a baseline one could deploy, and the path's "improvement" a gain over it."""
    store = synthetic_run(tmp_path, budget=10, outputs=[{"name": "g0_load", "max": 0.6}])
    result = CliRunner().invoke(main, ["explain", str(store)])
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0]
    assert "against the default t0000 (cost=11.8272, infeasible: breaks g0_load <= 0.6), minimize" in header
    assert header.split(" against ")[0].endswith(")") and "infeasible" not in header.split(" against ")[0]


def test_a_count_of_one_is_singular_in_the_header_and_the_summary(tmp_path):
    """A one-parameter run: the header said "1 of 1 parameters differ"."""
    from boanon.runners.function import CallableRunner
    from boanon.space import Float, Space
    from boanon.tuner import Tuner

    tuner = Tuner(Space([Float("x", 0.0, 1.0, default=0.9)]), ["cost"], store=tmp_path / "one.db", n_init=4,
                  seed=0, strategy="random")
    tuner.optimize(CallableRunner(lambda config: {"cost": (config["x"] - 0.3) ** 2}), 4)
    tuner.store.close()
    result = CliRunner().invoke(main, ["explain", str(tmp_path / "one.db")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(", minimize: 1 of 1 parameter differs"), result.output


def test_an_unknown_trial_is_one_plain_line_naming_the_store_once(run_db):
    result = CliRunner().invoke(main, ["explain", str(run_db), "--trial", "t9999"])
    assert result.exit_code == 1
    assert result.output == f"Error: {run_db}: no trial 't9999' (the run's trials: t0000 to t0009)\n"


def test_measure_runs_the_intermediate_configurations_and_stores_them(tmp_path, synthetic_run, monkeypatch):
    store_path = synthetic_run(tmp_path, budget=8)
    with Store(store_path) as store:
        before = len(store.trials())
    monkeypatch.chdir(ROOT)  # the runner imports examples.synthetic_system
    result = CliRunner().invoke(main, ["explain", str(store_path), "--measure", "--trial", "t0006"])
    assert result.exit_code == 0, result.output
    with Store(store_path) as store:
        run = read_run(store)
        added = store.trials()[before:]
        target = run.trial("t0006")
    differ = [n for n in run.space.names if run.default().config[n] != target.config[n]]
    assert added and all(t.surrogate == "ablation" and t.status == "done" for t in added)
    # every intermediate step, once, in order, with what the real system measured
    sys.path.insert(0, str(ROOT))
    from examples.synthetic_system import evaluate

    for k, trial in enumerate(added, start=1):
        assert trial.reason.startswith(f"ablation step {k} towards t0006")
        assert trial.objectives["cost"] == pytest.approx(evaluate(trial.config)["cost"])
        assert f"measured {trial.objectives['cost']:.4g}" in result.output
    assert len(added) == len(differ) - 1  # the path's ends ran already
    assert all(sum(t.config[n] != target.config[n] for n in differ) == len(differ) - k
               for k, t in enumerate(added, start=1))


def test_measure_without_a_known_yaml_is_a_clear_error(run_db, tmp_path):
    copy = tmp_path / "copy.db"
    with Store(run_db) as store:
        store._conn.execute(f"VACUUM INTO '{copy}'")
    with Store(copy) as store:
        store._conn.execute("DELETE FROM meta WHERE key LIKE 'note:%'")
    result = CliRunner().invoke(main, ["explain", str(copy), "--measure", "--trial", "t0006"])
    assert result.exit_code != 0 and "does not say which tuning YAML ran it: pass --config" in result.output


def test_measure_when_the_recorded_yaml_is_gone_says_to_pass_config(tmp_path, synthetic_run):
    store = synthetic_run(tmp_path, budget=6)  # it said "file: cannot read: No such file or directory"
    (tmp_path / "synthetic.yaml").unlink()
    result = CliRunner().invoke(main, ["explain", str(store), "--measure", "--trial", "t0005"])
    assert result.exit_code == 1, result.output
    assert result.output == (f"Error: {store}: the tuning YAML the run recorded, "
                             f"{tmp_path / 'synthetic.yaml'}, is not there any more: pass --config\n")


def test_measuring_on_a_copied_store_leaves_the_original_runs_trial_folder_alone(tmp_path, synthetic_run,
                                                                               monkeypatch):
    # the copy records the original's trial folder: measuring into it took the names the original's
    # next trials need (its resume then failed them: "trial directory is not empty")
    original = synthetic_run(tmp_path, budget=8)
    copy = tmp_path / "copy" / "run.db"
    copy.parent.mkdir()
    with Store(original) as store:
        store._conn.execute(f"VACUUM INTO '{copy}'")
    folders = sorted(p.name for p in original.with_suffix(".trials").iterdir())
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["explain", str(copy), "--measure", "--trial", "t0006"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in original.with_suffix(".trials").iterdir()) == folders
    with Store(copy) as store:
        measured = [t.name for t in store.trials() if t.surrogate == "ablation"]
    assert measured and all((copy.with_suffix(".trials") / name).is_dir() for name in measured)
    assert f"the run logged its trials in {original.with_suffix('.trials').resolve()}" in result.output


def test_an_invalid_config_is_an_error_naming_the_config_not_the_store(run_db, tmp_path):
    copy = tmp_path / "copy.db"  # --measure opens the store for writing: the module's run stays as it is
    with Store(run_db) as store:
        store._conn.execute(f"VACUUM INTO '{copy}'")
    config = tmp_path / "tune.yaml"
    config.write_text("space: 3\nobjectives: []\nrunner: {}\n")
    result = CliRunner().invoke(main, ["explain", str(copy), "--measure", "--trial", "t0006",
                                       "--config", str(config)])
    assert result.exit_code == 1
    assert result.output == f"Error: {config}: space: expected a mapping of parameter name -> spec\n"


@pytest.mark.slow
def test_a_polite_kill_while_measuring_leaves_no_trial_running(tmp_path, synthetic_run):
    store_path = synthetic_run(tmp_path, budget=8)
    config = tmp_path / "synthetic.yaml"  # the YAML the store recorded: the same space, a slow system
    data = yaml.safe_load(config.read_text())
    data["runner"]["options"]["delay"] = 30.0
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = subprocess.Popen([BOANON, "explain", str(store_path), "--measure", "--trial", "t0006"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    running = 0
    while not running and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        with Store(store_path) as store:
            running = store.counts()["running"]
    if not running:
        proc.kill()
        pytest.fail(f"no measurement started: {proc.communicate()[1].decode()[-2000:]}")
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(30)
    assert status == 130, proc.stderr.read().decode()
    with Store(store_path) as store:
        ablations = [t for t in store.trials() if t.surrogate == "ablation"]
        assert store.counts()["running"] == 0
    assert [(t.status, t.error) for t in ablations] == [("failed", "ablation measurement interrupted")]


def test_moved_metrics_read_top_down_with_the_parameters_upstream():
    graph = CausalGraph.from_dict({
        "nodes": [{"id": "a", "role": "param"}, {"id": "b", "role": "param"},
                  {"id": "m1", "role": "metric"}, {"id": "m2", "role": "metric"},
                  {"id": "noise", "role": "metric"}, {"id": "cost", "role": "objective"}],
        "edges": [{"source": "a", "target": "m1"}, {"source": "m1", "target": "m2"},
                  {"source": "b", "target": "m2"}, {"source": "m2", "target": "cost"}]})
    moves = metric_moves(graph, {"m1": 1.0, "m2": 10.0, "noise": 1.0, "flat": 3.0},
                         {"m1": 4.0, "m2": 5.0, "noise": 9.0, "flat": 3.0}, ["b", "a"], "cost")
    assert list(moves["metric"]) == ["m2", "m1", "noise"]  # nearest the objective first; unmoved left out
    assert list(moves["hops"].iloc[:2]) == [1, 2] and np.isnan(moves["hops"].iloc[2])
    assert list(moves["moved_by"]) == ["b, a", "a", ""]
    assert moves["change"].tolist() == [pytest.approx(-0.5), pytest.approx(3.0), pytest.approx(8.0)]
    assert moves["via"].iloc[0] == "b, m1"


def test_moved_metrics_name_no_warm_starts_task_indicator_as_a_parent():
    """A warm-started run's graph has an internal ``__task__`` node (never drawn): ``explain`` listed
    it among a metric's parents (``read_s ... <- __task__``), a name no user set or can act on."""
    from boanon.multitask.tasks import TASK

    graph = CausalGraph.from_dict({
        "nodes": [{"id": "level", "role": "param"}, {"id": TASK, "role": "param"},
                  {"id": "read_s", "role": "metric"}, {"id": "total_s", "role": "objective"}],
        "edges": [{"source": TASK, "target": "read_s"}, {"source": "level", "target": "read_s"},
                  {"source": "read_s", "target": "total_s"}]})
    moves = metric_moves(graph, {"read_s": 1.0}, {"read_s": 2.0}, ["level"], "total_s")
    assert moves["via"].tolist() == ["level"] and moves["moved_by"].tolist() == ["level"]


@pytest.mark.parametrize("predicted, measured, warned", [
    (0.7e3, 57e3, True),  # a RocksDB run: the model saw 1 % of a measured doubling
    (-2.0, 5.0, True), (5.0, 5.0, False), (3.0, 5.0, False), (12.0, 5.0, True), (1.0, 0.0, False)])
def test_explain_warns_when_the_model_does_not_see_the_measured_improvement(predicted, measured, warned):
    from boanon.cli.explain import model_caveat

    caveat = model_caveat(predicted, measured)
    assert (caveat is not None) is warned
    if warned:
        assert f"the model predicts {predicted:+.3g} of the measured {measured:+.3g} improvement" in caveat



def test_explain_measure_does_not_tell_to_run_with_measure():
    """After ``explain --measure`` the caveat still said "(--measure runs each step)"."""
    from boanon.cli.explain import model_caveat

    assert model_caveat(1.35e4, 1.59e5).endswith("(--measure runs each step)")
    stepped = model_caveat(1.35e4, 1.59e5, stepped=True)
    assert stepped.endswith("(the measured steps say more)") and "--measure" not in stepped

def test_a_change_below_exports_rounding_shows_more_digits():
    from boanon.cli.explain import _change
    from boanon.space import Space

    space = Space.from_dict({"share": {"type": "float", "low": 0.0, "high": 1.0}})
    assert _change(space, "share", 0.9999, 1.0) == "0.9999 -> 1"  # exported, both read 1.0
    assert _change(space, "share", 0.25, 0.75) == "0.25 -> 0.75"


SYSTEM = '''
def evaluate(config):
    m_a, m_b = (config["a"] - 0.9) ** 2, (config["b"] - 0.1) ** 2
    return {"m_a": m_a, "m_b": m_b, "cost": m_a + m_b + 0.1 * config["c"]}
'''


def _project_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run started in its own project directory, whose YAML names its system (``system.py``) and
    annotations by paths relative to it; returns that directory."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "system.py").write_text(SYSTEM)
    (project / "annotations.yaml").write_text("require: [a -> m_a, b -> m_b]\n")
    (project / "tune.yaml").write_text(yaml.safe_dump({
        "space": {p: {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5} for p in "abc"},
        "objectives": [{"name": "cost", "direction": "minimize"}],
        "runner": {"callable": "system.py:evaluate"}, "annotations": "annotations.yaml",
        "strategy": "random", "n_init": 4, "seed": 0}))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["tune", "tune.yaml", "--budget", "4", "--store", "run.db"])
    assert result.exit_code == 0, result.output
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return project


def test_measure_runs_the_yaml_from_the_directory_the_run_was_started_in(tmp_path, monkeypatch):
    # it read the YAML's relative paths from the current directory: "annotations: no such file"
    project = _project_run(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["explain", "../project/run.db", "--measure", "--trial", "t0001",
                                       "--trials-dir", "logs"])
    assert result.exit_code == 0, result.output
    assert Path.cwd() == tmp_path / "elsewhere"  # back where the user is
    with Store(project / "run.db") as store:
        measured = [t for t in store.trials() if t.surrogate == "ablation"]
    assert len(measured) == 2 and all(t.status == "done" for t in measured)
    for trial in measured:  # the run's own system, its logs where this command's --trials-dir says
        a, b, c = (trial.config[p] for p in "abc")
        assert trial.objectives["cost"] == pytest.approx((a - 0.9) ** 2 + (b - 0.1) ** 2 + 0.1 * c)
        assert (tmp_path / "elsewhere" / "logs" / trial.name).is_dir()


def test_a_store_that_does_not_record_its_directory_says_where_the_yaml_paths_are_from(tmp_path,
                                                                                       monkeypatch):
    project = _project_run(tmp_path, monkeypatch)
    with Store(project / "run.db") as store:  # as a store written before the note was
        store._conn.execute("DELETE FROM meta WHERE key = 'note:run_directory'")
    result = CliRunner().invoke(main, ["explain", "../project/run.db", "--measure", "--trial", "t0001"])
    assert result.exit_code == 1
    assert result.output == (f"Error: {project / 'tune.yaml'}: runner.callable: no such file: system.py "
                             f"(relative to the current directory {tmp_path / 'elsewhere'}) "
                             "(the run's YAML paths are relative to the directory the run was started in: "
                             "run explain from there, or pass --config)\n")
    monkeypatch.chdir(project)  # from there it works, as it always did
    result = CliRunner().invoke(main, ["explain", "run.db", "--measure", "--trial", "t0001"])
    assert result.exit_code == 0, result.output
