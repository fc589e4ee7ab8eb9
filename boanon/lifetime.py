"""Processes that die with their parent: Linux's parent-death signal, through ``prctl``.

A process killed with SIGKILL runs no clean-up, so what it started must notice by itself; the
kernel's parent-death signal does that without polling. Elsewhere it is unavailable and the
callers fall back on their own means (a lifeline pipe, a process group).
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
