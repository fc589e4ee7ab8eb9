"""Where a command writes: an output whose directory is missing, or not writable, is refused as
the command line is read, before any work (a learned graph, a drawn figure), as one error naming
the directory, not a traceback from the writer at the end."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from boanon.storage_urls import sqlite_file


def directory_problem(file: str | Path) -> str | None:
    """Why ``file`` cannot be created where it is named (its directory is missing, is not a
    directory, or is not writable), else None: the one check every output of the command line
    goes through."""
    path = Path(file)
    if path.exists() and not path.is_dir() and os.access(path, os.W_OK):
        return None  # overwritten in place (``-o /dev/null``, a file a user may write)
    parent = path.parent
    if not parent.is_dir():
        return f"{parent} is not a directory" if parent.exists() else f"directory {parent} does not exist"
    return None if os.access(parent, os.W_OK) else f"directory {parent} is not writable"


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one existing file, whatever the spelling (``./run.db``, an
    absolute path, a symbolic or hard link)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # either is missing (a new output), or no path at all
        return False


def refuse_overwriting(output: str | None, option: str, *inputs: str | None) -> None:
    """Refuse an ``output`` that is one of the command's ``inputs``: ``export run.db -o run.db``
    (or ``-o`` a link to it) wrote the table over the run's store, which was lost, and
    ``learn t.csv -o t.csv`` the graph over its table. Checked before any work, as a usage
    error naming ``option``."""
    if output is None or output == "-":
        return
    for source in inputs:
        if source is not None and same_file(output, source):
            alias = "" if output == source else f" ({source})"
            raise click.BadParameter(f"{output} is the file this command reads{alias}: writing it "
                                     "would destroy it; name another file", param_hint=f"'{option}'")


class OutputFile(click.Path):
    """A file a command writes (``-``, standard output, where ``allow_dash``), in a directory
    that exists and is writable."""

    def __init__(self, allow_dash: bool = False) -> None:
        super().__init__(dir_okay=False, allow_dash=allow_dash)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        problem = None if path == "-" else directory_problem(path)
        if problem:
            self.fail(f"{path}: {problem}", param, ctx)
        return path


class StorageURL(click.ParamType):
    """A database URL a command writes into (``export --optuna``): an SQLite one's file must be
    in a directory that exists and is writable; other databases are the server's to refuse."""

    name = "storage_url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        file = sqlite_file(value)
        problem = directory_problem(file) if file is not None else None
        if problem:
            self.fail(f"{value}: {problem}", param, ctx)
        return value
