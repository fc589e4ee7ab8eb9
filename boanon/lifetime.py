"""Processes that die with their parent: Linux's parent-death signal, through ``prctl``.

A process killed with SIGKILL runs no clean-up, so what it started must notice by itself; the
kernel's parent-death signal does that without polling. Elsewhere it is unavailable and the
callers fall back on their own means (a lifeline pipe, a process group).

The signal is armed by the child itself, and CPython documents a ``preexec_fn`` (Python code
run between fork and exec) as unsafe once the parent has threads. A program of BoAnon's own arms
it at its start, after the exec (the ``command`` runner's :mod:`boanon.runners.group_guard`,
which then becomes the user's program). One exception keeps :func:`dies_with` as a
``preexec_fn``: db_bench (:mod:`boanon.targets.rocksdb`), a foreign binary that cannot arm it
itself, and whose run is the measurement: an interpreter exec'd first to arm it would be charged
to db_bench's recorded user and system seconds and peak memory (``rusage.json``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

_PRCTL = getattr(ctypes.CDLL(None), "prctl", None) if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def available() -> bool:
    """Whether this platform has a parent-death signal."""
    return _PRCTL is not None


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> bool:
    """Have this process get ``sig`` when its parent dies (when the parent's *thread* that
    started it ends, on Linux). Exits at once if ``parent`` (the pid expected) already died
    before the signal was armed. False where unavailable."""
    if _PRCTL is None:
        return False
    _PRCTL(_PR_SET_PDEATHSIG, int(sig))
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    return True


def dies_with(parent: int, sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` for a child of ``parent`` (this process, usually) that gets ``sig`` when
    ``parent`` dies, however it dies (a SIGKILLed process runs no clean-up); None where
    unavailable. The signal reaches the child only, not what it starts in turn."""
    if not available():
        return None

    def arm() -> None:
        die_with_parent(sig, parent)
    return arm
