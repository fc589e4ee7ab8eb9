"""Optuna storage URLs, for the library and the command line alike: opened with an error that
names the URL. Imports neither Optuna nor SQLAlchemy until a storage is opened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from boanon.errors import StorageUnreachable

if TYPE_CHECKING:
    from optuna.storages import BaseStorage


def open_storage(url: str) -> BaseStorage:
    """The Optuna storage at ``url`` (an RDB URL), opened once for every call that follows; one
    that cannot be opened is a :class:`~boanon.errors.StorageUnreachable` naming it."""
    from optuna.storages import RDBStorage
    from sqlalchemy.exc import SQLAlchemyError

    try:
        return RDBStorage(url)
    except ImportError as exc:  # Optuna's own message names no driver: its cause does
        raise StorageUnreachable(url, f"no database driver for it is installed "
                                      f"({exc.__cause__ or exc})") from None
    except SQLAlchemyError as exc:
        raise StorageUnreachable(url, str(getattr(exc, "orig", None) or exc).splitlines()[0]) from None
