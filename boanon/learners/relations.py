"""Deterministic relations among logged quantities: how a system composes its measurements.

Systems compose: a total is the sum of its parts, an iteration waits for its slowest worker
(a max), a rate is a ratio, the energy-delay product is a product. Such a relation is what an
expert writes as a ``function:`` node model, and it is in the logs: the quantities satisfy it
to the precision they are printed with. Independence tests cannot represent it (a deterministic
child breaks faithfulness: conditioning on the parts removes every other edge), and a GP over
the parts does not extrapolate a sum or a max. So relations are searched for before the tests,
with a small library of forms fitted by least squares:

- ``linear``: a sparse weighted sum of up to ``max_terms`` other quantities plus a constant
  (greedy forward selection), shown as ``a + b`` when the weights are 1;
- ``group``: ``a * agg(group) + b`` with agg one of max, min, mean, sum, over a group of
  quantities whose names differ only in one number (``m0_busy_s`` ... ``m9_busy_s``): name
  structure proposes the sets a blind search would not try;
- ``product``: ``c * x * y`` or ``c * x / y`` (positive quantities, fitted on a log scale);
- ``squares``: ``sum_i a_i * (x_i - t_i) ** 2 + c``, a loss that adds up squared deviations of
  quantities from their targets (a model calibrated to observed data, a least-squares fit's
  error), or its root (a root-mean-square error, a distance from a target point), one weight
  for all tried first (found from fewer trials): a GP over the parts does not extrapolate the
  parabola's far side, nor find its floor;
- ``share``: an entity's part of a fixed total split in proportion to weights, ``c * w_i / sum_j
  w_j`` where ``w`` is a product of the entity's parameters (or their complements in [0, 1]):
  a batch split over workers by their shares, a cache split over column families.

A relation is *exact* when its held-out error (leave-one-out, so a form cannot win by fitting
noise) is below ``tolerance`` times the target's standard deviation, the measurement's own
spread standing in for its noise level: it becomes a function node, as an expert's
``function:``. It is *approximate* when that error is below ``approximate`` (an iteration's
slowest worker is the mean of per-iteration maxima, a few per cent above the max of the
means): it becomes a formula node ``a * (form) + b`` with a GP on the residual, so the form
carries the extrapolation and the GP what the form misses. Among independent noisy metrics
neither qualifies (a held-out R^2 of 0.99 does not arise by chance).
The accepted relations form a DAG (a part is never explained by its total after the total was
explained by its parts); their order is objectives first, then larger quantities first.

Written here rather than taken from a symbolic-regression library: those search expression
trees for minutes and report formulas without a held-out acceptance rule; what BoAnon needs is
a few fixed forms, checked in milliseconds, each of which becomes a function node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from itertools import combinations, product

import networkx as nx
import numpy as np
import pandas as pd

from boanon.leave_one_out import loo_fit
from boanon.models.forms import Form
from boanon.table import Role, columns_of, split_column
from boanon.ties import better, first_best, rounded, stable_order

DEFAULT_TOLERANCE = 0.01
"""Largest held-out RMSE of an exact relation, as a fraction of the target's standard deviation."""
DEFAULT_APPROXIMATE = 0.05
"""Largest held-out RMSE of an approximate relation (held-out R^2 >= 0.9975)."""
SCALE, OFFSET = "_scale", "_offset"
"""The free constants of an approximate relation's formula (not valid node names in a table)."""
MIN_ROWS = 8
MIN_VARYING = 4
"""Rows that must differ from a quantity's most common value for it to get a weight of its own
(a term of a sum, of a loss, of a product): a counter that moved in two trials fits any sum
exactly (one free weight per trial) and proves nothing. A group aggregate and a share fit one
constant for all their members, so there a *parameter* that moved in a trial or two still
counts (trials near a default flip a machine's switch seldom); a metric that seldom moved does
not: it would become a node whose model cannot predict its rare moves."""
MAX_LEVERAGE = 0.95
MAX_TERMS = 3
MAX_SQUARES = 12
"""Most quantities in a ``squares`` relation (a calibration to a dozen observations): each costs
two weights (the square, the linear term), or one with the squares' weight shared, so a relation
of k quantities needs 2k + 5 trials, or k + 6, to be tried at all."""
CLOSE_BEYOND = 8
"""Quantities past which the loss search goes on only while those picked already come within
tolerance with a weight each (a loss is there, its form not yet found): most targets are no
loss, and each further pick scans every column."""
SQUARES_MAX_LEVERAGE = 0.999
"""A squared term gives the extreme trials high leverage by design (the largest losses); only a
trial that alone decides a weight is no evidence, and an inexact fit's held-out residuals
``e / (1 - h)`` blow up on such trials anyway."""
MIN_PARABOLA_VALUES = 4
"""Distinct values a quantity needs to enter a loss: a parabola passes through any three (a
counter printed as 0, 0.1 or 0.2 GB "is" an exact loss of another)."""
ROOT_MARGIN = 0.05
"""How far (a share of its range) a root's quantity must go past its target, on both sides, in
at least :data:`MIN_VARYING` trials: counters that are often zero sit *at* a target of zero."""
PRODUCT_CANDIDATES = 12
AGGREGATES = ("max", "min", "sum", "mean")  # sum before mean: the same fit, read more plainly
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Relation:
    """``target = expression`` over ``inputs``, found in ``n`` trials.

    ``heldout_error``: leave-one-out RMSE / std(target); ``max_rel_error``: the largest in-sample
    error as a fraction of the target's mean absolute value.
    """

    target: str
    expression: str
    kind: str
    inputs: tuple[str, ...]
    heldout_error: float
    max_rel_error: float
    n: int
    exact: bool = True

    def describe(self) -> str:
        sign = "=" if self.exact else "~"
        return (f"{self.target} {sign} {self.expression} "
                f"(max rel. error {self.max_rel_error:.1%}, {self.kind})")

    def is_linear(self) -> bool:
        """An exact weighted sum of its inputs (it makes a correlation matrix singular)."""
        return self.exact and self.kind in ("sum", "linear", "group sum", "group mean")

    def node_model(self) -> dict:
        """The annotation an expert would write: a function, or, approximate, the relation as a
        parametric form (:class:`boanon.models.forms.Form`: a scale and an offset, a GP residual)."""
        if self.exact:
            return {"function": self.expression}
        form = Form(self.kind, f"{SCALE} * ({self.expression}) + {OFFSET}", {SCALE: 1.0, OFFSET: 0.0},
                    1.0 - self.heldout_error**2, self.inputs)
        return form.node_spec().to_dict()

    def to_dict(self) -> dict:
        return {**asdict(self), "inputs": list(self.inputs)}

    @classmethod
    def from_dict(cls, data: Mapping) -> Relation:
        return cls(**{**data, "inputs": tuple(data["inputs"])})


