"""The RocksDB ``OPTIONS-*`` file: the options actually in force, as parameters.

Options keep their plain names (``write_buffer_size``, ``block_size``); a name that occurs in
two sections is prefixed with its section (``db.``, ``cf.``, ``table.``), and options of a
column family other than ``default`` with the family's name. Struct values
(``compression_opts={level=32767;enabled=false;}``) are flattened to ``compression_opts.level``.
Values: ``true``/``false`` -> bool, numbers -> int/float, sizes with a unit (``64MB``) -> bytes,
anything else (``kSnappyCompression``) -> str.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from boanon.adapters.files import find_file, numbered_lines
from boanon.errors import LogParseError
from boanon.table import Value, value_problem

OPTIONS_GLOB = "OPTIONS-*"
COPIED_OPTIONS = "OPTIONS"
_FILE_NAME = re.compile(r"^OPTIONS-(\d+)(?:\.gz)?$")
_SECTION = re.compile(r'^\[(?P<kind>\w+)(?:/(?P<sub>\w+))?(?: "(?P<cf>[^"]*)")?\]\s*$')
_ENTRY = re.compile(r"^\s*(?P<key>\w+)=(?P<value>.*?)\s*$")
_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?$")
_WITH_UNIT = re.compile(r"^(?P<num>[-+]?\d+(?:\.\d+)?)\s*(?P<unit>[A-Za-z]+)$")
UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
         "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40,
         "tib": 1 << 40}
"""Size suffixes RocksDB's option parser accepts (binary multiples), lower-cased."""
_PREFIX = {"DBOptions": "db", "CFOptions": "cf", "TableOptions": "table"}
REQUIRED_SECTIONS = ("Version", "DBOptions", "CFOptions", "TableOptions")
"""RocksDB writes these in this order; a file missing one was cut short."""


def newest_options_file(trial_dir: Path) -> Path | None:
    """The ``OPTIONS-NNNNNN`` file with the highest number (RocksDB keeps the last two)."""
    found = [(int(m[1]), p) for p in trial_dir.glob(OPTIONS_GLOB) if (m := _FILE_NAME.match(p.name))]
    return max(found)[1] if found else None


def options_in_force(trial_dir: Path) -> Path | None:
    """The options file of a trial: the newest ``OPTIONS-NNNNNN`` RocksDB wrote, else a file a
    user copied as ``OPTIONS`` (or ``OPTIONS.gz``)."""
    return newest_options_file(trial_dir) or find_file(trial_dir, COPIED_OPTIONS)


def parse_value(text: str) -> Value:
    """One option value; raises ValueError for a number with an unknown unit, and for one that
    is not finite or beyond 64 bits (``1e400``, ``NaN``: no RocksDB option holds such a value)."""
    value = _value(text)
    problem = value_problem(value)
    if problem:
        raise ValueError(f"{text!r} {problem}")
    return value


def _value(text: str) -> Value:
    if text in ("true", "false"):
        return text == "true"
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if m := _WITH_UNIT.match(text):
        unit = m["unit"].lower()
        if unit not in UNITS:
            raise ValueError(f"unknown unit {m['unit']!r} in {text!r} (expected one of K, KB, KiB, "
                             "M, MB, MiB, G, GB, GiB, T, TB, TiB)")
        value = float(m["num"]) * UNITS[unit]
        return int(value) if value.is_integer() else value
    return text


def _struct(text: str) -> dict[str, str] | None:
    """``{a=1;b=x;}`` -> ``{"a": "1", "b": "x"}``; None for values that are not such a struct."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    items = [item for item in text[1:-1].split(";") if item]
    if not items or not all("=" in item and "{" not in item for item in items):
        return None
    return dict(item.split("=", 1) for item in items)


def parse_options(path: Path) -> dict[str, Value]:
    """Parse an OPTIONS file into ``{name: value}``; errors name the file and line."""
    entries: list[tuple[str, str, Value]] = []  # (section prefix, name, value)
    sections: set[str] = set()
    seen: dict[tuple[str, str], int] = {}  # (section prefix, option) -> line
    prefix: str | None = None
    last, last_text = 0, ""
    for lineno, line in numbered_lines(path):
        last, last_text = lineno, line
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if m := _SECTION.match(line):
            sections.add(m["kind"])
            prefix = _section_prefix(m["kind"], m["cf"])
            continue
        m = _ENTRY.match(line)
        if m is None:
            raise LogParseError(path, f"expected 'name=value' or a [section], got {line.strip()[:80]!r}",
                                lineno)
        if prefix is None:
            raise LogParseError(path, "option outside any [section]", lineno)
        if prefix == "version":
            continue
        key, raw = m["key"], m["value"]
        if (prefix, key) in seen:
            raise LogParseError(path, f"option {key!r} a second time in its section (first on line "
                                f"{seen[prefix, key]})", lineno)
        seen[prefix, key] = lineno
        fields = _struct(raw)
        try:
            if fields is None:
                entries.append((prefix, key, parse_value(raw)))
            else:
                entries += [(prefix, f"{key}.{k}", parse_value(v)) for k, v in fields.items()]
        except ValueError as exc:
            raise LogParseError(path, f"option {key!r}: {exc}", lineno) from None
    missing = [s for s in REQUIRED_SECTIONS if s not in sections]
    if missing:
        raise LogParseError(path, f"no [{missing[0]}] section: truncated, or not a RocksDB OPTIONS file",
                            last or None)
    if last_text.strip():  # RocksDB closes every section with a blank line, the last one too
        raise LogParseError(path, "ends inside its last section, without RocksDB's closing blank "
                            "line: truncated", last)
    counts = Counter(name for _, name, _ in entries)
    return {(name if counts[name] == 1 else f"{section}.{name}"): value
            for section, name, value in entries}


def _section_prefix(kind: str, cf: str | None) -> str:
    if kind == "Version":
        return "version"
    base = _PREFIX.get(kind, kind.lower())
    return base if cf in (None, "default") else f"{cf}.{base}"
