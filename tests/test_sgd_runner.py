"""The sgd runner end to end: configuration in, logs out, read back through ingest."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from boanon.adapters import get_adapter, ingest
from boanon.errors import ConfigError, InvalidOption
from boanon.runners import TrialFailed, make_runner
from boanon.space import Space
from boanon.targets.sgd import default_config, default_constraints, default_space
from boanon.targets.sgd.cluster import get_network
from boanon.targets.sgd.simulator import InvalidConfig, plan

OPTIONS = {"iterations": 8, "warmup": 3, "noise_seed": 11}


def run_into(tmp_path, config, name="trial-0", **options):
    trial = tmp_path / name
    trial.mkdir()
    make_runner("sgd", **{**OPTIONS, **options}).run(config, trial)
    return trial


def test_space_has_a_worker_server_and_share_per_machine_and_gpu_shares():
    space = default_space()
    assert len(space) == 35
    assert sum(name.endswith("_gpu_share") for name in space) == 5
    defaults = default_config()
    assert all(defaults[f"m{i}_worker"] for i in range(10))
    assert [i for i in range(10) if defaults[f"m{i}_ps"]] == [0]
    assert len({defaults[f"m{i}_share"] for i in range(10)}) == 1
    Space.from_dict(space, default_constraints())  # the shared space code accepts it


@pytest.mark.parametrize("name", ["sgd.yaml", "sgd-from-logs.yaml"])
def test_shipped_examples_use_the_target_space(name):
    example = yaml.safe_load((Path(__file__).parents[1] / "examples" / name).read_text())
    assert example["space"] == default_space()
    assert ("annotations" in example) == (name == "sgd.yaml")  # the logs-first one has none
    assert example["constraints"] == default_constraints()
    assert example["runner"]["name"] == "sgd"
    assert example["objectives"] == [{"name": "iteration_time", "direction": "minimize", "unit": "s"}]


def test_constraints_admit_exactly_the_runnable_configurations():
    space = Space.from_dict(default_space())
    constrained = Space.from_dict(default_space(), default_constraints())
    network = get_network("googlenet")
    rng = np.random.default_rng(0)
    configs = space.sample(300, rng, sobol=False)
    for key, value in (("ps", False), ("worker", False), ("share", 0.0)):
        configs += [{**c, **{f"m{i}_{key}": value for i in range(10)}} for c in configs[:10]]
    for config in configs:
        try:
            plan(config, network)
            runnable = True
        except InvalidConfig:
            runnable = False
        assert constrained.is_feasible(config) == runnable


def test_run_then_ingest(tmp_path):
    run_into(tmp_path, default_config(), "default")
    run_into(tmp_path, {"m2_worker": False, "m3_worker": False, "m4_worker": False,
                        "m1_ps": True}, "partial")
    result = ingest(tmp_path)
    table = result.table.set_index("trial")
    assert result.adapter == "sgd" and not result.partially_missing
    assert table.loc["partial", "param:m1_ps"] == True  # noqa: E712  (filled from config.json)
    assert table.loc["partial", "param:m0_share"] == 0.5  # a default recorded in config.json
    assert table.loc["partial", "metric:workers"] == 7
    assert table.loc["partial", "objective:iteration_time"] < table.loc[
        "default", "objective:iteration_time"]
    run = json.loads((tmp_path / "default" / "run.json").read_text())
    assert run["warmup"] == 3 and run["network"] == "googlenet" and run["noise_seed"] == 11


def test_log_is_written_iteration_by_iteration_and_progress_can_stop_it(tmp_path):
    seen = []

    def progress(iteration, iteration_s):
        lines = (tmp_path / "t" / "workers.jsonl").read_text().splitlines()
        seen.append((iteration, len(lines), iteration_s))
        return iteration < 4

    run_into(tmp_path, default_config(), "t", progress=progress)
    assert [(i, n) for i, n, _ in seen] == [(i, 15 * (i + 1)) for i in range(5)]
    lines = [json.loads(line) for line in (tmp_path / "t" / "workers.jsonl").read_text().splitlines()]
    assert lines[-1]["iteration"] == 4
    # the stopped run is a valid trial: iterations 3 and 4 follow the 3 warm-up iterations
    record = get_adapter("sgd").parse_trial(tmp_path / "t")
    assert record.objectives["iteration_time"] == pytest.approx((seen[3][2] + seen[4][2]) / 2)


def test_a_fixed_seed_reproduces_a_trial_and_compress_gzips_the_same_log(tmp_path):
    a = run_into(tmp_path, default_config(), "a")
    b = run_into(tmp_path, default_config(), "b", compress=True)
    c = run_into(tmp_path, {"m9_share": 0.4}, "c")
    log_a = (a / "workers.jsonl").read_text()
    assert gzip.open(b / "workers.jsonl.gz", "rt").read() == log_a
    assert not (b / "workers.jsonl").exists()
    seeds = [json.loads((t / "run.json").read_text())["seed"] for t in (a, b, c)]
    assert seeds[0] == seeds[1] != seeds[2]  # the seed follows the configuration


def test_unrunnable_configuration_fails_the_trial_with_its_config_recorded(tmp_path):
    config = {f"m{i}_ps": False for i in range(10)}
    with pytest.raises(TrialFailed, match="no machine is a parameter server"):
        run_into(tmp_path, config, "t")
    recorded = json.loads((tmp_path / "t" / "config.json").read_text())
    assert recorded["m0_ps"] is False and len(recorded) == 35


@pytest.mark.parametrize("options, field", [
    ({"network": "resnet"}, "network"),
    ({"warmup": 8}, "warmup"),
    ({"noise": -0.1}, "noise"),
    ({"straggler_prob": 2}, "straggler_prob"),
])
def test_bad_options_name_the_field(options, field):
    with pytest.raises(InvalidOption, match=f"^option '{field}': ") as info:
        make_runner("sgd", **{**OPTIONS, **options})
    assert info.value.option == field


def test_unknown_parameter_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="m10_share"):
        run_into(tmp_path, {"m10_share": 0.3}, "t")


def test_a_misspelt_parameter_is_refused_with_the_closest_name(tmp_path):
    # it said only "not a parameter of the sgd space"
    with pytest.raises(ConfigError, match=r"m1_shar: not a parameter of the sgd space "
                       r"\(did you mean 'm1_share'\?\)"):
        run_into(tmp_path, {"m1_shar": 0.3}, "t")


def test_a_stop_during_the_warm_up_waits_for_a_measured_iteration(tmp_path):
    """The median rule stopped SGD trials at step 2 of 5 warm-up ones: their log held no
    measured iteration, so each was stored as failed (LogParseError), not stopped."""
    stopped = make_runner("sgd", **OPTIONS, progress=lambda i, s: False).run(default_config(), tmp_path)
    record = get_adapter("sgd").parse_trial(tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "workers.jsonl").read_text().splitlines()]
    assert stopped and lines[-1]["iteration"] == OPTIONS["warmup"]
    assert record.objectives["iteration_time"] == pytest.approx(lines[-1]["iteration_s"])
