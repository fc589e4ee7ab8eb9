"""Named plug-ins: one registry pattern for adapters, runners and learners.

A built-in entry registers itself (a decorator) when its module is imported; the registry imports
its built-in modules on the first lookup, so a base module need not import the modules that
subclass it (``runners/base.py`` used to import ``boanon.targets``, which imports it back). A
third-party package adds entries through the registry's entry-point group, declared in its own
``pyproject.toml``, so supporting a new system needs no change to BoAnon itself.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from boanon.errors import did_you_mean

T = TypeVar("T")
C = TypeVar("C", bound=type)


class Registry(Generic[T]):
    """Entries of one ``kind`` by name: the ``builtins`` modules' and the entry-point ``group``'s."""

    def __init__(self, kind: str, group: str, builtins: Sequence[str] = ()):
        self.kind = kind
        self.group = group
        self.builtins = tuple(builtins)
        self.entries: dict[str, T] = {}
        self._scanned: tuple[str, ...] | None = None  # sys.path at the last entry-point scan

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name``; a second, different entry under one name is an error
        (an entry from outside the built-in modules is checked against all of them)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if not str(getattr(entry, "__module__", "")).startswith(self.builtins):
            self._import_builtins()
        if name in self.entries and self.entries[name] is not entry:
            raise ValueError(f"a {self.kind} named {name!r} is already registered ({self.entries[name]})")
        self.entries[name] = entry
        return entry

    def register_class(self, cls: C) -> C:
        """Class decorator: register ``cls`` under its class attribute ``name``."""
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.__qualname__} needs a non-empty class attribute 'name'")
        self.register(name, cls)  # type: ignore[arg-type]
        return cls

    def names(self) -> list[str]:
        """Every registered name, built-in and plugged in, sorted."""
        self._load()
        return sorted(self.entries)

    def get(self, name: str) -> T:
        """The entry called ``name``; an unknown name is a ValueError naming the closest known
        one (a typo's fix) and listing them all."""
        self._import_builtins()
        if name not in self.entries:
            self._load(rescan=True)
        try:
            return self.entries[name]
        except KeyError:
            known = sorted(self.entries)
            raise ValueError(f"unknown {self.kind} {name!r}{did_you_mean(str(name), known)}; "
                             f"available: {', '.join(known)}") from None

    def _load(self, rescan: bool = False) -> None:
        """Import the built-in modules (once: Python caches modules) and the plug-ins not yet
        registered: the entry points are scanned again when ``sys.path`` changed since the last
        scan, or for a name not found (a package installed while the process runs is found by
        name). A scan reads every installed distribution's metadata, too slow for each of the
        lookups a proposal or an annotations file makes."""
        self._import_builtins()
        path = tuple(sys.path)
        if not rescan and self._scanned == path:
            return
        self._scanned = path
        for ep in entry_points(group=self.group):
            if ep.name not in self.entries:
                loaded: Any = ep.load()
                self.register(ep.name, loaded)

    def _import_builtins(self) -> None:
        for module in self.builtins:
            importlib.import_module(module)
