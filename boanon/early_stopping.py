"""Early stopping: release the worker of a trial that is clearly worse than the others so far.

A runner that reports progress (the ``sgd`` runner per iteration) calls ``progress(step, value)``
as it runs; the tuning loop feeds each report to an :class:`EarlyStopper`, which answers whether
the trial should stop now. A stopped trial still leaves a valid log: it is parsed and stored with
status ``stopped``, and the metrics it produced feed the model like any other trial's.

Two rules, both comparing trials at the same step on the *intermediate value*: by default the
running mean of the values reported so far (per-iteration times average into the objective), or
with ``aggregate="last"`` the latest value (a learning curve's loss).

* :class:`MedianStopping` (Golovin et al., "Google Vizier", KDD 2017): stop a trial whose value
  at step ``s`` is worse than the median of the other trials' values at ``s``.
* :class:`SuccessiveHalving`, asynchronous successive halving (Li et al., "A system for massively
  parallel hyperparameter tuning", MLSys 2020): rungs at ``min_resource * reduction_factor**k``
  steps; a trial reaching a rung continues only if it is in the best ``1/reduction_factor`` of
  all trials that reached that rung so far. No trial waits for others: decisions are made with
  whatever has been seen, which is what keeps every worker busy.
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from boanon import units
from boanon.errors import did_you_mean, refuse_unknown_options

AGGREGATES = ("mean", "last")
RULES = ("median", "asha")


class EarlyStopper(ABC):
    """Decides, report by report, whether a trial should stop.

    ``direction`` is the objective's ("minimize"/"maximize"); no trial is stopped before
    ``min_steps`` steps.
    """

    name: str

    def __init__(self, direction: str = "minimize", aggregate: str = "mean", min_steps: int = 1):
        if direction not in ("minimize", "maximize"):
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}")
        if aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
        if min_steps < 1:
            raise ValueError("min_steps must be >= 1")
        self.direction, self.aggregate, self.min_steps = direction, aggregate, int(min_steps)
        self._sign = 1.0 if direction == "minimize" else -1.0
        self._curves: dict[int, list[tuple[int, float]]] = {}  # trial -> (step, score) in order
        self._sums: dict[int, float] = {}
        self.ended: set[int] = set()
        self.stopped: set[int] = set()

    def report(self, trial: int, step: int, value: float) -> bool:
        """Record ``value`` of ``trial`` at ``step``; True when the trial should stop now.

        Reports of a trial must come in increasing step order; a repeated or older step, a
        non-finite value or a report of an ended trial is ignored (False).
        """
        score = self._record(trial, int(step), float(value))
        if score is None or step < self.min_steps or not self._should_stop(trial, int(step), score):
            return False
        self.stopped.add(trial)
        self.end(trial)
        return True

    def _record(self, trial: int, step: int, value: float) -> float | None:
        """Append to the trial's curve; its intermediate value, or None for an ignored report."""
        curve = self._curves.setdefault(trial, [])
        if trial in self.ended or not math.isfinite(value) or (curve and step <= curve[-1][0]):
            return None
        self._sums[trial] = self._sums.get(trial, 0.0) + self._sign * value
        score = self._sums[trial] / (len(curve) + 1) if self.aggregate == "mean" else self._sign * value
        curve.append((step, score))
        return score

    def end(self, trial: int) -> None:
        """The trial finished (or was stopped): its curve stays as a reference for the others."""
        self.ended.add(trial)

    def replay(self, curves: Mapping[int, Iterable[tuple[int, float]]]) -> None:
        """Feed the curves of ended trials (e.g. of a resumed run) without deciding anything."""
        for trial, points in curves.items():
            for step, value in points:
                self._record(trial, int(step), float(value))
            self.end(trial)

    def score(self, trial: int, step: int) -> float | None:
        """``trial``'s intermediate value (lower is better) at the last step <= ``step``, or
        None if it has not reached ``step``."""
        curve = self._curves.get(trial, [])
        if not curve or curve[-1][0] < step:
            return None
        steps = [s for s, _ in curve]
        return curve[int(np.searchsorted(steps, step, side="right")) - 1][1]

    def others_at(self, trial: int, step: int, ended_only: bool = False) -> list[float]:
        """The intermediate values at ``step`` of every other trial that reached it (of the
        ended ones only, if ``ended_only``)."""
        values = (self.score(t, step) for t in self._curves
                  if t != trial and (t in self.ended or not ended_only))
        return [v for v in values if v is not None]

    def first_step(self) -> int:
        """The first step at which the rule may stop a trial."""
        return self.min_steps

    def why_none_stopped(self) -> str:
        """Why no trial was stopped, for a run summary: a rule that never acts is most often
        given trials too short to cut or too few steps, not a field of equally good trials."""
        if self.stopped:
            return (f"the rule asked {units.count(len(self.stopped), 'trial')} to stop, but each had ended "
                    "before the request reached it (a stop lands at the trial's next report after the loop "
                    "reads it, every 0.2 s: trials that run in no real time cannot be cut; the sgd "
                    "runner's pace option gives its iterations real time)")
        reached = [curve[-1][0] for curve in self._curves.values() if curve]
        if not reached:
            return "no trial reported progress"
        if max(reached) < self.first_step():
            return (f"no trial reached step {self.first_step()}, the first the rule judges (the "
                    f"furthest reached {max(reached)})")
        return "no trial was worse than the rule allows at the steps it judged"

    @abstractmethod
    def _should_stop(self, trial: int, step: int, score: float) -> bool:
        """The rule: stop ``trial`` whose intermediate value at ``step`` is ``score``?"""


