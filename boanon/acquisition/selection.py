"""Choosing between the structured surrogate and the plain GP by how well each predicts held-out trials.

k-fold cross-validation on the trials so far, with each surrogate's hyperparameters kept from its
fit on all trials (a refit per fold is then one Cholesky factorisation per node, as in GP
leave-one-out with fixed hyperparameters; a learned form's constants, its mean, are fitted
again). The score is the mean log predictive density of the held-out objective values
(objectives standardised, so several objectives add up fairly):
it rewards accurate means *and* honest uncertainty, which is what expected improvement uses.
The Spearman rank correlation of predicted means is reported alongside.

The comparison is paired and leans towards the proposer's reference (the plain GP, marked
``reference`` on its class): every candidate is scored on the same folds, and an alternative
(the learned graph's model, a joint model) replaces the reference only when it predicts the
held-out trials better by :data:`MARGIN` per trial *and* ranks them at least as well (rank
correlation, what expected improvement acts on). A graph learned from a dozen correlated trials
often cross-validates a little better by chance; letting it win every near tie made the
structured strategy worse than its own plain GP on systems whose structure it did not learn.

Each trial's difference counts for at most :data:`TRIAL_CAP` nats either way: one badly
predicted trial can otherwise outweigh a dozen. On a 40-parameter system the graph's model
ranked the held-out trials far better than the plain GP and predicted most of them better, yet
lost every choice to two or three overconfident misses, and the run waited for its structure
until the misses were outnumbered. A non-finite prediction is not capped: it never wins.

Up to :data:`LEAVE_ONE_OUT_TRIALS` trials each trial is its own fold (leave-one-out). With a
dozen trials five folds of two or three are a draw: which trials fall together moved a
candidate's lead by more than the margin, so a split, not the models, often made the choice.
Leaving one out has no split to draw and trains each fold on all other trials; it costs a
refit per trial, which a few dozen trials can afford and a long run need not pay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.models.base import Surrogate, heldout_scores, param_configs, pointwise_log_density
from boanon.models.threads import single_blas_thread
from boanon.ties import first_best

MIN_TRIALS = 5
LEAVE_ONE_OUT_TRIALS = 20
"""Up to this many complete trials the choice cross-validates leave-one-out, beyond it in
``n_folds`` folds (see the module docstring)."""
MARGIN = 0.1
"""Held-out log density per trial (objectives standardised) by which an alternative must beat
the reference surrogate to replace it."""
TRIAL_CAP = 2.0
"""The most one held-out trial's log density difference counts for (nats; e^2: a density
ratio of about 7), so that a few overconfident misses cannot outweigh the other trials."""
FLOOR = -1e6  # the log density counted for a non-finite held-out prediction


@single_blas_thread
def cross_validate(surrogate: Surrogate, table: pd.DataFrame, rng: np.random.Generator,
                   n_folds: int = 5, n_samples: int = 32) -> dict[str, Any]:
    """Held-out scores of an already fitted ``surrogate``: log predictive density and rank correlation."""
    return _held_out(surrogate, table, rng, n_folds, n_samples)[0]


def _held_out(surrogate: Surrogate, table: pd.DataFrame, rng: np.random.Generator,
              n_folds: int = 5, n_samples: int = 32) -> tuple[dict[str, Any], np.ndarray]:
    """:func:`cross_validate`'s scores and the held-out log density of each complete trial."""
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
    mu, sd = means[complete], sds[complete]
    scores = {**heldout_scores(y, mu, sd), "n_folds": k, "n_trials": len(complete)}
    return scores, pointwise_log_density(y, mu, sd)


