"""Deterministic choices among near-equal scores.

Two scores that are equal in exact arithmetic come out of another BLAS, processor or thread count
differing in their last bits; a choice made with ``>`` or ``argmax`` between them then depends on
the machine, and a seeded run's path with it. Every decision between scores (the surrogate chosen
by cross-validation, a node's form, candidates ranked by the acquisition) goes through these: a
score wins only by more than a relative :data:`RTOL`, otherwise the earlier candidate (listed
first by its caller: the default, or the simpler) keeps its place.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RTOL = 1e-9
"""Scores closer than this, relative to their size, are a tie (far above last-bit differences,
far below any difference a decision should rest on)."""

_DIGITS = 12  # significant digits kept when ranking many scores (about RTOL's precision)


def better(a: float, b: float, rtol: float = RTOL) -> bool:
    """``a > b`` by more than ``rtol`` of their size (infinities compare as usual)."""
    if not (np.isfinite(a) and np.isfinite(b)):
        return bool(a > b)
    return bool(a - b > rtol * max(abs(a), abs(b)))


def first_best(scores: Sequence[float] | np.ndarray, rtol: float = RTOL) -> int:
    """The index of the earliest score that ties with the highest (see :func:`better`); NaN loses."""
    values = np.asarray(scores, dtype=float)
    if values.size == 0:
        raise ValueError("no scores to choose from")
    values = np.where(np.isnan(values), -np.inf, values)  # a failed score never wins
    top = float(values.max())
    finite = np.isfinite(values) & np.isfinite(top)
    with np.errstate(invalid="ignore"):  # inf - inf where not finite: that branch is not taken
        beaten = np.where(finite, top - values > rtol * np.maximum(abs(top), np.abs(values)), top > values)
    return int(np.argmin(beaten))  # the first score :func:`better` does not beat (one pass: many candidates)


def rounded(values: Sequence[float] | np.ndarray, digits: int = _DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (non-finite ones unchanged)."""
    x = np.asarray(values, dtype=float)
    finite = np.isfinite(x) & (x != 0)
    exponent = np.floor(np.log10(np.abs(np.where(finite, x, 1.0))))
    scale = 10.0 ** (digits - 1 - exponent)
    return np.where(finite, np.round(x * scale) / scale, x)


def stable_order(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Indices that sort ``values`` ascending, ties (to :data:`_DIGITS` digits) in index order: numpy's
    default sort may order exact ties differently on processors with other vector units."""
    return np.argsort(rounded(values), kind="stable")
