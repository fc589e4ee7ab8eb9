"""Small guarded Gaussian processes: the building block of every learned node model.

A maximum-likelihood fit occasionally returns an overconfident model on few points (very short
lengthscales and almost no noise: it interpolates the data and predicts nonsense elsewhere). Two
guards keep fits sane: bounds on every hyperparameter, and log-normal priors on the lengthscales
(dimension-scaled, as in Hvarfner et al. 2024, "Vanilla Bayesian optimization performs great in
high dimensions") and the amplitude, and a Gamma prior on the noise, added to the marginal
likelihood (MAP instead of ML). Inputs are expected in roughly unit scale and targets are
standardised, so one set of bounds and priors fits all nodes. The kernel and the likelihood are
:mod:`boanon.models.kernels`'s.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.optimize import minimize

from boanon.models.kernels import GaussianPrior, Matern52Gram, gaussian_nll, matern52, pairwise_sq
from boanon.models.threads import single_blas_thread

LENGTHSCALE_BOUNDS = (2e-2, 1e2)
NOISE_BOUNDS = (1e-6, 1.0)
AMPLITUDE_BOUNDS = (1e-2, 1e2)
PRIOR_SD = np.sqrt(3.0)
LENGTHSCALE_PRIOR_LOC = -0.3
AMPLITUDE_PRIOR_SD = 1.5
INITIAL_NOISE = 1e-2
NOISE_PRIOR = (1.1, 3.0)
"""Gamma(concentration, rate) on the standardised noise variance: mean 0.37 of the variance."""
JITTER = 1e-8


def _lengthscale_prior_mean(d: int) -> float:
    """Log-lengthscale prior mean: longer lengthscales in more dimensions (Hvarfner et al.).

    Centred on 0.74 sqrt(d) (0.74 in 1-D, 2.1 in 8-D) rather than Hvarfner's 4.1 sqrt(d): their
    longer lengthscales suit high-dimensional problems with few relevant inputs, while a node
    here has a few parents that all matter. On synthetic systems the shorter prior cut the
    regret of structured runs from 0.83 to 0.33 and kept held-out predictions calibrated
    (docs/models.md has the comparison).
    """
    return float(LENGTHSCALE_PRIOR_LOC + 0.5 * np.log(max(d, 1)))


def _noise_penalty(log_noise: float) -> tuple[float, float]:
    """-log Gamma density of the noise variance at ``exp(log_noise)`` (up to a constant; no
    Jacobian: a prior on the variance, not on its log) and its derivative in ``log_noise``.

    Without a prior, fits on few trials in many dimensions often called most of the variance
    noise (10 trials of the 40-parameter synthetic system: the plain GP predicted 64.5 at the best
    trial, observed at 44.7; 49.2 with this prior). Unlike a log-normal prior it barely penalises a
    noise-free fit (0.9 nat above its mode, 0.033, at the lower bound 1e-6; "all noise", 1, costs
    2.6). Mild on purpose: Optuna's rate (30) forced a node GP on a metric with 30 % noise to
    interpolate it, and the safety net then cut the metric out of the graph
    (tests/test_models_dag.py); rate 10 did not tune better than 3 (docs/models.md).
    """
    concentration, rate = NOISE_PRIOR
    noise = float(np.exp(log_noise))
    return rate * noise - (concentration - 1.0) * log_noise, rate * noise - (concentration - 1.0)


@functools.lru_cache(maxsize=64)
def _prior(d: int) -> GaussianPrior:
    """The prior on theta (log amplitude, log lengthscales (d), log noise).

    The noise is left to :func:`_noise_penalty`: a log-normal noise prior around e^-4 (BoTorch's
    current default) made the optimiser's regret worse on synthetic systems (docs/models.md).
    Cached (read-only arrays): the likelihood asks for it at every optimiser step.
    """
    mean = np.concatenate([[0.0], np.full(d, _lengthscale_prior_mean(d)), [0.0]])
    sd = np.concatenate([[AMPLITUDE_PRIOR_SD], np.full(d, PRIOR_SD), [np.inf]])
    mean.setflags(write=False)
    sd.setflags(write=False)
    return GaussianPrior(mean, sd)


def neg_log_posterior(theta: np.ndarray, sq: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log marginal likelihood + log priors (:func:`_prior`, :func:`_noise_penalty`), and
    its gradient in theta.

    ``theta`` as :attr:`Hyperparameters.theta`; ``sq`` from
    :func:`~boanon.models.kernels.pairwise_sq`, ``y`` standardised.
    """
    n, d = len(y), sq.shape[1]
    amp, noise = np.exp(theta[0]), np.exp(theta[-1])
    gram = Matern52Gram(sq, theta[1:1 + d])
    K = amp * gram.k
    K.flat[::n + 1] += noise + JITTER
    nll = gaussian_nll(K, y)
    if nll is None:
        return 1e25, np.zeros_like(theta)
    value, W = nll
    value = value + 0.5 * n * np.log(2 * np.pi)
    grad = np.empty_like(theta)
    grad[0] = 0.5 * amp * np.sum(W * gram.k)
    grad[1:1 + d] = gram.grad_log_lengthscales(W, 0.5 * amp)
    grad[-1] = 0.5 * noise * np.trace(W)
    penalty, penalty_grad = _prior(d).neg_log_density(theta)
    noise_penalty, noise_grad = _noise_penalty(theta[-1])
    grad[-1] += noise_grad
    return float(value + penalty + noise_penalty), grad + penalty_grad


