"""Parametric forms a node model finds for itself: the part of BOAT's semi-parametric model that
an expert used to write.

A GP over a node's parents interpolates between trials and reverts to the mean away from them;
with the dozen trials of a run's start it cannot say that compute time keeps growing with load
or that a quantity has an interior optimum. A parametric form can: fitted to few points it
extrapolates, and a GP on its residual learns what the form misses (as an expert's ``formula:``
with ``residual: gp``). The library, over the numeric parents (booleans as 0/1, categoricals
left to the residual GP):

- ``affine``: a constant plus a slope per parent, and an indicator ``where(x > 0, 1, 0)`` for a
  parent that is often exactly zero (a fixed cost when a device has any work);
- ``quadratic``: affine plus a square per parent (a bowl: an interior optimum);
- ``hinge``: affine plus one break ``maximum(x - t, 0)`` in one parent (a threshold: a cache
  that stops fitting, a queue that saturates), ``t`` at the parent's quartiles;
- ``power``: ``c * prod(x_j ** b_j)`` for positive values (log-linear: throughput laws).

Every form is linear in its constants once the break is fixed (the power law on a log scale),
so its leave-one-out error comes from one least-squares fit (the hat matrix): forms are chosen
in milliseconds per node, by held-out error with a penalty per constant, and a form is used only
when it explains most of the node's held-out variance; otherwise the node keeps its GP.
Parent values are standardised inside the formula, so the constants are of the node's scale.

A :class:`Form` reaches a node model as an annotated formula (:meth:`Form.node_spec`), the way
an expert's ``formula:`` does; an approximate relation found in the logs
(:mod:`boanon.learners.relations`) is a form too, so fitted forms have one way into the models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from boanon.expressions import Expression
from boanon.leave_one_out import loo_fit
from boanon.nodespec import NodeSpec
from boanon.ties import better

MIN_HELDOUT_R2 = 0.5
"""A form is used only when it explains at least this share of the node's held-out variance."""
PENALTY = 0.02
"""Held-out R^2 a form must gain per extra constant to be preferred over a simpler one."""
ZERO_SHARE = 0.15
"""A parent exactly zero in at least this share of the trials (and nonzero in as many) gets an
indicator term."""
QUANTILES = (0.25, 0.5, 0.75)
MAX_LEVERAGE = 0.99
"""A form whose fit one trial decides alone is not judged (no held-out evidence)."""


@dataclass(frozen=True)
class Form:
    """A fitted parametric form: ``formula`` over the parents and the constants in ``init``."""

    name: str
    formula: str
    init: dict[str, float]
    heldout_r2: float
    parents: tuple[str, ...] = field(default=())

    def describe(self) -> dict:
        return {"form": self.name, "formula": self.formula, "heldout_r2": round(self.heldout_r2, 4)}

    def node_spec(self) -> NodeSpec:
        """The form as a formula node model: its constants free, starting at their fit, and a GP
        on the residual for what the form misses."""
        free = {c: {"init": v} for c, v in self.init.items()}
        return NodeSpec("formula", Expression.parse(self.formula), free, {"residual": "gp"})


@dataclass
class _Term:
    text: str          # the term's expression over parent names
    values: np.ndarray  # its values on the training rows


def choose_form(raw: Mapping[str, np.ndarray], y: np.ndarray, parents: Sequence[str]) -> Form | None:
    """The best form of ``y`` over the numeric ``parents`` (values in ``raw``), or None when no
    form explains at least :data:`MIN_HELDOUT_R2` of its held-out variance."""
    y = np.asarray(y, dtype=float)
    numeric = [p for p in parents if not p.startswith("_")  # the forms' constants are named _c...
               and np.all(np.isfinite(raw[p])) and np.ptp(raw[p]) > 0]
    n = len(y)
    if not numeric or n < 6 or np.ptp(y) == 0:
        return None
    base = [t for p in numeric for t in _base_terms(p, np.asarray(raw[p], dtype=float))]
    candidates: list[tuple[str, list[_Term], bool]] = [("affine", base, False)]
    squares = [_Term(f"({t.text}) ** 2", t.values**2) for t in base if t.text.startswith("(")]
    if squares:
        candidates.append(("quadratic", base + squares, False))
    for t in base:
        if t.text.startswith("("):
            for q in QUANTILES:
                cut = float(np.quantile(t.values, q))
                candidates.append(("hinge", base + [_Term(f"maximum({t.text} - {cut:.6g}, 0)",
                                                           np.maximum(t.values - cut, 0.0))], False))
    if np.min(y) > 0 and all(np.min(raw[p]) > 0 for p in numeric):
        # a sampled parent can fall at or below zero where the trials never did: floored at a
        # tenth of its smallest observed value, so the form stays finite
        logs = [_Term(f"log(maximum({p}, {0.1 * np.min(raw[p]):.6g}) / {_geomean(raw[p]):.6g})",
                      np.log(raw[p] / _geomean(raw[p]))) for p in numeric]
        candidates.append(("power", logs, True))
    best: tuple[float, Form] | None = None
    for name, terms, logged in candidates:
        k = len(terms) + 1
        if n < k + 3:
            continue
        r2, coef = _heldout_r2(np.column_stack([t.values for t in terms] + [np.ones(n)]), y, logged)
        score = r2 - PENALTY * k
        if np.isfinite(r2) and (best is None or better(score, best[0])):  # a tie: the simpler, listed first
            best = (score, _form(name, terms, coef, logged, r2, numeric))
    if best is None or best[1].heldout_r2 < MIN_HELDOUT_R2:
        return None
    return best[1]


def _base_terms(parent: str, x: np.ndarray) -> list[_Term]:
    """The parent standardised (a boolean as is), plus an indicator when often exactly zero."""
    if set(np.unique(x)) <= {0.0, 1.0}:
        return [_Term(parent, x)]
    m, s = float(np.mean(x)), float(np.std(x))
    terms = [_Term(f"({parent} - {m:.6g}) / {s:.6g}", (x - m) / s)]
    zeros = float(np.mean(x == 0))
    if ZERO_SHARE <= zeros <= 1 - ZERO_SHARE:
        terms.append(_Term(f"where({parent} > 0, 1, 0)", (x > 0).astype(float)))
    return terms


def _heldout_r2(X: np.ndarray, y: np.ndarray, logged: bool) -> tuple[float, np.ndarray]:
    """Leave-one-out R^2 (on y's scale) of least squares on ``X``, and the coefficients."""
    target = np.log(y) if logged else y
    coef, _, loo = loo_fit(X, target, MAX_LEVERAGE)
    if loo is None:
        return -np.inf, coef
    pred = np.exp(target - loo) if logged else target - loo  # held-out predictions
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    return float(r2), coef


def _form(name: str, terms: list[_Term], coef: np.ndarray, logged: bool, r2: float,
          parents: list[str]) -> Form:
    names = [f"_c{i}" for i in range(len(terms))]
    linear = " + ".join([f"{c} * {t.text}" for c, t in zip(names, terms, strict=True)] + ["_c"])
    formula = f"exp({linear})" if logged else linear
    init = {**{c: float(v) for c, v in zip(names, coef[:-1], strict=True)}, "_c": float(coef[-1])}
    return Form(name, formula, init, r2, tuple(parents))


def _geomean(x: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(x))))
