"""Conditional-independence test on basis-expanded columns: a partial F-test, batched.

``y`` (one column) is regressed on the conditioning set's columns, and each candidate's columns
(1 for metrics, 2 for numeric parameters: linear + quadratic, k-1 one-hot for categoricals) are
tested for extra explained variance. With one column on each side it is the partial-correlation
t-test (Fisher-z's exact small-sample form); with more it is a mixed test that handles
categoricals and U-shaped parameter effects, which a plain Fisher-z cannot see.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import fdtrc

MIN_DOF = 3
"""Fewer residual degrees of freedom than this and the test is not run (the edge stays)."""


def _orthonormal(m: np.ndarray) -> np.ndarray:
    q, r = np.linalg.qr(m)
    keep = np.abs(np.diag(r)) > 1e-8 * max(1.0, float(np.abs(r).max(initial=0.0)))
    return q[:, keep]


def _residualise(z: np.ndarray | None, *arrays: np.ndarray) -> tuple[int, list[np.ndarray]]:
    """Columns used by ``z`` and each array minus its least-squares fit on ``z`` (ridge-guarded)."""
    if z is None or not z.shape[1]:
        return 0, list(arrays)
    gram = z.T @ z
    gram[np.diag_indices_from(gram)] += 1e-9 * max(1.0, float(np.trace(gram)))
    stacked = np.column_stack(arrays)
    resid = stacked - z @ cho_solve(cho_factor(gram, lower=True, check_finite=False), z.T @ stacked,
                                    check_finite=False)
    widths = np.cumsum([1 if a.ndim == 1 else a.shape[1] for a in arrays])[:-1]
    return z.shape[1], [r[:, 0] if a.ndim == 1 else r
                        for a, r in zip(arrays, np.split(resid, widths, axis=1), strict=True)]


def partial_tests(y: np.ndarray, xs: Sequence[np.ndarray], z: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """P-values and strengths (partial R's square root) of ``y ~ x | z`` for every ``x`` in ``xs``.

    All columns are assumed centred (the intercept is implicit). Tests with too few residual
    degrees of freedom return p = 0 (dependence kept) and strength NaN; a candidate with no
    columns (a categorical with one level in these rows) explains nothing: p = 1, strength 0.
    """
    n = len(y)
    widths = [x.shape[1] for x in xs]
    used, (y, m) = _residualise(z, y, np.hstack(list(xs)))
    used += 1
    yy = float(y @ y)
    pvals = np.zeros(len(xs))
    strength = np.full(len(xs), np.nan)
    if yy <= 1e-12 * n:
        return np.ones(len(xs)), np.zeros(len(xs))
    r2 = np.zeros(len(xs))
    k_arr = np.asarray(widths)
    offsets = np.concatenate([[0], np.cumsum(k_arr)[:-1]])
    for k in np.unique(k_arr[k_arr > 0]):  # every candidate of one width at once: r2 = v' G^-1 v / y'y
        idx = np.flatnonzero(k_arr == k)
        blocks = m[:, (offsets[idx][:, None] + np.arange(k)).ravel()].reshape(n, len(idx), k)
        gram = np.einsum("nmi,nmj->mij", blocks, blocks) + 1e-10 * n * np.eye(k)
        v = np.einsum("nmi,n->mi", blocks, y)
        r2[idx] = np.einsum("mi,mi->m", v, np.linalg.solve(gram, v[..., None])[..., 0]) / yy
    dof = n - used - k_arr
    empty = k_arr == 0
    pvals[empty], strength[empty] = 1.0, 0.0
    ok = (dof >= MIN_DOF) & ~empty
    r2 = np.clip(r2, 0.0, 1.0 - 1e-12)
    fstat = (r2[ok] / k_arr[ok]) / ((1.0 - r2[ok]) / dof[ok])
    pvals[ok] = fdtrc(k_arr[ok], dof[ok], fstat)
    strength[ok] = np.sqrt(r2[ok])
    return pvals, strength


def marginal_tests(ys: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P-values and strengths of ``y ~ x`` for every column ``y`` of ``ys`` at once (level 0)."""
    n = ys.shape[0]
    q = _orthonormal(x)
    k = q.shape[1]
    if k == 0:  # no columns (or only constant ones): nothing to explain with
        return np.ones(ys.shape[1]), np.zeros(ys.shape[1])
    proj = q.T @ ys
    yy = np.einsum("ij,ij->j", ys, ys)
    r2 = np.clip(np.einsum("ij,ij->j", proj, proj) / np.where(yy > 0, yy, 1.0), 0.0, 1.0 - 1e-12)
    dof = n - 1 - k
    if dof < MIN_DOF:
        return np.zeros(ys.shape[1]), np.full(ys.shape[1], np.nan)
    fstat = (r2 / k) / ((1.0 - r2) / dof)
    return fdtrc(k, dof, fstat), np.sqrt(r2)


def block_tests(y: np.ndarray, blocks: Sequence[np.ndarray], z: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """P-values and strengths of each block in ``y ~ blocks + z`` given all the other blocks and ``z``.

    One least-squares fit serves every block: dropping block ``j`` raises the residual sum of
    squares by ``b_j' inv(G^-1_jj) b_j`` (G the Gram matrix, b the coefficients).
    """
    n = len(y)
    if not blocks:
        return np.zeros(0), np.zeros(0)
    used, (y, x) = _residualise(z, y, np.hstack(list(blocks)))
    used += 1
    cols = x.shape[1]
    dof = n - used - cols
    if dof < MIN_DOF:
        return np.zeros(len(blocks)), np.full(len(blocks), np.nan)
    gram = x.T @ x
    gram[np.diag_indices_from(gram)] += 1e-9 * max(1.0, float(np.trace(gram)))
    gram_inv = np.linalg.inv(gram)
    beta = gram_inv @ (x.T @ y)
    rss = float(np.sum((y - x @ beta) ** 2))
    pvals, strength = np.empty(len(blocks)), np.empty(len(blocks))
    start = 0
    for i, b in enumerate(blocks):
        sl = slice(start, start + b.shape[1])
        start += b.shape[1]
        if not b.shape[1]:
            pvals[i], strength[i] = 1.0, 0.0
            continue
        delta = float(beta[sl] @ np.linalg.solve(gram_inv[sl, sl], beta[sl]))
        r2 = min(max(delta / (rss + delta), 0.0), 1.0 - 1e-12) if rss + delta > 0 else 0.0
        fstat = (r2 / b.shape[1]) / ((1.0 - r2) / dof)
        pvals[i] = fdtrc(b.shape[1], dof, fstat)
        strength[i] = np.sqrt(r2)
    return pvals, strength
