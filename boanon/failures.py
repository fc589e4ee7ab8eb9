"""Stop a run whose trials keep failing for the same reason.

A misconfigured runner (a typo in an option, a missing program) fails every trial with the same
error; without a guard the loop spends the whole budget on it. :class:`FailureStreak` follows the
trials as they end (pass it, or a callback that calls it, as the loop's ``callback``) and raises
:class:`TooManyFailures` once ``limit`` trials in a row failed with the same cause, or at the
first failure that no retry can mend (an objective's name that the trials do not log). The loops
store the trials still running as interrupted when it escapes, so a resumed run, once the cause
is fixed, runs them again and loses nothing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

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


_NOT_LOGGED = "it is not among the values the trial logged"


class OutputNotLogged(TooManyFailures):
    """One trial is enough: the first trial measured does not log a value an output constraint
    bounds (``p99_latncy``). A trial that does not report a bounded value is infeasible, so every
    trial of the run would be, and the models have nothing to learn the constraint from."""


def not_logged_error(name: str, logged: Sequence[str], shown: int = 12, what: str = "objective") -> str:
    """A trial's error when objective ``name`` is none of the names it ``logged`` while no trial
    of the run has been measured: ``objective 'costs' missing: it is not among the values the
    trial logged (cost, m0, ...); did you mean 'cost'?``. :class:`FailureStreak` stops the run
    at the first one. ``what`` names another kind of name (``output constraint``)."""
    names = sorted(logged)
    listed = ", ".join(names[:shown]) + (f", ... ({len(names) - shown} more)" if len(names) > shown else "")
    close = difflib.get_close_matches(name, names, n=1)
    return (f"{what} {name!r} missing: {_NOT_LOGGED} ({listed})"
            + (f"; did you mean {close[0]!r}?" if close else ""))


def check_outputs_logged(trial: StoredTrial, outputs: Sequence[str], measured: int) -> None:
    """Raise :class:`OutputNotLogged` when ``trial``, the run's first measured trial (``measured``
    trials so far, this one included), does not log one of the bounded ``outputs``."""
    if measured != 1 or trial.state not in (TrialState.DONE, TrialState.STOPPED):
        return
    logged = [*trial.objectives, *trial.metrics]
    for name in outputs:
        if name not in logged:
            raise OutputNotLogged(
                f"{trial.name}: {not_logged_error(name, logged, what='output constraint')}; a trial that "
                "does not report a bounded value is infeasible, so every trial would be. A wrong name: "
                "fix it in the YAML's outputs and start again with another --store (a resumed run keeps "
                "its outputs); a value the system should log: have it log it")


def objective_not_logged(error: str | None) -> bool:
    """Whether a trial failed only because an objective's name is none its trial logged
    (:func:`not_logged_error`): the configuration ran, the run's YAML was wrong."""
    return error is not None and _NOT_LOGGED in error


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
        if self.limit and objective_not_logged(trial.error):
            raise ObjectiveNotLogged(f"{trial.name}: {trial.error}; fix the objective's name (a "
                                     "resume may change it while no trial has been measured)")
        cause = failure_cause(trial.error)
        self.count_ = self.count_ + 1 if cause == self.cause_ else 1
        self.cause_ = cause
        if self.limit and self.count_ >= self.limit:
            raise TooManyFailures(f"{self.count_} trials in a row failed with the same error, the "
                                  f"last ({trial.name}): {trial.error}")