@dataclass
class _Columns:
    """Named columns of one float matrix: the search indexes thousands of column sets, which a
    DataFrame makes slow (column lookups cost more than the least-squares fits)."""

    names: list[str]
    matrix: np.ndarray  # (n, len(names))

    def __post_init__(self) -> None:
        self.index = {n: i for i, n in enumerate(self.names)}

    def __getitem__(self, name: str) -> np.ndarray:
        return self.matrix[:, self.index[name]]

    def __contains__(self, name: str) -> bool:
        return name in self.index

    def select(self, names: list[str]) -> _Columns:
        return _Columns(list(names), self.matrix[:, [self.index[n] for n in names]])

    def where(self, keep: np.ndarray) -> _Columns:
        return _Columns([n for n, k in zip(self.names, keep, strict=True) if k], self.matrix[:, keep])


@dataclass
class _Fit:
    expression: str
    kind: str
    inputs: tuple[str, ...]
    heldout: float  # leave-one-out RMSE
    predicted: np.ndarray


def node_values(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Role]]:
    """The table's numeric columns by node name (booleans as 0/1) and their roles."""
    values, roles = {}, {}
    for role in ("param", "metric", "objective"):
        for col in columns_of(table, role):  # type: ignore[arg-type]
            s = table[col]
            if s.dtype == bool or s.dtype == object and s.dropna().map(type).eq(bool).all():
                s = s.astype(float)
            if pd.api.types.is_numeric_dtype(s):
                name = split_column(col)[1]
                values[name] = s.astype(float).to_numpy()
                roles[name] = role
    return pd.DataFrame(values, index=table.index), roles  # type: ignore[return-value]


