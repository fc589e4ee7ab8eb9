"""Take a program's whole process group down when the runner that started it dies.

Linux's parent-death signal reaches one process: a ``command`` runner's program gets it, but
what the program started (a shell script's children, a launcher's workers) leads on past a
SIGKILLed loop, which runs no clean-up. This guard is started beside the program: it reads the
program's process group from its stdin, then waits. The runner writes ``done`` when the trial
is over; end of file before that (the runner died, with its pipe), or the guard's own
parent-death signal (SIGTERM), SIGKILLs the group.

It runs as a script (``python -I -S group_guard.py``) and imports only the standard library, so
it starts in milliseconds and cannot be broken by the environment the program is given.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

DONE = "done"
"""What the runner writes when the trial is over: the guard then exits, touching nothing."""


def main() -> None:
    group: list[int] = []  # the program's group, once the runner has said which

    def take_down(signum: int = 0, frame: FrameType | None = None) -> None:
        if group:
            try:
                os.killpg(group[0], signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, take_down)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the runner's to act on
    first = sys.stdin.readline().strip()
    if not first.isdigit():
        return  # the runner died (or gave up) before starting the program
    group.append(int(first))
    if sys.stdin.readline().strip() != DONE:
        take_down()


if __name__ == "__main__":
    main()
