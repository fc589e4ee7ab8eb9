"""Small guarded Gaussian processes: the building block of every learned node model.

scikit-learn's maximum-likelihood fit occasionally returns an overconfident model on few points
(very short lengthscales and almost no noise: it interpolates the data and predicts nonsense
elsewhere). Two guards keep fits sane: bounds on every hyperparameter, and log-normal priors on
the lengthscales (dimension-scaled, as in Hvarfner et al. 2024, "Vanilla Bayesian optimization
performs great in high dimensions") and the amplitude, added to the marginal likelihood (MAP
instead of ML). Inputs are expected in roughly unit scale and targets are standardised
(``normalize_y``), so one set of bounds and priors fits all nodes.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.linalg.lapack import dpotri
from scipy.optimize import minimize
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Kernel, Matern, WhiteKernel

from boanon.models.threads import single_blas_thread

LENGTHSCALE_BOUNDS = (2e-2, 1e2)
NOISE_BOUNDS = (1e-6, 1.0)
AMPLITUDE_BOUNDS = (1e-2, 1e2)
PRIOR_SD = np.sqrt(3.0)
LENGTHSCALE_PRIOR_LOC = -0.3
AMPLITUDE_PRIOR_SD = 1.5
SQRT5 = np.sqrt(5.0)


def _lengthscale_prior_mean(d: int) -> float:
    """Log-lengthscale prior mean: longer lengthscales in more dimensions (Hvarfner et al.).

    Centred on 0.74 sqrt(d) (0.74 in 1-D, 2.1 in 8-D) rather than Hvarfner's 4.1 sqrt(d): their
    longer lengthscales suit high-dimensional problems with few relevant inputs, while a node
    here has a few parents that all matter. On synthetic systems the shorter prior cut the
    regret of structured runs from 0.83 to 0.33 and kept held-out predictions calibrated
    (docs/models.md has the comparison).
    """
    return float(LENGTHSCALE_PRIOR_LOC + 0.5 * np.log(max(d, 1)))


@functools.lru_cache(maxsize=64)
def _prior(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian prior mean and sd of theta (log amplitude, log lengthscales, log noise).

    The noise has no prior, only bounds: a log-normal noise prior around e^-4 (BoTorch's current
    default) made the optimiser's regret worse on synthetic systems (benchmarks in docs/models.md).
    Cached (read-only arrays): the likelihood asks for it at every optimiser step.
    """
    mean = np.concatenate([[0.0], np.full(d, _lengthscale_prior_mean(d)), [0.0]])
    sd = np.concatenate([[AMPLITUDE_PRIOR_SD], np.full(d, PRIOR_SD), [np.inf]])
    mean.setflags(write=False)
    sd.setflags(write=False)
    return mean, sd


@functools.lru_cache(maxsize=8)  # n x n each: the sizes of one fit and its folds
def _lower_triangle_weights(n: int) -> np.ndarray:
    """2 below the diagonal, 1 on it, 0 above: the sum of a symmetric matrix times these weights
    is its full sum, read from the lower triangle alone (all LAPACK's inverse fills in)."""
    weights = np.tril(np.full((n, n), 2.0), -1) + np.eye(n)
    weights.setflags(write=False)
    return weights


def _pairwise_sq(X: np.ndarray) -> np.ndarray:
    """Squared differences per input dimension, shape (n * n, d): row ``i * n + j`` is the pair."""
    return ((X[:, None, :] - X[None, :, :]) ** 2).reshape(-1, X.shape[1])