def find_relations(table: pd.DataFrame, skip: Iterable[str] = (), known: Iterable[tuple[str, str]] = (),
                   allows: Callable[[str, str], bool] | None = None, tolerance: float = DEFAULT_TOLERANCE,
                   approximate: float = DEFAULT_APPROXIMATE, max_terms: int = MAX_TERMS) -> list[Relation]:
    """Relations among ``table``'s quantities (tidy trial table), targets in ``skip`` excluded
    (an expert's node model wins over a learned relation), consistent with the ``known`` edges
    (no relation closes a cycle with them) and using only inputs ``allows(input, target)``
    accepts (the expert's forbidden edges and metric tiers); ``approximate=0`` keeps exact ones.
    Names starting with ``_`` are left out: the formulas' free constants are named so."""
    frame, roles = node_values(table)
    skip = set(skip)
    spread = frame.std()
    usable = [c for c in frame.columns if c.isidentifier() and not c.startswith("_")
              and np.isfinite(spread[c]) and spread[c] > 0]
    values = _Columns(usable, frame[usable].to_numpy())
    varies = np.array([_varies(values.matrix[:, j]) for j in range(len(usable))], dtype=bool)
    targets = [c for c in usable if roles[c] != "param" and c not in skip]
    targets.sort(key=lambda c: (roles[c] != "objective", -float(np.nanmean(np.abs(values[c])))))
    inputs = [c for c in usable if roles[c] != "objective"]
    groups = name_groups(inputs)
    aggregates = aggregate_groups(values, groups)
    params = {c for c in inputs if roles[c] == "param"}
    found: list[Relation] = []
    dag = nx.DiGraph(list(known))
    for target in targets:
        below = nx.descendants(dag, target) if target in dag else set()
        allowed = [c for c in inputs if c != target and c not in below
                   and (allows is None or allows(c, target))]
        loose = max(tolerance, approximate)
        fit = _best_fit(values, varies, target, allowed, groups, aggregates, params, loose, max_terms,
                        tolerance / loose)
        if fit is None:
            continue
        exact = fit.heldout <= tolerance * float(spread[target])
        y = values[target]
        rows = np.isfinite(y) & np.isfinite(fit.predicted)
        err = np.abs(fit.predicted[rows] - y[rows])
        scale = float(np.mean(np.abs(y[rows]))) or 1.0
        found.append(Relation(target, fit.expression, fit.kind, fit.inputs,
                              round(fit.heldout / float(spread[target]), 6),
                              round(float(err.max()) / scale, 6), int(rows.sum()), exact))
        dag.add_edges_from((i, target) for i in fit.inputs)
    return found


def name_groups(names: Iterable[str], min_size: int = 3) -> dict[str, list[str]]:
    """Names equal but for one number (``m#_busy_s``: machines, levels, workers), and unions of
    such groups that differ in one word (``m#_*_compute_s``: every device's compute time)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        for m in _DIGITS.finditer(name):
            groups.setdefault(f"{name[:m.start()]}#{name[m.end():]}", []).append(name)
    groups = {p: g for p, g in groups.items() if len(g) >= min_size}
    unions: dict[str, list[str]] = {}
    for pattern in groups:
        words = pattern.split("_")
        for i, word in enumerate(words):
            if "#" not in word:
                unions.setdefault("_".join(words[:i] + ["*"] + words[i + 1:]), []).append(pattern)
    for pattern, parts in unions.items():  # a union needs a word in common besides units
        if len(parts) > 1 and any(len(w) > 2 and "#" not in w and w != "*" for w in pattern.split("_")):
            groups[pattern] = sorted(n for p in parts for n in groups[p])
    return groups


def _best_fit(values: _Columns, varies: np.ndarray, target: str, allowed: list[str],
              groups: dict[str, list[str]], aggregates: dict[str, np.ndarray], params: set[str],
              tolerance: float, max_terms: int, tolerance_ratio: float) -> _Fit | None:
    """The simplest form within ``tolerance`` (held-out RMSE / std), preferring the exact ones
    (within ``tolerance * tolerance_ratio``). ``varies``: per column of ``values``, whether it
    varies enough on all rows (recomputed when the target misses some; :data:`MIN_VARYING`)."""
    y_all = values[target]
    rows = np.isfinite(y_all)
    if rows.sum() < MIN_ROWS:
        return None
    y = y_all[rows]
    if not _varies(y):
        return None
    index = [values.index[c] for c in allowed]
    block = values.matrix[np.ix_(rows, index)] if not rows.all() else values.matrix[:, index]
    columns = _Columns(list(allowed), block)
    finite = np.isfinite(block).all(axis=0)
    varying = varies[index] if rows.all() else np.array([_varies(c) for c in block.T], dtype=bool)
    is_param = np.array([c in params for c in allowed], dtype=bool)
    sub = columns.where(finite & varying)
    if not sub.names:
        return None
    limit = tolerance * float(np.std(y, ddof=1))
    group_values = {p: a[rows] for p, a in aggregates.items()}
    # the one-constant forms also take the parameters that seldom moved (MIN_VARYING)
    fits = [f for f in (_linear(sub, y, max_terms, params),
                        _group(columns.where(finite & (varying | is_param)), y, groups, group_values),
                        _product(sub, y),
                        _share(target, columns.where(finite & is_param), y, groups))
            if f is not None and f.heldout <= limit]
    exact = [f for f in fits if f.heldout <= limit * tolerance_ratio]
    if not exact:  # the last resort: a loss is tried only where no simpler composition holds
        exact = [f for f in (_squares(sub, y, tolerance * tolerance_ratio, params),) if f is not None]
    # an approximate relation must be an aggregate over a name group: its direction (the
    # aggregate from its members) is known, a loose weighted sum's is not
    best = _fewest(exact or [f for f in fits if f.kind.startswith("group")])
    if best is None:
        return None
    full = np.full(len(y_all), np.nan)
    full[rows] = best.predicted
    best.predicted = full
    return best


def _varies(values: np.ndarray | pd.Series) -> bool:
    v = np.asarray(values)
    _, counts = np.unique(v, return_counts=True)
    return len(v) - int(counts.max()) >= MIN_VARYING


def _loo_rmse(X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Leave-one-out RMSE of least squares on ``X`` (with its constant column), coefficients,
    fitted values; infinite when one trial decides a weight (no held-out evidence for it)."""
    coef, fitted, loo = loo_fit(X, y, MAX_LEVERAGE)
    return (np.inf if loo is None else float(np.sqrt(np.mean(loo**2)))), coef, fitted


