"""Ctrl-C and SIGTERM held over a few lines that must happen together.

The loop stores a trial and notes it as its own in two steps (and forgets a trial, then stores
its end). A KeyboardInterrupt between the two left the trial ``running`` in the store for good:
the clean stop did not know it to mark it interrupted, and the next ``--resume`` took it for one
a dead run left running. :func:`held_interrupts` delays such a signal to the end of the block.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def held_interrupts() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held; one that arrived meanwhile is raised again
    when it ends (its own handler then runs: KeyboardInterrupt). Only Python handlers are held
    (a default SIGTERM ends the process with no clean-up to protect), and only in the main
    thread, the one Python runs signal handlers in."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in HELD if callable(signal.getsignal(sig))}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)
