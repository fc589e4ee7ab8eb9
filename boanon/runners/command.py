"""The ``command`` runner: an external program is the system.

Each argument of the template is formatted with the configuration (``"--x={x}"``) plus
``{trial_dir}``, ``{trial}`` (the trial's name) and ``{config_file}`` (its ``config.json``), and
the program is started with that argument list: never through a shell, so a value can never be
read as shell syntax. Its stdout and stderr are saved in the trial directory, and the adapter
named in the tuning YAML parses whatever the program left there.
"""

from __future__ import annotations

import math
import os
import signal
import string
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from boanon import lifetime
from boanon.adapters.files import CONFIG_FILE, tail
from boanon.errors import InvalidOption
from boanon.runners import group_guard
from boanon.runners.base import Runner, TrialFailed, register_runner
from boanon.table import Value

STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"
BUILTIN_FIELDS = frozenset({"trial_dir", "trial", "config_file"})
"""Template fields that are not parameters."""


def template_fields(command: Sequence[str]) -> set[str]:
    """The ``{field}`` names used in a command template (raises ValueError on bad syntax)."""
    fields = set()
    for arg in command:
        for _, name, _, _ in string.Formatter().parse(str(arg)):
            if name is not None:
                if not name or not name.isidentifier():
                    raise ValueError(f"argument {arg!r}: fields must be parameter names, got {{{name}}}")
                fields.add(name)
    return fields


def _seconds(timeout: Any) -> float | None:
    """The program's time limit (None: none) if it is a positive, finite number of seconds: a
    negative one failed every trial at once as "timed out after -3 s"."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise InvalidOption("timeout", f"expected a positive number of seconds, got {timeout!r}")
    return float(timeout)


@register_runner
class CommandRunner(Runner):
    """Runs ``command`` (a template list) once per trial, killing it after ``timeout`` seconds."""

    name = "command"
    adapter = "table"

    def __init__(self, command: Sequence[str], adapter: str = "table", timeout: float | None = None,
                 env: Mapping[str, str] | None = None, cwd: str | None = None):
        if isinstance(command, str) or not command:
            raise InvalidOption("command", "expected a non-empty list of arguments (no shell string)")
        self.command = [str(a) for a in command]
        try:
            template_fields(self.command)
        except ValueError as exc:
            raise InvalidOption("command", str(exc)) from None
        self.adapter = adapter  # type: ignore[misc]  (per-instance: the YAML names the adapter)
        self.timeout = _seconds(timeout)
        self.env = None if env is None else {**os.environ, **{k: str(v) for k, v in env.items()}}
        self.cwd = cwd

    def arguments(self, config: Mapping[str, Value], trial_dir: Path) -> list[str]:
        """The argument list for one trial."""
        values: dict[str, Any] = {**config, "trial_dir": str(trial_dir), "trial": trial_dir.name,
                                  "config_file": str(trial_dir / CONFIG_FILE)}
        try:
            return [arg.format_map(values) for arg in self.command]
        except KeyError as exc:
            raise TrialFailed(f"command template names {{{exc.args[0]}}}, which is neither a "
                              f"parameter nor one of {sorted(BUILTIN_FIELDS)}") from None

    def run(self, config: dict[str, Value], trial_dir: Path) -> None:
        args = self.arguments(config, trial_dir)
        with open(trial_dir / STDOUT_FILE, "wb") as out, open(trial_dir / STDERR_FILE, "wb") as err, \
                GroupGuard() as guard:
            try:
                proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                        cwd=self.cwd, env=self.env, start_new_session=True,
                                        preexec_fn=guard.arming(os.getpid()))
            except OSError as exc:
                raise TrialFailed(f"cannot start {args[0]!r}: {exc}") from exc
            try:
                status = proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise TrialFailed(f"{args[0]} timed out after {self.timeout:g} s") from None
            except BaseException:  # Ctrl-C or a kill of the loop: take the program down with it
                _kill(proc)
                raise
        if status != 0:
            raise TrialFailed(f"{args[0]} exited with status {status}{_last_line(trial_dir / STDERR_FILE)}")


class GroupGuard:
    """The runner's side of :mod:`boanon.runners.group_guard`: a guard process that SIGKILLs the
    program's process group if this process dies before the trial is over (kept out of the
    terminal's process group: a Ctrl-C is the runner's to act on). The program leads its own
    group, so the runner's own kill (timeout, Ctrl-C) takes its children too; its parent-death
    signal (:func:`boanon.lifetime.dies_with`) reaches the program only."""

    def __enter__(self) -> GroupGuard:
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-S", group_guard.__file__], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
            preexec_fn=lifetime.dies_with(os.getpid(), signal.SIGTERM))
        self._proc.stdout.readline()  # READY (or nothing, if it died): the program may start
        self._proc.stdout.close()
        return self

    def arming(self, parent: int) -> Callable[[], None]:
        """The program's ``preexec_fn``: its parent-death signal, then its process group (its
        pid: it leads its group) told to the guard by the program itself, before it runs. Told
        by the runner once ``Popen`` returned, a runner killed in between (a loaded machine)
        left the group unwatched, and what the program had started ran on."""
        arm, guard = lifetime.dies_with(parent), self._proc.stdin.fileno()

        def preexec() -> None:
            if arm is not None:
                arm()
            # a guard gone (killed by hand) must not take the program with it: SIGPIPE, which
            # Popen has set back to its default here, would end it before it runs
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            try:
                os.write(guard, f"{os.getpid()}\n".encode())  # one line, under PIPE_BUF: in one piece
            except BrokenPipeError:  # the program runs unwatched, as when the runner told the guard
                pass
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        return preexec

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """The trial is over, however it ended: the guard leaves the group alone and exits."""
        self._send(f"{group_guard.DONE}\n")
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        self._proc.wait()

    def _send(self, line: str) -> None:
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except BrokenPipeError:  # the guard is gone (killed by hand): nothing to tell it
            pass


def _kill(proc: subprocess.Popen) -> None:
    """Kill the program and everything it started (it leads its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _last_line(path: Path) -> str:
    """The program's last line of stderr, read from the file's end (a program may write GiBs)."""
    lines = tail(path).strip().splitlines()
    return f": {lines[-1][:300]}" if lines else ""