def _linear(sub: _Columns, y: np.ndarray, max_terms: int, params: set[str]) -> _Fit | None:
    """Greedy forward selection of up to ``max_terms`` columns; the fewest whose held-out error is
    within twice the best size's (a further term that only fits rounding noise is left out).
    One term is a relation only on a parameter: a metric proportional to another is a duplicate,
    which preprocessing merges (keeping both would hide each other's edges from the tests)."""
    X, names = sub.matrix, sub.names
    n = len(y)
    z = (X - X.mean(axis=0)) / X.std(axis=0)
    chosen: list[int] = []
    residual = y - y.mean()
    sizes: list[_Fit] = []
    for _ in range(min(max_terms, n - 4, X.shape[1])):
        corr = np.abs(z.T @ residual)
        corr[chosen] = -np.inf
        chosen.append(first_best(corr))
        design = np.column_stack([X[:, chosen], np.ones(n)])
        heldout, coef, fitted = _loo_rmse(design, y)
        residual = y - fitted
        used = [names[i] for i in chosen]
        sizes.append(_Fit(*_linear_text(used, coef, y), tuple(used), heldout, fitted))
    best = _fewest(sizes)
    return None if best is None or len(best.inputs) == 1 and best.inputs[0] not in params else best


def _squares(sub: _Columns, y: np.ndarray, tolerance: float, params: set[str]) -> _Fit | None:
    """A loss: ``sum_i a_i * (x_i - t_i) ** 2 + c`` or, for a quantity never negative, its root
    (a root-mean-square error, a distance from a target point); the first that holds. Of
    parameters or of metrics, not both: a loss compares like with like (outputs with the
    observations they are calibrated to, a configuration with a point), and among a dozen
    trials a parameter that drives the compared outputs takes the greedy search astray."""
    pools = [[c for c in sub.names if c in params], [c for c in sub.names if c not in params]]
    pools = [p for p in pools if p]
    for root in (False, True) if np.min(y) >= 0 else (False,):
        for pool in pools:
            fit = _squares_fit(sub.select(pool), y, tolerance, root)
            if fit is not None:
                return fit
    return None


