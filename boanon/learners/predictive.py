"""Metric parents found by prediction: which logged quantity makes a node predictable.

Independence tests look for (partial) correlation. A function network composes nodes in ways
that leave none: ``child = parent * g(x)`` with ``g`` changing sign has no correlation with its
parent at all, yet given the parent and ``x`` the child is a smooth 2-D function where over the
parameters alone it is a 6-D product of oscillations. So, before the tests, each objective (and
then each metric parent found, down the chain) asks the question the surrogate will: does a GP
over all parameters predict the node better held out when it also sees a metric? Candidates are
kept only where the gain clears :data:`MARGIN` per trial and one standard error of the per-trial
gains, over the parameters alone and over the metric's own shuffled copy (leave-one-out with the
hyperparameters of the fit on all trials, the closed form of GP leave-one-out, flatters any
extra input), so noise among a dozen correlated trials does not add edges. Accepted
metric -> node edges are required for the learner, which then finds the rest; the DAG
surrogate's node safety net gives each node its parameters back where they predict it better.

Values enter as ranks (scaled to [0, 1]): log-scale ranges, counts spanning orders of magnitude
and bounded parameters look alike to the GP; categoricals and booleans enter one-hot.

Ranks hide a product, though: where no metric helps on ranks, each candidate is also tried as a
scale, ``node = metric * g(a few parameters)`` (the DAG surrogate's :mod:`boanon.models.scaled`),
judged on the node's own values by the same held-out rule against a GP over the parameters and
against the metric's shuffled copy. A chain of such nodes (BOFN's Alpine2) is found from the
objective down, link by link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import networkx as nx
import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve
from scipy.stats import norm, rankdata

from boanon.models.gp import GP
from boanon.models.kernels import matern52
from boanon.models.scaled import usable_scale
from boanon.table import columns_of, split_column

MIN_ROWS = 10
"""Fewer complete trials: no search (the gains of a handful of trials are noise)."""
MARGIN = 0.1
"""Held-out log density per trial (standardised ranks) an input set must add to be kept."""
MAX_METRICS = 2
"""Metric parents found per node."""
MAX_PARAMS = 3
"""Parameters chosen per node beside its metric parents."""
MAX_CANDIDATES = 5
"""Metrics tried per node: those whose ranks relate most to the node's."""


