"""Hypervolume of a set of points and the hypervolume improvement of new points.

Both rest on one exact decomposition (minimisation convention, reference point ``ref``): the
grid spanned by the front's coordinates in the first d-1 objectives cuts space into columns;
inside a column, the front dominates exactly the points whose last objective is at least the
smallest last objective among the front points that weakly dominate the column's lower corner.
So the dominated region is a set of disjoint boxes, and so is the non-dominated region below
``ref``. That gives the exact hypervolume in O(m^(d-1) * m) for m front points and d objectives
(a sweep in 2-D), and the hypervolume improvement of many points at once by box overlaps.
Where the grid would be too large (many objectives and points) :func:`hypervolume` falls back
to a seeded Monte-Carlo estimate and says so in a warning.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from boanon.multiobjective.pareto import pareto_front

#: Largest (cells x front points) product handled exactly; beyond it the grid is too big.
MAX_GRID = 20_000_000


def _front_below(points: np.ndarray, ref: np.ndarray) -> np.ndarray:
    points = np.asarray(points, dtype=float).reshape(-1, len(ref))
    points = points[np.all(np.isfinite(points), axis=1) & np.all(points < ref, axis=1)]
    return pareto_front(points) if len(points) else points


def _columns(front: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid columns over the first d-1 objectives: (lower, upper, top).

    ``lower``/``upper`` (n_cells, d-1) bound each cell (the first cell of every axis starts at
    -inf); ``top`` (n_cells,) is where the dominated part of the column starts in the last
    objective (``ref[-1]`` where nothing dominates the column).
    """
    d = len(ref)
    axes = [np.concatenate([[-np.inf], np.unique(front[:, k]), [ref[k]]]) for k in range(d - 1)]
    n_cells = int(np.prod([len(a) - 1 for a in axes]))
    if n_cells * max(len(front), 1) > MAX_GRID:
        raise OverflowError(f"{len(front)} front points in {d} objectives need {n_cells} grid cells")
    index = np.array(list(itertools.product(*[range(len(a) - 1) for a in axes])), dtype=int)
    index = index.reshape(n_cells, d - 1)
    lower = np.column_stack([axes[k][index[:, k]] for k in range(d - 1)]) if d > 1 else index
    upper = np.column_stack([axes[k][index[:, k] + 1] for k in range(d - 1)]) if d > 1 else index
    covers = np.all(front[None, :, : d - 1] <= lower[:, None, :], axis=2)  # (n_cells, m)
    top = np.where(covers, front[None, :, d - 1], ref[d - 1]).min(axis=1, initial=ref[d - 1])
    return lower.astype(float), upper.astype(float), top


def hypervolume(points: np.ndarray, ref: np.ndarray, mc_samples: int = 200_000, seed: int = 0) -> float:
    """Volume dominated by ``points`` (minimised) and bounded by ``ref``; exact unless the grid
    is too large, where a Monte-Carlo estimate from ``mc_samples`` uniform draws is returned."""
    ref = np.asarray(ref, dtype=float)
    front = _front_below(points, ref)
    if not len(front):
        return 0.0
    try:
        lower, upper, top = _columns(front, ref)
    except OverflowError as exc:
        warnings.warn(f"{exc}: estimating the hypervolume by Monte Carlo", stacklevel=2)
        return _hypervolume_mc(front, ref, mc_samples, seed)
    finite = np.all(np.isfinite(lower), axis=1)
    widths = np.prod(upper[finite] - lower[finite], axis=1)
    return float(np.sum(widths * (ref[-1] - top[finite])))


def _hypervolume_mc(front: np.ndarray, ref: np.ndarray, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    ideal = front.min(axis=0)
    box = float(np.prod(ref - ideal))
    hits = 0
    for start in range(0, n, 10_000):
        u = ideal + rng.random((min(10_000, n - start), len(ref))) * (ref - ideal)
        hits += int(np.any(np.all(front[None, :, :] <= u[:, None, :], axis=2), axis=1).sum())
    return box * hits / n


def nondominated_boxes(front: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint boxes (lower, upper), each (n_boxes, d), covering the region below ``ref`` that
    ``front`` does not dominate; lower bounds may be -inf."""
    ref = np.asarray(ref, dtype=float)
    front = _front_below(front, ref)
    d = len(ref)
    if not len(front):
        return np.full((1, d), -np.inf), ref[None, :].copy()
    lower, upper, top = _columns(front, ref)
    keep = np.all(upper > lower, axis=1)
    lower = np.column_stack([lower[keep], np.full(keep.sum(), -np.inf)])
    upper = np.column_stack([upper[keep], top[keep]])
    return lower, upper


def hypervolume_improvement(points: np.ndarray, boxes: tuple[np.ndarray, np.ndarray],
                            chunk: int = 4096) -> np.ndarray:
    """Hypervolume each point (minimised, shape (..., d)) would add alone to the front whose
    non-dominated region is ``boxes`` (from :func:`nondominated_boxes`)."""
    lower, upper = boxes
    points = np.asarray(points, dtype=float)
    flat = points.reshape(-1, points.shape[-1])
    out = np.empty(len(flat))
    step = max(1, chunk * 64 // max(len(lower), 1))
    for start in range(0, len(flat), step):
        p = flat[start:start + step, None, :]
        side = np.clip(upper[None] - np.maximum(p, lower[None]), 0.0, None)
        out[start:start + step] = np.prod(side, axis=2).sum(axis=1)
    out[~np.all(np.isfinite(flat), axis=1)] = 0.0
    return out.reshape(points.shape[:-1])
