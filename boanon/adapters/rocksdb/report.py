"""db_bench's periodic report (``--report_interval_seconds --report_file``): the throughput of
each interval of the running benchmark, as ``secs_elapsed,interval_qps`` CSV lines.

db_bench rewrites the file (header first) at the start of every benchmark, so after a run it
holds the last benchmark's intervals. The ``rocksdb`` runner follows it to report progress; a
run it stopped early has no summary line for the measured benchmark, and its objectives come
from the intervals measured so far (:func:`report_objectives`).
"""

from __future__ import annotations

from pathlib import Path

from boanon.adapters.files import numbered_lines
from boanon.errors import LogParseError

REPORT_FILE = "report.csv"
HEADER = "secs_elapsed,interval_qps"


def parse_report_lines(lines: list[tuple[int, str]], path: Path) -> list[tuple[float, float]]:
    """``(secs_elapsed, interval_qps)`` per numbered line; a header line may start the list."""
    rows = []
    for lineno, line in lines:
        if not line.strip() or (not rows and line.strip() == HEADER):
            continue
        try:
            secs_text, qps_text = line.split(",")
            secs, qps = float(secs_text), float(qps_text)
        except ValueError:
            secs = qps = -1.0
        if qps < 0 or secs <= (rows[-1][0] if rows else 0.0):
            raise LogParseError(path, f"not a '{HEADER}' report line: {line[:80]!r}", lineno)
        rows.append((secs, qps))
    return rows


def parse_report(path: Path) -> list[tuple[float, float]]:
    """The intervals of a db_bench report file; an empty report is a :class:`LogParseError`."""
    lines = list(numbered_lines(path))
    if not lines or lines[0][1].strip() != HEADER:
        raise LogParseError(path, f"expected the header {HEADER!r}", 1)
    rows = parse_report_lines(lines, path)
    if not rows:
        raise LogParseError(path, "no report interval: stopped before the first interval ended", 1)
    return rows


def report_objectives(bench: str, rows: list[tuple[float, float]]) -> tuple[dict[str, float],
                                                                             dict[str, float]]:
    """Objectives and metrics of ``bench`` as its stdout summary names them, from the intervals
    measured: throughput is the operations counted over the time they took."""
    starts = [0.0] + [secs for secs, _ in rows[:-1]]
    operations = sum(qps * (secs - start) for start, (secs, qps) in zip(starts, rows, strict=True))
    seconds = rows[-1][0]
    ops_per_sec = operations / seconds
    objectives = {f"{bench}_ops_per_sec": ops_per_sec}
    if ops_per_sec > 0:
        objectives[f"{bench}_micros_per_op"] = 1e6 / ops_per_sec
    metrics = {f"{bench}_seconds": seconds, f"{bench}_operations": operations,
               f"{bench}_report_intervals": float(len(rows))}
    return objectives, metrics
