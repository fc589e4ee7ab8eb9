"""The runner interface: run the system for one configuration into a trial log directory.

A runner writes whatever the system writes into ``trial_dir`` and names the adapter that parses
it; BoAnon then reads the trial back through that adapter, so every logged metric feeds the model.
Runners are registered by name in a :class:`~boanon.registry.Registry`, like adapters
(entry-point group ``boanon.runners``).
"""

from __future__ import annotations

import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, ClassVar, NoReturn, TypeVar

from boanon.errors import check_options, check_required, check_types
from boanon.registry import Registry
from boanon.table import Value

ENTRY_POINT_GROUP = "boanon.runners"


class TrialFailed(RuntimeError):
    """The system crashed, timed out or produced no usable output; the message says why."""


def exit_by_sigterm(signum: int, frame: FrameType | None) -> NoReturn:
    """A SIGTERM handler: SystemExit (status 143), so that a runner run in-process kills its
    program and removes its temporary files on the way out: by default Python dies at once, and
    the program runs on, orphaned."""
    sys.exit(128 + signal.SIGTERM)


def exit_on_sigterm() -> None:
    """Turn SIGTERM (``kill``, ``timeout``) into SystemExit for the rest of this process (a
    script's own: :func:`handling_sigterm` is a command's)."""
    signal.signal(signal.SIGTERM, exit_by_sigterm)


@contextmanager
def handling_sigterm(handler: Callable[[int, FrameType | None], Any]) -> Iterator[None]:
    """Inside, SIGTERM calls ``handler``; after, the handler before is back, so that a command
    called in-process (``main([...])`` from a script or a test) leaves its caller's signals as it
    found them. In a thread other than the main one, where Python runs no signal handler, signals
    are left to whoever runs it."""
    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def sigterm_deferred() -> Iterator[None]:
    """Inside, a SIGTERM is held, then sent again on the way out, to whatever handles it there:
    a clean-up that a handler raising :class:`SystemExit` would cut short (a temporary DB half
    removed) ends whole first. A no-op outside the main thread (see :func:`handling_sigterm`)."""
    held: list[int] = []
    try:
        with handling_sigterm(lambda signum, frame: held.append(signum)):
            yield
    finally:
        if held:
            signal.raise_signal(signal.SIGTERM)


class Runner(ABC):
    """Runs one configuration. Constructor keyword arguments come from the YAML ``runner.options``."""

    name: ClassVar[str]
    adapter: ClassVar[str]
    progress_direction: ClassVar[str | None] = None
    """Which way the values a runner's ``progress`` reports are better (``minimize`` for a time,
    ``maximize`` for a throughput): what an early-stopping rule ranks trials by. None: the first
    objective's (a runner that reports the objective itself)."""

    @abstractmethod
    def run(self, config: dict[str, Value], trial_dir: Path) -> bool | None:
        """Run ``config``, leaving the system's logs in ``trial_dir`` (which exists and holds
        only ``config.json``: the configuration is recorded before the runner runs).

        Raise :class:`TrialFailed` when the system fails; the trial is then stored as failed.
        A runner with a ``progress`` callback returns True when the callback cut the run short
        (the trial is then stored as stopped); only the runner knows whether anything was left
        to cut, so a False answer to its last report is not a stop.
        """


#: The built-in targets (``boanon.targets``) register here when the registry first imports them.
RUNNERS: Registry[type[Runner]] = Registry("runner", ENTRY_POINT_GROUP,
                                           builtins=("boanon.runners", "boanon.targets"))
R = TypeVar("R", bound=type[Runner])


def register_runner(cls: R) -> R:
    """Class decorator: make a runner available under its ``name``."""
    return RUNNERS.register_class(cls)


def available_runners() -> list[str]:
    """Names of all registered runners, built-in and plugged in."""
    return RUNNERS.names()


def runner_class(name: str) -> type[Runner]:
    """The runner registered as ``name``; an unknown name is a ValueError with the closest one."""
    return RUNNERS.get(name)


def make_runner(name: str, **options: Any) -> Runner:
    """Instantiate the runner called ``name`` with its options: one misspelt, missing or of
    another type than its parameter's annotation is refused before the constructor runs, as an
    :class:`~boanon.errors.InvalidOption` naming it (the constructor refuses a value so too); a
    whole float for an integer (``num: 1e6``) is passed as that integer."""
    runner = runner_class(name)
    check_options(runner, options, f"runner {name!r}")
    check_required(runner, options, f"runner {name!r}")
    return runner(**check_types(runner, options))
