"""Metric preprocessing: from a raw trial table to the few, informative, standardised columns a learner sees.

Logs carry hundreds of metrics, most constant, duplicated (bytes and counts, sums and averages) or
unrelated to the objectives. Each is dropped or merged here with a recorded reason, so that
``boanon learn`` can say why a metric is not in the graph. Values are rank-transformed (Gaussian
copula for metrics and objectives, uniform scores for parameters), which keeps monotone
nonlinear links linear enough for partial-correlation tests and makes outliers harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm, rankdata

from boanon.table import Role, columns_of, split_column

MIN_TRIALS = 5
"""Structure learning needs at least this many trials with every objective measured."""


@dataclass
class Prepared:
    """The learner's input: one entry per learnable node, plus what preprocessing decided.

    ``basis[node]`` is an (n, k) centred design with unit-variance columns: one column for metrics,
    objectives, booleans and constant-free numeric parameters' linear term, a second (quadratic,
    orthogonalised) column for numeric parameters, and k-1 one-hot columns for categoricals.
    ``raw`` keeps the original values of the learnt nodes (for weights and reports).
    ``encodings[node]`` names a categorical's one-hot columns; it belongs to these rows (a
    resample that misses a level has one column fewer, a single level leaves none).
    """

    roles: dict[str, Role]
    basis: dict[str, np.ndarray]
    raw: pd.DataFrame
    excluded: dict[str, Role] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    encodings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.raw)

    @property
    def nodes(self) -> list[str]:
        return list(self.roles)

    @property
    def all_roles(self) -> dict[str, Role]:
        """Roles of the learnt nodes and of those preprocessing set aside (knowledge may still
        connect them)."""
        return {**self.roles, **self.excluded}

    def matrix(self) -> tuple[np.ndarray, list[str], dict[str, str]]:
        """A numeric matrix for generic learners: linear term per node, one-hot for categoricals.

        Returns the matrix, its column names and the node owning each column.
        """
        cols, names, owner = [], [], {}
        for node, b in self.basis.items():
            labels = self.encodings.get(node)
            if labels is None:
                cols.append(b[:, :1])
                names.append(node)
                owner[node] = node
            else:
                cols.append(b)
                for level in labels:
                    names.append(f"{node}={level}")
                    owner[names[-1]] = node
        return np.hstack(cols), names, owner

    def pair_correlations(self) -> dict[frozenset[str], float]:
        """Largest absolute correlation between any columns of two nodes (a strength for learners
        that report none, used to order their edges)."""
        x, names, owner = self.matrix()
        corr = np.abs(np.corrcoef(x, rowvar=False))
        out: dict[frozenset[str], float] = {}
        for i, a in enumerate(names):
            for j in range(i + 1, len(names)):
                pair = frozenset((owner[a], owner[names[j]]))
                if len(pair) == 2:
                    out[pair] = max(out.get(pair, 0.0), float(corr[i, j]))
        return out

    def resample(self, rows: np.ndarray) -> Prepared:
        """The same nodes on a bootstrap resample of the trials (transforms are recomputed)."""
        raw = self.raw.iloc[rows].reset_index(drop=True)
        basis, encodings = _bases(raw, self.roles)
        return Prepared(dict(self.roles), basis, raw, dict(self.excluded), self.report, encodings)


def preprocess(table: pd.DataFrame, *, near_constant: float = 0.95, duplicate_threshold: float = 0.99,
               max_metrics: int | None = None, max_missing: float = 0.2,
               protected: set[str] | frozenset[str] = frozenset(),
               set_aside: Mapping[str, str] | None = None) -> Prepared:
    """Drop, merge and select metrics, encode parameters and standardise everything.

    ``near_constant``: a column whose most frequent value covers at least this share of the trials
    is near-constant. ``duplicate_threshold``: metrics whose absolute rank correlation reaches it
    are merged, one representative per group (a metric duplicating an objective merges into it):
    the tests see ranks, and two near-identical columns would hide each other's edges.
    ``max_metrics``: keep at most this many metrics, the most correlated with the objectives.
    ``protected``: nodes named by expert knowledge, never dropped or merged away.
    ``set_aside``: node -> reason: kept in the graph, not learnt from (a linear function of other
    nodes, whose parents are known, makes the tests' correlation matrix singular).
    """
    set_aside = set_aside or {}
    objectives = columns_of(table, "objective")
    if not objectives:
        raise ValueError("the table has no objective:<name> column: nothing to learn a graph towards")
    report: dict[str, Any] = {"dropped": {}, "merged": {}, "rows_dropped": []}
    bad_rows = table[objectives].isna().any(axis=1)
    if bad_rows.any():
        report["rows_dropped"] = [str(t) for t in table.loc[bad_rows, "trial"]] if "trial" in table else []
    table = table.loc[~bad_rows].reset_index(drop=True)
    if len(table) < MIN_TRIALS:
        raise ValueError(f"only {len(table)} trials with all objectives measured; "
                         f"structure learning needs at least {MIN_TRIALS}")

    raw: dict[str, pd.Series] = {}
    roles: dict[str, Role] = {}
    excluded: dict[str, Role] = {}
    for col in table.columns:
        if col == "trial":
            continue
        role, name = split_column(col)
        values = table[col]
        why = set_aside.get(name) or _why_unusable(values, role, near_constant, max_missing)
        if why and name in protected:
            excluded[name] = role
            report["dropped"][name] = f"{why}: kept in the graph, not learnt from"
            continue
        if why:
            report["dropped"][name] = why
            continue
        roles[name] = role
        raw[name] = _fill(values, role)
    frame = pd.DataFrame(raw)

    _merge_duplicates(frame, roles, duplicate_threshold, protected, report)
    if max_metrics is not None:
        _cap_metrics(frame, roles, max_metrics, protected, report)

    order = [n for role in ("param", "metric", "objective") for n in roles if roles[n] == role]
    roles = {n: roles[n] for n in order}
    frame = frame[order]
    basis, encodings = _bases(frame, roles)
    report["kept"] = {r: sum(1 for v in roles.values() if v == r) for r in ("param", "metric", "objective")}
    return Prepared(roles, basis, frame, excluded, report, encodings)


def _is_categorical(values: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values))


def _why_unusable(values: pd.Series, role: Role, near_constant: float, max_missing: float) -> str | None:
    if _is_categorical(values):
        present = values.dropna().astype(str).to_numpy()
        x = None
    else:
        x = values.to_numpy(dtype=float)
        present = x = x[~np.isnan(x)]
    missing = 1.0 - len(present) / max(1, len(values))
    if role != "param" and missing > max_missing:
        return f"missing in {missing:.0%} of trials"
    counts = np.unique(present, return_counts=True)[1]
    if len(counts) <= 1:
        if role == "param" and missing > 0:  # the rest ran with something else, not logged so
            return f"constant where logged: {len(present)} of {len(values)} trials log it, with one value"
        return "constant: never varied" if role == "param" else "constant"
    if role != "param" and counts.max() >= near_constant * len(present):
        return f"near-constant ({counts.max()} of {len(present)} trials share one value)"
    if x is not None and np.std(x) <= 1e-12 * max(1.0, float(np.abs(x).max())):
        return "near-constant (spread below floating-point noise)"
    return None


def _fill(values: pd.Series, role: Role) -> pd.Series:
    """Fill the few missing values: median for numbers, the most frequent value for categories."""
    if not values.isna().any():
        return values
    if _is_categorical(values):
        return values.fillna(values.mode().iloc[0])
    return values.astype(float).fillna(float(values.median()))


def _normal_scores(x: np.ndarray) -> np.ndarray:
    """Gaussian copula scores of each column (ties share their average rank)."""
    return norm.ppf((rankdata(x, axis=0) - 0.5) / len(x))


def _bases(frame: pd.DataFrame, roles: dict[str, Role]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Every node's design columns (metrics and objectives in one vectorised pass) and one-hot labels."""
    numeric = [n for n in roles if roles[n] != "param"]
    scores = _standardise(_normal_scores(frame[numeric].to_numpy(dtype=float))) if numeric else None
    basis: dict[str, np.ndarray] = {n: scores[:, [j]] for j, n in enumerate(numeric)}
    encodings: dict[str, list[str]] = {}
    for n in roles:
        if roles[n] == "param":
            basis[n], labels = _param_basis(frame[n])
            if labels is not None:
                encodings[n] = labels
    return {n: basis[n] for n in roles}, encodings


def _standardise(m: np.ndarray) -> np.ndarray:
    m = m - m.mean(axis=0)
    sd = m.std(axis=0)
    return m / np.where(sd > 0, sd, 1.0)


def _param_basis(values: pd.Series) -> tuple[np.ndarray, list[str] | None]:
    """A parameter's standardised design columns (and the one-hot level labels for categoricals)."""
    if _is_categorical(values):
        text = values.astype(str)
        levels = sorted(text.unique())
        onehot = np.column_stack([(text == lv).to_numpy(float) for lv in levels[1:]] or
                                 [np.empty((len(text), 0))])
        return _standardise(onehot), levels[1:]
    x = values.astype(float).to_numpy()
    u = _standardise(rankdata(x)[:, None])
    if len(np.unique(x)) <= 2:
        return u, None
    quad = u[:, 0] ** 2
    quad -= quad.mean()
    quad -= (quad @ u[:, 0]) / (u[:, 0] @ u[:, 0]) * u[:, 0]
    return (np.hstack([u, _standardise(quad[:, None])]) if quad.std() > 1e-9 else u), None


def _rank_corr(frame: pd.DataFrame) -> pd.DataFrame:
    ranks = rankdata(frame.to_numpy(dtype=float), axis=0)
    return pd.DataFrame(np.corrcoef(ranks, rowvar=False), index=frame.columns, columns=frame.columns)



def _relevance(frame: pd.DataFrame, roles: dict[str, Role]) -> pd.Series:
    """Per metric: the largest absolute rank correlation with any objective."""
    metrics = [n for n in roles if roles[n] == "metric"]
    objectives = [n for n in roles if roles[n] == "objective"]
    corr = _rank_corr(frame[metrics + objectives])
    return corr.loc[metrics, objectives].abs().max(axis=1).fillna(0.0)


def _merge_duplicates(frame: pd.DataFrame, roles: dict[str, Role], threshold: float,
                      protected: set[str] | frozenset[str], report: dict[str, Any]) -> None:
    """Group (near-)exact duplicates among metrics and objectives; keep one representative each."""
    nodes = [n for n in roles if roles[n] != "param"]
    if len(nodes) < 2:
        return
    corr = _rank_corr(frame[nodes]).abs().to_numpy()
    relevance = _relevance(frame, roles)
    # Representatives first: objectives, then knowledge-named metrics, then the most relevant.
    order = sorted(range(len(nodes)), key=lambda i: (roles[nodes[i]] != "objective",
                                                     nodes[i] not in protected,
                                                     -relevance.get(nodes[i], 1.0), len(nodes[i]), nodes[i]))
    taken = np.zeros(len(nodes), bool)
    for i in order:
        if taken[i]:
            continue
        taken[i] = True
        members = [j for j in order if not taken[j] and corr[i, j] >= threshold
                   and roles[nodes[j]] == "metric" and nodes[j] not in protected]
        if not members:
            continue
        rep = nodes[i]
        report["merged"][rep] = [nodes[j] for j in members]
        for j in members:
            taken[j] = True
            report["dropped"][nodes[j]] = f"duplicate of {rep} (|rank corr| {corr[i, j]:.4f})"
            del roles[nodes[j]]


def _cap_metrics(frame: pd.DataFrame, roles: dict[str, Role], max_metrics: int,
                 protected: set[str] | frozenset[str], report: dict[str, Any]) -> None:
    relevance = _relevance(frame, roles).sort_values(ascending=False, kind="stable")
    free = [m for m in relevance.index if m not in protected]
    budget = max(0, max_metrics - (len(relevance) - len(free)))
    for m in free[budget:]:
        report["dropped"][m] = (f"not among the {max_metrics} metrics most related to the objectives "
                                f"(|rank corr| {relevance[m]:.2f})")
        del roles[m]
