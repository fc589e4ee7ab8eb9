"""The run's store, opened for a command: a file that is not a store, or is damaged where the
command reads, is a one-line error naming it (and the row), not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from boanon.errors import ConfigError
from boanon.store import Store
from boanon.store_lock import WriterLock


@contextmanager
def reading_store(store_file: str) -> Iterator[Store]:
    """The run's store, opened read-only (nothing is created or changed, whatever the file);
    a file that is not a store, or is damaged anywhere the command reads, is a one-line error
    naming the store (and the row), not a traceback."""
    try:
        with Store(store_file, read_only=True) as store:
            yield store
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


@contextmanager
def writing_store(store_file: str) -> Iterator[Store]:
    """An existing run's store opened for writing (``explain --measure`` records trials): never
    created, never beside another writer (a live run), and a file that is not a store is a
    one-line error naming it."""
    try:
        with WriterLock(store_file), Store(store_file, create=False) as store:
            yield store
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None

