"""Reading user-written YAML files with errors that name the file and line.

A YAML file is bounded before it is built: at most :data:`MAX_YAML_BYTES` long, and at most
:data:`MAX_YAML_NODES` values once every alias is expanded (a "billion laughs" file of a few
lines expands to 10^9 values), so no file makes a command hang or fill memory. A key written
twice in one mapping is refused, naming both lines (PyYAML keeps the last one silently).
Numbers in exponent notation read as numbers (``1e-3``, ``1.0e6``), as YAML 1.2 and every
other reader of a config mean them; PyYAML's YAML 1.1 reads them as text.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from boanon.errors import ConfigError

MAX_YAML_BYTES = 4 * 2**20
"""The largest YAML file read (tuning configs and annotations are a few KiB)."""
MAX_YAML_NODES = 100_000
"""The most values a YAML document may hold with its aliases expanded (or written out)."""
MERGE_TAG = "tag:yaml.org,2002:merge"
"""The tag of ``<<``, the merge key: it merges a mapping in, it is no key of its own."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading exponent notation without a dot or an exponent sign
    (``1e-3``, ``1.0e6``) as a float: YAML 1.1 reads them as strings, so ``low: 1e-3`` was text."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                              re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
                              list("-+0123456789."))


def load_yaml(path: str | Path) -> Any:
    """The parsed content of ``path`` (None for an empty file).

    An unreadable, non-regular or oversized file, invalid YAML, a key written twice in a mapping
    or a document that expands past :data:`MAX_YAML_NODES` is a :class:`ConfigError` naming the
    file and, for syntax errors and repeated keys, the line; checking the content's shape is
    the caller's job.
    """
    try:
        text = _read(Path(path))
    except OSError as exc:
        raise ConfigError(path, "file", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "file", f"cannot read: not UTF-8 text ({exc.reason})") from None
    try:
        return _load_bounded(text, path)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "file"
        raise ConfigError(path, where, f"invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise ConfigError(path, "file", "nested too deeply") from None


def _read(path: Path) -> str:
    """The file's text, if it is a regular file of at most :data:`MAX_YAML_BYTES` (checked before
    reading; a FIFO is refused, never opened for a blocking read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(path, "file", "not a regular file: refused")
        data = fh.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(path, "file", f"larger than {MAX_YAML_BYTES // 2**20} MiB: refused")
    return data.decode("utf-8")


def _load_bounded(text: str, path: str | Path) -> Any:
    """Compose the document, count its values with aliases expanded, check no mapping repeats a
    key, and only then build it."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size, written = _expanded_size(node, path)
        if size > MAX_YAML_NODES:
            raise ConfigError(path, "file", _too_many(written))
        _check_unique_keys(node, loader, path)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _too_many(written: int) -> str:
    """Why a document over :data:`MAX_YAML_NODES` is refused: aliases are named only where they
    are to blame (a long list written out has none to look for)."""
    if written > MAX_YAML_NODES:
        return f"holds more than {MAX_YAML_NODES} values: refused"
    return f"expands to more than {MAX_YAML_NODES} values through its aliases (&anchor/*alias): refused"


def _expanded_size(root: yaml.Node, path: str | Path) -> tuple[int, int]:
    """How many values ``root`` holds when every alias is copied out (an alias is the node of
    its anchor, so a node shared ``k`` times counts ``k`` times), and how many are written out
    (each node once); iterative, memoised per node, and a node that contains itself is refused."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            active.discard(key)
            sizes[key] = min(1 + sum(sizes[id(c)] for c in children), MAX_YAML_NODES + 1)
            continue
        if key in active:
            raise ConfigError(path, "file", "an alias refers to a value that contains it: refused")
        active.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in active:
                raise ConfigError(path, "file", "an alias refers to a value that contains it: refused")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)], len(sizes)


def _check_unique_keys(root: yaml.Node, loader: _Loader, path: str | Path) -> None:
    """Refuse a mapping that holds a key twice (compared as built: ``yes`` and ``true`` are one
    key), naming both lines. A merge (``<<: *base``) is not a key: the keys after it override
    the merged ones, as YAML means them to."""
    for mapping in _mappings(root):
        first_line: dict[Any, int] = {}
        for key_node, _ in mapping.value:
            if key_node.tag == MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue
            key, line = loader.construct_object(key_node), key_node.start_mark.line + 1
            if key in first_line:
                raise ConfigError(path, f"line {line}", f"duplicate key {key!r} (also on line "
                                  f"{first_line[key]}): only one of them would be kept")
            first_line[key] = line


def _mappings(root: yaml.Node) -> Iterator[yaml.MappingNode]:
    """Every mapping node under ``root`` once, however many aliases share it."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(_children(node))
            if isinstance(node, yaml.MappingNode):
                yield node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
