"""Take a program's whole process group down when the runner that started it dies.

Linux's parent-death signal reaches one process: a ``command`` runner's program gets it, but
what the program started (a shell script's children, a launcher's workers) lives on past a
SIGKILLed loop, which runs no clean-up. This guard is started beside the program and says
``ready`` once it can act; the runner then starts the program, which writes its process group to
the guard's stdin before it runs (``GroupGuard.arming``: no moment in which a killed runner leaves
it untold), and the runner writes ``done`` when the trial is over. End of file before ``done`` (the runner
died, with its pipe), or the guard's own parent-death signal (SIGTERM), SIGKILLs the group.

It runs as a script (``python -I -S group_guard.py``) and imports only the standard library, so
it starts in milliseconds and cannot be broken by the environment the program is given. All
reading happens in one place, woken by the pipe or by the signal (through a wakeup pipe): a
handler that read the runner's lines itself could miss one the main flow had just taken.
"""

from __future__ import annotations

import os
import select
import signal
import time

READY = "ready"
"""What the guard writes once it can act: the runner starts the program after it."""
DONE = "done"
"""What the runner writes when the trial is over: the guard then exits, touching nothing."""
KILL_ROUNDS = 50
"""SIGKILLs of the group, 10 ms apart, while it lasts (killed members not yet reaped keep it)."""


def _read_available(received: bytearray) -> bool:
    """Append what stdin holds now; False at end of file (the runner's end is closed)."""
    os.set_blocking(0, False)
    try:
        while chunk := os.read(0, 4096):
            received.extend(chunk)
        return False
    except BlockingIOError:
        return True
    finally:
        os.set_blocking(0, True)


def main() -> None:
    received = bytearray()  # the runner's lines so far: the group, then DONE
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGTERM, lambda signum, frame: None)  # the wakeup pipe says it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the runner's to act on
    os.write(1, f"{READY}\n".encode())
    runner_alive = True
    while runner_alive and received.count(b"\n") < 2:
        ready, _, _ = select.select([0, wake_read], [], [])
        runner_alive = _read_available(received) if 0 in ready else True
        runner_alive = runner_alive and wake_read not in ready
    if not runner_alive:
        _read_available(received)  # what it wrote before it died
    said = received.decode(errors="replace").split("\n")[:-1]
    if said and said[0].isdigit() and DONE not in said[1:]:
        for _ in range(KILL_ROUNDS):
            try:
                os.killpg(int(said[0]), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.01)


if __name__ == "__main__":
    main()