def predictive_parents(table: pd.DataFrame, skip: Iterable[str] = (),
                       allows: Callable[[str, str], bool] | None = None,
                       known: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Edges ``input -> node`` (see the module docstring), from the objectives down.

    Nodes in ``skip`` (a relation's or an expert's function) are not searched;
    ``allows(source, target)`` filters candidate edges (the expert's forbidden edges and tiers).
    No edge closes a cycle with those found before it or with the ``known`` edges (required
    elsewhere: the relations', the expert's): the learner must be able to require them all.
    """
    names, params = _encoded_params(table)
    metrics = {split_column(c)[1]: _ranks(table[c]) for c in columns_of(table, "metric")
               if pd.api.types.is_numeric_dtype(table[c]) and table[c].nunique() > 2}
    objectives = {split_column(c)[1]: _ranks(table[c]) for c in columns_of(table, "objective")
                  if pd.api.types.is_numeric_dtype(table[c])}
    raw = {split_column(c)[1]: table[c].to_numpy(dtype=float) for c in columns_of(table, "metric")
           + columns_of(table, "objective") if split_column(c)[1] in metrics | objectives}
    if params.shape[1] == 0:
        return []
    skip = set(skip)
    edges: list[tuple[str, str]] = []
    required = nx.DiGraph(list(known))  # what is required so far: an edge into it must not close a cycle
    todo, queued = list(objectives), set(objectives)
    while todo:
        node = todo.pop(0)
        y = objectives.get(node, metrics.get(node))
        if node in skip or y is None:
            continue
        below = nx.descendants(required, node) if node in required else set()
        allowed = [m for m in metrics if m != node and m not in below
                   and (allows is None or allows(m, node))]
        found_metrics, found_params = _search(params, {m: metrics[m] for m in allowed}, y,
                                              {m: raw[m] for m in allowed}, raw[node])
        found = [(m, node) for m in found_metrics] + [(p, node) for p in dict.fromkeys(
            names[j] for j in found_params) if allows is None or allows(p, node)]
        edges += found
        required.add_edges_from(found)
        todo += [m for m in found_metrics if m not in queued]
        queued |= set(found_metrics)
    return edges


def predicts(table: pd.DataFrame, metric: str, node: str) -> bool:
    """Whether ``metric`` (beside the parameters most relevant with it) predicts ``node``'s ranks
    clearly better held out than the parameters alone and than its own shuffled copy (the rule
    :func:`predictive_parents` applies to each candidate, without its scaled form: a term of a
    sum moves its total's ranks, where a factor found only as a scale is a product's)."""
    _, params = _encoded_params(table)
    m, y = table[_column(table, metric)], table[_column(table, node)]
    found, _ = _search(params, {metric: _ranks(m)}, _ranks(y), {metric: m.to_numpy(dtype=float)},
                       y.to_numpy(dtype=float), scaling=False)
    return metric in found


def _column(table: pd.DataFrame, node: str) -> str:
    """The column of ``node`` (``<role>:<node>``)."""
    return next(c for c in table.columns if c.partition(":")[2] == node)


def _search(params: np.ndarray, metrics: dict[str, np.ndarray], y: np.ndarray,
            raw_metrics: dict[str, np.ndarray], raw_y: np.ndarray,
            scaling: bool = True) -> tuple[list[str], list[int]]:
    """The metrics and parameter columns that predict ``y`` clearly better held out than a GP over
    all parameters, or nothing: each candidate metric (and none) with the up to
    :data:`MAX_PARAMS` parameters most relevant beside it, the best of these, then a second
    metric where one clearly helps; where none does on ranks (and with ``scaling``), a metric
    that scales the node (:func:`_scaling_parent`, on the metrics' and the node's own values,
    ``raw_*``)."""
    rows = np.isfinite(y) & np.all(np.isfinite(params), axis=1)
    for v in metrics.values():
        rows &= np.isfinite(v)
    if rows.sum() < MIN_ROWS:
        return [], []
    P = params[rows]
    M = {m: v[rows] for m, v in metrics.items() if np.ptp(v[rows]) > 0}
    target = y[rows]
    base = _loo_log_density(P, target)

    def columns(ms: list[str], ps: list[int]) -> np.ndarray:
        return np.column_stack([M[m] for m in ms] + [P[:, j] for j in ps])

    def best_with(seed: list[str]) -> tuple[list[int], np.ndarray]:
        """The best nested prefix (up to :data:`MAX_PARAMS`) of the parameters in the order a GP
        over ``seed`` and all of them finds them relevant (shortest lengthscales first)."""
        ranked = np.argsort(_loo_log_density(columns(seed, list(range(P.shape[1]))), target,
                                             with_gp=True)[1].lengthscales[len(seed):], kind="stable")
        prefixes = [[int(j) for j in ranked[:k]] for k in range(0 if seed else 1, MAX_PARAMS + 1)]
        scored = [(ps, _loo_log_density(columns(seed, ps), target)) for ps in prefixes]
        return max(scored, key=lambda t: float(t[1].mean()))

    # parameters alone first: a metric must clearly beat them (and the GP over all parameters)
    own, own_score = best_with([])
    floor = own_score if own_score.mean() > base.mean() else base
    best = None
    shuffle = np.random.default_rng(0).permutation(len(target))
    for m in _candidates(M, target):
        ps, score = best_with([m])
        # the metric's own shuffled copy beside the same parameters: what an extra input gains
        # by chance (leave-one-out with hyperparameters fitted on every trial flatters inputs)
        M["_shuffled"] = M[m][shuffle]
        null = _loo_log_density(columns(["_shuffled"], ps), target)
        if _clear(score - floor) and _clear(score - null) and (best is None or score.mean() > best[2].mean()):
            best = ([m], ps, score)
    M.pop("_shuffled", None)
    if best is None:
        scaled = _scaling_parent(P, {m: raw_metrics[m][rows] for m in _candidates(M, target)},
                                 raw_y[rows]) if scaling else None
        if scaled is not None:
            return scaled
        return ([], own) if _clear(own_score - base) else ([], [])
    ms, ps, score = best
    if ms and len(ms) < MAX_METRICS:
        tries = {m: _loo_log_density(columns([*ms, m], ps), target) for m in _candidates(M, target)
                 if m not in ms}
        good = {m: t for m, t in tries.items() if _clear(t - score)
                and _clear(t - _loo_log_density(np.column_stack([columns(ms, ps), M[m][shuffle]]), target))}
        if good:
            ms = [*ms, max(good, key=lambda m: (float(good[m].mean()), m))]
    return ms, ps


def _scaling_parent(P: np.ndarray, scales: dict[str, np.ndarray],
                    y: np.ndarray) -> tuple[list[str], list[int]] | None:
    """The candidate metric ``m`` (in ``scales``, tried in order) and up to :data:`MAX_PARAMS`
    parameter columns such that ``m`` times a GP of those parameters predicts ``y`` clearly better
    held out (log density of ``y`` itself) than a GP over the parameters and than the same model
    with ``m`` shuffled; None when no candidate does. Trials where ``m`` is (almost) zero are
    left out of the comparison: the ratio is undefined there."""
    best: tuple[float, str, list[int]] | None = None
    for m, scale in scales.items():
        usable = usable_scale(scale) & np.isfinite(y)
        if usable.sum() < MIN_ROWS:
            continue
        Pu, yu, su = P[usable], y[usable], scale[usable]
        plain = max((_loo_log_density(Pu[:, ps], yu) for ps in _prefixes(Pu, yu)),
                    key=lambda t: float(t.mean()))
        score, ps = max(((_scaled_log_density(Pu[:, ps], yu, su), ps) for ps in _prefixes(Pu, yu / su)),
                        key=lambda t: float(t[0].mean()))
        null = _scaled_log_density(Pu[:, ps], yu, su[np.random.default_rng(0).permutation(len(su))])
        if _clear(score - plain) and _clear(score - null) and (best is None or score.mean() > best[0]):
            best = (float(score.mean()), m, ps)
    return None if best is None else ([best[1]], best[2])


def _prefixes(P: np.ndarray, t: np.ndarray) -> list[list[int]]:
    """All parameter columns, then the nested prefixes (1 to :data:`MAX_PARAMS`) of the columns a
    GP over all of them finds most relevant to ``t`` (shortest lengthscales first)."""
    ranked = np.argsort(_loo_log_density(P, t, with_gp=True)[1].lengthscales, kind="stable")
    return [list(range(P.shape[1]))] + [[int(j) for j in ranked[:k]] for k in range(1, MAX_PARAMS + 1)]


def _scaled_log_density(X: np.ndarray, y: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Per trial, the leave-one-out log density of standardised ``y`` under ``y = scale * g(X)``,
    ``g`` a GP fitted to ``y / scale`` (its held-out Gaussian scaled by ``scale``)."""
    mean, var = _loo_moments(X, y / scale)
    sd = y.std() or 1.0
    return norm.logpdf(y / sd, scale * mean / sd, np.abs(scale) * np.sqrt(var) / sd)


def _candidates(metrics: dict[str, np.ndarray], target: np.ndarray) -> list[str]:
    """The :data:`MAX_CANDIDATES` metrics most rank-correlated with the target, its distance from
    the median, or (their own distance from the median) with that: a product with a
    sign-changing factor correlates only in magnitude."""
    spread = np.abs(target - np.median(target))

    def strength(m: str) -> float:
        v = metrics[m]
        return float(np.nan_to_num(max(abs(np.corrcoef(v, target)[0, 1]), abs(np.corrcoef(v, spread)[0, 1]),
                                       abs(np.corrcoef(np.abs(v - np.median(v)), spread)[0, 1])), nan=0.0))
    return sorted(metrics, key=lambda m: (-strength(m), m))[:MAX_CANDIDATES]


def _clear(gain: np.ndarray) -> bool:
    """A mean gain above :data:`MARGIN` and above one standard error of the per-trial gains."""
    if not np.all(np.isfinite(gain)):
        return False
    mean = float(gain.mean())
    return mean > MARGIN and mean > float(gain.std(ddof=1) / np.sqrt(len(gain)))


def _loo_log_density(X: np.ndarray, y: np.ndarray, with_gp: bool = False):
    """Per trial, the leave-one-out log density of standardised ``y`` under a GP fitted on all
    trials (:func:`_loo_moments`); with ``with_gp``, also the fitted GP."""
    sd = y.std() or 1.0
    mean, var, gp = _loo_moments(X, y, with_gp=True)
    lpd = norm.logpdf(y / sd, mean / sd, np.sqrt(var) / sd)
    return (lpd, gp) if with_gp else lpd


def _loo_moments(X: np.ndarray, y: np.ndarray, with_gp: bool = False):
    """Per trial, the leave-one-out mean and variance of ``y`` (its units) under a GP fitted on
    all trials (closed form on standardised ``y``: mean ``z_i - a_i / Q_ii``, variance
    ``1 / Q_ii``, Q the inverse Gram); with ``with_gp``, also the fitted GP."""
    centre, sd = y.mean(), y.std() or 1.0
    z = (y - centre) / sd
    gp = GP.fit(X, z)
    hp = gp.hyperparameters
    K = matern52(X / hp.lengthscales, amplitude=hp.amplitude) + (hp.noise + 1e-8) * np.eye(len(z))
    Q = cho_solve(cho_factor(K, lower=True), np.eye(len(z)))
    q = np.maximum(np.diag(Q), 1e-12)
    mean, var = centre + sd * (z - Q @ z / q), sd**2 / q
    return (mean, var, gp) if with_gp else (mean, var)


def _ranks(values: pd.Series) -> np.ndarray:
    """Values as ranks in [0, 1] (missing ones NaN)."""
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    out = np.full(len(v), np.nan)
    seen = np.isfinite(v)
    if seen.sum() > 1:
        out[seen] = (rankdata(v[seen]) - 1) / (seen.sum() - 1)
    return out


def _encoded_params(table: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """The parameters as GP inputs (numbers and booleans as ranks, categoricals one-hot) and the
    parameter each column encodes."""
    names: list[str] = []
    parts = []
    for c in columns_of(table, "param"):
        s = table[c]
        name = split_column(c)[1]
        if s.dtype == bool or s.dtype == object and s.dropna().map(type).eq(bool).all():
            s = s.astype(float)
        if pd.api.types.is_numeric_dtype(s):
            if s.nunique() > 1:
                parts.append(_ranks(s)[:, None])
                names.append(name)
        else:
            levels = sorted(s.dropna().astype(str).unique())
            if len(levels) > 1:
                parts.append(np.column_stack([(s.astype(str) == lv).to_numpy(dtype=float) for lv in levels]))
                names += [name] * len(levels)
    return names, (np.hstack(parts) if parts else np.empty((len(table), 0)))
