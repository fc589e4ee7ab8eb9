"""benchmarks/rocksdb_remeasure.py on tiny real db_bench runs: pairs, ratios, resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import rocksdb_remeasure
from boanon.targets.rocksdb import RocksDBRunner, default_config


@pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")
def test_each_best_configuration_is_compared_with_the_default_in_interleaved_pairs(tmp_path: Path) -> None:
    default = default_config()
    bigger_cache = {**default, "cache_size": 64 << 20, "bloom_bits": 10}
    runs = pd.DataFrame([
        {"tuner": "tpe", "seed": 0, "budget": 3, "best": 1.0, "best_config": json.dumps(default)},
        {"tuner": "boanon", "seed": 0, "budget": 2, "best": 1.0, "best_config": json.dumps(bigger_cache)}])
    runner = RocksDBRunner(workload="mixgraph", num=5000, reads=2000, repeats=3, reference=default)
    lines: list[str] = []
    table = rocksdb_remeasure.remeasure(runner, runs, tmp_path / "trials", log=lines.append)
    assert len(lines) == 2 and list(table["tuner"]) == ["tpe", "boanon"] and (table["pairs"] == 3).all()
    for prefix in ("throughput", "cpu_per_op"):
        assert (table[f"{prefix}_q1"] <= table[f"{prefix}_ratio"]).all()
        assert (table[f"{prefix}_ratio"] <= table[f"{prefix}_q3"]).all()
    trial = tmp_path / "trials" / "boanon-seed0"
    # candidate, default, candidate, default...: three runs of each
    assert sorted(p.name for p in trial.glob("repeat-*")) == ["repeat-1", "repeat-2"]
    assert sorted(p.name for p in (trial / "reference").glob("repeat-*")) == ["repeat-1", "repeat-2"]
    ratios = rocksdb_remeasure.pair_ratios(trial, rocksdb_remeasure.quantities(runner))
    assert len(ratios["cpu_micros_per_op"]) == 3
    assert table.loc[1, "throughput_ratio"] == \
        pytest.approx(pd.Series(ratios["mixgraph_ops_per_sec"]).median())
    # read back, not run again; one cut short runs again
    shutil.rmtree(tmp_path / "trials" / "tpe-seed0" / "reference" / "repeat-2")
    lines.clear()
    again = rocksdb_remeasure.remeasure(runner, runs, tmp_path / "trials", log=lines.append)
    assert len(lines) == 1 and lines[0].startswith("tpe seed 0")
    pd.testing.assert_series_equal(again["throughput_ratio"].iloc[1:], table["throughput_ratio"].iloc[1:])
    searched = pd.DataFrame({"tuner": ["tpe"] * 3 + ["boanon"] * 2 + ["tpe"], "seed": [0] * 5 + [1],
                             "evaluation": [1, 2, 3, 1, 2, 3], "best_so_far": [3.0, 2.0, 1.5, 2.5, 2.0, 9.0]})
    summary = rocksdb_remeasure.per_tuner(again, searched, early=2).set_index("tuner")
    assert summary.loc["tpe", "search_at_2"] == 2.0 and summary.loc["tpe", "search_final"] == 1.5
    assert summary.loc["boanon", "search_final"] == 2.0 and summary.loc["boanon", "runs"] == 1
    late = rocksdb_remeasure.per_tuner(again, searched, early=5)
    assert late["search_at_5"].isna().all()  # no run got that far: blank, not an error


def _results(folder: Path, tuner: str, seeds: list[int]) -> Path:
    folder.mkdir(parents=True)
    pd.DataFrame({"problem": "rocksdb-mixgraph", "tuner": tuner, "seed": seeds, "status": "ok",
                  "budget": 10, "best": 1.0, "best_config": "{}"}).to_csv(folder / "runs.csv", index=False)
    pd.DataFrame({"tuner": tuner, "seed": seeds, "evaluation": 10, "best_so_far": 2.0}).to_csv(
        folder / "rocksdb-mixgraph.csv", index=False)
    return folder


def test_runs_of_several_folders_are_named_by_folder_and_taken_seed_by_seed(tmp_path: Path) -> None:
    first = _results(tmp_path / "a" / "boanon", "boanon", [0, 1])
    second = _results(tmp_path / "b", "boanon", [1, 0, 2])
    runs, searched = rocksdb_remeasure.finished_runs([first, second], "rocksdb-mixgraph")
    assert list(zip(runs["tuner"], runs["seed"], strict=True)) == [
        ("a/boanon:boanon", 0), ("b:boanon", 0), ("a/boanon:boanon", 1), ("b:boanon", 1), ("b:boanon", 2)]
    assert set(searched["tuner"]) == {"a/boanon:boanon", "b:boanon"}
    alone, _ = rocksdb_remeasure.finished_runs([second], "rocksdb-mixgraph")
    assert list(alone["tuner"]) == ["boanon"] * 3 and list(alone["seed"]) == [0, 1, 2]


def test_runs_without_their_searches_rows_are_summarised_with_blank_search_columns() -> None:
    """Folders with only runs.csv (benchmarks.posterior_pick's) gave a KeyError: an empty list
    selected no column, not no row."""
    table = pd.DataFrame({"tuner": ["measured:boanon"], "seed": [0], "budget": [10],
                          "throughput_ratio": [2.0], "cpu_per_op_ratio": [0.5]})
    searched = pd.DataFrame(columns=["tuner", "seed", "evaluation", "best_so_far"])
    summary = rocksdb_remeasure.per_tuner(table, searched, early=10)
    assert summary.loc[0, "throughput"] == 2.0 and summary["search_at_10"].isna().all()
