"""A user's own RocksDB runs (stdout, LOG, a bare OPTIONS, no config.json) read under the space's
names with the values that ran; warm starts that say what they leave out and why."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boanon.adapters import ingest
from boanon.adapters.rocksdb.option_names import BY_FLAG, flag_params
from boanon.cli import main
from boanon.errors import ConfigError, LogParseError
from boanon.learners.preprocess import preprocess
from boanon.multitask import align_to_space, load_related
from boanon.space import Space
from boanon.targets.rocksdb_export import options_sections

USER_RUNS = Path(__file__).parent / "fixtures" / "rocksdb-user"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "rocksdb.yaml"
RAN = json.loads((USER_RUNS / "ran.json").read_text())
needs_db_bench = pytest.mark.skipif(shutil.which("db_bench") is None,
                                    reason="db_bench not installed (scripts/install-system-deps.sh)")


def test_fixture_is_a_users_runs() -> None:
    for name in RAN:
        files = {p.name for p in (USER_RUNS / name).iterdir()}
        assert files in ({"stdout.txt", "LOG", "OPTIONS"}, {"stdout.txt", "LOG.gz", "OPTIONS"}), files


def test_values_read_are_the_values_run() -> None:
    table = ingest(USER_RUNS).table.set_index("trial")
    for trial, config in RAN.items():
        for name, value in config.items():
            got = table.loc[trial, f"param:{name}"]
            assert got == value, (trial, name, got)
    # the OPTIONS / LOG names are read under the flags' names, not kept beside them
    assert not {"param:compression", "param:filter_policy", "param:block_cache_capacity"} & set(table.columns)
    assert set(table["param:compression_type"]) == {"none", "lz4", "zstd", "zlib"}


def test_a_value_the_map_cannot_convert_keeps_its_file_name() -> None:
    read = flag_params({"filter_policy": "ribbonfilter:10", "compression": "kZSTD", "block_size": 4096})
    assert read == {"filter_policy": "ribbonfilter:10", "compression_type": "zstd", "block_size": 4096}
    assert flag_params({"compression": "kFancyCompression"}) == {"compression": "kFancyCompression"}
    assert flag_params({"filter_policy": "bloomfilter:9.5:false"}) == {"bloom_bits": 9.5}
    assert flag_params({"filter_policy": "nullptr", "block_cache_capacity": 8388608.0}) == \
        {"bloom_bits": 0, "cache_size": 8388608}


def test_the_map_goes_both_ways() -> None:
    """What the exporter writes for a flag is what the adapter reads back as that flag."""
    config = {"compression_type": "lz4", "bloom_bits": 12, "open_files": 500, "block_size": 8192}
    sections, elsewhere = options_sections({**config, "cache_size": 1 << 20})
    assert elsewhere == {"cache_size": 1 << 20}
    written = {option: text for section in sections.values() for option, text in section.items()}
    assert written == {"compression": "kLZ4Compression", "filter_policy": "bloomfilter:12:false",
                       "max_open_files": "500", "block_size": "8192"}
    from boanon.adapters.rocksdb.options import parse_value
    assert flag_params({k: parse_value(v) for k, v in written.items()}) == config
    assert BY_FLAG["cache_size"].option == "block_cache_capacity"


def _example_space(**changes: dict) -> Space:
    spec = yaml.safe_load(EXAMPLE.read_text())
    for name, change in changes.items():
        spec["space"][name].update(change)
    return Space.from_dict(spec["space"], spec["constraints"] + ["bloom_bits <= 10"])


def test_warm_start_values_and_what_it_leaves_out() -> None:
    space = _example_space(write_buffer_size={"low": 300000})
    task = align_to_space(load_related(USER_RUNS), space, ["readrandom_ops_per_sec"])
    kept = task.table.set_index("trial")
    assert sorted(kept.index) == ["run-b", "run-d"]
    defaults = space.default()
    for trial in kept.index:
        for name in space.names:
            assert kept.loc[trial, f"param:{name}"] == RAN[trial].get(name, defaults[name]), (trial, name)
    reasons = sorted(task.dropped)
    assert "trial run-a: write_buffer_size: expected an integer in [300000, 67108864], got 262144" \
        in reasons[0]
    assert "trial run-c: constraints: violates 'bloom_bits <= 10' (bloom_bits=15)" in reasons[1]
    # options the runs varied that the space has no name for are named, not dropped silently
    assert task.unmapped == ["arena_block_size", "max_compaction_bytes"]


def test_ingest_one_level_too_high_says_where_the_trials_are(tmp_path: Path) -> None:
    shutil.copytree(USER_RUNS, tmp_path / "dataset" / "rocksdb-user")
    with pytest.raises(LogParseError, match="found trial directories under .*rocksdb-user: run "
                                            "`boanon ingest .*dataset/rocksdb-user`"):
        ingest(tmp_path / "dataset")
    result = CliRunner().invoke(main, ["ingest", str(tmp_path / "dataset")])
    assert result.exit_code != 0 and f"boanon ingest {tmp_path / 'dataset' / 'rocksdb-user'}" in result.output
    assert "--skip-bad" not in result.output  # skipping trials would not help



def test_a_warm_start_one_level_too_high_names_the_dataset_to_point_at(tmp_path: Path) -> None:
    """It said "holds 1 datasets ...: point warm_start at one of them" when there was one."""
    shutil.copytree(USER_RUNS, tmp_path / "dataset" / "rocksdb-user")
    runs = tmp_path / "dataset" / "rocksdb-user"
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(tmp_path / 'dataset'))}: warm_start: holds 1 "
                                          rf"dataset \(with the adapter reading each\), not the trials of "
                                          rf"one: {re.escape(str(runs))} \(rocksdb\); point warm_start "
                                          rf"\(or --warm-start\) at {re.escape(str(runs))}$"):
        load_related(tmp_path / "dataset")


def test_a_warm_start_at_one_trial_or_its_file_says_it_is_the_warm_start(tmp_path: Path) -> None:
    """It said only "run-a: contains no trial sub-directories ...": not that warm_start named it."""
    trial = USER_RUNS / "run-a"
    for wrong in (trial, trial / "stdout.txt"):
        with pytest.raises(ConfigError, match=rf"^{re.escape(str(wrong))}: warm_start: .*logs are read from "
                                              rf"the folder holding the trial folders: pass "
                                              rf"{re.escape(str(USER_RUNS))} \(run-a is one trial"):
            load_related(wrong)


def test_a_database_kept_inside_the_trial_folder_is_named(tmp_path: Path) -> None:
    """db_bench ``--db=runs/a/db``: it said only "runs/a/OPTIONS-*: file not found"."""
    trial = tmp_path / "runs" / "run-a"
    shutil.copytree(USER_RUNS / "run-a", trial / "db")
    (trial / "db" / "stdout.txt").rename(trial / "stdout.txt")
    with pytest.raises(LogParseError, match=rf"^{re.escape(str(trial))}/OPTIONS-\*: file not found .*; "
                                            rf"{re.escape(str(trial / 'db'))} holds a database's options: "
                                            rf"its LOG and newest OPTIONS-NNNNNN are read from the trial "
                                            rf"folder itself, copy them into {re.escape(str(trial))}$"):
        ingest(tmp_path / "runs")


def test_db_bench_output_kept_under_another_name_is_named_not_ignored(tmp_path: Path) -> None:
    """``db_bench ... > db_bench.out``: the trial was read as an application's, from its LOG's
    statistics dump, with no objective and the file unread."""
    trial = tmp_path / "runs" / "run-a"
    shutil.copytree(USER_RUNS / "run-a", trial)
    (trial / "stdout.txt").rename(trial / "db_bench.out")
    with pytest.raises(LogParseError, match=rf"^{re.escape(str(trial))}/stdout.txt: file not found; "
                                            rf"{re.escape(str(trial))}/db_bench.out holds db_bench's output: "
                                            r"name it stdout.txt"):
        ingest(tmp_path / "runs")

def test_ingest_one_level_too_low_says_to_pass_the_folder_holding_the_trials(tmp_path: Path,
                                                                            monkeypatch) -> None:
    trial = USER_RUNS / "run-a"  # it said only: contains no trial sub-directories
    with pytest.raises(LogParseError, match=rf"^{re.escape(str(trial))}: contains no trial sub-directories; "
                                            r"logs are read from the folder holding the trial folders: pass "
                                            rf"{re.escape(str(USER_RUNS))} \(run-a is one trial: the "
                                            r"'rocksdb' adapter recognises it\)$"):
        ingest(trial)
    runs = tmp_path / "runs"
    shutil.copytree(trial, runs / "run-a")
    (runs / "run-a" / "db").mkdir()  # a trial holding a directory of its own
    with pytest.raises(LogParseError, match=r"run-a: no adapter recognises these trials; logs are read "
                                            r"from the folder holding the trial folders: pass "
                                            rf"{re.escape(str(runs))} \(run-a is one trial"):
        ingest(runs / "run-a")
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["ingest", "datasets/rocksdb-readrandom/trial-000"])
    assert result.exit_code == 1 and "--skip-bad" not in result.output
    assert "pass datasets/rocksdb-readrandom (trial-000 is one trial: the 'rocksdb' adapter" in result.output


@needs_db_bench
def test_tune_lists_every_trial_left_out_with_its_reason(tmp_path: Path) -> None:
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["space"]["write_buffer_size"]["low"] = 300000
    spec["constraints"].append("bloom_bits <= 10")
    spec.update(warm_start=str(USER_RUNS), budget=1,
                runner={"name": "rocksdb", "options": {"workload": "readrandom", "num": 20000,
                                                        "reads": 5000, "timeout": 120}})
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump(spec))
    result = CliRunner().invoke(main, ["tune", str(config), "--store", str(tmp_path / "run.db")])
    assert result.exit_code == 0, result.output
    assert "warm start: 2 trials of 'rocksdb-user'" in result.output
    assert "left out: " in result.output
    assert "trial run-a: write_buffer_size: expected an integer" in result.output
    assert "trial run-c: constraints: violates 'bloom_bits <= 10' (bloom_bits=15)" in result.output
    assert result.output.count("not in the search space") == 1
    assert "arena_block_size, max_compaction_bytes" in result.output


def test_options_the_system_derives_from_the_space_are_named_as_such_not_warned_about() -> None:
    """RocksDB derives arena_block_size from write_buffer_size and max_compaction_bytes from
    target_file_size_base: a warm start from the shipped dataset warned that they were unused."""
    dataset = EXAMPLE.parent.parent / "datasets" / "rocksdb-readrandom"
    task = align_to_space(load_related(dataset), _example_space(), ["readrandom_ops_per_sec"])
    assert task.derived == {"arena_block_size": "write_buffer_size",
                            "max_compaction_bytes": "target_file_size_base"}
    assert task.unmapped == []


ODD_RUNS = Path(__file__).parent / "fixtures" / "rocksdb-user-odd"


def test_a_trial_whose_option_the_space_cannot_name_is_left_out_not_taken_at_the_default(
        tmp_path: Path) -> None:
    """A Ribbon filter (no ``bloom_bits``) and ``--cache_size=0`` (no block cache: no capacity in
    the LOG) were read as the space's defaults, no filter and an 8 MiB cache, and the filter's
    option was not named: it was logged by one trial only, so it did not count as varied."""
    runs = tmp_path / "runs"
    for trial in [*RAN, *json.loads((ODD_RUNS / "ran.json").read_text())]:
        shutil.copytree(USER_RUNS / trial if trial in RAN else ODD_RUNS / trial, runs / trial)
    task = align_to_space(load_related(runs), _example_space(), ["readrandom_ops_per_sec"])
    assert sorted(task.table["trial"]) == ["run-a", "run-b", "run-d"]  # run-c: bloom_bits > 10
    reasons = [r for r in task.dropped if "run-ribbon" in r or "run-nocache" in r]
    assert reasons == [
        f"{runs}: trial run-nocache: cache_size: not in this trial's logs (the task's other trials "
        "have it), so the value it ran with is unknown",
        f"{runs}: trial run-ribbon: bloom_bits: not in this trial's logs (the task's other trials "
        "have it), so the value it ran with is unknown; it logged filter_policy='ribbonfilter:10:0' "
        "instead, which the search space has no name for"]
    assert "filter_policy" in task.unmapped


def test_an_option_constant_wherever_a_space_parameter_is_logged_is_not_derived_from_it(
        tmp_path: Path) -> None:
    """``--cache_size=0`` logs ``no_block_cache=true`` and no capacity: over the trials with a
    ``cache_size`` the option is constant (false), which read as "derived from cache_size", so
    the one option saying the cache was off was reported as standing for a space parameter."""
    runs = tmp_path / "runs"  # six cache sizes beside the trial without a cache
    for trial in RAN:
        shutil.copytree(USER_RUNS / trial, runs / trial)
    for trial in ODD_RUNS.iterdir():
        if trial.is_dir():
            shutil.copytree(trial, runs / trial.name)
    shutil.copytree(ROOT / "datasets" / "rocksdb-readrandom" / "trial-000", runs / "trial-000")
    task = align_to_space(load_related(runs), _example_space(), ["readrandom_ops_per_sec"])
    assert "no_block_cache" not in task.derived
    assert "no_block_cache" in task.unmapped


def test_learn_says_an_option_one_trial_logged_is_not_one_that_never_varied(tmp_path: Path) -> None:
    """A Ribbon filter's ``filter_policy`` (the other runs' Bloom filters are ``bloom_bits``) was
    left out of ``boanon learn``'s graph as "constant: never varied"."""
    runs = tmp_path / "runs"
    for trial in RAN:
        shutil.copytree(USER_RUNS / trial, runs / trial)
    shutil.copytree(ODD_RUNS / "run-ribbon", runs / "run-ribbon")
    dropped = preprocess(ingest(runs).table).report["dropped"]
    assert dropped["filter_policy"] == "constant where logged: 1 of 5 trials log it, with one value"
    assert dropped["WAL_ttl_seconds"] == "constant: never varied"
