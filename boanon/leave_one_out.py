"""Least squares with every leave-one-out residual from a single fit.

Relation search and node forms both choose among many small linear models by held-out error;
refitting each without each trial would cost n fits. For least squares the hat matrix gives every
held-out residual at once: ``e_i / (1 - h_i)``. A row whose leverage ``h_i`` is near 1 decides
a coefficient alone, so there is no held-out evidence for that fit.
"""

from __future__ import annotations

import numpy as np


def loo_fit(X: np.ndarray, y: np.ndarray,
            max_leverage: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Coefficients and fitted values of least squares of ``y`` on ``X`` (which holds its own
    constant column), and the leave-one-out residuals (None when a row's leverage exceeds
    ``max_leverage``)."""
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    fitted = X @ coef
    q, _ = np.linalg.qr(X)
    h = np.sum(q**2, axis=1)
    if h.max() > max_leverage:
        return coef, fitted, None
    return coef, fitted, (y - fitted) / (1.0 - h)
