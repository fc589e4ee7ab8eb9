"""The rocksdb runner: its space, its db_bench command line and short real runs read back."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from boanon.adapters import get_adapter, ingest
from boanon.adapters.ingest import parse_trial_dir
from boanon.errors import ConfigError, InvalidOption
from boanon.runners import TrialFailed, make_runner, run_config
from boanon.space import Space
from boanon.targets.generate import FAILED_FILE, generate_dataset, target_space
from boanon.targets.rocksdb import (
    MIXGRAPH_FAST20,
    RocksDBRunner,
    default_config,
    default_constraints,
    default_space,
)

needs_db_bench = pytest.mark.skipif(shutil.which("db_bench") is None,
                                    reason="db_bench not installed (scripts/install-system-deps.sh)")
TINY = {"num": 20000, "reads": 10000, "stats_dump_period_sec": 1, "timeout": 60}
SMALL_LSM = {"write_buffer_size": 262144, "target_file_size_base": 262144,
             "max_bytes_for_level_base": 1048576}


def space() -> Space:
    return Space.from_dict(default_space(), default_constraints())


def test_space_has_the_tuned_options_with_rocksdb_defaults() -> None:
    spec = default_space()
    for name in ["write_buffer_size", "max_write_buffer_number", "min_write_buffer_number_to_merge",
                 "max_background_jobs", "level0_file_num_compaction_trigger",
                 "level0_slowdown_writes_trigger", "level0_stop_writes_trigger", "target_file_size_base",
                 "max_bytes_for_level_base", "max_bytes_for_level_multiplier", "block_size", "cache_size",
                 "bloom_bits", "compression_type"]:
        assert name in spec
    assert default_config()["write_buffer_size"] == 64 << 20
    assert default_config()["level0_stop_writes_trigger"] == 36
    assert space().validate(default_config()) == default_config()


def test_sampled_configurations_honour_the_constraints() -> None:
    configs = space().sample(50, np.random.default_rng(0), sobol=False)
    assert all(c["min_write_buffer_number_to_merge"] < c["max_write_buffer_number"] for c in configs)
    assert all(c["level0_file_num_compaction_trigger"] < c["level0_slowdown_writes_trigger"]
               < c["level0_stop_writes_trigger"] for c in configs)
    assert len({c["compression_type"] for c in configs}) == 5


def test_target_space_is_found_next_to_the_runner() -> None:
    spec, constraints = target_space(RocksDBRunner)
    assert spec == default_space() and constraints == default_constraints()


@needs_db_bench
def test_command_is_an_argument_list_with_statistics(tmp_path: Path) -> None:
    runner = RocksDBRunner(workload="mixgraph", num=1000)
    args = runner.command({"compression_type": "lz4", "bloom_bits": 10}, tmp_path)
    assert args[0].endswith("db_bench")
    assert {"--benchmarks=fillrandom,mixgraph", "--statistics=1", "--histogram=1", f"--db={tmp_path}",
            "--compression_type=lz4", "--bloom_bits=10", "--progress_reports=false"} <= set(args)
    assert {f"--{k}={v}" for k, v in MIXGRAPH_FAST20.items()} <= set(args)
    assert not any("sine_mix_rate" in a for a in args)


@needs_db_bench
def test_bad_options_are_refused_naming_them(tmp_path: Path) -> None:
    for options, option in (({"workload": "nosuch"}, "workload"), ({"reference": "best"}, "reference"),
                            ({"repeats": 0}, "repeats"), ({"db_bench": "no-such-db_bench"}, "db_bench")):
        with pytest.raises(InvalidOption, match=f"^option '{option}': ") as info:
            RocksDBRunner(**options)
        assert info.value.option == option
    with pytest.raises(ConfigError, match="num"):
        RocksDBRunner().command({"num": 5}, tmp_path)


def test_a_misspelt_workload_is_refused_with_the_closest_name() -> None:
    # it said only "unknown 'readrandon'; expected one of [...]" (refused before db_bench is looked for)
    with pytest.raises(InvalidOption, match=r"^option 'workload': unknown 'readrandon' \(did you mean "
                       r"'readrandom'\?\); expected one of \['mixgraph'"):
        RocksDBRunner(workload="readrandon")


@needs_db_bench
def test_real_run_ingests_back(tmp_path: Path) -> None:
    runner = make_runner("rocksdb", **TINY, repeats=2, reference="default",
                         db_root=str(tmp_path / "dbs"), gzip_log_over=0)
    assert runner.adapter == "rocksdb"
    (tmp_path / "dbs").mkdir()
    trial = tmp_path / "trials" / "t0"
    trial.mkdir(parents=True)
    config = {**SMALL_LSM, "bloom_bits": 10, "compression_type": "lz4"}
    run_config(runner, config, trial)
    assert not any((tmp_path / "dbs").iterdir())  # temporary databases are removed
    assert (trial / "LOG.gz").is_file() and (trial / "repeat-1" / "stdout.txt").is_file()
    assert json.loads((trial / "config.json").read_text()) == config
    record = parse_trial_dir(get_adapter("rocksdb"), trial)
    assert record.params["compression_type"] == "lz4" and record.params["compression_opts.level"] == 32767
    assert record.objectives["readrandom_ops_per_sec"] > 0
    assert {"readrandom_ops_per_sec_repeat0", "readrandom_ops_per_sec_repeat1",
            "reference_readrandom_ops_per_sec"} <= set(record.metrics)
    assert record.objectives["readrandom_ops_per_sec_rel"] > 0
    assert record.metrics["flush_count"] >= 5 and record.metrics["bloom_filter_useful"] > 0
    # reference runs alternate with the candidate's: each pair ran under the same load
    order = [trial, trial / "reference", trial / "repeat-1", trial / "reference" / "repeat-1"]
    finished = [(d / "rusage.json").stat().st_mtime_ns for d in order]
    assert finished == sorted(finished)
    assert {"readrandom_ops_per_sec_cv", "readrandom_ops_per_sec_rel_cv"} <= set(record.metrics)
    # the db_bench process's own CPU time (all its threads), per operation of its benchmarks
    assert 0 < record.metrics["cpu_seconds"] <= record.metrics["wall_seconds"] * os.cpu_count()
    assert record.objectives["cpu_micros_per_op"] > 0 and record.objectives["cpu_micros_per_op_rel"] > 0


@needs_db_bench
def test_crash_and_timeout_are_trial_failures(tmp_path: Path) -> None:
    runner = RocksDBRunner(**TINY)
    with pytest.raises(TrialFailed, match="Xpress is not linked"):
        runner.run({"compression_type": "xpress"}, tmp_path)
    slow = RocksDBRunner(num=5_000_000, timeout=0.5, db_root=str(tmp_path))
    (tmp_path / "slow").mkdir()
    with pytest.raises(TrialFailed, match="timed out after 0.5 s"):
        slow.run({}, tmp_path / "slow")
    assert not list(tmp_path.glob("boanon-rocksdb-*"))


@needs_db_bench
def test_a_sigterm_while_the_db_is_removed_is_handled_once_it_is_gone(tmp_path: Path, monkeypatch) -> None:
    # a benchmark killed as db_bench ended: the SIGTERM's SystemExit cut the DB's removal short and
    # the DB stayed (tests/test_benchmark_sigterm.py, once in a full run); here the kill comes then
    import signal

    from boanon.runners.base import exit_by_sigterm, handling_sigterm

    remove = shutil.rmtree

    def killed_while_removing(path, *args, **kwargs) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        remove(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", killed_while_removing)
    runner = RocksDBRunner(**TINY, db_root=str(tmp_path / "dbs"))
    (tmp_path / "dbs").mkdir()
    (tmp_path / "t0").mkdir()
    with handling_sigterm(exit_by_sigterm), pytest.raises(SystemExit) as killed:
        runner.run({}, tmp_path / "t0")
    assert killed.value.code == 128 + signal.SIGTERM  # the kill is still obeyed, after
    assert not any((tmp_path / "dbs").iterdir())


@needs_db_bench
def test_a_sigterm_while_db_bench_starts_kills_it_before_the_db_goes(tmp_path: Path, monkeypatch) -> None:
    # a benchmark killed as db_bench started (the test above's kill, under another CPU's timing):
    # SystemExit came inside Popen, the runner never knew the process, removed the DB under it,
    # and db_bench ran on, writing into a DB that stayed
    import signal
    import subprocess

    from boanon.runners.base import exit_by_sigterm, handling_sigterm

    start, started = subprocess.Popen, []

    def killed_while_starting(*args, **kwargs) -> subprocess.Popen:
        started.append(start(*args, **kwargs))
        os.kill(os.getpid(), signal.SIGTERM)
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", killed_while_starting)
    runner = RocksDBRunner(num=2_000_000, timeout=60, db_root=str(tmp_path / "dbs"))
    (tmp_path / "dbs").mkdir()
    (tmp_path / "t0").mkdir()
    try:
        with handling_sigterm(exit_by_sigterm), pytest.raises(SystemExit):
            runner.run({}, tmp_path / "t0")
        assert started[0].poll() is not None, "db_bench runs on"
    finally:
        if started and started[0].poll() is None:
            started[0].kill()
            started[0].wait()
    assert not any((tmp_path / "dbs").iterdir())


@needs_db_bench
def test_generate_dataset_records_failures_and_resumes(tmp_path: Path) -> None:
    small = Space.from_dict({"compression_type": {"type": "categorical", "choices": ["xpress", "none"]},
                             "bloom_bits": {"type": "int", "low": 0, "high": 12}})
    runner = RocksDBRunner(**TINY, flags=SMALL_LSM)
    out = tmp_path / "ds"
    done = generate_dataset(runner, small, trials=2, seed=3, out=out, log=lambda _: None)
    assert [d.parent for d in done] == [out, out]
    failed = [json.loads(line) for line in (out / FAILED_FILE).read_text().splitlines()]
    assert all(f["config"]["compression_type"] == "xpress" for f in failed)
    assert all(json.loads((d / "config.json").read_text())["compression_type"] == "none" for d in done)
    # a second call finds the trials done and runs nothing
    assert generate_dataset(runner, small, trials=2, seed=3, out=out, log=pytest.fail) == done
    result = ingest(out)
    assert len(result.table) == 2 and result.adapter == "rocksdb"


def test_mixgraph_example_is_the_benchmark_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).parents[1]
    monkeypatch.syspath_prepend(str(root))  # benchmarks/ is not an installed package
    monkeypatch.chdir(root)  # the example's dataset paths are relative to the repository
    from benchmarks.problems import ROOT, make_problem
    from boanon.config import load_config

    config = load_config(root / "examples" / "rocksdb-mixgraph.yaml")
    problem = make_problem("rocksdb-mixgraph")
    assert config.space.to_dict() == problem.space.to_dict()
    assert config.runner_options == problem.info["runner_options"] and config.budget == problem.budget
    assert [o.to_dict() for o in config.objectives] == [problem.objective.to_dict()]
    assert [ROOT / p for p in config.warm_start] == problem.knowledge["related_tasks"]
    assert config.related_outputs == problem.knowledge["related_outputs"]


def test_example_uses_the_target_space() -> None:
    example = yaml.safe_load((Path(__file__).parents[1] / "examples" / "rocksdb.yaml").read_text())
    assert example["space"] == default_space()
    assert example["constraints"] == default_constraints()
    assert example["runner"]["name"] == "rocksdb"


@needs_db_bench
def test_generate_command(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from boanon.cli import main

    out = tmp_path / "ds"
    args = ["generate", "rocksdb", "--trials", "1", "--seed", "5", "--out", str(out), "--num", "20000",
            "--reads", "10000", "--stats-dump-period-sec", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    recipe = yaml.safe_load((out / "dataset.yaml").read_text())
    assert recipe["runner"] == {"name": "rocksdb", "options": {"num": 20000, "reads": 10000,
                                                               "stats_dump_period_sec": 1}}
    assert recipe["space"] == default_space() and recipe["seed"] == 5
    config = json.loads((out / "trial-000" / "config.json").read_text())
    assert space().validate(config) == config
    bad = CliRunner().invoke(main, ["generate", "rocksdb", "--out", str(out), "--num"])
    assert bad.exit_code != 0 and "pairs" in bad.output