def select_surrogate(surrogates: Sequence[Surrogate], table: pd.DataFrame, rng: np.random.Generator,
                     n_folds: int = 5, leave_one_out: int = LEAVE_ONE_OUT_TRIALS
                     ) -> tuple[Surrogate, str, dict[str, Any]]:
    """The reference surrogate unless an alternative clearly beats it held out (see the module
    docstring; among those that do, the best, ties to the last bits going to the first), why,
    and all scores.

    The reference is the first candidate whose class is marked ``reference`` (else the first).
    With fewer than :data:`MIN_TRIALS` complete trials no score is trustworthy: the reference is kept;
    up to ``leave_one_out`` (:data:`LEAVE_ONE_OUT_TRIALS`) every trial is held out alone, beyond
    them ``n_folds`` folds.
    """
    first = surrogates[0]
    reference = next((s for s in surrogates if s.reference), first)
    cols = [first.node_column(o.name) for o in first.objectives]
    n = int(table[cols].notna().all(axis=1).sum())
    if len(surrogates) == 1:
        return first, f"{first.name} surrogate requested", {}
    if n < MIN_TRIALS:
        return reference, (f"{n} trials are too few to cross-validate (< {MIN_TRIALS}): "
                           f"using {reference.name}"), {}
    seed = int(rng.integers(2**63))  # one seed for every candidate: the same folds and draws
    k = n if n <= leave_one_out else min(n_folds, n)
    scores: dict[str, Any] = {}
    pointwise: dict[str, np.ndarray] = {}
    for s in surrogates:
        try:
            scores[s.name], pointwise[s.name] = _held_out(s, table, np.random.default_rng(seed), k)
        except (ValueError, np.linalg.LinAlgError) as exc:  # e.g. a fold leaves a node without data
            scores[s.name] = {"log_predictive_density": -np.inf, "error": f"{type(exc).__name__}: {exc}"}
    gains: dict[str, float] = {}  # what the choice reads: each alternative's capped gain per trial
    if reference.name not in pointwise:  # the reference itself failed: the best of the others
        winners = [s for s in surrogates if s.name in pointwise]
    else:
        gains = {s.name: capped_gain(pointwise[s.name], pointwise[reference.name])
                 for s in surrogates if s is not reference and s.name in pointwise}
        winners = [s for s in surrogates
                   if gains.get(s.name, -np.inf) > MARGIN
                   and scores[s.name]["rank_correlation"] >= scores[reference.name]["rank_correlation"]]
    best = winners[first_best([scores[s.name]["log_predictive_density"] for s in winners])] \
        if winners else reference
    detail = ", ".join(f"{name} failed ({sc['error']})" if "error" in sc else
                       f"{name} {sc['log_predictive_density']:.3f} (rank corr {sc['rank_correlation']:.2f})"
                       for name, sc in scores.items())
    if gains:  # the means above count every trial in full; the choice caps each one
        detail += (f"; per held-out trial over {reference.name}, each capped at {TRIAL_CAP:g} nats: "
                   + ", ".join(f"{name} {gain:+.3f}" for name, gain in gains.items()))
    rule = f"{best.name} beats {reference.name} by > {MARGIN}, ranking as well" \
        if best is not reference else f"no alternative beats {reference.name} by > {MARGIN}, ranking as well"
    return best, (f"{k}-fold CV log predictive density on {n} trials: {detail}; {rule}; "
                  f"chose {best.name}"), scores


def capped_gain(alternative: np.ndarray, reference: np.ndarray, cap: float = TRIAL_CAP) -> float:
    """The mean per-trial held-out log density gain of ``alternative`` over ``reference``, each
    trial's difference capped at ``cap`` either way where both are finite (a non-finite
    prediction counts as :data:`FLOOR`, uncapped: it never wins)."""
    alternative, reference = np.asarray(alternative, dtype=float), np.asarray(reference, dtype=float)

    def floored(lpd: np.ndarray) -> np.ndarray:  # a non-finite prediction is a very bad one
        return np.nan_to_num(lpd, nan=FLOOR, neginf=FLOOR, posinf=FLOOR)

    diff = floored(alternative) - floored(reference)
    finite = np.isfinite(alternative) & np.isfinite(reference)
    return float(np.where(finite, np.clip(diff, -cap, cap), diff).mean())
