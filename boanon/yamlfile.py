"""Reading user-written YAML files with errors that name the file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from boanon.errors import ConfigError


def load_yaml(path: str | Path) -> Any:
    """The parsed content of ``path`` (None for an empty file).

    An unreadable file or invalid YAML is a :class:`ConfigError` naming the file and, for
    syntax errors, the line; checking the content's shape is the caller's job.
    """
    try:
        return yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(path, "file", f"cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "file"
        raise ConfigError(path, where, f"invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
