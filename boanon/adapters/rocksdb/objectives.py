"""Objectives a user measured for a trial of an application that embeds RocksDB.

Without db_bench there is no throughput line to read: the application's own figures (requests
per second, a latency percentile) come from a file the user puts in the trial directory,
``objectives.json`` (``{"requests_per_sec": 1250, "p99_ms": 3.2}``) or ``objectives.csv`` (a
header row of names and one row of numbers).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from boanon.adapters.files import find_file, read_json_object, read_text
from boanon.errors import LogParseError

OBJECTIVES_FILES = ("objectives.json", "objectives.csv")


def user_objectives(trial_dir: Path) -> dict[str, float] | None:
    """The objectives file of ``trial_dir`` as ``{name: value}``; None when it has none."""
    found = [p for name in OBJECTIVES_FILES if (p := find_file(trial_dir, name)) is not None]
    if len(found) > 1:
        raise LogParseError(found[1], f"two objectives files ({found[0].name} and {found[1].name}): keep one")
    if not found:
        return None
    path = found[0]
    if path.name.startswith("objectives.json"):
        return {name: _number(path, name, value, None) for name, value in
                read_json_object(path, "of objective name -> number").items()}
    rows = list(csv.reader(io.StringIO(read_text(path))))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if len(rows) != 2 or len(rows[0]) != len(rows[1]):
        raise LogParseError(path, "expected a header row of objective names and one row of numbers "
                            f"of the same length; got {len(rows)} rows", len(rows) or None)
    return {name.strip(): _number(path, name.strip(), cell, 2) for name, cell in zip(*rows, strict=True)}


def _number(path: Path, name: str, value: object, line: int | None) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise LogParseError(path, f"objective {name!r}: expected a finite number, got {value!r}", line)
    return number
