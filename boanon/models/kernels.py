"""The one kernel of BoAnon's Gaussian processes: Matérn-5/2 with a lengthscale per input.

Both GPs use it: the per-node GP (:mod:`boanon.models.gp`) and the coregionalised GP over tasks
(:mod:`boanon.multitask.icm`). Besides the kernel this module holds what their hyperparameter fits
share: the kernel's gradient in the log-lengthscales, the Gaussian negative log marginal
likelihood with the weights of its gradient, and a Gaussian prior on the optimiser's parameters.
Written in numpy rather than taken from scikit-learn's kernels because the optimisers evaluate the
likelihood and its gradient hundreds of times per fit and scikit-learn's generic kernel gradients
cost about ten times as much per evaluation; the ICM GP's task covariance has no scikit-learn
kernel at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky
from scipy.linalg.lapack import dpotri
from scipy.spatial.distance import cdist

SQRT5 = np.sqrt(5.0)


def matern52(A: np.ndarray, B: np.ndarray | None = None, amplitude: float = 1.0) -> np.ndarray:
    """``amplitude`` times the Matérn-5/2 correlation between the rows of ``A`` and ``B`` (``A``
    when None); both already divided by the lengthscales."""
    r = SQRT5 * cdist(A, A if B is None else B)
    return amplitude * (1.0 + r + r**2 / 3.0) * np.exp(-r)


def pairwise_sq(X: np.ndarray) -> np.ndarray:
    """Squared differences per input dimension, shape (n * n, d): row ``i * n + j`` is the pair
    (i, j). Computed once per fit: every likelihood step rescales it."""
    return ((X[:, None, :] - X[None, :, :]) ** 2).reshape(-1, X.shape[1])


class Matern52Gram:
    """The Matérn-5/2 correlation matrix of the training inputs at given log-lengthscales, and its
    gradient in them: one likelihood step of a hyperparameter fit."""

    def __init__(self, sq: np.ndarray, log_lengthscales: np.ndarray):
        n = int(round(np.sqrt(len(sq))))
        self.sq = sq
        self.inv_l2 = np.exp(-2 * log_lengthscales)
        self.r = np.sqrt(np.maximum(sq @ self.inv_l2, 0.0)).reshape(n, n)
        self.e = np.exp(-SQRT5 * self.r)
        self.k = (1 + SQRT5 * self.r + 5.0 / 3.0 * self.r**2) * self.e

    def grad_log_lengthscales(self, W: np.ndarray, scale: float) -> np.ndarray:
        """``scale * d sum(W * k) / d log lengthscales`` for a weight matrix ``W`` (n, n)."""
        M = W * (5.0 / 3.0 * (1 + SQRT5 * self.r) * self.e)
        return scale * (M.ravel() @ self.sq) * self.inv_l2


@functools.lru_cache(maxsize=8)  # n x n each: the sizes of one fit and its folds
def _lower_triangle_weights(n: int) -> np.ndarray:
    """2 below the diagonal, 1 on it, 0 above: the sum of a symmetric matrix times these weights
    is its full sum, read from the lower triangle alone (all LAPACK's inverse fills in)."""
    weights = np.tril(np.full((n, n), 2.0), -1) + np.eye(n)
    weights.setflags(write=False)
    return weights


def gaussian_nll(K: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``0.5 y' K^-1 y + 0.5 log det K`` (without the 2 pi term) and the weights ``W`` of its
    gradient, or None when ``K`` is not positive definite.

    The derivative in any hyperparameter t is ``0.5 * sum(W * dK/dt)``: ``W = K^-1 - alpha alpha'``
    is returned as its lower triangle times :func:`_lower_triangle_weights`, which gives the same
    sum for every symmetric ``dK/dt`` at half a solve (LAPACK's inverse from the factor).
    """
    n = len(y)
    try:
        L = cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    alpha = cho_solve((L, True), y, check_finite=False)
    K_inv, _ = dpotri(L, lower=1)
    W = (K_inv - np.outer(alpha, alpha)) * _lower_triangle_weights(n)
    return 0.5 * y @ alpha + np.log(np.diag(L)).sum(), W


@dataclass(frozen=True)
class GaussianPrior:
    """Independent Gaussian priors on an optimiser's parameter vector (on log hyperparameters they
    are log-normal priors); an infinite ``sd`` leaves that parameter without a prior."""

    mean: np.ndarray
    sd: np.ndarray

    def neg_log_density(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log density (up to a constant) and its gradient in ``theta``."""
        z = (theta - self.mean) / self.sd
        return 0.5 * np.sum(z**2), z / self.sd
