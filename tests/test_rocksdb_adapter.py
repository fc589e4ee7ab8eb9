"""The rocksdb adapter on real db_bench outputs (tests/fixtures/rocksdb, see its README)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from boanon.adapters import get_adapter, ingest
from boanon.adapters.ingest import detect_adapter, parse_trial_dir
from boanon.adapters.rocksdb import RocksDBAdapter
from boanon.adapters.rocksdb.log import parse_log
from boanon.adapters.rocksdb.options import parse_options, parse_value
from boanon.adapters.rocksdb.stdout import parse_stdout
from boanon.errors import LogParseError

FIXTURES = Path(__file__).parent / "fixtures" / "rocksdb"
READRANDOM = FIXTURES / "readrandom"
NOBLOOM = FIXTURES / "readrandom-nobloom-gz"
MIXGRAPH = FIXTURES / "mixgraph-gz"


@pytest.fixture
def trial(tmp_path: Path) -> Path:
    """A writable copy of the readrandom fixture."""
    return Path(shutil.copytree(READRANDOM, tmp_path / "trial"))


def test_registered_and_detected() -> None:
    assert isinstance(get_adapter("rocksdb"), RocksDBAdapter)
    assert detect_adapter(sorted(p for p in FIXTURES.iterdir() if p.is_dir())).name == "rocksdb"


def test_does_not_detect_other_directories(tmp_path: Path) -> None:
    (tmp_path / "stdout.txt").write_text("hello\n")
    assert not RocksDBAdapter().detect(tmp_path)


def test_stdout_objectives_and_metrics() -> None:
    out = parse_stdout(READRANDOM / "stdout.txt")
    assert out.benchmarks == ["fillrandom", "readrandom"]
    assert out.objectives["readrandom_ops_per_sec"] == 43387
    assert out.objectives["readrandom_micros_per_op"] == pytest.approx(22.766)
    assert out.objectives["readrandom_mb_per_sec"] == pytest.approx(3.0)
    assert out.objectives["fillrandom_ops_per_sec"] == 49546
    m = out.metrics
    assert m["readrandom_keys_found"] == 18872
    assert m["readrandom_read_micros_p99"] == pytest.approx(19.66)      # --histogram=1
    assert m["readrandom_read_micros_p99_9"] == pytest.approx(8250.0)
    assert m["fillrandom_write_micros_count"] == 60000
    assert m["block_cache_miss"] == 15757                               # --statistics=1 ticker
    assert m["bloom_filter_useful"] == 27109
    assert m["db_get_micros_p99"] == pytest.approx(18.571014)          # statistics histogram
    assert m["db_get_micros_count"] == 30000
    assert m["block_cache_hit_ratio"] == pytest.approx(m["block_cache_hit"] / (m["block_cache_hit"] + 15757))
    assert m["bloom_filter_false_positive"] == (m["bloom_filter_full_positive"]
                                                - m["bloom_filter_full_true_positive"]) > 0


def test_mixgraph_operation_counts() -> None:
    out = parse_stdout(MIXGRAPH / "stdout.txt")
    assert out.objectives["mixgraph_ops_per_sec"] == 4091
    assert (out.metrics["mixgraph_gets"], out.metrics["mixgraph_puts"], out.metrics["mixgraph_seek"]) \
        == (24876, 4245, 879)
    assert out.metrics["mixgraph_seek_micros_count"] == 879


def test_log_compaction_stats_stalls_and_events() -> None:
    log = parse_log(READRANDOM / "LOG")
    m = log.metrics
    assert (m["flush_count"], m["compaction_count"], m["trivial_move_count"]) == (8, 2, 1)
    assert m["flush_output_bytes"] == 3674820
    assert m["compaction_output_bytes"] == 3859302
    assert m["sst_filter_bytes"] == 139905
    assert m["lsm_w_amp"] == pytest.approx(1.5)                          # Sum row of the last dump
    assert m["level1_key_in"] == 26000                                  # "26K"
    assert m["level1_size_bytes"] == pytest.approx(1.40 * 2**20)        # "1.40 MB"
    assert m["level6_files"] == 0                                       # levels absent from the table
    assert m["stall_percent"] == 0 and m["stall_count_total"] == 0
    assert log.params["block_cache_capacity"] == 1 << 20


def test_gzipped_log_with_stalls() -> None:
    m = parse_log(NOBLOOM / "LOG.gz").metrics
    assert m["stall_count_memtable_compaction"] == 2
    assert m["stall_percent"] == pytest.approx(2.6)
    assert m["sst_filter_bytes"] == 0                                   # bloom_bits=0: no filters


def test_options_types_and_names() -> None:
    opts = parse_options(READRANDOM / "OPTIONS-000007")
    assert opts["write_buffer_size"] == 1 << 20 and opts["block_size"] == 4096  # CF and table options
    assert opts["compression"] == "kSnappyCompression"
    assert opts["paranoid_checks"] is True and opts["use_fsync"] is False
    assert opts["max_bytes_for_level_multiplier"] == 10.0
    assert opts["compression_opts.level"] == 32767                      # flattened struct
    assert opts["filter_policy"] == "bloomfilter:10:false"
    assert "rocksdb_version" not in opts


@pytest.mark.parametrize(("text", "value"), [("64MB", 64 << 20), ("4k", 4096), ("1.5GiB", 3 << 29),
                                             ("7", 7), ("0.25", 0.25), ("kZSTD", "kZSTD")])
def test_option_values_with_units(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_trial_names_params_as_config_and_drops_restatements() -> None:
    record = parse_trial_dir(RocksDBAdapter(), READRANDOM)
    p = record.params
    assert p["compression_type"] == "snappy" and "compression" not in p
    assert p["bloom_bits"] == 10 and "filter_policy" not in p
    assert p["cache_size"] == 1 << 20 and "block_cache_capacity" not in p
    assert p["max_background_jobs"] == 2
    assert len(p) > 100


def test_without_config_the_logs_give_the_options_under_the_flags_names(trial: Path) -> None:
    (trial / "config.json").unlink()
    p = RocksDBAdapter().parse_trial(trial).params
    assert p["compression_type"] == "snappy" and p["cache_size"] == 1 << 20 and p["bloom_bits"] == 10
    assert not {"compression", "block_cache_capacity", "filter_policy"} & set(p)


def test_ingest_fixtures_knobs_move_their_metrics() -> None:
    table = ingest(FIXTURES).table.set_index("trial")
    bloom, nobloom = table.loc["readrandom"], table.loc["readrandom-nobloom-gz"]
    assert bloom["metric:bloom_filter_useful"] > 0 == nobloom["metric:bloom_filter_useful"]
    # compression none vs snappy: the same flushed data takes more bytes on disk
    assert nobloom["metric:flush_output_bytes"] > 1.5 * bloom["metric:flush_output_bytes"]
    assert len([c for c in table.columns if c.startswith("metric:")]) > 500


def test_repeats_take_the_median_and_reference_pairs_normalise(trial: Path) -> None:
    # runs of 43387, 27175, 27175 ops/s; the reference runs next to them 27175, 43387, 27175
    for run, ref in (("repeat-1", READRANDOM), ("repeat-2", NOBLOOM)):
        shutil.copytree(NOBLOOM, trial / run)
        shutil.copytree(ref, trial / "reference" / run)
    shutil.copytree(NOBLOOM, trial / "reference", dirs_exist_ok=True)
    record = RocksDBAdapter().parse_trial(trial)
    o, m = record.objectives, record.metrics
    assert o["readrandom_ops_per_sec"] == 27175                          # the median, not the mean
    assert m["readrandom_ops_per_sec_repeat0"] == 43387 and m["readrandom_ops_per_sec_repeat2"] == 27175
    assert m["readrandom_ops_per_sec_cv"] == pytest.approx(np.std([43387, 27175, 27175], ddof=1)
                                                            / np.mean([43387, 27175, 27175]))
    assert m["flush_count"] == 8                                        # all runs flushed 8 times
    assert m["reference_readrandom_ops_per_sec"] == 27175
    # each run over the reference run made beside it: 43387/27175, 27175/43387, 1 -> median 1
    assert o["readrandom_ops_per_sec_rel"] == pytest.approx(1.0)
    assert m["readrandom_ops_per_sec_rel_cv"] > 0.3


def test_reference_without_pairs_divides_the_medians(trial: Path) -> None:
    shutil.copytree(NOBLOOM, trial / "repeat-1")
    shutil.copytree(NOBLOOM, trial / "reference")
    o = RocksDBAdapter().parse_trial(trial).objectives
    assert o["readrandom_ops_per_sec_rel"] == pytest.approx((43387 + 27175) / 2 / 27175)


def test_rusage_gives_cpu_time_per_operation(trial: Path) -> None:
    (trial / "rusage.json").write_text(json.dumps({"user_seconds": 1.5, "system_seconds": 0.5,
                                                   "wall_seconds": 4.0, "max_rss_kb": 90000}))
    record = RocksDBAdapter().parse_trial(trial)
    operations = record.metrics["fillrandom_operations"] + record.metrics["readrandom_operations"]
    assert record.objectives["cpu_micros_per_op"] == pytest.approx(2.0e6 / operations)
    assert record.metrics["cpu_seconds"] == 2.0 and record.metrics["cpu_utilisation"] == 0.5
    (trial / "rusage.json").write_text(json.dumps({"user_seconds": "1.5", "system_seconds": 0.5,
                                                   "wall_seconds": 4.0, "max_rss_kb": 90000}))
    error = _error(trial)
    assert "rusage.json" in str(error) and "user_seconds" in str(error)


def test_counters_write_amplification_and_block_reads_per_get() -> None:
    m = RocksDBAdapter().parse_trial(MIXGRAPH).metrics
    # exact from the LOG's events; RocksDB's own Sum W-Amp (one decimal) agrees
    assert m["write_amplification"] == pytest.approx(m["lsm_w_amp"], abs=0.05)
    assert m["block_reads_per_get"] == pytest.approx(m["block_cache_miss"] / m["number_keys_read"])
    assert 0 < m["block_reads_per_get"] < 2


# --- broken inputs: each error names the file and, where there is one, the line ---------------

def _cut(path: Path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


def _error(trial: Path) -> LogParseError:
    with pytest.raises(LogParseError) as info:
        RocksDBAdapter().parse_trial(trial)
    return info.value


def test_truncated_stdout(trial: Path) -> None:
    _cut(trial / "stdout.txt", 0.5)  # cuts into the middle of a line
    err = _error(trial)
    assert err.path.name == "stdout.txt" and err.line is not None and err.line > 10


def test_stdout_cut_after_the_tickers(trial: Path) -> None:
    lines = (trial / "stdout.txt").read_text().splitlines(keepends=True)
    keep = [i for i, line in enumerate(lines) if " COUNT : " in line and " P50 : " not in line][-1]
    (trial / "stdout.txt").write_text("".join(lines[: keep + 1]))
    err = _error(trial)
    assert "truncated" in str(err) and err.line == keep + 1


def test_garbage_stdout(trial: Path) -> None:
    (trial / "stdout.txt").write_text("segmentation fault\nno results here\n")
    err = _error(trial)
    assert err.path.name == "stdout.txt" and err.line == 2


def test_garbage_line_inside_statistics(trial: Path) -> None:
    text = (trial / "stdout.txt").read_text()
    (trial / "stdout.txt").write_text(text.replace("rocksdb.block.cache.hit COUNT :",
                                                   "rocksdb.block.cache.hit COUNT = oops", 1))
    err = _error(trial)
    expected = 1 + text[: text.index("rocksdb.block.cache.hit COUNT")].count("\n")
    assert err.path.name == "stdout.txt" and err.line == expected


def test_truncated_log(trial: Path) -> None:
    _cut(trial / "LOG", 0.6)
    err = _error(trial)
    assert err.path.name == "LOG" and err.line is not None


def test_truncated_gzipped_log(tmp_path: Path) -> None:
    trial = Path(shutil.copytree(NOBLOOM, tmp_path / "t"))
    _cut(trial / "LOG.gz", 0.5)
    err = _error(trial)
    assert err.path.name == "LOG.gz" and "cannot read" in str(err)


def test_bad_event_json_in_log(trial: Path) -> None:
    text = (trial / "LOG").read_text()
    (trial / "LOG").write_text(text.replace('"event": "flush_finished"', '"event": flush_finished', 1))
    err = _error(trial)
    assert "EVENT_LOG_v1" in str(err)
    assert err.line == 1 + text[: text.index('"event": "flush_finished"')].count("\n")


def test_garbage_log(trial: Path) -> None:
    (trial / "LOG").write_text("not a log\n")
    assert _error(trial).line == 1


def test_options_unknown_unit(trial: Path) -> None:
    path = trial / "OPTIONS-000007"
    text = path.read_text()
    path.write_text(text.replace("write_buffer_size=1048576", "write_buffer_size=1XB"))
    err = _error(trial)
    assert err.path == path and "unknown unit 'XB'" in str(err)
    assert err.line == 1 + text[: text.index("write_buffer_size=1048576")].count("\n")


def test_truncated_options(trial: Path) -> None:
    _cut(trial / "OPTIONS-000007", 0.5)
    err = _error(trial)
    assert err.path.name == "OPTIONS-000007" and err.line is not None


def test_garbage_options_line(trial: Path) -> None:
    path = trial / "OPTIONS-000007"
    path.write_text(path.read_text().replace("  block_size=4096", "  block size 4096"))
    assert "expected 'name=value'" in str(_error(trial))


@pytest.mark.parametrize("name", ["stdout.txt", "LOG", "OPTIONS-000007"])
def test_missing_file(trial: Path, name: str) -> None:
    (trial / name).unlink()
    assert _error(trial).path.name.startswith(name.split("-")[0])


def test_stdout_and_gzipped_stdout_read_alike(trial: Path) -> None:
    with gzip.open(trial / "stdout.txt.gz", "wb") as fh:
        fh.write((trial / "stdout.txt").read_bytes())
    (trial / "stdout.txt").unlink()
    assert RocksDBAdapter().parse_trial(trial).objectives["readrandom_ops_per_sec"] == 43387