@dataclass(frozen=True)
class Hyperparameters:
    """Amplitude, one lengthscale per input and the noise variance (of standardised targets)."""

    amplitude: float
    lengthscales: np.ndarray
    noise: float

    @property
    def theta(self) -> np.ndarray:
        """The optimiser's parameters: their logarithms, amplitude first and noise last."""
        return np.log(np.concatenate([[self.amplitude], self.lengthscales, [self.noise]]))

    @classmethod
    def from_theta(cls, theta: np.ndarray) -> Hyperparameters:
        values = np.exp(theta)
        return cls(float(values[0]), values[1:-1], float(values[-1]))

    @classmethod
    def initial(cls, d: int) -> Hyperparameters:
        """Where the fit starts: the prior's centre, a little noise."""
        return cls(1.0, np.full(d, float(np.exp(_lengthscale_prior_mean(d)))), INITIAL_NOISE)

    @staticmethod
    def log_bounds(d: int) -> np.ndarray:
        """Bounds on theta, shape (d + 2, 2)."""
        return np.log(np.vstack([AMPLITUDE_BOUNDS, *[LENGTHSCALE_BOUNDS] * d, NOISE_BOUNDS]))


def _standardise(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    mean, spread = float(np.mean(y)), float(np.std(y))
    spread = spread if spread > 1e-12 * max(1.0, abs(mean)) else 1.0
    return (y - mean) / spread, mean, spread


class GP:
    """A GP with given hyperparameters; :meth:`fit` finds them, :meth:`condition` conditions on data.

    Predictions and :meth:`refit` (new data, same hyperparameters: cross-validation folds,
    fantasised pending points) use the inverse of the Cholesky factor kept from conditioning: with
    many Monte-Carlo inputs a matrix product is several times faster than a triangular solve per call.
    """

    def __init__(self, hyperparameters: Hyperparameters):
        self.hyperparameters = hyperparameters

    @classmethod
    @single_blas_thread
    def fit(cls, X: np.ndarray, y: np.ndarray) -> GP:
        """Fit the hyperparameters (MAP, guarded) and condition on the data.

        L-BFGS-B stops at a relative change of 1e-6 in the objective (its default is 2e-9): on 100
        points in 20-D that took a third fewer steps and moved the log posterior by under 0.003 nats.
        """
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        d = X.shape[1]
        res = minimize(neg_log_posterior, Hyperparameters.initial(d).theta,
                       args=(pairwise_sq(X), _standardise(y)[0]), method="L-BFGS-B", jac=True,
                       bounds=Hyperparameters.log_bounds(d), options={"maxiter": 100, "ftol": 1e-6})
        return cls(Hyperparameters.from_theta(res.x)).condition(X, y)

    def condition(self, X: np.ndarray, y: np.ndarray) -> GP:
        """Condition on ``(X, y)`` with the stored hyperparameters (one Cholesky factorisation)."""
        hp = self.hyperparameters
        self.X_train_ = np.asarray(X, dtype=float) / hp.lengthscales
        ys, self.y_mean_, self.y_std_ = _standardise(np.asarray(y, dtype=float))
        K = matern52(self.X_train_, amplitude=hp.amplitude) + (hp.noise + JITTER) * np.eye(len(ys))
        L = cholesky(K, lower=True)
        self.alpha_ = cho_solve((L, True), ys)
        self.L_inv_ = solve_triangular(L, np.eye(len(ys)), lower=True)
        self.log_marginal_likelihood = float(-0.5 * ys @ self.alpha_ - np.log(np.diag(L)).sum()
                                             - 0.5 * len(ys) * np.log(2 * np.pi))
        return self

    def refit(self, X: np.ndarray, y: np.ndarray) -> GP:
        """A new GP with the same hyperparameters conditioned on new data."""
        return GP(self.hyperparameters).condition(X, y)

    def predict(self, X: np.ndarray, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (with the observation noise when ``noise``) in the units of y."""
        hp = self.hyperparameters
        K = matern52(np.asarray(X, dtype=float) / hp.lengthscales, self.X_train_, hp.amplitude)
        V = self.L_inv_ @ K.T
        var = np.maximum(hp.amplitude - np.einsum("ij,ij->j", V, V), 1e-12 * hp.amplitude)
        var = var + (hp.noise if noise else 0.0)
        return self.y_std_ * (K @ self.alpha_) + self.y_mean_, self.y_std_**2 * var

    @property
    def lengthscales(self) -> np.ndarray:
        return self.hyperparameters.lengthscales

    @property
    def noise_variance(self) -> float:
        """The fitted observation-noise variance, in the units of y."""
        return self.hyperparameters.noise * self.y_std_**2
