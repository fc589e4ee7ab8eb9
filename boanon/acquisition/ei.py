"""Monte-Carlo expected improvement: the single-objective acquisition, also used on scalarisations."""

from __future__ import annotations

import numpy as np


def expected_improvement(samples: np.ndarray, best: float, feasible: np.ndarray | None = None) -> np.ndarray:
    """Monte-Carlo expected improvement below ``best`` of (n_samples, n_configs) samples; a
    sample that breaks an output constraint (``feasible`` False) improves nothing."""
    gain = np.clip(best - np.asarray(samples, dtype=float), 0.0, None)
    gain = np.where(np.isfinite(gain), gain, 0.0)
    if feasible is not None:
        gain = gain * feasible
    return gain.mean(axis=0)
