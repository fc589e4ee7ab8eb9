"""Start a ``command`` runner's program so that it, and everything it starts, dies with the runner.

Linux's parent-death signal reaches one process: a program gets it, but what the program
started (a shell script's children, a launcher's workers) lives on past a SIGKILLed runner,
which runs no clean-up. So the runner starts this script (``python -I -S group_guard.py``) in a
session of its own, and the script, before it becomes the program:

1. arms its parent-death signal (SIGKILL; it survives the exec) and exits if the runner died
   before that, as a ``preexec_fn`` would, but with no Python code run in a fork of the runner:
   CPython documents ``preexec_fn`` as unsafe once the runner has threads (the dashboard, Dask);
2. forks the guard off (twice: the program must not find an unknown child of its own), which
   SIGKILLs the process group (this process's pid: it leads it) if the runner dies before it
   writes ``done`` on the guard's pipe; the guard learns of the death from that pipe's end of
   file or, should a copy of its write end have leaked into another process, from a pidfd of
   the runner (opened while the runner was still this process's parent);
3. execs the program (its pid is this one's: the runner waits for it, times it out, kills its
   group as any child's), saying why on the runner's error pipe if it cannot.

It imports only the standard library and :mod:`boanon.lifetime`, so it starts in milliseconds
and cannot be broken by the environment the program is given.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

if __name__ == "__main__":  # run as a script with -I: boanon is found beside this file, last
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from boanon import lifetime  # noqa: E402  (the standard library and ctypes only)

DONE = b"done\n"
"""What the runner writes when the trial is over: the guard then exits, touching nothing."""
KILL_ROUNDS = 50
"""SIGKILLs of the group, 10 ms apart, while it lasts (killed members not yet reaped keep it)."""


def argv(program: list[str], runner: int, lines: int, errors: int) -> list[str]:
    """The command line that starts ``program`` guarded for ``runner`` (a pid), with the read
    end of the guard's pipe (``lines``) and the write end of the error pipe (``errors``)."""
    return [sys.executable, "-I", "-S", __file__, str(runner), str(lines), str(errors), *program]


def _runner_exit(runner: int) -> int | None:
    """A pidfd that becomes readable when ``runner`` exits; None where the kernel has none."""
    try:
        return os.pidfd_open(runner)
    except (AttributeError, OSError):
        return None


def _guard(group: int, lines: int, runner_exit: int | None) -> None:
    """Wait for ``done`` or the runner's death; SIGKILL ``group`` on the death."""
    watched = [lines] if runner_exit is None else [lines, runner_exit]
    received = b""
    while True:
        ready, _, _ = select.select(watched, [], [])
        if lines in ready:  # read first: a runner that wrote DONE and exited at once is done
            chunk = os.read(lines, 64)
            received += chunk
            if DONE in received:
                return
            if chunk:
                continue
        break  # end of file before DONE, or the runner exited
    for _ in range(KILL_ROUNDS):
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.01)


def _fork_guard(lines: int, errors: int, runner_exit: int | None) -> None:
    """Start the guard as a grandchild in a session of its own (out of the group it guards and
    of the terminal's Ctrl-C), and return once the intermediate child has been reaped."""
    group = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                os.close(errors)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # hold none of the trial's files open
                    os.dup2(devnull, fd)
                _guard(group, lines, runner_exit)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def main(args: list[str]) -> None:
    runner, lines, errors = (int(a) for a in args[:3])
    program = args[3:]
    runner_exit = _runner_exit(runner)  # before the check below: then it is the runner's
    lifetime.die_with_parent(signal.SIGKILL, runner)  # exits if the runner already died
    _fork_guard(lines, errors, runner_exit)
    for fd in (lines, runner_exit):
        if fd is not None:
            os.close(fd)
    os.set_inheritable(errors, False)  # closed by a successful exec: the runner's sign
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        os.write(errors, str(exc).encode(errors="replace"))
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
