"""The RocksDB ``LOG``: compaction statistics, write stalls and flush/compaction events.

Three sources, all metrics:

* the last ``** Compaction Stats [default] **`` per-level table of the periodic stats dumps
  (``level1_w_amp``, ``lsm_write_gb``, ``lsm_comp_sec`` for the ``Sum`` row); levels absent
  from the table are empty, so they are reported as zeros up to ``num_levels``;
* the last ``Cumulative stall`` and ``Stalls(count)`` lines (``stall_percent``,
  ``stall_count_level0_slowdown``);
* ``EVENT_LOG_v1`` JSON events summed over the run (``flush_count``, ``flush_output_bytes``,
  ``compaction_count``, ``compaction_output_bytes``, ``sst_data_bytes``) and, from them, the
  exact ``write_amplification`` (bytes flushed and compacted over bytes flushed).

The LOG's options dump also gives the block cache capacity (absent from OPTIONS files), which
is returned as a parameter.

With statistics on (db_bench ``--statistics=1``; an application's
``options.statistics = CreateDBStatistics()``), every periodic stats dump
(``stats_dump_period_sec``) ends with a ``STATISTICS:`` block of tickers and histograms, the
same as db_bench prints: the last block is read (its counts run from the DB's open), with
``uptime_seconds`` from the dump and the rates :data:`RATES` derived from them. That is what
measures an application that embeds RocksDB, where there is no db_bench output.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boanon.adapters.files import numbered_lines
from boanon.adapters.rocksdb.names import clean_name
from boanon.adapters.rocksdb.stdout import derived_metrics, statistics_line
from boanon.errors import LogParseError

_SIZE_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
_COUNT_SUFFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_COUNT = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)$")
_STATS_TITLE = re.compile(r"^\*\* Compaction Stats \[(?P<cf>[^\]]*)\] \*\*\s*$")
_STALL_TIME = re.compile(r"^Cumulative stall: (\d+):(\d+):([\d.]+) H:M:S, ([\d.]+) percent")
_EVENT = "EVENT_LOG_v1 "
_STATISTICS_ON = re.compile(r"^\s*0x0*[1-9a-fA-F]")
"""A non-null pointer after ``Options.statistics:`` (``(nil)`` when statistics are off)."""

EVENT_SUMS: dict[str, dict[str, str]] = {
    "flush_started": {"num_entries": "flush_input_entries", "total_data_size": "flush_input_bytes",
                      "num_memtables": "flush_memtables"},
    "compaction_started": {"input_data_size": "compaction_input_bytes"},
    "compaction_finished": {"total_output_size": "compaction_output_bytes",
                            "num_output_files": "compaction_output_files",
                            "num_input_records": "compaction_input_records",
                            "num_output_records": "compaction_output_records",
                            "compaction_time_micros": "compaction_micros",
                            "compaction_time_cpu_micros": "compaction_cpu_micros"},
}
"""Event -> {JSON field: metric} summed over all events of that kind."""
EVENT_COUNTS = {"flush_finished": "flush_count", "compaction_finished": "compaction_count",
                "trivial_move": "trivial_move_count", "table_file_creation": "sst_files_created",
                "table_file_deletion": "sst_files_deleted"}
TABLE_SUMS = {"data_size": "sst_data_bytes", "index_size": "sst_index_bytes",
              "filter_size": "sst_filter_bytes", "raw_key_size": "sst_raw_key_bytes",
              "raw_value_size": "sst_raw_value_bytes", "num_data_blocks": "sst_data_blocks"}
"""``table_properties`` of every created SST file, summed (flushes and compactions alike)."""


RATES = ("number_keys_read", "number_keys_written", "number_db_seek", "bytes_read", "bytes_written")
"""Tickers also reported per second of uptime (``number_keys_read_per_sec``): an application's
throughput as its own LOG states it."""
_UPTIME = re.compile(r"^Uptime\(secs\): ([\d.]+) total")


@dataclass
class LogResult:
    metrics: dict[str, float] = field(default_factory=dict)
    params: dict[str, float] = field(default_factory=dict)
    statistics: bool = False
    """The options dump shows a statistics object (db_bench ``--statistics=1``): its stdout then
    ends with a STATISTICS section."""


def parse_log(path: Path, num_levels: int = 7, complete: bool = True, statistics: bool = False) -> LogResult:
    """Parse a RocksDB LOG (plain or gzipped); ``complete=False`` accepts the LOG of a run
    interrupted on purpose (stopped early) or of a database still open, which has no shutdown
    lines; ``statistics`` adds the last statistics dump (where no db_bench stdout has them)."""
    lines = list(numbered_lines(path))
    if not any("RocksDB version" in line for _, line in lines[:20]):
        raise LogParseError(path, "not a RocksDB LOG (no 'RocksDB version' in its first lines)",
                            1 if lines else None)
    out = LogResult(metrics=dict.fromkeys([*EVENT_COUNTS.values(), *TABLE_SUMS.values(),
                                           "flush_output_bytes", "flush_output_files",
                                           *(m for sums in EVENT_SUMS.values() for m in sums.values())],
                                          0.0))
    flush_jobs: set[Any] = set()
    table: dict[str, float] | None = None
    dump: dict[str, float] | None = None  # the statistics dump being read
    dumps: list[dict[str, float]] = []
    uptime = None
    i = 0
    while i < len(lines):
        lineno, line = lines[i]
        if dump is not None:
            if line.lstrip().startswith("rocksdb."):
                dump.update(statistics_line(path, lineno, line))
                i += 1
                continue
            dumps.append(dump)
            dump = None
        if statistics and line.endswith("] STATISTICS:"):
            dump = {"uptime_seconds": uptime} if uptime is not None else {}
        elif m := _UPTIME.match(line):
            uptime = float(m[1])
        elif (pos := line.find(_EVENT)) >= 0:
            _event(path, lineno, line[pos + len(_EVENT):], out.metrics, flush_jobs)
        elif (m := _STATS_TITLE.match(line)) and m["cf"] == "default" and i + 1 < len(lines) \
                and lines[i + 1][1].startswith("Level"):
            table, i = _compaction_table(path, lines, i + 1, num_levels)
            continue
        elif m := _STALL_TIME.match(line):
            h, mnt, sec, pct = m.groups()
            out.metrics["stall_seconds"] = int(h) * 3600 + int(mnt) * 60 + float(sec)
            out.metrics["stall_percent"] = float(pct)
        elif (pos := line.find("Options.statistics:")) >= 0:
            out.statistics = _STATISTICS_ON.match(line[pos + len("Options.statistics:"):]) is not None
        elif line.startswith("Stalls(count):"):
            out.metrics.update(_stall_counts(path, lineno, line))
        elif line.strip() == "block_cache_options:" and i + 1 < len(lines):
            key, _, value = lines[i + 1][1].partition(":")
            if key.strip() == "capacity":
                out.params["block_cache_capacity"] = _number(path, lines[i + 1][0], value.strip())
        i += 1
    if complete and not any("Shutdown complete" in line for _, line in lines[-5:]):
        raise LogParseError(path, "does not end with RocksDB's 'Shutdown complete': truncated, or "
                            "copied from a database still open", lines[-1][0])
    if dump is not None:  # the LOG ends with a dump
        dumps.append(dump)
    if dumps:
        out.metrics.update(_statistics_metrics(dumps[-1]))
    if table is not None:
        out.metrics.update(table)
    if out.metrics["flush_output_bytes"] > 0:  # the LOG's W-Amp, exact rather than from GB to 0.1
        flushed = out.metrics["flush_output_bytes"]
        out.metrics["write_amplification"] = (flushed + out.metrics["compaction_output_bytes"]) / flushed
    raw = out.metrics["sst_raw_key_bytes"] + out.metrics["sst_raw_value_bytes"]
    if out.metrics["sst_data_bytes"] > 0:
        out.metrics["sst_compression_ratio"] = raw / out.metrics["sst_data_bytes"]
    return out


def _statistics_metrics(dump: dict[str, float]) -> dict[str, float]:
    """A LOG's last statistics dump with what db_bench's parser derives and the rates per second."""
    out = {**dump, **derived_metrics(dump)}
    uptime = dump.get("uptime_seconds")
    if uptime:
        out.update({f"{t}_per_sec": dump[t] / uptime for t in RATES if t in dump})
    return out


def _event(path: Path, lineno: int, text: str, metrics: dict[str, float], flush_jobs: set[Any]) -> None:
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogParseError(path, f"EVENT_LOG_v1 is not valid JSON ({exc.msg})", lineno) from None
    kind = event.get("event") if isinstance(event, dict) else None
    if not isinstance(kind, str):
        raise LogParseError(path, "EVENT_LOG_v1 without an 'event' name", lineno)
    if kind in EVENT_COUNTS:
        metrics[EVENT_COUNTS[kind]] += 1
    for key, metric in EVENT_SUMS.get(kind, {}).items():
        metrics[metric] += _number(path, lineno, event.get(key, 0))
    if kind == "flush_started":
        flush_jobs.add(event.get("job"))
    elif kind == "table_file_creation":
        if event.get("job") in flush_jobs:
            metrics["flush_output_bytes"] += _number(path, lineno, event.get("file_size", 0))
            metrics["flush_output_files"] += 1
        props = event.get("table_properties", {})
        for key, metric in TABLE_SUMS.items():
            metrics[metric] += _number(path, lineno, props.get(key, 0))


def _compaction_table(path: Path, lines: list[tuple[int, str]], i: int,
                      num_levels: int) -> tuple[dict[str, float], int]:
    """Read one per-level table starting at its header; returns its metrics and the next index."""
    columns = [clean_name(c) for c in lines[i][1].split()[1:]]
    if columns[:2] != ["files", "size"]:
        raise LogParseError(path, f"unexpected compaction stats header {lines[i][1][:80]!r}", lines[i][0])
    values: dict[str, float] = {f"level{n}_{c}": 0.0 for n in range(num_levels)
                                for c in ["files", "size_bytes", *columns[2:]]}
    i += 2  # header and dashes
    seen_sum = False
    while i < len(lines) and lines[i][1].strip():
        lineno, line = lines[i]
        fields = line.split()
        if len(fields) != len(columns) + 2:  # the size is a number and a unit
            raise LogParseError(path, f"compaction stats row has {len(fields)} fields, expected "
                                f"{len(columns) + 2}: {line[:80]!r}", lineno)
        row, files, size, unit, rest = fields[0], fields[1], fields[2], fields[3], fields[4:]
        if row == "Int":  # the interval since the previous dump: depends on dump timing
            i += 1
            continue
        prefix = "lsm" if row == "Sum" else f"level{row[1:]}" if re.fullmatch(r"L\d+", row) else None
        if prefix is None:
            raise LogParseError(path, f"unknown compaction stats row {row!r}", lineno)
        if unit not in _SIZE_UNITS:
            raise LogParseError(path, f"unknown size unit {unit!r} in compaction stats", lineno)
        values[f"{prefix}_files"] = _number(path, lineno, files.split("/")[0])
        values[f"{prefix}_size_bytes"] = _number(path, lineno, size) * _SIZE_UNITS[unit]
        values.update({f"{prefix}_{c}": _number(path, lineno, v) for c, v in zip(columns[2:], rest,
                                                                                     strict=True)})
        seen_sum |= row == "Sum"
        i += 1
    if not seen_sum:
        last = lines[min(i, len(lines) - 1)][0]
        raise LogParseError(path, "compaction stats table ends without its Sum row: truncated", last)
    return values, i


def _stall_counts(path: Path, lineno: int, line: str) -> dict[str, float]:
    """``Stalls(count): 0 level0_slowdown, 3 memtable_compaction, ..., interval 0 total count``."""
    counts = {}
    for item in line.partition(":")[2].split(","):
        count, _, name = item.strip().partition(" ")
        if count.isdigit():
            counts[f"stall_count_{clean_name(name)}"] = float(count)
        elif not item.strip().startswith("interval"):
            raise LogParseError(path, f"unreadable stall count {item.strip()!r}", lineno)
    if not counts:
        raise LogParseError(path, "Stalls(count) line without counts", lineno)
    counts["stall_count_total"] = sum(counts.values())
    return counts


def _number(path: Path, lineno: int, value: Any) -> float:
    """A number from the LOG: plain, or a count with a K/M/G suffix (``399K``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = _COUNT.match(str(value))
    if m is None:
        raise LogParseError(path, f"expected a number, got {value!r}", lineno)
    return float(m[1]) * _COUNT_SUFFIX[m[2]]