def _squares_fit(sub: _Columns, y: np.ndarray, tolerance: float, root: bool) -> _Fit | None:
    """``sum_i a_i * (x_i - t_i) ** 2 + c`` fitted to ``y`` (to ``y ** 2`` when ``root``):
    quantities added greedily (each the one whose square and linear term take most from the
    residual) until every trial is fitted within ``tolerance`` of its own value, then any whose
    removal keeps it so dropped (one picked early may be explained by later ones), then the
    rest checked held out (leave-one-out) the same way. Relative to each value, not only to the
    spread: a loss spans orders of magnitude, and its smallest values are the ones a tuner
    needs right.

    Each set is tried first with one weight ``a`` for all its quantities (an unweighted
    calibration error, a Euclidean distance): the simpler form, which ``k`` quantities
    identify from ``k + 6`` trials where a weight each needs ``2k + 5``; so the greedy picks
    with a weight each while the trials allow, and goes on with the shared weight after.
    A set fitted with a weight each is kept aside while one weight over more quantities would
    still need fewer constants, and the greedy goes on: quantities driven by a few parameters
    are nearly collinear, so ten weighed ones can mimic the twelve terms of an unweighted
    calibration error, and their wrong weights move its minimum. Such a set that fits the sample
    but not held out (one trial deciding a weight among them) does not end the search either.
    Past :data:`CLOSE_BEYOND` quantities the search goes on only while the picks come close.

    Only a loss qualifies: weights ``a_i`` of one sign and targets ``t_i`` within the values
    seen, give or take their range (a parabola centred far outside them is a slightly bent line,
    which two weights per quantity fit to any smooth monotone dependence); a root, of two
    quantities or more, with trials well on both sides of each target (``sqrt(a * x**2 + c)``
    centred at the data's edge is a line, ``a * x`` for a quantity proportional to another).
    Fitted on centred columns, each scaled by its spread or, for a shared weight, all by one unit
    (their median spread: one weight stays one weight), so conditioned (squares of byte counts
    would not be)."""
    n = len(y)
    mean, sd = sub.matrix.mean(axis=0), sub.matrix.std(axis=0)
    scales = {False: sd, True: np.full_like(sd, np.median(sd))}
    scaled = {shared: (sub.matrix - mean) / scale for shared, scale in scales.items()}
    few = _distinct_counts(sub.matrix) < MIN_PARABOLA_VALUES
    target = y**2 if root else y
    own_most, shared_most = (n - 5) // 2, n - 6  # four trials beyond the weights, as MIN_VARYING

    def design(cols: list[int], shared: bool) -> np.ndarray:
        Z = scaled[shared][:, cols]
        squares = (Z**2).sum(axis=1, keepdims=True) if shared else Z**2
        return np.column_stack([squares, Z, np.ones(n)])

    def value(fitted: np.ndarray) -> np.ndarray:
        return np.sqrt(np.maximum(fitted, 0.0)) if root else fitted

    floor = 1e-9 * float(np.max(np.abs(y)))  # a loss of exactly 0 allows last-bit errors, not none

    def close(fitted: np.ndarray) -> bool:
        return bool(np.all(np.abs(value(fitted) - y) <= tolerance * np.maximum(np.abs(y), floor)))

    def within(cols: list[int], shared: bool) -> bool:  # in the sample
        if len(cols) > (shared_most if shared else own_most):
            return False
        X = design(cols, shared)
        return close(X @ np.linalg.lstsq(X, target, rcond=None)[0])

    bound = _squares_bound(y, tolerance * np.maximum(np.abs(y), floor), root)

    def reachable(cols: list[int]) -> bool:
        """Whether any fit within tolerance of every trial lies in the span of ``cols``' design
        with a weight each, which holds every design tried on ``cols`` and their subsets (a
        shared weight's sum of squares too): least squares' residual is the least there."""
        X = design(cols, False)
        residual = X @ np.linalg.lstsq(X, target, rcond=None)[0] - target
        return float(residual @ residual) <= bound

    def accepted(cols: list[int], shared: bool) -> _Fit | None:
        """The loss over ``cols``, pruned first, if it holds held out and is a loss (above)."""
        chosen = list(cols)
        for j in list(chosen):  # a quantity picked early may be explained by later ones
            if len(chosen) > 1 and within([c for c in chosen if c != j], shared):
                chosen.remove(j)
        coef, fitted, loo = loo_fit(design(chosen, shared), target, SQUARES_MAX_LEVERAGE)
        if loo is None or not close(target - loo):  # then held out, each trial's own value
            return None
        heldout = _rmse(value(target - loo), y)
        if heldout > tolerance * float(np.std(y, ddof=1)):  # and to the spread: a quantity that
            return None  # barely moves is within 1 % of its own value whatever is fitted to it
        k = len(chosen)
        weights = 1 if shared else k
        a, b = np.broadcast_to(coef[:weights], k), coef[weights:weights + k]
        with np.errstate(divide="ignore", invalid="ignore"):
            centre = -b / (2 * a)  # a * z**2 + b * z = a * (z - centre)**2 - a * centre**2
        Z, scale = scaled[shared], scales[shared]
        low, high = Z[:, chosen].min(axis=0), Z[:, chosen].max(axis=0)
        inside = (centre >= low - (high - low)) & (centre <= high + (high - low))
        if root:  # at the edge of its data a root is a line (sqrt(x**2 + c) ~ |x|): trials well on both sides
            margin = ROOT_MARGIN * (high - low)
            sides = np.minimum((Z[:, chosen] < centre - margin).sum(axis=0),
                               (Z[:, chosen] > centre + margin).sum(axis=0))
            inside &= (sides >= MIN_VARYING) & (k > 1)
        if not (np.all(a > 0) or np.all(a < 0)) or not inside.all():
            return None
        terms = [f"{_num(a_j / scale[j] ** 2)} * ({sub.names[j]} - {_num(mean[j] + scale[j] * t)}) ** 2"
                 for j, a_j, t in zip(chosen, a, centre, strict=True)]
        text = " + ".join([*terms, _num(float(coef[-1] - np.sum(a * centre**2)))])
        text = text.replace("- -", "+ ").replace("+ -", "- ")
        return _Fit(f"sqrt(max({text}, 0))" if root else text, "root of squares" if root else "squares",
                    tuple(sub.names[j] for j in chosen), heldout, value(fitted))

    chosen: list[int] = []
    weighed: _Fit | None = None  # a fit with a weight each that held, kept while one weight may do
    constants: int | None = None  # those of the first set that fitted the sample with a weight each
    for _ in range(min(MAX_SQUARES, shared_most, int((~few).sum()))):
        if constants is not None and len(chosen) + 3 >= constants:
            break  # one weight over more quantities would no longer need fewer constants
        own = len(chosen) < own_most  # the next pick can still be weighed on its own
        Z = scaled[not own]
        fixed = design(chosen, False) if own else np.column_stack([Z[:, chosen], np.ones(n)])
        base = 0.0 if own else (Z[:, chosen] ** 2).sum(axis=1, keepdims=True)  # joins the shared sum
        chosen.append(_most_explaining(Z, Z**2 + base, target, fixed, chosen, few))
        if not reachable(chosen):  # no try below can fit: most quantities never come close
            if len(chosen) >= CLOSE_BEYOND:
                break
            continue
        # a wrong pick, harmless with a weight of its own, spoils a shared one: try without each
        tries = [(c, True) for c in [chosen, *([x for x in chosen if x != j] for j in chosen[:-1])]]
        fitted = next(((c, w) for c, w in [*tries, *([] if constants else [(chosen, False)])]
                       if within(c, w)), None)
        if fitted is None:
            continue
        fit = accepted(*fitted)
        if fitted[1] and (fit is not None or constants is None):
            return fit  # one weight: it holds, or it fails with no weighed set to go on from
        if not fitted[1]:  # a weight each, held out or not (one trial may decide a weight
            weighed = fit  # among collinear quantities): go on
            constants = 2 * len(fit.inputs if fit else chosen) + 1
    return weighed


