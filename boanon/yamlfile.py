"""Reading user-written YAML files with errors that name the file and line.

A YAML file is bounded before it is built: at most :data:`MAX_YAML_BYTES` long, and at most
:data:`MAX_YAML_NODES` values once every alias is expanded (a "billion laughs" file of a few
lines expands to 10^9 values), so no file makes a command hang or fill memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from boanon.errors import ConfigError

MAX_YAML_BYTES = 4 * 2**20
"""The largest YAML file read (tuning configs and annotations are a few KiB)."""
MAX_YAML_NODES = 100_000
"""The most values a YAML document may hold with its aliases expanded."""


def load_yaml(path: str | Path) -> Any:
    """The parsed content of ``path`` (None for an empty file).

    An unreadable, non-regular or oversized file, invalid YAML or a document that expands past
    :data:`MAX_YAML_NODES` is a :class:`ConfigError` naming the file and, for syntax errors,
    the line; checking the content's shape is the caller's job.
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
    """Compose the document, count its values with aliases expanded, and only then build it."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, path)
        if size > MAX_YAML_NODES:
            raise ConfigError(path, "file", f"expands to more than {MAX_YAML_NODES} values through "
                              "its aliases (&anchor/*alias): refused")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded_size(root: yaml.Node, path: str | Path) -> int:
    """How many values ``root`` holds when every alias is copied out (an alias is the node of
    its anchor, so a node shared ``k`` times counts ``k`` times); iterative, memoised per node,
    and a node that contains itself is refused."""
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
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
