"""One writer per store: an OS lock held by the process that runs trials into it.

Two writers on one store run the same configurations twice, and a ``--resume`` beside a live
run takes the live run's running trials for a dead run's. So ``boanon tune`` (fresh or
resumed) and ``explain --measure`` hold :class:`WriterLock` for their whole life, ``boanon
import`` while it writes the new store, and a second writer is refused with a message naming
the live one.

Why ``flock`` on a lock file beside the store (``<store>.lock``), not on the store itself:

- SQLite locks the database with POSIX ``fcntl`` locks, which a process loses on *any* close of
  *any* descriptor of the file; a descriptor of our own on the store would put SQLite's locks at
  the mercy of when we close it. A separate file shares nothing with SQLite's locking, so WAL
  readers and writers inside the run work exactly as before.
- Readers (``status``, ``export``, ``plot``, the dashboard) never open the lock file: they are
  never blocked, and a read-only command still changes nothing on disk.
- ``flock`` belongs to the kernel's open file: it dies with the process (SIGKILL, the OOM
  killer), so a killed run leaves no stale lock, only a stale file that the next writer locks
  and reuses. The descriptor is not inheritable, so trial processes never hold it.

The holder writes who it is (pid, host, start time, command) into the file, for the message
the next writer gets. Releasing removes the file; a writer that locked a file just removed by
its previous holder sees it is no longer the one at the path, and tries again.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from boanon.errors import StoreError

_COMMAND_CHARS = 1000
"""The holder's command line is cut to this length in its description."""
_MAX_INFO = 8192
"""Bytes of the holder's description read back (more than it ever writes)."""


class StoreBusy(StoreError):
    """Another live process is writing to the store."""


def lock_path(store: str | Path) -> Path:
    """The lock file of ``store``: ``run.db.lock`` beside ``run.db``."""
    return Path(f"{store}.lock")


class WriterLock:
    """The exclusive right to write to the store at ``store`` (a context manager).

    :meth:`acquire` never waits: a store already held raises :class:`StoreBusy` naming the
    holder; a place where the lock file cannot be made raises :class:`StoreError` ("cannot open
    it"), as SQLite's own refusal would.
    """

    def __init__(self, store: str | Path):
        self.store = Path(store)
        self.path = lock_path(store)
        self._fd: int | None = None

    def acquire(self) -> WriterLock:
        while self._fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(self.store, "store", f"cannot open it for writing ({exc.strerror}: "
                                 f"{self.path})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise StoreBusy(self.store, "store", f"in use by another run ({holder}); a store has "
                                "one writer at a time: wait for that run to end or stop it (boanon "
                                "status and the other readers work meanwhile)") from None
            if _same_file(fd, self.path):
                self._fd = fd
            else:  # its holder removed it between our open and our lock: lock the new one
                os.close(fd)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, json.dumps(_holder()).encode())
        return self

    def release(self) -> None:
        """Remove the lock file (while still holding it) and unlock."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass  # a stale file is harmless: the next writer locks it
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _holder() -> dict[str, object]:
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(sys.argv)[:_COMMAND_CHARS]}


def _read_holder(fd: int) -> str:
    """``pid 4711 on host db1 since 2026-11-25T23:40:00+00:00: boanon tune ...``, as far as the
    file says it (a holder that has not written it yet is "another process")."""
    try:
        info = json.loads(os.pread(fd, _MAX_INFO, 0))
        return (f"pid {int(info['pid'])} on host {str(info['host'])[:255]} since "
                f"{str(info['since'])[:40]}: {str(info['command'])[:_COMMAND_CHARS]}")
    except (OSError, ValueError, TypeError, KeyError):
        return "another process, which has not said which yet"


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
