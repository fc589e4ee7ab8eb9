"""db_bench's stdout: per-benchmark throughput, ``--histogram=1`` latencies, ``--statistics=1`` dump.

Throughput (ops/sec, micros/op, MB/s) becomes objectives named by benchmark
(``readrandom_ops_per_sec``); everything else becomes metrics: the per-operation latency
histograms (``readrandom_read_micros_p99``), the tickers (``block_cache_miss``) and the
statistics histograms (``db_get_micros_p99``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from boanon.adapters.files import numbered_lines
from boanon.adapters.rocksdb.names import clean_name
from boanon.errors import LogParseError

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RESULT = re.compile(
    rf"^(?P<bench>\w+)\s*:\s*(?P<micros>{_NUM}) micros/op\s+(?P<ops>{_NUM}) ops/sec\s+"
    rf"(?P<secs>{_NUM}) seconds\s+(?P<n>\d+) operations;\s*(?:(?P<mb>{_NUM}) MB/s)?(?P<rest>.*)$")
_FOUND = re.compile(r"\((\d+) of (\d+) found\)")
_OP_COUNTS = re.compile(r"\b([A-Za-z]+):(\d+)\b")
_HIST_HEADER = re.compile(r"^Microseconds per (\w+):\s*$")
_HIST_LINES = (
    re.compile(rf"^Count: (?P<count>\d+) Average: (?P<avg>{_NUM})\s+StdDev: (?P<stddev>{_NUM})\s*$"),
    re.compile(rf"^Min: (?P<min>{_NUM})\s+Median: (?P<median>{_NUM})\s+Max: (?P<max>{_NUM})\s*$"),
    re.compile(r"^Percentiles: (?P<pct>(?:P[\d.]+: \S+\s*)+)$"),
)
_PERCENTILE = re.compile(rf"P([\d.]+): ({_NUM})")
_BUCKET = re.compile(rf"^[\[(]\s*{_NUM},\s*{_NUM}\s*\]\s+\d+\s+{_NUM}%\s+{_NUM}%\s*#*\s*$")
_TICKER = re.compile(r"^rocksdb\.(?P<name>[\w.]+) COUNT : (?P<count>\d+)\s*$")
_STAT_HIST = re.compile(
    rf"^rocksdb\.(?P<name>[\w.]+) P50 : (?P<p50>{_NUM}) P95 : (?P<p95>{_NUM}) P99 : (?P<p99>{_NUM}) "
    rf"P100 : (?P<p100>{_NUM}) COUNT : (?P<count>\d+) SUM : (?P<sum>\d+)\s*$")


@dataclass
class StdoutResult:
    """What one db_bench stdout holds."""

    objectives: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    benchmarks: list[str] = field(default_factory=list)
    runs_of: Counter[str] = field(default_factory=Counter, repr=False)


def parse_stdout(path: Path, statistics: bool = False) -> StdoutResult:
    """Parse a db_bench stdout file; truncated or foreign content is a :class:`LogParseError`.

    ``statistics``: db_bench ran with ``--statistics=1`` (the LOG says so), so its stdout ends
    with a STATISTICS section, and one without it was cut short (after one of its benchmarks:
    without this, a cut between two benchmarks would pass for a run of fewer benchmarks).
    """
    out = StdoutResult()
    lines = list(numbered_lines(path))
    i = 0
    in_statistics = tickers = stat_hists = 0
    while i < len(lines):
        lineno, line = lines[i]
        if in_statistics and line.startswith("rocksdb."):
            values = statistics_line(path, lineno, line)
            out.metrics.update(values)
            tickers += len(values) == 1
            stat_hists += len(values) > 1
        elif line.startswith("STATISTICS:"):
            in_statistics = lineno
        elif "micros/op" in line:
            _result_line(path, lineno, line, out)
        elif m := _HIST_HEADER.match(line):
            if not out.benchmarks:
                raise LogParseError(path, "latency histogram before any benchmark result", lineno)
            i = _histogram(path, lines, i + 1, f"{out.benchmarks[-1]}_{m[1]}_micros", out.metrics)
            continue
        i += 1
    last = lines[-1][0] if lines else 1
    if not out.benchmarks:
        raise LogParseError(path, "no benchmark result line ('<name> : ... micros/op ... ops/sec'): "
                            "truncated, or not db_bench output", last)
    if statistics and not in_statistics:
        raise LogParseError(path, f"no STATISTICS section after the {out.benchmarks[-1]!r} result, "
                            "though the LOG shows statistics on: truncated", last)
    if in_statistics and not (tickers and stat_hists):
        raise LogParseError(path, f"STATISTICS section (from line {in_statistics}) ends after "
                            f"{tickers} tickers and {stat_hists} histograms: truncated", last)
    out.metrics.update(derived_metrics(out.metrics))
    return out


def statistics_line(path: Path, lineno: int, line: str) -> dict[str, float]:
    """One line of a ``STATISTICS:`` dump (db_bench's stdout or the LOG): a ticker
    (``{"block_cache_miss": 4.0}``) or a histogram (``db_get_micros_p50``... ``_count``, ``_sum``)."""
    line = line.strip()
    if m := _TICKER.match(line):
        return {clean_name(m["name"]): float(m["count"])}
    if m := _STAT_HIST.match(line):
        base = clean_name(m["name"])
        return {f"{base}_{k}": float(v) for k, v in m.groupdict().items() if k != "name"}
    raise LogParseError(path, f"unreadable statistics line {line[:80]!r}", lineno)


def derived_metrics(tickers: dict[str, float]) -> dict[str, float]:
    """Quantities RocksDB counts only implicitly: bloom false positives, the cache hit ratio, and
    blocks read from files per key read (cache misses, which go to a file, per ``Get`` key)."""
    out = {}
    if "bloom_filter_full_positive" in tickers and "bloom_filter_full_true_positive" in tickers:
        out["bloom_filter_false_positive"] = (tickers["bloom_filter_full_positive"]
                                              - tickers["bloom_filter_full_true_positive"])
    lookups = tickers.get("block_cache_hit", 0.0) + tickers.get("block_cache_miss", 0.0)
    if lookups > 0:
        out["block_cache_hit_ratio"] = tickers["block_cache_hit"] / lookups
    if tickers.get("number_keys_read", 0.0) > 0 and "block_cache_miss" in tickers:
        out["block_reads_per_get"] = tickers["block_cache_miss"] / tickers["number_keys_read"]
    return out


def _result_line(path: Path, lineno: int, line: str, out: StdoutResult) -> None:
    m = _RESULT.match(line)
    if m is None:
        raise LogParseError(path, f"unreadable benchmark result line {line[:100]!r}", lineno)
    out.runs_of[m["bench"]] += 1
    runs = out.runs_of[m["bench"]]
    bench = m["bench"] if runs == 1 else f"{m['bench']}_{runs}"  # a benchmark listed twice
    out.benchmarks.append(bench)
    out.objectives[f"{bench}_ops_per_sec"] = float(m["ops"])
    out.objectives[f"{bench}_micros_per_op"] = float(m["micros"])
    if m["mb"] is not None:
        out.objectives[f"{bench}_mb_per_sec"] = float(m["mb"])
    out.metrics[f"{bench}_seconds"] = float(m["secs"])
    out.metrics[f"{bench}_operations"] = float(m["n"])
    if found := _FOUND.search(m["rest"]):
        out.metrics[f"{bench}_keys_found"] = float(found[1])
    for op, count in _OP_COUNTS.findall(m["rest"]):
        out.metrics[f"{bench}_{clean_name(op)}"] = float(count)


def _histogram(path: Path, lines: list[tuple[int, str]], i: int, prefix: str,
               metrics: dict[str, float]) -> int:
    """Read the summary lines and buckets of one ``--histogram=1`` block; returns the next index."""
    for pattern in _HIST_LINES:
        if i >= len(lines):
            raise LogParseError(path, f"latency histogram {prefix!r} is cut short", lines[-1][0])
        lineno, line = lines[i]
        m = pattern.match(line)
        if m is None:
            raise LogParseError(path, f"unreadable latency histogram line {line[:100]!r}", lineno)
        for key, value in m.groupdict().items():
            if key == "pct":
                metrics.update({f"{prefix}_{clean_name('p' + p)}": float(v)
                                for p, v in _PERCENTILE.findall(value)})
            else:
                metrics[f"{prefix}_{key}"] = float(value)
        i += 1
    if i < len(lines) and lines[i][1].startswith("---"):
        i += 1
    while i < len(lines) and lines[i][1][:1] in ("[", "("):
        if not _BUCKET.match(lines[i][1]):
            raise LogParseError(path, f"unreadable histogram bucket {lines[i][1][:100]!r}", lines[i][0])
        i += 1
    return i
