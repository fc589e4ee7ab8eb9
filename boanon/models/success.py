"""Where the system fails: the probability that a configuration runs at all.

The surrogates are fitted on measured trials, so they know nothing of a design the system cannot
run (a mapping ZigZag cannot find, options RocksDB will not open with). Excluding each failed
configuration stops exact repeats, not its neighbours: a search whose model extrapolates into a
failing region walks along its edge one failed evaluation at a time. This model learns the region
from the trials that ran and the ones that failed, as constrained BO with unknown constraints
does (Gelbart, Snoek and Adams, 2014); the acquisition is weighted by it
(:mod:`boanon.acquisition.success`). scikit-learn's Gaussian-process classifier (Laplace
approximation, one lengthscale per encoded column) does the fitting. Its probability is read at
the posterior mode of the latent function, not averaged over the latent's variance: where the
trials separate cleanly (as failures from a region do) the Laplace variance stays at the prior's,
whose fitted scale is large, and the averaged probability stays near 1/2 beside ten failures.
What is BoAnon's is the encoding of mixed spaces and when the model is used.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

from boanon.space import Space


class SuccessModel:
    """A classifier of configurations that ran against configurations that failed.

    ``lengthscale`` is the kernel's starting lengthscale in the unit-cube encoding, kept within
    ``bounds`` while the marginal likelihood is maximised: short enough that one failure does not
    condemn the whole space."""

    def __init__(self, space: Space, lengthscale: float = 0.3, bounds: tuple[float, float] = (0.05, 5.0)):
        self.space = space
        self.lengthscale = lengthscale
        self.bounds = bounds

    def fit(self, ran: Sequence[Mapping[str, Any]], failed: Sequence[Mapping[str, Any]]) -> SuccessModel:
        """Learn from configurations that ``ran`` and ones that ``failed`` (both needed)."""
        if not ran or not failed:
            raise ValueError(f"a success model needs trials that ran and trials that failed "
                             f"(got {len(ran)} and {len(failed)})")
        X = self.space.encode([*ran, *failed])
        y = np.r_[np.ones(len(ran)), np.zeros(len(failed))]
        kernel = ConstantKernel(1.0) * RBF(np.full(X.shape[1], self.lengthscale), self.bounds)
        with warnings.catch_warnings():  # a lengthscale at its bound is expected with few failures
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.classifier_ = GaussianProcessClassifier(kernel, random_state=0).fit(X, y)
        self.n_ran_, self.n_failed_ = len(ran), len(failed)
        return self

    def probability(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Per configuration, the probability that it runs (at the latent's posterior mode)."""
        return expit(self.latent(configs))

    def latent(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """The latent function's posterior mode: positive where the configuration is predicted to run.

        The binary classifier's mode is ``K(x, X) (y - pi)`` (Rasmussen and Williams, Algorithm
        3.2); scikit-learn computes it in ``predict`` without returning it."""
        binary = self.classifier_.base_estimator_
        k = binary.kernel_(self.space.encode(configs), binary.X_train_)
        return k @ (binary.y_train_ - binary.pi_)