def neg_log_posterior(theta: np.ndarray, sq: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log marginal likelihood + log prior (:func:`_prior`), and its gradient in theta.

    ``theta = [log amplitude, log lengthscales (d), log noise]`` of the kernel of :func:`make_kernel`;
    ``sq`` from :func:`_pairwise_sq`, ``y`` standardised. Written out in numpy because
    scikit-learn's generic kernel gradients cost about ten times as much per evaluation; the
    optimiser calls it hundreds of times per fit, so every step avoids a copy it can.
    """
    n, d = len(y), sq.shape[1]
    amp, inv_l2, noise = np.exp(theta[0]), np.exp(-2 * theta[1:1 + d]), np.exp(theta[-1])
    r = np.sqrt(np.maximum(sq @ inv_l2, 0.0)).reshape(n, n)
    e = np.exp(-SQRT5 * r)
    k0 = (1 + SQRT5 * r + 5.0 / 3.0 * r**2) * e
    K = amp * k0
    K.flat[::n + 1] += noise + 1e-8
    try:
        L = cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return 1e25, np.zeros_like(theta)
    alpha = cho_solve((L, True), y, check_finite=False)
    K_inv, _ = dpotri(L, lower=1)  # the lower triangle of K^-1 from the factor: half a solve
    W = (K_inv - np.outer(alpha, alpha)) * _lower_triangle_weights(n)  # symmetric: lower half
    value = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * n * np.log(2 * np.pi)
    grad = np.empty_like(theta)
    grad[0] = 0.5 * amp * np.sum(W * k0)
    M = W * (5.0 / 3.0 * (1 + SQRT5 * r) * e)
    grad[1:1 + d] = 0.5 * amp * (M.ravel() @ sq) * inv_l2
    grad[-1] = 0.5 * noise * np.trace(W)
    mean, sd = _prior(d)
    z = (theta - mean) / sd
    return float(value + 0.5 * np.sum(z**2)), grad + z / sd


def _map_optimizer(X: np.ndarray, y: np.ndarray) -> Callable:
    """An sklearn ``optimizer`` that maximises the marginal likelihood times the lengthscale prior.

    sklearn hands it its own objective; it uses the faster :func:`neg_log_posterior` on the same
    (standardised) data instead, which is why it closes over ``X`` and ``y``. It stops at a relative
    change of 1e-6 in the objective (L-BFGS-B's default is 2e-9): on 100 points in 20-D that took
    a third fewer steps and moved the log posterior by under 0.003 nats.
    """
    sq = _pairwise_sq(X)
    ys = _standardise(y)[0]

    def optimizer(obj_func: Callable, initial_theta: np.ndarray, bounds: np.ndarray):
        res = minimize(neg_log_posterior, initial_theta, args=(sq, ys), method="L-BFGS-B", jac=True,
                       bounds=bounds, options={"maxiter": 100, "ftol": 1e-6})
        return res.x, res.fun

    return optimizer


def make_kernel(d: int) -> Kernel:
    """Amplitude * Matern-5/2 with one lengthscale per input + white noise."""
    init = float(np.exp(_lengthscale_prior_mean(d)))
    return (ConstantKernel(1.0, AMPLITUDE_BOUNDS)
            * Matern(np.full(d, init), LENGTHSCALE_BOUNDS, nu=2.5)
            + WhiteKernel(1e-2, NOISE_BOUNDS))


def _standardise(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    mean, spread = float(np.mean(y)), float(np.std(y))
    spread = spread if spread > 1e-12 * max(1.0, abs(mean)) else 1.0
    return (y - mean) / spread, mean, spread


class GP:
    """A fitted GP: scikit-learn finds the hyperparameters, a cached factorisation predicts fast.

    ``GP.fit`` runs :class:`GaussianProcessRegressor` (kernel of :func:`make_kernel`, the MAP
    optimiser above, ``normalize_y``). Predictions and :meth:`refit` (new data, same
    hyperparameters: cross-validation folds, fantasised pending points) use a cached inverse
    Cholesky factor: with many Monte-Carlo inputs a matrix product is several times faster
    than scikit-learn's per-call triangular solve, and a refit skips its parameter validation.
    """

    def __init__(self, kernel: Kernel, X: np.ndarray, y: np.ndarray):
        self.kernel = kernel
        self.amplitude = float(kernel.k1.k1.constant_value)
        self.lengthscales = np.atleast_1d(kernel.k1.k2.length_scale).astype(float)
        self.noise = float(kernel.k2.noise_level)
        self.X = np.asarray(X, dtype=float) / self.lengthscales
        ys, self.y_mean, self.y_std = _standardise(np.asarray(y, dtype=float))
        K = self._k(self.X) + (self.noise + 1e-8) * np.eye(len(ys))
        L = cholesky(K, lower=True)
        self.alpha = cho_solve((L, True), ys)
        self.L_inv = solve_triangular(L, np.eye(len(ys)), lower=True)
        self.log_marginal_likelihood = float(-0.5 * ys @ self.alpha - np.log(np.diag(L)).sum()
                                             - 0.5 * len(ys) * np.log(2 * np.pi))

    @classmethod
    @single_blas_thread
    def fit(cls, X: np.ndarray, y: np.ndarray) -> GP:
        """Fit the hyperparameters (MAP, guarded) and condition on the data."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        gp = GaussianProcessRegressor(kernel=make_kernel(X.shape[1]), optimizer=_map_optimizer(X, y),
                                      normalize_y=True, alpha=1e-8, n_restarts_optimizer=0)
        with warnings.catch_warnings():  # hitting a bound is the guard working, not a failure
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(X, y)
        return cls(gp.kernel_, X, y)

    def refit(self, X: np.ndarray, y: np.ndarray) -> GP:
        """The same hyperparameters conditioned on new data (one Cholesky factorisation)."""
        return GP(self.kernel, X, y)

    def _k(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        r = np.sqrt(5.0) * cdist(A, A if B is None else B)
        return self.amplitude * (1.0 + r + r**2 / 3.0) * np.exp(-r)

    def predict(self, X: np.ndarray, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (with the observation noise when ``noise``) in the units of y."""
        K = self._k(np.asarray(X, dtype=float) / self.lengthscales, self.X)
        V = self.L_inv @ K.T
        var = np.maximum(self.amplitude - np.einsum("ij,ij->j", V, V), 1e-12 * self.amplitude)
        var = var + (self.noise if noise else 0.0)
        return self.y_std * (K @ self.alpha) + self.y_mean, self.y_std**2 * var

    @property
    def noise_variance(self) -> float:
        """The fitted observation-noise variance, in the units of y."""
        return self.noise * self.y_std**2
