"""The runner interface: run the system for one configuration into a trial log directory.

A runner writes whatever the system writes into ``trial_dir`` and names the adapter that parses
it; BoAnon then reads the trial back through that adapter, so every logged metric feeds the model.
Runners are registered by name, like adapters (entry-point group ``boanon.runners``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from boanon.table import Value

ENTRY_POINT_GROUP = "boanon.runners"


class TrialFailed(RuntimeError):
    """The system crashed, timed out or produced no usable output; the message says why."""


class Runner(ABC):
    """Runs one configuration. Constructor keyword arguments come from the YAML ``runner.options``."""

    name: ClassVar[str]
    adapter: ClassVar[str]

    @abstractmethod
    def run(self, config: dict[str, Value], trial_dir: Path) -> bool | None:
        """Run ``config``, leaving the system's logs in ``trial_dir`` (which exists and is empty).

        Raise :class:`TrialFailed` when the system fails; the trial is then stored as failed.
        A runner with a ``progress`` callback returns True when the callback cut the run short
        (the trial is then stored as stopped); only the runner knows whether anything was left
        to cut, so a False answer to its last report is not a stop.
        """


R = TypeVar("R", bound=type[Runner])
_REGISTRY: dict[str, type[Runner]] = {}


def register_runner(cls: R) -> R:
    """Class decorator: make a runner available under its ``name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__qualname__} needs a non-empty class attribute 'name'")
    _REGISTRY[name] = cls
    return cls


def available_runners() -> list[str]:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _REGISTRY.setdefault(ep.name, ep.load())
    import boanon.targets  # noqa: F401  (registers the built-in targets)

    return sorted(_REGISTRY)


def make_runner(name: str, **options: Any) -> Runner:
    """Instantiate the runner called ``name`` with its options."""
    if name not in available_runners():
        raise ValueError(f"unknown runner {name!r}; available: {', '.join(available_runners())}")
    return _REGISTRY[name](**options)