def _distinct_counts(matrix: np.ndarray) -> np.ndarray:
    """Distinct values per column (finite columns; one sort for all, not ``np.unique`` each)."""
    if len(matrix) == 0:
        return np.zeros(matrix.shape[1], dtype=int)
    return 1 + (np.diff(np.sort(matrix, axis=0), axis=0) != 0).sum(axis=0)


def _squares_bound(y: np.ndarray, allowed: np.ndarray, root: bool) -> float:
    """The largest sum of squared residuals, on the fitted scale (``y ** 2`` for a root), of a fit
    within ``allowed`` of each trial's ``y``: what a least-squares fit must reach for any fit in
    its span to be close. A root within ``a`` of ``y`` is a square within ``2 a y + a ** 2`` of
    ``y ** 2``; a trial allowed more than its value allows any negative fit, so no bound
    (infinite). A last-bit margin keeps least squares' rounding from deciding."""
    if root:
        if np.any(allowed > np.abs(y)):
            return np.inf
        allowed = 2 * allowed * np.abs(y) + allowed**2
    target = y**2 if root else y
    return float(np.sum(allowed**2)) + 1e-9 * float(target @ target)


def _most_explaining(Z: np.ndarray, Z2: np.ndarray, y: np.ndarray, current: np.ndarray,
                     chosen: list[int], excluded: np.ndarray) -> int:
    """The column of ``Z`` neither ``chosen`` nor ``excluded`` whose square (``Z2``) and itself,
    added to the ``current`` design, leave the least residual (each candidate's pair projected
    off the design: one pass)."""
    q, _ = np.linalg.qr(current)
    r = y - q @ (q.T @ y)
    A, B = Z2 - q @ (q.T @ Z2), Z - q @ (q.T @ Z)
    aa, ab, bb = (A * A).sum(axis=0), (A * B).sum(axis=0), (B * B).sum(axis=0)
    ar, br = A.T @ r, B.T @ r
    det = aa * bb - ab**2
    ok = det > 1e-12 * np.maximum(aa * bb, 1e-300)
    pair = (bb * ar**2 - 2 * ab * ar * br + aa * br**2) / np.where(ok, det, 1.0)
    gain = np.where(ok, pair, br**2 / np.maximum(bb, 1e-300))  # two values: the square adds nothing
    gain[chosen] = -np.inf
    gain[excluded] = -np.inf
    return first_best(gain)


