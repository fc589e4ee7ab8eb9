"""benchmarks.run with one probe patched in (round 36, not on main): variants.py VARIANT ARGS...

VARIANT: base (main), ls / ls05 (lengthscale prior centre LOC 1.414 / 0.4), noasc (no gradient
ascent in the acquisition search), pessmin / pessmax (the GP prior mean at the lowest / highest
observed value instead of the mean), below / belowplain (round 22-23 rule: while a GP has fewer
trials than inputs, its lengthscale prior is centred on 0.27 sqrt(d), sd 0.3; belowplain: only the
plain-GP surrogate fits so). Run from the repository root: PYTHONPATH=. python
benchmarks/results/probes-r36/variants.py noasc --problems fn-pharma --tuners boanon-gp \
    --seeds 10 --budget 15 --out DIR
"""
import sys

import benchmarks.run as r

v = sys.argv[1]
if v == "ls":
    import boanon.models.gp as gp
    gp.LENGTHSCALE_PRIOR_LOC = 1.414
elif v == "noasc":
    import boanon.acquisition.optimize as o
    o._ascend = lambda *a, **k: None
elif v == "ls05":
    import boanon.models.gp as gp
    gp.LENGTHSCALE_PRIOR_LOC = 0.4
if v.startswith("pess"):
    import numpy as np

    import boanon.models.gp as gp
    pick = np.min if v == "pessmin" else np.max
    def _standardise(y):
        mean, spread = float(pick(y)), float(np.std(y))
        spread = spread if spread > 1e-12 * max(1.0, abs(mean)) else 1.0
        return (y - mean) / spread, mean, spread
    gp._standardise = _standardise
if v in ("below", "belowplain"):
    import numpy as np

    import boanon.models.gp as gp
    from boanon.models.kernels import GaussianPrior
    def prior(d, n):
        if n < d:
            loc, sd = -1.3 + 0.5 * np.log(max(d, 1)), 0.3
        else:
            loc, sd = gp._lengthscale_prior_mean(d), float(gp.PRIOR_SD)
        return GaussianPrior(np.concatenate([[0.0], np.full(d, loc), [0.0]]),
                             np.concatenate([[gp.AMPLITUDE_PRIOR_SD], np.full(d, sd), [np.inf]]))
    old = gp.neg_log_posterior
    def neg_log_posterior(theta, sq, y):
        d, n = sq.shape[1], len(y)
        value, grad = old(theta, sq, y)
        if value >= 1e25:
            return value, grad
        p0, g0 = gp._prior(d).neg_log_density(theta)
        p1, g1 = prior(d, n).neg_log_density(theta)
        return value - p0 + p1, grad - g0 + g1
    if v == "below":
        gp.neg_log_posterior = neg_log_posterior
    else:  # belowplain: only the plain GP surrogate's fits (not the DAG's node models)
        from boanon.models.plain import PlainGPSurrogate
        _fit = PlainGPSurrogate._fit
        def _fit_below(self, table, refit):
            gp.neg_log_posterior = neg_log_posterior
            try:
                return _fit(self, table, refit)
            finally:
                gp.neg_log_posterior = old
        PlainGPSurrogate._fit = _fit_below
r.main(sys.argv[2:])
