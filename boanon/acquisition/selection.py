"""Choosing between the structured surrogate and the plain GP by how well each predicts held-out trials.

k-fold cross-validation on the trials so far, with each surrogate's hyperparameters kept from its
fit on all trials (a refit per fold is then one Cholesky factorisation per node, as in GP
leave-one-out with fixed hyperparameters). The score is the mean log predictive density of the
held-out objective values (objectives standardised, so several objectives add up fairly):
it rewards accurate means *and* honest uncertainty, which is what expected improvement uses.
The Spearman rank correlation of predicted means is reported alongside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.models.base import Surrogate, heldout_scores, param_configs
from boanon.models.threads import single_blas_thread
from boanon.ties import first_best

MIN_TRIALS = 5


@single_blas_thread
def cross_validate(surrogate: Surrogate, table: pd.DataFrame, rng: np.random.Generator,
                   n_folds: int = 5, n_samples: int = 32) -> dict[str, Any]:
    """Held-out scores of an already fitted ``surrogate``: log predictive density and rank correlation."""
    cols = [surrogate.node_column(o.name) for o in surrogate.objectives]
    complete = np.flatnonzero(table[cols].notna().all(axis=1).to_numpy())
    k = min(n_folds, len(complete))
    if k < 2:
        raise ValueError(f"cross-validation needs at least two trials with objective values, got {k}")
    folds = np.array_split(rng.permutation(complete), k)
    means = np.full((len(table), len(cols)), np.nan)
    sds = np.full_like(means, np.nan)
    for fold in folds:
        model = surrogate.refit(table.drop(index=table.index[fold]))
        samples = model.sample(param_configs(surrogate.space, table.iloc[fold]), n_samples, rng, noise=True)
        for j, o in enumerate(surrogate.objectives):
            means[fold, j] = samples[o.name].mean(axis=0)
            sds[fold, j] = samples[o.name].std(axis=0)
    y = table[cols].to_numpy(dtype=float)[complete]
    return {**heldout_scores(y, means[complete], sds[complete]), "n_folds": k, "n_trials": len(complete)}


def select_surrogate(surrogates: Sequence[Surrogate], table: pd.DataFrame, rng: np.random.Generator,
                     n_folds: int = 5) -> tuple[Surrogate, str, dict[str, Any]]:
    """The surrogate with the best held-out log predictive density (ties, to the last bits: the
    first), why, and all scores.

    With fewer than :data:`MIN_TRIALS` complete trials no score is trustworthy: the first
    surrogate (the structured one, whose per-node models need fewer trials) is kept.
    """
    first = surrogates[0]
    cols = [first.node_column(o.name) for o in first.objectives]
    n = int(table[cols].notna().all(axis=1).sum())
    if len(surrogates) == 1:
        return first, f"{first.name} surrogate requested", {}
    if n < MIN_TRIALS:
        return first, f"{n} trials are too few to cross-validate (< {MIN_TRIALS}): using {first.name}", {}
    scores: dict[str, Any] = {}
    for s in surrogates:
        try:
            scores[s.name] = cross_validate(s, table, rng, n_folds)
        except (ValueError, np.linalg.LinAlgError) as exc:  # e.g. a fold leaves a node without data
            scores[s.name] = {"log_predictive_density": -np.inf, "error": f"{type(exc).__name__}: {exc}"}
    best = surrogates[first_best([scores[s.name]["log_predictive_density"] for s in surrogates])]
    detail = ", ".join(f"{name} failed ({sc['error']})" if "error" in sc else
                       f"{name} {sc['log_predictive_density']:.3f} (rank corr {sc['rank_correlation']:.2f})"
                       for name, sc in scores.items())
    k = min(n_folds, n)
    return best, f"{k}-fold CV log predictive density on {n} trials: {detail}; chose {best.name}", scores