def _linear_text(names: list[str], coef: np.ndarray, y: np.ndarray) -> tuple[str, str]:
    """``a + b`` for unit weights without a constant (kind ``sum``), else the weights."""
    terms = [n if abs(c - 1) < 1e-3 else f"-{n}" if abs(c + 1) < 1e-3 else f"{_num(c)} * {n}"
             for c, n in zip(coef[:-1], names, strict=True)]
    unit = all(t in names for t in terms)
    if abs(coef[-1]) > 1e-6 * (float(np.mean(np.abs(y))) or 1.0):
        terms.append(_num(coef[-1]))
        unit = False
    return " + ".join(terms).replace("+ -", "- "), "sum" if unit and len(names) > 1 else "linear"


def _fewest(fits: list[_Fit]) -> _Fit | None:
    """The fit with the fewest inputs among those within twice the best held-out error."""
    if not fits:
        return None
    bar = 2 * min(f.heldout for f in fits) + 1e-12
    near = [f for f in fits if f.heldout <= bar]
    return min(near, key=lambda f: (len(f.inputs), float(rounded(f.heldout))))  # a tie: the first


def aggregate_groups(values: _Columns, groups: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Each group's aggregates (n, len(AGGREGATES)), computed once for every target."""
    out = {}
    for pattern, members in groups.items():
        block = values.select(members).matrix
        out[pattern] = np.column_stack([getattr(np, agg)(block, axis=1) for agg in AGGREGATES])
    return out


def _group(sub: _Columns, y: np.ndarray, groups: dict[str, list[str]],
           aggregates: dict[str, np.ndarray]) -> _Fit | None:
    """``a * agg(group) + b`` for the name groups fully present among the allowed columns
    (``aggregates``: their values on the target's rows); leave-one-out errors in closed form."""
    best: _Fit | None = None
    sd = float(np.std(y))
    for pattern, members in groups.items():
        if not all(m in sub for m in members):
            continue
        Z = aggregates[pattern]
        zc = Z - Z.mean(axis=0)
        sxx = np.sum(zc**2, axis=0)
        ok = sxx > 0
        if not ok.any():
            continue
        slope = np.where(ok, zc.T @ (y - y.mean()) / np.where(ok, sxx, 1.0), 0.0)
        fitted = y.mean() + zc * slope
        h = 1.0 / len(y) + zc**2 / np.where(ok, sxx, 1.0)
        loo = (y[:, None] - fitted) / (1.0 - np.minimum(h, 0.999))
        heldout = np.where(ok & (h.max(axis=0) <= MAX_LEVERAGE), np.sqrt(np.mean(loo**2, axis=0)), np.inf)
        i = first_best(-heldout)
        if np.isfinite(heldout[i]) and (best is None or heldout[i] < best.heldout - 1e-9 * sd):
            agg, z = AGGREGATES[i], Z[:, i]
            call = f"{agg}({', '.join(members)})"
            exact = _rmse(z, y) <= 2 * _rmse(fitted[:, i], y) + 1e-9 * sd
            offset = float(y.mean() - slope[i] * Z[:, i].mean())
            text = call if exact else f"{_num(slope[i])} * {call} + {_num(offset)}".replace("+ -", "- ")
            best = _Fit(text, f"group {agg}", tuple(members), float(heldout[i]), z if exact else fitted[:, i])
    return best


def _product(sub: _Columns, y: np.ndarray) -> _Fit | None:
    """``c * x * w`` or ``c * x / w`` for positive columns among those most log-correlated with y."""
    if np.min(y) <= 0:
        return None
    positive = sub.where((sub.matrix > 0).all(axis=0))
    if len(positive.names) < 2:
        return None
    logs = np.log(positive.matrix)
    ly = np.log(y)
    corr = np.abs([np.corrcoef(ly, c)[0, 1] if np.std(c) > 0 else 0.0 for c in logs.T])
    top = stable_order(-np.nan_to_num(corr))[:PRODUCT_CANDIDATES]
    names = positive.names
    best: _Fit | None = None
    for i, j in combinations(top, 2):
        for sign in (1.0, -1.0):
            log_c = float(np.mean(ly - logs[:, i] - sign * logs[:, j]))
            base = np.exp(logs[:, i] + sign * logs[:, j])
            fitted = np.exp(log_c) * base
            n = len(y)
            heldout = float(np.sqrt(np.mean((y - fitted) ** 2))) * n / (n - 1)  # one fitted constant
            if best is None or better(best.heldout, heldout):
                op = "*" if sign > 0 else "/"
                c = np.exp(log_c)
                text = f"{names[i]} {op} {names[j]}"
                if abs(c - 1.0) > 1e-3:
                    text = f"{_num(c)} * {text}"
                best = _Fit(text, "product" if sign > 0 else "ratio", (names[i], names[j]), heldout, fitted)
    return best


def _share(target: str, sub: _Columns, y: np.ndarray, groups: dict[str, list[str]],
           max_factors: int = 3) -> _Fit | None:
    """``c * prod(entity's factors) / sum over entities of prod(common factors)`` for a target
    named after an entity (``m3_cpu_samples``: entity ``m3``), with factors among the parameters
    named after the same entities (``m#_share``, ``m#_worker``) that every entity has.

    ``sub`` holds the parameters; weights are those in [0, 1] (shares, switches, fractions)."""
    if np.min(y) < 0:
        return None
    totals: dict[tuple[str, ...], np.ndarray] = {}  # denominators by the groups they sum over
    best: _Fit | None = None
    for terms, shared in _share_candidates(target, sub, groups, max_factors):
        num = np.prod([1 - sub[f] if flip else sub[f] for f, flip in terms], axis=0)
        key = tuple(g[0] for g in shared)
        if key not in totals:
            totals[key] = np.sum([np.prod([sub[n] for n in row], axis=0)
                                  for row in zip(*shared, strict=True)], axis=0)
        den = totals[key]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(den > 0, num / den, 0.0)
        if np.std(z) == 0:
            continue
        c = float(z @ y / (z @ z))
        fitted = c * z
        heldout = _rmse(fitted, y) * len(y) / (len(y) - 1)
        if best is None or better(best.heldout, heldout):
            written = [f"(1 - {f})" if flip else f for f, flip in terms]
            total = " + ".join(" * ".join(row) for row in zip(*shared, strict=True))
            best = _Fit(f"{_num(c)} * {' * '.join(written)} / ({total})", "share",
                        tuple(dict.fromkeys([*(f for f, _ in terms), *(n for g in shared for n in g)])),
                        heldout, fitted)
    return best


def _share_candidates(target: str, sub: _Columns, groups: dict[str, list[str]], max_factors: int
                      ) -> Iterator[tuple[list[tuple[str, bool]], list[list[str]]]]:
    """The share relations to try for ``target``: the entity's own factors, each as itself or as
    its complement (``(factor, flipped)``), and the name groups the denominator sums over (the
    common families of the factors not flipped)."""
    unit = {c for c in sub.names if sub[c].min() >= 0 and sub[c].max() <= 1}
    for m in _DIGITS.finditer(target):
        entity, index = target[:m.start()], m.group()
        families = [g for p, g in groups.items() if p.startswith(f"{entity}#_") and "*" not in p
                    and all(n in unit for n in g)]
        members = {n[len(entity):].split("_", 1)[0] for g in families for n in g}
        common = [g for g in families if len(g) == len(members)]
        own = [n for g in families for n in g if n.startswith(f"{entity}{index}_")]
        if len(members) < 3 or not own or not common:
            continue
        for size in range(1, max_factors + 1):
            for factors in combinations(own, size):
                for flips in product((False, True), repeat=size):
                    terms = list(zip(factors, flips, strict=True))
                    suffixes = {f[len(entity) + len(index):] for f, flip in terms if not flip}
                    shared = [g for g in common if g[0][len(entity):].lstrip("0123456789") in suffixes]
                    if shared:
                        yield terms, shared


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


def _num(x: float) -> str:
    return f"{x:.6g}"
