"""Expected hypervolume improvement estimated from a model's joint Monte-Carlo samples.

The samples come from one pass of the DAG per draw, so objectives (and constrained outputs)
that share ancestors stay correlated within a draw; averaging the exact hypervolume improvement
of each draw keeps that correlation, which a product of per-objective marginals would lose.
"""

from __future__ import annotations

import numpy as np

from boanon.multiobjective.hypervolume import hypervolume_improvement, nondominated_boxes


def expected_hypervolume_improvement(samples: np.ndarray, front: np.ndarray, ref: np.ndarray,
                                     feasible: np.ndarray | None = None) -> np.ndarray:
    """EHVI per configuration, all in the minimisation convention.

    ``samples`` is (n_samples, n_configs, n_objectives); ``front`` the observed feasible points
    (m, n_objectives); ``ref`` the reference point. ``feasible`` (n_samples, n_configs) zeroes
    the improvement of draws that break an output constraint. Configurations still running are
    the model's concern (:meth:`boanon.models.Surrogate.fantasize`), not this function's.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 3:
        raise ValueError(f"expected samples (n_samples, n_configs, n_objectives), got {samples.shape}")
    ref = np.asarray(ref, dtype=float)
    front = np.asarray(front, dtype=float).reshape(-1, len(ref))
    if samples.shape[2] != len(ref):
        raise ValueError(f"samples have {samples.shape[2]} objectives, the reference point {len(ref)}")
    hvi = hypervolume_improvement(samples, nondominated_boxes(front, ref))
    if feasible is not None:
        hvi = hvi * np.asarray(feasible, dtype=bool)
    return hvi.mean(axis=0)
