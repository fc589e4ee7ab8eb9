"""The shipped rocksdb datasets: they ingest whole and their knobs visibly move their metrics."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from boanon.adapters import ingest
from boanon.table import columns_of

DATASETS = Path(__file__).parents[1] / "datasets"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    result = ingest(DATASETS / "rocksdb-readrandom")
    assert result.adapter == "rocksdb" and not result.skipped and not result.partially_missing
    return result.table


def test_mixgraph_dataset() -> None:
    result = ingest(DATASETS / "rocksdb-mixgraph")
    table = result.table
    assert len(table) >= 40 and not result.skipped
    assert len(columns_of(table, "metric")) > 500
    # configurations whose write buffers hold the whole load never flush: no SST, no ratios
    assert set(result.partially_missing) == {"metric:block_cache_hit_ratio", "metric:sst_compression_ratio",
                                             "metric:write_amplification"}
    assert (table.loc[table["metric:flush_count"] == 0, "metric:sst_files_created"] == 0).all()
    assert _spearman(table, "param:write_buffer_size", "metric:flush_count") < -0.9
    ratio = table.groupby("param:compression_type")["metric:sst_compression_ratio"].median()
    assert ratio["zstd"] > ratio["snappy"] > ratio["none"]


def test_readrandomwriterandom_dataset_has_the_benchmarks_objective() -> None:
    result = ingest(DATASETS / "rocksdb-readrandomwriterandom")
    table = result.table
    assert len(table) == 40 and not result.skipped and not result.partially_missing
    assert (table["objective:cpu_micros_per_op"] > 0).all()  # made with the runner's resource usage
    assert _spearman(table, "param:write_buffer_size", "metric:flush_count") < -0.9
    assert _spearman(table, "param:cache_size", "metric:block_cache_miss") < -0.6


def _spearman(table: pd.DataFrame, a: str, b: str) -> float:
    return table[a].corr(table[b], method="spearman")


def test_size(table: pd.DataFrame) -> None:
    assert len(table) >= 40
    assert len(columns_of(table, "param")) >= 30
    assert len(columns_of(table, "metric")) > 500
    assert "objective:readrandom_ops_per_sec" in table


def test_knobs_move_their_metrics(table: pd.DataFrame) -> None:
    assert _spearman(table, "param:cache_size", "metric:block_cache_miss") < -0.5
    assert _spearman(table, "param:write_buffer_size", "metric:flush_count") < -0.9
    assert _spearman(table, "param:bloom_bits", "metric:bloom_filter_false_positive") < -0.7
    no_filter = table["param:bloom_bits"] == 0
    assert no_filter.any() and (table.loc[no_filter, "metric:bloom_filter_useful"] == 0).all()
    assert (table.loc[~no_filter, "metric:bloom_filter_useful"] > 0).all()
    data = table.groupby("param:compression_type")["metric:sst_data_bytes"].median()
    assert data["none"] > data["snappy"] > data["zstd"]
    ratio = table.groupby("param:compression_type")["metric:sst_compression_ratio"].median()
    assert ratio["zlib"] > ratio["snappy"] > ratio["none"]
