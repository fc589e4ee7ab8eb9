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

from boanon.errors import did_you_mean
from boanon.store import MEASURED, StoredTrial, TrialState

_VARYING = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")
"""What differs between reports of one cause: trial names, pids, times, values."""


def failure_cause(error: str) -> str:
    """``error`` with its numbers blanked: ``worker process 4711 died`` and ``worker process 4712
    died`` have one cause."""
    return _VARYING.sub("#", error)


class TooManyFailures(RuntimeError):
    """``limit`` trials in a row failed with the same cause; the message quotes the last one.
    ``activity`` is what the store's activity note says of the stop (``boanon status``, the
    dashboard): each kind of stop says its own cause."""

    activity = "stopped: too many failures in a row"


class ObjectiveNotLogged(TooManyFailures):
    """One failure is enough: the first trial to end logged values, none of them named as an
    objective is (``costs`` for ``cost``). Every later trial would fail the same way, so the run
    stops after one, saying what the trial does log."""

    activity = "stopped: an objective is not among the values the trials log"


class NotFoldable(TooManyFailures):
    """One trial is enough: its measured objective is one the run's scalarisation cannot fold
    (a product's at or below 0), and every later proposal would fold it again. It ended the run
    in a traceback ("a product scalarisation needs positive objective values") naming neither
    the trial nor the objective; the run stops, and a resume after a fix of the YAML goes on."""

    activity = "stopped: the scalarisation cannot fold a trial's objectives"


_NOT_LOGGED = "it is not among the values the trial logged"


def not_logged_error(name: str, logged: Sequence[str], shown: int = 12) -> str:
    """A trial's error when objective ``name`` is none of the names it ``logged`` while no trial
    of the run has been measured: ``objective 'costs' missing: it is not among the values the
    trial logged (cost, m0, ...); did you mean 'cost'?``. :class:`FailureStreak` stops the run
    at the first one."""
    names = sorted(logged)
    listed = ", ".join(names[:shown]) + (f", ... ({len(names) - shown} more)" if len(names) > shown else "")
    close = difflib.get_close_matches(name, names, n=1)
    return (f"objective {name!r} missing: {_NOT_LOGGED} ({listed})"
            + (f"; did you mean {close[0]!r}?" if close else ""))


class OutputNotLogged(TooManyFailures):
    """The initial design's trials were measured and none logged a constrained output
    (``g0_laod`` for ``g0_load``): every trial was infeasible, and the first model proposal
    ended the run in a traceback (a model of an output without values). The run stops, saying
    what the trials log; a resume may fix the name (:meth:`boanon.store.Store.init_study`)."""


class OutputWatch:
    """Stops a run (:class:`OutputNotLogged`) once ``design`` measured trials logged values and
    none of them the constrained output ``names``: an output a later trial may log alone
    (a switch's metric) is not refused after one trial."""

    def __init__(self, names: Sequence[str], design: int, trials: Sequence[StoredTrial] = ()):
        self.unseen = list(names)
        self.design = max(1, design)
        self.logged: set[str] = set()
        self.measured = 0
        for trial in trials:  # a resumed run's trials count
            self.see(trial)

    def see(self, trial: StoredTrial) -> None:
        if trial.state not in MEASURED or not (trial.metrics or trial.objectives):
            return
        self.measured += 1
        self.logged |= set(trial.metrics) | set(trial.objectives)
        self.unseen = [n for n in self.unseen if n not in self.logged]

    def __call__(self, trial: StoredTrial) -> None:
        self.see(trial)
        if self.unseen and self.measured >= self.design:
            name = self.unseen[0]
            raise OutputNotLogged(f"output {name!r} (outputs:) is not among the values the "
                                  f"{self.measured} measured trials logged"
                                  f"{did_you_mean(name, sorted(self.logged))}: "
                                  "every trial is infeasible without it; fix its name in the YAML "
                                  "(a resume may change outputs no trial logged)")


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
