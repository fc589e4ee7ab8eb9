"""Where the system fails: the probability that a configuration runs at all.

The surrogates are fitted on measured trials, so they know nothing of a design the system cannot
run (a mapping ZigZag cannot find, options RocksDB will not open with). Excluding each failed
configuration stops exact repeats, not its neighbours: a search whose model extrapolates into a
failing region walks along its edge one failed evaluation at a time. This model learns the region
from the trials that ran and the ones that failed, as constrained BO with unknown constraints
does (Gelbart, Snoek and Adams, 2014); the acquisition is weighted by it
(:mod:`boanon.acquisition.success`). scikit-learn's Gaussian-process classifier (Laplace
approximation, one lengthscale per encoded column) does the numerics, and its predictive
probability (the latent's posterior averaged through the link) weights the acquisition. That
probability is cautious: where failures separate cleanly from the trials that ran, the fitted
latent scale is large and the Laplace variance there stays near it, so the probability beside
failures stays well above 0. A failing region is discounted, not forbidden: the probability at
the latent's posterior mode instead (near 0 beside failures) kept AlexNet's search away from the
good designs next to the ones ZigZag cannot map (benchmarks/README.md, round 25).
What is BoAnon's is the encoding of mixed spaces and when the model is used.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
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
        """Per configuration, the probability that it runs."""
        proba = self.classifier_.predict_proba(self.space.encode(configs))
        return proba[:, list(self.classifier_.classes_).index(1.0)]
