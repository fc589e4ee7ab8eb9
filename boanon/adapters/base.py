"""The adapter interface and its registry.

An adapter turns one trial directory into a :class:`~boanon.table.TrialRecord`. Adapters are
found by name in a registry that third-party packages extend through the ``boanon.adapters``
entry-point group, so supporting a new system needs no change to BoAnon itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from importlib.metadata import entry_points
from pathlib import Path
from typing import ClassVar, TypeVar

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


A = TypeVar("A", bound=type[Adapter])
_REGISTRY: dict[str, type[Adapter]] = {}


def register_adapter(cls: A) -> A:
    """Class decorator: make an adapter available under its ``name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__qualname__} needs a non-empty class attribute 'name'")
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"an adapter named {name!r} is already registered ({_REGISTRY[name]})")
    _REGISTRY[name] = cls
    return cls


def _load_plugins() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _REGISTRY:
            register_adapter(ep.load())


def available_adapters() -> list[str]:
    """Names of all registered adapters, built-in and plugged in."""
    _load_plugins()
    return sorted(_REGISTRY)


def get_adapter(name: str) -> Adapter:
    """A fresh instance of the adapter called ``name``."""
    _load_plugins()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(
            f"unknown adapter {name!r}; available: {', '.join(sorted(_REGISTRY))}") from None