class MedianStopping(EarlyStopper):
    """Stop when worse than the median of the other trials at the same step.

    Decides only once ``min_trials`` other trials reached that step (the median of one or two
    curves says little); Vizier's rule uses ended trials only, here running ones count too
    (``ended_only=False``) so that a parallel run's first wave can already be pruned.
    """

    name = "median"

    def __init__(self, direction: str = "minimize", aggregate: str = "mean", min_steps: int = 1,
                 min_trials: int = 3, ended_only: bool = False):
        super().__init__(direction, aggregate, min_steps)
        if min_trials < 1:
            raise ValueError("min_trials must be >= 1")
        self.min_trials, self.ended_only = int(min_trials), bool(ended_only)

    def _should_stop(self, trial: int, step: int, score: float) -> bool:
        values = self.others_at(trial, step, self.ended_only)
        return len(values) >= self.min_trials and score > float(np.median(values))


class SuccessiveHalving(EarlyStopper):
    """Asynchronous successive halving: keep the best ``1/reduction_factor`` at every rung.

    Rungs sit at ``min_resource * reduction_factor**k`` steps. The first trials to reach a rung
    have few competitors: while fewer than ``reduction_factor`` values were recorded there, a
    trial continues only if it is the best so far (as Optuna's pruner does).
    """

    name = "asha"

    def __init__(self, direction: str = "minimize", aggregate: str = "mean", min_steps: int = 1,
                 min_resource: int = 1, reduction_factor: int = 3):
        super().__init__(direction, aggregate, min_steps)
        if min_resource < 1 or reduction_factor < 2:
            raise ValueError("need min_resource >= 1 and reduction_factor >= 2")
        self.min_resource, self.reduction_factor = int(min_resource), int(reduction_factor)
        self._next_rung: dict[int, int] = {}

    def first_step(self) -> int:
        return max(self.min_steps, self.min_resource)

    def rung_step(self, rung: int) -> int:
        return self.min_resource * self.reduction_factor ** rung

    def _should_stop(self, trial: int, step: int, score: float) -> bool:
        rung = self._next_rung.get(trial, 0)
        while step >= self.rung_step(rung):  # every rung this report reaches or passes
            at = self.rung_step(rung)
            own = self.score(trial, at)
            rung += 1
            self._next_rung[trial] = rung
            # the values recorded at a rung are the curves of all trials that reached it (so a
            # resumed run's replayed curves count without bookkeeping of their own)
            if not self.promotable(own, [own, *self.others_at(trial, at)]):
                return True
        return False

    def promotable(self, score: float, competing: list[float]) -> bool:
        """Does ``score`` go on past a rung where ``competing`` (``score`` included) were recorded?
        (Public for the job simulator of :mod:`boanon.planning`, which applies the same rule.)"""
        k = max(len(competing) // self.reduction_factor, 1)
        return score <= sorted(competing)[k - 1]


_CLASSES: dict[str, type[EarlyStopper]] = {"median": MedianStopping, "asha": SuccessiveHalving}


def make_stopper(rule: str, direction: str = "minimize", /, **options: Any) -> EarlyStopper:
    """An early stopper by name: ``median`` or ``asha`` (options as their constructors take; the
    direction is the run's, so an option named so is refused as any unknown one: it was "got
    multiple values for argument 'direction'")."""
    if rule not in _CLASSES:
        raise ValueError(f"unknown early-stopping rule {rule!r}{did_you_mean(rule, RULES)}; "
                         f"expected one of {RULES}")
    allowed = [n for n in inspect.signature(_CLASSES[rule]).parameters if n != "direction"]  # the run's
    refuse_unknown_options(sorted(options), allowed, f"early-stopping rule {rule!r}")
    return _CLASSES[rule](direction=direction, **options)


def parse_stopper(spec: str, direction: str = "minimize") -> EarlyStopper:
    """An early stopper from a command-line spec: ``RULE`` or ``RULE:key=value,key=value``
    (``asha:min_resource=5,reduction_factor=3``); errors name the spec."""
    rule, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"early stopping {spec!r}: expected key=value, got {item!r}")
        try:
            options[key.strip()] = _option(rule.strip(), key.strip(), text.strip())
        except ValueError as exc:
            raise ValueError(f"early stopping {spec!r}: {key.strip()}: {exc}") from None
    try:
        return make_stopper(rule.strip(), direction, **options)
    except (TypeError, ValueError) as exc:  # a setting the rule refuses too ("min_steps must be >= 1")
        raise ValueError(f"early stopping {spec!r}: {exc}") from None


def _option(rule: str, key: str, text: str) -> Any:
    """``text`` read as the type the rule's constructor declares for ``key``: ``false`` is no
    true (``bool("false")``), ``2.5`` no whole number (``int`` made it 2), ``1e400`` no number a
    count can hold; an option of no such rule stays text, for :func:`make_stopper` to refuse."""
    parameter = inspect.signature(_CLASSES[rule]).parameters.get(key) if rule in _CLASSES else None
    kind = parameter.annotation if parameter is not None else None
    if kind == "bool":
        if text.lower() not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return text.lower() == "true"
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"expected a whole number, got {text!r}") from None
    return text
