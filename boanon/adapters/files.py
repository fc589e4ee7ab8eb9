"""File helpers shared by adapters: transparent ``.gz`` reading and locating logs in a trial."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from boanon.errors import LogParseError
from boanon.table import value_problem

MAX_TEXT_BYTES = 256 * 2**20
"""The most a log file read whole (JSON, CSV) may hold, decompressed: a larger one is refused,
not read into memory."""
MAX_LINE_BYTES = 2**20
"""The longest line a line-by-line log may have (a sparse or binary file has no line ends)."""
CONFIG_FILE = "config.json"
"""In every trial directory: the configuration that ran, as a JSON object, written before the
runner runs (:func:`boanon.runners.run_config`), whatever the runner."""


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


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading in binary, if it is a regular file: a FIFO, a device or a
    socket is refused naming it (opening a FIFO for reading would block until a writer came).
    Opened with ``O_NONBLOCK`` and checked on the descriptor, so nothing swapped in between the
    check and the open can block either."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise LogParseError(path, f"cannot read: {exc.strerror or exc}") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise LogParseError(path, f"not a regular file ({_kind(mode)}): refused")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a plain file")


@contextlib.contextmanager
def _open_bytes(path: Path) -> Iterator[IO[bytes]]:
    """A regular file's bytes, decompressed when it is a ``.gz``; read errors name the file."""
    try:
        with open_regular(path) as raw:
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw) as fh:
                    yield fh
            else:
                yield raw
    except (OSError, EOFError, zlib.error) as exc:  # zlib: a damaged .gz
        raise LogParseError(path, f"cannot read: {exc}") from exc


def read_text(path: Path) -> str:
    """The whole file as text; ``.gz`` files are decompressed; undecodable bytes and a file
    larger than :data:`MAX_TEXT_BYTES` are errors (the size is checked before it is read). A
    byte-order mark at the start (Excel's "CSV UTF-8", Windows editors) is no text: it is left out."""
    with _open_bytes(path) as fh:
        data = fh.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise LogParseError(path, f"larger than {MAX_TEXT_BYTES // 2**20} MiB: refused")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogParseError(path, f"cannot read: {exc}") from exc


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` pairs, 1-based, without line ends, read one at a time (a log of
    any size costs one line of memory); a line over :data:`MAX_LINE_BYTES` is an error."""
    lineno = 0
    with _open_bytes(path) as fh:
        for raw in iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""):
            if len(raw) > MAX_LINE_BYTES:
                raise LogParseError(path, f"line longer than {MAX_LINE_BYTES // 2**20} MiB "
                                    "(not a text log?)", lineno + 1)
            try:
                text = raw.decode("utf-8-sig" if lineno == 0 else "utf-8")  # a byte-order mark is no text
            except UnicodeDecodeError as exc:
                raise LogParseError(path, f"cannot read: {exc}", lineno + 1) from exc
            for line in text.splitlines():  # as str.splitlines numbers them (a lone \r ends one too)
                lineno += 1
                yield lineno, line


class DuplicateKey(ValueError):
    """A key written twice in one JSON object: ``json`` keeps the last value unsaid, as PyYAML
    did (boanon/yamlfile.py refuses it there too)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook`` that refuses a key written twice (:class:`DuplicateKey`)."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKey(f"key {key!r} appears twice in one object: which value is meant?")
        obj[key] = value
    return obj


def json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line_number, object)`` for each non-blank line of a JSON-lines file; each must be an
    object, with each key once."""
    for lineno, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=unique_keys)
        except json.JSONDecodeError as exc:
            raise LogParseError(path, f"invalid JSON: {exc.msg}", lineno) from None
        except DuplicateKey as exc:
            raise LogParseError(path, str(exc), lineno) from None
        if not isinstance(obj, dict):
            raise LogParseError(path, "each line must be a JSON object", lineno)
        yield lineno, obj


def head(path: Path, n_bytes: int = 4096) -> str:
    """The first bytes of a (possibly gzipped) file as text, for cheap detection."""
    try:
        with _open_bytes(path) as fh:
            return fh.read(n_bytes).decode("utf-8", errors="replace")
    except LogParseError:  # detection only: reading it names the damage
        return ""


def tail(path: Path, n_bytes: int = 4096) -> str:
    """The last bytes of a plain file as text (a seek from the end: a file of any size costs
    ``n_bytes``); "" when it cannot be read."""
    try:
        with open_regular(path) as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - n_bytes))
            return fh.read(n_bytes).decode("utf-8", errors="replace")
    except (OSError, LogParseError):
        return ""


def read_json(path: Path) -> Any:
    """Parse a (possibly gzipped) JSON file; an empty or undecodable file names the file and line,
    a key written twice in one object the file."""
    text = read_text(path)
    if not text.strip():
        raise LogParseError(path, "empty file")
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise LogParseError(path, f"invalid JSON: {exc.msg}", exc.lineno) from exc
    except DuplicateKey as exc:
        raise LogParseError(path, str(exc)) from None


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
    if not path.exists():
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
