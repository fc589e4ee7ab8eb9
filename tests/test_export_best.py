"""``boanon export --best/--trial``: the configuration as a file, read back by YAML and by RocksDB."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boanon.adapters.rocksdb.option_names import COMPRESSION
from boanon.adapters.rocksdb.options import newest_options_file, parse_options
from boanon.best import ExportFormat, format_for, plain_value, register_export_format, render_config
from boanon.cli import main
from boanon.space import Bool, Categorical, Float, Int
from boanon.store import Store, StoredTrial

ROOT = Path(__file__).resolve().parents[1]
needs_db_bench = pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_values_as_their_parameters_mean_them():
    share = Float("share", 0.0, 1.0)
    assert plain_value(share, 0.3999720746651292) == 0.4
    assert plain_value(share, 0.6284512793645263) == 0.628
    assert plain_value(share, 0.99999) == 1.0 and plain_value(share, 0.0004) == 0.0
    rate = Float("rate", 1e-5, 1e-1, log=True)
    assert plain_value(rate, 0.000123456789) == 0.0001235  # within 0.1 % of the value on a log range
    assert plain_value(Float("x", 0.0, 0.5), 0.49999) == 0.5
    assert 0.9998 <= plain_value(Float("x", 0.0, 0.9999), 0.99985) <= 0.9999  # 1.0 would leave the range
    n = plain_value(Int("n", 1, 10), 7.0)
    assert n == 7 and type(n) is int
    assert plain_value(Bool("b"), 1) is True
    assert plain_value(Categorical("c", ("a", "b")), "b") == "b"


def test_a_rounding_that_breaks_a_constraint_is_not_made():
    """A share of 0.0004 reads 0.0 on its own; where a constraint asks for a share above 0 (a
    worker that is on), the exported configuration keeps the exact values that constraint reads."""
    from boanon.best import plain_config
    from boanon.space import Space

    share = {"type": "float", "low": 0.0, "high": 1.0}
    space = Space.from_dict({"m0_worker": {"type": "bool"}, "m0_share": share, "m1_share": share},
                            constraints=["not m0_worker or m0_share > 0"])
    exact = {"m0_worker": True, "m0_share": 0.0004, "m1_share": 0.3999720746651292}
    assert plain_config(space, exact) == {"m0_worker": True, "m0_share": 0.0004, "m1_share": 0.4}
    off = {**exact, "m0_worker": False}  # the constraint holds either way: rounded as before
    assert plain_config(space, off)["m0_share"] == 0.0
    assert space.is_feasible(plain_config(space, exact))


@pytest.fixture(scope="module")
def rocksdb_run(tmp_path_factory) -> Path:
    """Two real db_bench trials of the rocksdb target on a tiny database: the default and a
    Sobol point (another compression, block size, bloom filter and sizes)."""
    if shutil.which("db_bench") is None:
        pytest.skip("db_bench not installed")
    tmp = tmp_path_factory.mktemp("rocksdb")
    data = yaml.safe_load((ROOT / "examples" / "rocksdb.yaml").read_text())
    data.pop("warm_start")
    data.update(n_init=2, budget=2)
    data["runner"]["options"].update(num=4000, reads=1000, timeout=60)
    config = tmp / "rocksdb.yaml"
    config.write_text(yaml.safe_dump(data))
    _invoke("tune", str(config), "--store", str(tmp / "run.db"))
    return tmp / "run.db"


def test_yaml_round_trips_through_the_run_space(rocksdb_run, tmp_path):
    out = tmp_path / "best.yaml"
    _invoke("export", str(rocksdb_run), "--trial", "t0001", "-o", str(out))
    text = out.read_text()
    with Store(rocksdb_run) as store:
        trial = store.trial(1)
    values = yaml.safe_load(text)
    multiplier = trial.config["max_bytes_for_level_multiplier"]  # the one float: 4 to 16
    assert values == {**trial.config, "max_bytes_for_level_multiplier": pytest.approx(multiplier, abs=0.012)}
    assert len(str(values["max_bytes_for_level_multiplier"])) <= 5  # not 5.964728686958551
    assert all(type(values[k]) is type(v) for k, v in trial.config.items())
    assert "# configuration of trial t0001" in text and "the default configuration (trial t0000)" in text
    size = values["write_buffer_size"]
    assert f"write_buffer_size: {size}  # " in text and ("KiB" in text or "MiB" in text)


@needs_db_bench
def test_rocksdb_reads_the_exported_options_file_and_flags(rocksdb_run, tmp_path):
    with Store(rocksdb_run) as store:
        config = store.trial(1).config
    options = tmp_path / "OPTIONS"
    _invoke("export", str(rocksdb_run), "--trial", "t0001", "-o", str(options))
    assert f"# cache_size={config['cache_size']}: the block cache's capacity" in options.read_text()
    flags = tmp_path / "flags.txt"
    _invoke("export", str(rocksdb_run), "--trial", "t0001", "--format", "db_bench", "-o", str(flags))
    line = [ln for ln in flags.read_text().splitlines() if not ln.startswith("#")][0]
    assert f"--compression_type={config['compression_type']}" in line

    for how, args in (("options", [f"--options_file={options}"]), ("flags", shlex.split(line))):
        db = tmp_path / f"db-{how}"
        done = subprocess.run(["db_bench", "--benchmarks=fillrandom", "--num=500", f"--db={db}", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        in_force = parse_options(newest_options_file(db))
        assert in_force["compression"] == COMPRESSION[config["compression_type"]], how
        for name in ("write_buffer_size", "block_size", "max_write_buffer_number",
                     "level0_file_num_compaction_trigger", "max_bytes_for_level_base", "max_background_jobs"):
            assert in_force[name] == config[name], (how, name)
        assert in_force["max_bytes_for_level_multiplier"] == pytest.approx(
            config["max_bytes_for_level_multiplier"], rel=1e-3)
        bloom = config["bloom_bits"]
        assert in_force["filter_policy"] == (f"bloomfilter:{bloom}:false" if bloom else "nullptr"), how


def test_a_format_a_target_registers_is_rendered_and_chosen_by_file_name():
    """best.py knows no target's formats: RocksDB's register themselves, and so can any other."""
    assert format_for("run/OPTIONS-000007") == "options" and format_for("best.yaml") == "yaml"
    register_export_format(ExportFormat("conf-test", lambda config, header: f"{dict(config)}|{header}",
                                        "a test format", matches=lambda name: name.endswith(".conftest")))
    assert format_for("pg.conftest") == "conf-test"
    assert render_config({"a": 1}, "conf-test", "h") == "{'a': 1}|h"
    with pytest.raises(ValueError, match="unknown export format 'nope'; available: conf-test, db_bench"):
        render_config({}, "nope")


@pytest.mark.parametrize("args", [["-o", "{dir}/best.ini"], ["--format", "options"]])
def test_a_run_of_another_target_is_no_options_file(tmp_path, synthetic_run, args):
    store = synthetic_run(tmp_path, budget=2)  # it was an empty OPTIONS file, each value a comment
    args = [a.format(dir=tmp_path) for a in args]
    result = CliRunner().invoke(main, ["export", str(store), "--best", *args])
    assert result.exit_code == 1
    assert result.output == (f"Error: {store}: none of the run's parameters (x0, x1, x2, x3, ...) is a "
                             "RocksDB option: it is no OPTIONS file; write YAML (a name ending in .yaml, "
                             "or --format yaml)\n")
    assert not (tmp_path / "best.ini").exists()


def test_the_best_by_one_objective_warns_where_it_is_worse_than_the_default(tmp_path):
    """Best by cost can lose to the default on cost2: deploying it, a person is told."""
    from boanon.runners.function import CallableRunner
    from boanon.synthetic import SyntheticSystem
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, n_objectives=2, seed=2)
    tuner = Tuner(system.space, ["cost", "cost2"], strategy="random", n_init=6, seed=0,
                  store=tmp_path / "mo.db")
    tuner.optimize(CallableRunner(system.evaluate), 8, trials_dir=tmp_path / "mo.trials")
    trials = tuner.store.trials()
    tuner.store.close()
    default, warned = trials[0], []
    for objective, other in (("cost", "cost2"), ("cost2", "cost")):
        best = min(trials, key=lambda t: t.objectives[objective])
        result = CliRunner().invoke(main, ["export", str(tmp_path / "mo.db"), "--best", "--objective",
                                           objective, "-o", str(tmp_path / "best.yaml")])
        assert result.exit_code == 0, result.output
        worse = best.name != default.name and best.objectives[other] > default.objectives[other]
        said = f"warning: {best.name} is worse than the default configuration (t0000) on {other}"
        assert (said in result.output) == worse
        warned.append(worse)
    assert any(warned)  # the two objectives conflict: one best loses to the default


def test_a_default_that_breaks_the_output_constraints_is_said_to(tmp_path):
    """The default (t0000) is better on both objectives but breaks ``load <= 2``: the file's header
    gave its values and the warning called the best "worse than the default" as if the default
    were a configuration to keep."""
    from boanon.multiobjective import OutputConstraint
    from boanon.synthetic import SyntheticSystem
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, seed=2)
    tuner = Tuner(system.space, ["cost", "cost2"], n_init=4, store=tmp_path / "mo.db",
                  output_constraints=[OutputConstraint("load", max=2.0)])
    for values in ({"cost": 1.0, "cost2": 1.0, "load": 3.0}, {"cost": 2.0, "cost2": 2.0, "load": 1.0}):
        tuner.tell(tuner.ask().id, values)
    tuner.store.close()
    result = CliRunner().invoke(main, ["export", str(tmp_path / "mo.db"), "--best", "-o", "-"])
    assert result.exit_code == 0, result.output
    assert "# the default configuration (trial t0000) gave: cost=1, cost2=1 (infeasible: it breaks the " \
           "output constraints)" in result.output, result.output
    assert "warning: t0001 is worse than the default configuration (t0000) on cost: 2 against 1 " \
           "(minimize); the default breaks an output constraint" in result.output, result.output


def test_an_unknown_trial_is_one_plain_line_naming_the_store_once(tmp_path, synthetic_run):
    store = synthetic_run(tmp_path, budget=2)
    result = CliRunner().invoke(main, ["export", str(store), "--trial", "t9999"])
    assert result.exit_code == 1
    assert result.output == f"Error: {store}: no trial 't9999' (the run's trials: t0000 to t0001)\n"


@pytest.mark.parametrize("args", [["export", "{store}", "--best"], ["explain", "{store}"],
                                  ["plot", "{store}", "--kind", "convergence", "-o", "{dir}/c.png"],
                                  ["export", "{store}", "--optuna", "sqlite:///{dir}/o.db"]])
def test_a_store_without_a_run_is_named_once_by_every_command_that_reads_one(tmp_path, args):
    # the reader named the store and so did each command: "empty.db: empty.db: no run recorded
    # yet", and plot named its output file instead ("c.png: empty.db: ...")
    store = tmp_path / "empty.db"
    Store(store).close()
    result = CliRunner().invoke(main, [a.format(store=store, dir=tmp_path) for a in args])
    assert result.exit_code == 1
    assert result.output == f"Error: {store}: no run recorded yet\n"


def test_the_warning_says_when_the_default_breaks_an_output_constraint():
    from boanon.cli.export import worse_than_default
    from boanon.multiobjective import OutputConstraint
    from boanon.objectives import Objective

    default = StoredTrial(0, "t0000", "done", {}, "", objectives={"cost": 3.0}, metrics={"load": 2.0})
    best = StoredTrial(1, "t0001", "done", {}, "", objectives={"cost": 4.0}, metrics={"load": 1.0})
    said = "t0001 is worse than the default configuration (t0000) on cost: 4 against 3 (minimize)"
    assert worse_than_default(best, default, [Objective("cost")]) == [said]
    assert worse_than_default(best, default, [Objective("cost")], [OutputConstraint("load", max=1.5)]) == [
        said + "; the default breaks an output constraint"]  # it read as if the default were an option


def test_a_trial_named_by_its_id_with_leading_zeros_is_that_trial(tmp_path, synthetic_run):
    # t0001's number written as its name writes it ("0001") was "no trial" though "1" and "t0001" were found
    store = synthetic_run(tmp_path, budget=2)
    outputs = [CliRunner().invoke(main, ["export", str(store), "--trial", name, "-o", "-"]) for name in
               ("t0001", "1", "0001")]
    assert all(r.exit_code == 0 for r in outputs), [r.output for r in outputs]
    assert outputs[0].output == outputs[1].output == outputs[2].output


def crashes_on_x_above_one(config: dict) -> dict:
    if config["x"] > 1:
        raise RuntimeError("bench: gzip failed (1): unrecognized option '--long'\nsecond line")
    return {"cost": config["x"]}


def test_a_failed_trials_file_says_why_it_measured_nothing(tmp_path):
    """``export --trial`` of a failed trial wrote ``# configuration of trial t0001 of run.db
    (failed): `` and stopped: the header now says the error's first line in place of values."""
    from boanon.runners.function import CallableRunner
    from boanon.space import Space
    from boanon.tuner import Tuner

    space = Space.from_dict({"x": {"type": "float", "low": 0.0, "high": 2.0, "default": 0.5}})
    with Tuner(space, ["cost"], strategy="random", seed=0, store=tmp_path / "run.db") as tuner:
        tuner.enqueue({"x": 0.5})
        tuner.enqueue({"x": 1.5})
        tuner.optimize(CallableRunner(crashes_on_x_above_one), 2, trials_dir=tmp_path / "run.trials")
    text = _invoke("export", str(tmp_path / "run.db"), "--trial", "t0001", "-o", "-")
    first = text.splitlines()[0]
    assert first.endswith("(failed: crashes_on_x_above_one raised RuntimeError: bench: gzip failed (1): "
                          "unrecognized option '--long')"), first
    assert yaml.safe_load(text) == {"x": 1.5}
    done = _invoke("export", str(tmp_path / "run.db"), "--trial", "t0000", "-o", "-").splitlines()[0]
    assert done.endswith("(done): cost=0.5"), done
