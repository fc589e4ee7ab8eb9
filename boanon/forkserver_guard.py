"""Imported by the local executor's fork server only (it is in the server's preload list): the
server and the trial processes it forks die with the tuning loop.

Without it a loop killed by SIGKILL left the fork server running (every trial process holds its
lifeline open) and trial processes still starting up (importing, before their lifeline watch
runs) ran on. With it the kernel kills the server when the loop dies, and a trial process gets
SIGTERM when the server dies (runners clean up; its lifeline adds SIGKILL after a grace period).
"""

from __future__ import annotations

import os
import signal
import sys

from boanon import lifetime


def _in_fork_server() -> bool:
    """Whether this import runs inside :func:`multiprocessing.forkserver.main` (its preload)."""
    from multiprocessing import forkserver

    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is forkserver.main.__code__:
            return True
        frame = frame.f_back
    return False


def _note_forker() -> None:
    global _forker
    _forker = os.getpid()


def _arm_trial() -> None:
    """In a child of the server only: trial processes inherit these hooks, and the programs
    they start (a command runner's) have their own parent-death signal."""
    if _forker == _SERVER:
        lifetime.die_with_parent(signal.SIGTERM, _SERVER)


_SERVER = os.getpid()
_forker = 0
if _in_fork_server() and lifetime.available():
    lifetime.die_with_parent(signal.SIGKILL)
    os.register_at_fork(before=_note_forker, after_in_child=_arm_trial)
