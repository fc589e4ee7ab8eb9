"""The adapter interface and its registry.

An adapter turns one trial directory into a :class:`~boanon.table.TrialRecord`. Adapters are
found by name in a :class:`~boanon.registry.Registry` that third-party packages extend through the
``boanon.adapters`` entry-point group, so supporting a new system needs no change to BoAnon itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar, TypeVar

from boanon.registry import Registry
from boanon.table import TrialRecord

ENTRY_POINT_GROUP = "boanon.adapters"


class Adapter(ABC):
    """Parses the logs of one system. Subclasses set ``name`` and implement two methods."""

    name: ClassVar[str]

    @abstractmethod
    def detect(self, trial_dir: Path) -> bool:
        """Whether ``trial_dir`` looks like this system's output (cheap: file names, first lines)."""

    @abstractmethod
    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        """Parse one trial directory; raise :class:`~boanon.errors.LogParseError` on bad input."""


ADAPTERS: Registry[type[Adapter]] = Registry("adapter", ENTRY_POINT_GROUP, builtins=("boanon.adapters",))
A = TypeVar("A", bound=type[Adapter])


def register_adapter(cls: A) -> A:
    """Class decorator: make an adapter available under its ``name``."""
    return ADAPTERS.register_class(cls)


def available_adapters() -> list[str]:
    """Names of all registered adapters, built-in and plugged in."""
    return ADAPTERS.names()


def get_adapter(name: str) -> Adapter:
    """A fresh instance of the adapter called ``name``."""
    return ADAPTERS.get(name)()
