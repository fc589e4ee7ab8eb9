"""Optuna storage URLs, for the library and the command line alike: the file an SQLite one
names (one parser: the command line's check of an output's directory and the import's check
that the file exists read the same file as SQLAlchemy will), and opening one with an error that
names the URL. Imports neither Optuna nor SQLAlchemy until a storage is opened."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import unquote

from boanon.errors import StorageUnreachable

if TYPE_CHECKING:
    from optuna.storages import BaseStorage, RDBStorage

SQLITE_URL = re.compile(r"sqlite(?:\+\w+)?://(?:[^/@]*@)?/(?P<file>[^?]*)")
"""An SQLite storage URL (``sqlite:///run.db``, ``sqlite+pysqlite:////abs/run.db?...``)."""


def sqlite_file(url: str) -> str | None:
    """The file an SQLite storage URL names, as SQLAlchemy reads it (percent-escapes decoded:
    ``sqlite:///my%20runs/o.db`` is ``my runs/o.db``); None for another database's URL, for
    anything that is no URL and for an in-memory database."""
    match = SQLITE_URL.match(url)
    file = unquote(match["file"]) if match else ""
    return None if file in ("", ":memory:") else file


@contextmanager
def opened_storage(url: str) -> Iterator[BaseStorage]:
    """The Optuna storage at ``url`` (an RDB URL), opened once for every call inside and closed
    after (its engine's pooled connections held the file open in the process that exported or
    imported); one that cannot be opened is a :class:`~boanon.errors.StorageUnreachable` naming it."""
    storage = _open_storage(url)
    try:
        yield storage
    finally:
        storage.engine.dispose()


def _open_storage(url: str) -> RDBStorage:
    from optuna.storages import RDBStorage
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

    try:
        return RDBStorage(url)
    except ImportError as exc:  # Optuna's own message names no driver: its cause does
        raise StorageUnreachable(url, f"no database driver for it is installed "
                                      f"({exc.__cause__ or exc})") from None
    except ArgumentError as exc:  # no URL at all, or one naming no database SQLAlchemy knows
        raise StorageUnreachable(url, str(exc) if isinstance(exc, NoSuchModuleError) else
                                 "not a storage URL (a sqlite file's is sqlite:///<path>)") from None
    except SQLAlchemyError as exc:
        raise StorageUnreachable(url, str(getattr(exc, "orig", None) or exc).splitlines()[0]) from None
