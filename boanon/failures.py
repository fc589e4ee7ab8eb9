"""Stop a run whose trials keep failing for the same reason.

A misconfigured runner (a typo in an option, a missing program) fails every trial with the same
error; without a guard the loop spends the whole budget on it. :class:`FailureStreak` follows the
trials as they end (pass it, or a callback that calls it, as the loop's ``callback``) and raises
:class:`TooManyFailures` once ``limit`` trials in a row failed with the same cause. The loops
store the trials still running as interrupted when it escapes, so a resumed run, once the cause
is fixed, runs them again and loses nothing.
"""

from __future__ import annotations

import re

from boanon.store import StoredTrial, TrialState

_VARYING = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")
"""What differs between reports of one cause: trial names, pids, times, values."""


def failure_cause(error: str) -> str:
    """``error`` with its numbers blanked: ``worker process 4711 died`` and ``worker process 4712
    died`` have one cause."""
    return _VARYING.sub("#", error)


class TooManyFailures(RuntimeError):
    """``limit`` trials in a row failed with the same cause; the message quotes the last one."""


class ObjectiveNotLogged(TooManyFailures):
    """One failure is enough: the first trial to end logged values, none of them named as an
    objective is (``costs`` for ``cost``). Every later trial would fail the same way, so the run
    stops after one, saying what the trial does log."""


class FailureStreak:
    """Counts the trials that end failed with the same cause, one after the other; ``limit`` of
    them raise :class:`TooManyFailures` (``limit=0``: never)."""

    def __init__(self, limit: int = 5):
        if limit < 0:
            raise ValueError("limit must be >= 0 (0: never stop)")
        self.limit = int(limit)
        self.cause_: str | None = None
        self.count_ = 0

    def __call__(self, trial: StoredTrial) -> None:
        if trial.state is not TrialState.FAILED or trial.error is None:
            self.cause_, self.count_ = None, 0
            return
        cause = failure_cause(trial.error)
        self.count_ = self.count_ + 1 if cause == self.cause_ else 1
        self.cause_ = cause
        if self.limit and self.count_ >= self.limit:
            raise TooManyFailures(f"{self.count_} trials in a row failed with the same error, the "
                                  f"last ({trial.name}): {trial.error}")
