"""File helpers shared by adapters: transparent ``.gz`` reading and locating logs in a trial."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boanon.errors import LogParseError
from boanon.table import value_problem

CONFIG_FILE = "config.json"
"""Written by every runner into its trial directory: the configuration it ran, as a JSON object."""


def find_file(trial_dir: Path, name: str) -> Path | None:
    """``trial_dir/name`` or its ``.gz`` twin, whichever exists."""
    for candidate in (trial_dir / name, trial_dir / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def require_file(trial_dir: Path, name: str) -> Path:
    """Like :func:`find_file` but a missing file is a :class:`LogParseError`."""
    path = find_file(trial_dir, name)
    if path is None:
        raise LogParseError(trial_dir / name, "file not found (nor a .gz of it)")
    return path


def read_text(path: Path) -> str:
    """The whole file as text; ``.gz`` files are decompressed; undecodable bytes are an error."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        return path.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:  # zlib: a damaged .gz
        raise LogParseError(path, f"cannot read: {exc}") from exc


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` pairs, 1-based, without trailing newlines."""
    yield from enumerate(read_text(path).splitlines(), start=1)


def json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line_number, object)`` for each non-blank line of a JSON-lines file; each must be an object."""
    for lineno, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LogParseError(path, f"invalid JSON: {exc.msg}", lineno) from None
        if not isinstance(obj, dict):
            raise LogParseError(path, "each line must be a JSON object", lineno)
        yield lineno, obj


def head(path: Path, n_bytes: int = 4096) -> str:
    """The first bytes of a (possibly gzipped) file as text, for cheap detection."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as fh:
            return fh.read(n_bytes).decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error):  # detection only: reading it names the damage
        return ""


def read_json(path: Path) -> Any:
    """Parse a (possibly gzipped) JSON file; an empty or undecodable file names the file and line."""
    text = read_text(path)
    if not text.strip():
        raise LogParseError(path, "empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogParseError(path, f"invalid JSON: {exc.msg}", exc.lineno) from exc


def read_json_object(path: Path, expected: str) -> dict[str, Any]:
    """Like :func:`read_json`, for a file that must hold one object (``expected`` says of what)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise LogParseError(path, f"expected a JSON object {expected}")
    return data


def read_config(trial_dir: Path) -> dict[str, Any]:
    """The configuration a runner recorded in ``trial_dir/config.json`` ({} when absent); every
    value must be a number, string or boolean, and a number finite and within 64 bits."""
    path = trial_dir / CONFIG_FILE
    if not path.is_file():
        return {}
    config = read_json_object(path, "of parameter values")
    for key, value in config.items():
        problem = value_problem(value) if isinstance(value, (int, float, str)) else \
            f"is a JSON {type(value).__name__}, not a number, string or boolean"
        if problem:
            raise LogParseError(path, f"parameter {key!r}: {value!r} {problem}",
                                _line_of(read_text(path), json.dumps(key)))
    return config


def _line_of(text: str, needle: str) -> int | None:
    """The first line of ``text`` containing ``needle`` (1-based), to point an error at it."""
    return next((n for n, line in enumerate(text.splitlines(), start=1) if needle in line), None)


def write_config(trial_dir: Path, config: dict) -> None:
    """Record the configuration a runner is about to run (see :data:`CONFIG_FILE`)."""
    (trial_dir / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
