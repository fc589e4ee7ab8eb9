"""A coregionalised (ICM) Gaussian process over (configuration, task) pairs, in numpy.

Tasks are related outputs (energy and latency driven by the same parameters) or related
workloads (the same system under another load): the covariance of f(x, s) and f(x', t) is
``B[s, t] * k(x, x')`` with one Matern-5/2 kernel ``k`` whose lengthscales all tasks share and a
task covariance ``B = L L^T + diag(kappa)`` learned from the data, so a task with few trials
borrows strength from a correlated one and joint samples keep the tasks' correlation (which a
set of independent GPs would lose). Hyperparameters maximise the marginal likelihood plus
weak log-normal priors, which keep lengthscales and noise away from overconfident extremes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from boanon.models.kernels import GaussianPrior, Matern52Gram, gaussian_nll, matern52, pairwise_sq

_LS_PRIOR = (np.log(0.5), 1.0)     # log-lengthscale mean and sd, inputs in [0, 1]
_NOISE_PRIOR = (np.log(1e-2), 2.0)  # log noise variance, outputs standardised
_FACTOR_PRIOR_SD = 2.0              # a weak Gaussian prior on the entries of the task factor
_JITTER = 1e-8


@dataclass
class _Params:
    log_ls: np.ndarray   # (p,)
    factor: np.ndarray   # (T, rank)
    log_kappa: np.ndarray  # (T,)
    log_noise: np.ndarray  # (T,)

    def vector(self) -> np.ndarray:
        return np.concatenate([self.log_ls, self.factor.ravel(), self.log_kappa, self.log_noise])

    @classmethod
    def from_vector(cls, v: np.ndarray, p: int, n_tasks: int, rank: int) -> _Params:
        a, b = p, p + n_tasks * rank
        return cls(v[:a], v[a:b].reshape(n_tasks, rank), v[b:b + n_tasks], v[b + n_tasks:])

    @property
    def task_cov(self) -> np.ndarray:
        return self.factor @ self.factor.T + np.diag(np.exp(self.log_kappa))


def _prior(p: int, n_tasks: int, rank: int) -> GaussianPrior:
    """Log-normal priors on the lengthscales and the noise, a weak Gaussian one on the task factor
    (none on kappa), in the order of :meth:`_Params.vector`."""
    def part(size: int, mean: float, sd: float) -> tuple[np.ndarray, np.ndarray]:
        return np.full(size, mean), np.full(size, sd)

    parts = [part(p, *_LS_PRIOR), part(n_tasks * rank, 0.0, _FACTOR_PRIOR_SD),
             part(n_tasks, 0.0, np.inf), part(n_tasks, *_NOISE_PRIOR)]
    return GaussianPrior(np.concatenate([m for m, _ in parts]), np.concatenate([s for _, s in parts]))


class ICMGP:
    """``fit(X, tasks, y)`` then ``sample(X, tasks, n_samples, rng)`` (joint over all query rows).

    ``X`` is (n, p) in [0, 1] (``Space.encode``), ``tasks`` integer task ids in ``range(n_tasks)``.
    ``rank`` bounds the rank of the task covariance's low-rank part (None: ``n_tasks``); ``seed``
    seeds the jittered starts of the optimiser after the first.
    """

    def __init__(self, n_tasks: int, rank: int | None = None, restarts: int = 2, seed: int = 0):
        self.n_tasks = n_tasks
        self.rank = rank
        self.restarts = restarts
        self.seed = seed

    # --- fitting ---------------------------------------------------------------------------
    def fit(self, x: np.ndarray, tasks: np.ndarray, y: np.ndarray) -> ICMGP:
        x = np.asarray(x, dtype=float)
        self.rank_ = min(self.rank or self.n_tasks, self.n_tasks)
        self._set_data(x, tasks, y)
        sq = pairwise_sq(x)                                                 # reused by every step
        rng = np.random.default_rng(self.seed)
        best = None
        # small matrices: threaded BLAS only adds contention (10x slower on a busy 2-core machine)
        with threadpool_limits(limits=1, user_api="blas"):
            for start in range(self.restarts):
                v0 = self._initial(rng, jitter=start > 0).vector()
                res = minimize(self._objective, v0, args=(sq,), jac=True, method="L-BFGS-B",
                               bounds=self._bounds(), options={"maxiter": 200})
                if best is None or res.fun < best.fun:
                    best = res
        self.params_ = _Params.from_vector(best.x, x.shape[1], self.n_tasks, self.rank_)
        self._factorise()
        return self

    def condition(self, x: np.ndarray, tasks: np.ndarray, y: np.ndarray) -> ICMGP:
        """A copy on other data with this model's hyperparameters (one factorisation, no fit)."""
        other = copy.copy(self)
        other._set_data(x, tasks, y)
        other._factorise()
        return other

    def _set_data(self, x: np.ndarray, tasks: np.ndarray, y: np.ndarray) -> None:
        x = np.asarray(x, dtype=float)
        tasks = np.asarray(tasks, dtype=int)
        y = np.asarray(y, dtype=float)
        if not (len(x) == len(tasks) == len(y)) or len(y) == 0:
            raise ValueError(f"need matching, non-empty X ({len(x)}), tasks ({len(tasks)}) and y ({len(y)})")
        if tasks.min() < 0 or tasks.max() >= self.n_tasks:
            raise ValueError(f"task ids must lie in [0, {self.n_tasks})")
        self.X_train_, self.tasks_train_ = x, tasks
        self.mean_, self.scale_ = self._standardisation(tasks, y)
        self.z_ = (y - self.mean_[tasks]) / self.scale_[tasks]

    def _standardisation(self, tasks: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-task mean and scale; a task with fewer than 3 trials uses the pooled ones."""
        pooled_sd = float(np.std(y)) or 1.0
        mean = np.full(self.n_tasks, float(np.mean(y)))
        scale = np.full(self.n_tasks, pooled_sd)
        for t in range(self.n_tasks):
            yt = y[tasks == t]
            if len(yt) >= 3:
                mean[t] = yt.mean()
                scale[t] = yt.std() if yt.std() > 0 else pooled_sd
        return mean, scale

    def _initial(self, rng: np.random.Generator, jitter: bool) -> _Params:
        p = self.X_train_.shape[1]
        log_ls = np.full(p, _LS_PRIOR[0]) + (rng.normal(0, 0.5, p) if jitter else 0.0)
        factor = np.full((self.n_tasks, self.rank_), 0.7 / np.sqrt(self.rank_))
        if jitter:
            factor = factor + rng.normal(0, 0.3, factor.shape)
        kappa, noise = np.full(self.n_tasks, np.log(0.3)), np.full(self.n_tasks, np.log(1e-2))
        return _Params(log_ls, factor, kappa, noise)

    def _bounds(self) -> list[tuple[float, float]]:
        p = self.X_train_.shape[1]
        return ([(np.log(0.01), np.log(20.0))] * p + [(-5.0, 5.0)] * (self.n_tasks * self.rank_)
                + [(np.log(1e-6), np.log(5.0))] * self.n_tasks + [(np.log(1e-6), np.log(2.0))] * self.n_tasks)

    def _objective(self, v: np.ndarray, sq: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log posterior (up to a constant) and its gradient; ``sq`` is
        :func:`~boanon.models.kernels.pairwise_sq` of the training inputs."""
        p = self.X_train_.shape[1]
        prm = _Params.from_vector(v, p, self.n_tasks, self.rank_)
        gram = Matern52Gram(sq, prm.log_ls)
        bt = prm.task_cov[self.tasks_train_][:, self.tasks_train_]
        noise = np.exp(prm.log_noise)
        nll = gaussian_nll(bt * gram.k + np.diag(noise[self.tasks_train_] + _JITTER), self.z_)
        if nll is None:
            return 1e10, np.zeros_like(v)
        value, W = nll                                                      # dNLL/dK = W/2
        onehot = np.eye(self.n_tasks)[self.tasks_train_]                    # (n, T)
        wb = onehot.T @ (W * gram.k) @ onehot                               # (T, T): W*kx per task pair
        grad = np.concatenate([gram.grad_log_lengthscales(W * bt, 0.5),
                               (0.5 * (wb + wb.T) @ prm.factor).ravel(),
                               0.5 * np.diag(wb) * np.exp(prm.log_kappa),
                               0.5 * (onehot.T @ np.diag(W)) * noise])
        penalty, penalty_grad = _prior(p, self.n_tasks, self.rank_).neg_log_density(v)
        return float(value + penalty), grad + penalty_grad

    def _factorise(self) -> None:
        k = self._cov(self.X_train_, self.tasks_train_, self.X_train_, self.tasks_train_)
        k[np.diag_indices_from(k)] += np.exp(self.params_.log_noise)[self.tasks_train_] + _JITTER
        self.chol_ = np.linalg.cholesky(k)
        self.alpha_ = cho_solve((self.chol_, True), self.z_)

    def _cov(self, x1: np.ndarray, t1: np.ndarray, x2: np.ndarray, t2: np.ndarray) -> np.ndarray:
        ls = np.exp(self.params_.log_ls)
        return self.params_.task_cov[t1][:, t2] * matern52(x1 / ls, x2 / ls)

    # --- prediction ------------------------------------------------------------------------
    def predict(self, x: np.ndarray, tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of the noise-free function, in y's units."""
        tasks = np.asarray(tasks, dtype=int)
        ks = self._cov(self.X_train_, self.tasks_train_, np.asarray(x, dtype=float), tasks)
        v = solve_triangular(self.chol_, ks, lower=True)
        var = np.clip(np.diag(self.params_.task_cov)[tasks] - np.sum(v * v, axis=0), 1e-12, None)
        return (self.mean_[tasks] + self.scale_[tasks] * (ks.T @ self.alpha_),
                self.scale_[tasks] * np.sqrt(var))

    def sample(self, x: np.ndarray, tasks: np.ndarray, n_samples: int,
               rng: np.random.Generator, noise: bool = False) -> np.ndarray:
        """(n_samples, n_rows) joint posterior draws over all rows, of the noise-free function
        unless ``noise`` (then each row also gets its task's observation noise)."""
        x = np.asarray(x, dtype=float)
        tasks = np.asarray(tasks, dtype=int)
        ks = self._cov(self.X_train_, self.tasks_train_, x, tasks)
        v = solve_triangular(self.chol_, ks, lower=True)
        cov = self._cov(x, tasks, x, tasks) - v.T @ v
        mean = ks.T @ self.alpha_
        root = _psd_root(cov)
        z = mean + rng.standard_normal((n_samples, len(x))) @ root.T
        if noise:
            z = z + rng.standard_normal(z.shape) * np.sqrt(np.exp(self.params_.log_noise)[tasks])
        return self.mean_[tasks] + self.scale_[tasks] * z

    def task_correlation(self) -> np.ndarray:
        """The learned correlation between tasks (from B)."""
        b = self.params_.task_cov
        s = np.sqrt(np.diag(b))
        return b / np.outer(s, s)


def _psd_root(cov: np.ndarray) -> np.ndarray:
    """A square root of a (numerically) positive semi-definite matrix: Cholesky, else eigh."""
    cov = 0.5 * (cov + cov.T)
    try:
        return np.linalg.cholesky(cov + 1e-9 * np.eye(len(cov)) * max(1.0, float(np.mean(np.diag(cov)))))
    except np.linalg.LinAlgError:
        vals, vecs = np.linalg.eigh(cov)
        return vecs * np.sqrt(np.clip(vals, 0.0, None))
