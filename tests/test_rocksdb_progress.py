"""Progress from the rocksdb runner (db_bench's per-interval report) and early-stopped trials.

The fixture ``tests/fixtures/rocksdb/readrandom-stopped`` is a real run that the runner stopped
after two report intervals of the measured benchmark (see tests/fixtures/rocksdb/README.md).
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from boanon.adapters.rocksdb import STDOUT_FILE, STOPPED_FILE, RocksDBAdapter
from boanon.adapters.rocksdb.report import REPORT_FILE, parse_report, report_objectives
from boanon.errors import LogParseError
from boanon.parallel import run_trial_task, supports_progress
from boanon.targets.rocksdb import RocksDBRunner

STOPPED = Path(__file__).parent / "fixtures" / "rocksdb" / "readrandom-stopped"
needs_db_bench = pytest.mark.skipif(shutil.which("db_bench") is None,
                                    reason="db_bench not installed (scripts/install-system-deps.sh)")
LONG_READS = {"num": 50000, "reads": 20_000_000, "timeout": 120}
"""A fast load and a read phase of 15 s or more even on a fast idle core (1.5 M reads took about
1.5 s, so the stop after the first one-second interval could come after the phase had ended):
stopping after one interval always cuts it short."""


def test_report_of_a_real_run_gives_the_throughput_of_the_intervals() -> None:
    rows = parse_report(STOPPED / REPORT_FILE)
    assert [secs for secs, _ in rows] == [1.0, 2.0]
    objectives, metrics = report_objectives("readrandom", rows)
    mean = sum(qps for _, qps in rows) / 2  # equal one-second intervals
    assert objectives["readrandom_ops_per_sec"] == pytest.approx(mean)
    assert objectives["readrandom_micros_per_op"] == pytest.approx(1e6 / mean)
    assert metrics == {"readrandom_seconds": 2.0, "readrandom_operations": pytest.approx(2 * mean),
                       "readrandom_report_intervals": 2.0}


def test_adapter_reads_a_stopped_trial_with_its_objectives_from_the_report() -> None:
    record = RocksDBAdapter().parse_trial(STOPPED)
    mean = sum(qps for _, qps in parse_report(STOPPED / REPORT_FILE)) / 2
    assert record.objectives["readrandom_ops_per_sec"] == pytest.approx(mean)
    assert "readrandom_mb_per_sec" not in record.objectives  # the report has no bytes
    assert record.objectives["fillrandom_ops_per_sec"] > 0  # the load finished: from stdout
    assert record.metrics["readrandom_report_intervals"] == 2
    assert "flush_count" in record.metrics and record.params["write_buffer_size"] == 64 * 2**20


def test_the_stopped_marker_is_what_makes_a_cut_log_acceptable(tmp_path: Path) -> None:
    trial = tmp_path / "t"
    shutil.copytree(STOPPED, trial)
    (trial / STOPPED_FILE).unlink()
    with pytest.raises(LogParseError, match="Shutdown complete") as info:
        RocksDBAdapter().parse_trial(trial)
    assert info.value.path == trial / "LOG"


@pytest.mark.parametrize(("text", "line", "match"), [
    ("secs_elapsed,interval_qps\n1,100\nfoo,bar\n", 3, "report line: 'foo,bar'"),
    ("secs_elapsed,interval_qps\n2,100\n1,90\n", 3, "report line: '1,90'"),
    ("secs_elapsed,interval_qps\n1,100,7\n", 2, "report line"),
    ("1,100\n", 1, "expected the header"),
    ("secs_elapsed,interval_qps\n", 1, "no report interval"),
])
def test_a_garbage_report_names_file_and_line(tmp_path: Path, text: str, line: int, match: str) -> None:
    trial = tmp_path / "t"
    shutil.copytree(STOPPED, trial)
    (trial / REPORT_FILE).write_text(text)
    with pytest.raises(LogParseError, match=match) as info:
        RocksDBAdapter().parse_trial(trial)
    assert info.value.path == trial / REPORT_FILE and info.value.line == line


def test_a_stopped_marker_must_name_the_benchmark(tmp_path: Path) -> None:
    trial = tmp_path / "t"
    shutil.copytree(STOPPED, trial)
    (trial / STOPPED_FILE).write_text('{"intervals": 2}\n')
    with pytest.raises(LogParseError, match="benchmark") as info:
        RocksDBAdapter().parse_trial(trial)
    assert info.value.path == trial / STOPPED_FILE


@needs_db_bench
def test_report_flags_only_when_progress_is_followed(tmp_path: Path) -> None:
    runner = RocksDBRunner()
    assert supports_progress(runner) and runner.progress is None
    assert not any(arg.startswith("--report_") for arg in runner.command({}, tmp_path))
    args = runner.command({}, tmp_path, tmp_path / REPORT_FILE)
    assert "--report_interval_seconds=1" in args and f"--report_file={tmp_path / REPORT_FILE}" in args


@needs_db_bench
def test_runner_reports_each_interval_of_the_measured_benchmark(tmp_path: Path) -> None:
    reports: list[tuple[int, float]] = []
    # the load lasts intervals too; the read phase several (400K reads took 1.2-1.9 s under load,
    # and db_bench writes no row for a last partial interval)
    runner = RocksDBRunner(num=200_000, reads=2_000_000, timeout=120)
    runner.progress = lambda step, value: reports.append((step, value))
    runner.run({"bloom_bits": 10}, tmp_path)
    record = RocksDBAdapter().parse_trial(tmp_path)
    assert not (tmp_path / STOPPED_FILE).exists()
    assert [step for step, _ in reports] == list(range(1, len(reports) + 1)) and len(reports) >= 1
    # every interval was of the read phase: its throughput is near the summary's, not the load's
    summary = record.objectives["readrandom_ops_per_sec"]
    assert all(0.2 * summary < value < 5 * summary for _, value in reports)
    assert [value for _, value in reports] == [qps for _, qps in parse_report(tmp_path / REPORT_FILE)]


@needs_db_bench
def test_progress_returning_false_stops_db_bench_and_the_trial_still_parses(tmp_path: Path) -> None:
    steps: list[int] = []

    def reporter(step: int, value: float) -> bool:
        steps.append(step)
        return False  # what the loop's reporter answers for a trial its rule condemns

    runner = RocksDBRunner(**LONG_READS, repeats=2, reference="default")
    # as in an executor's worker process or a run under nohup: db_bench inherits an ignored SIGINT
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        record, stopped = run_trial_task(runner, {"bloom_bits": 10}, str(tmp_path / "t"), None, reporter)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stopped and steps == [1]  # stopped: db_bench was still running when it was interrupted
    assert json.loads((tmp_path / "t" / STOPPED_FILE).read_text()) == {"benchmark": "readrandom",
                                                                      "intervals": 1}
    # it died before its readrandom summary line, and neither the repeat nor the reference ran
    assert not any(line.startswith("readrandom") and "micros/op" in line
                   for line in (tmp_path / "t" / STDOUT_FILE).read_text().splitlines())
    assert not (tmp_path / "t" / "repeat-1").exists() and not (tmp_path / "t" / "reference").exists()
    assert record.metrics["readrandom_report_intervals"] == 1 and record.params["bloom_bits"] == 10
