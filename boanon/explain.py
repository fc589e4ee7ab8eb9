"""Why one configuration beats another: the ablation path between them and the metrics that moved.

The ablation path (as in Maggy's ablation studies and Biedenkapp et al.'s ablation analysis)
goes from the default to the best configuration one parameter change at a time, greedily: at
each step, the change the model predicts to help most. Its steps say which changes matter and
in what order; the changes left at the end barely move the prediction. Measured, the path's
intermediate configurations check the model's story on the system itself.

Along the graph: the metrics the two trials logged, ordered by how far they moved, each with
the changed parameters among its ancestors in the run's graph: the mechanism, as the run
learned it (``m3_worker`` off -> ``m3_busy_s`` down -> ``worker_busy_max_s`` down).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from boanon.graph import CausalGraph
from boanon.graph_render import HIDDEN
from boanon.models import Surrogate
from boanon.models.threads import single_blas_thread
from boanon.objectives import Objective
from boanon.space import Space
from boanon.table import Value

START = "(start)"
"""The ``param`` of the path's first row: the starting configuration itself."""


def changed(space: Space, a: Mapping[str, Value], b: Mapping[str, Value]) -> list[str]:
    """The parameters whose values differ between ``a`` and ``b``, in the space's order."""
    return [n for n in space.names if a[n] != b[n]]


@single_blas_thread
def ablation_path(surrogate: Surrogate, start: Mapping[str, Value], end: Mapping[str, Value],
                  objective: Objective, n_samples: int = 256, seed: int = 0) -> pd.DataFrame:
    """The greedy path from ``start`` to ``end`` by the model's predicted mean of ``objective``.

    Rows ``step, param, old, new, config, mean, sd, gain, share`` (``old`` and ``new``: the
    parameter's value before and after the step): ``gain`` is how much the step
    improved the prediction (positive = better, in the objective's units), ``share`` its part of
    the whole path's predicted improvement. A change that breaks a constraint on its own waits
    until it does not; changes that never can are made together in the last step (``param``
    joins their names with ``+``).
    """
    space = surrogate.space
    current = dict(start)
    remaining = changed(space, start, end)
    rows: list[dict[str, Any]] = []
    mean, sd = _predict(surrogate, [current], objective, n_samples, seed)
    rows.append({"step": 0, "param": START, "old": None, "new": None, "config": dict(current),
                 "mean": mean[0], "sd": sd[0]})
    while remaining:
        candidates = [(n, {**current, n: end[n]}) for n in remaining]
        candidates = [(n, c) for n, c in candidates if space.is_feasible(c)]
        if not candidates:  # only together: e.g. two bounds of one constraint
            candidates = [("+".join(remaining), {**current, **{n: end[n] for n in remaining}})]
        means, sds = _predict(surrogate, [c for _, c in candidates], objective, n_samples, seed)
        k = int(np.argmin(objective.to_minimize(means)))
        name, current = candidates[k]
        names = name.split("+")
        rows.append({"step": len(rows), "param": name, "old": _joined(start, names),
                     "new": _joined(end, names), "config": dict(current), "mean": means[k], "sd": sds[k]})
        remaining = [n for n in remaining if n not in names]
    table = pd.DataFrame(rows)
    improvement = objective.to_minimize(table["mean"].to_numpy())
    table["gain"] = np.concatenate([[0.0], -np.diff(improvement)])
    total = improvement[0] - improvement[-1]
    table["share"] = table["gain"] / total if total != 0 else np.nan
    return table


def _predict(surrogate: Surrogate, configs: list[dict[str, Value]], objective: Objective,
             n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd; one seed for every call, so that steps are compared on common random numbers."""
    mean, sd = surrogate.predict(configs, np.random.default_rng(seed), n_samples)[objective.name]
    return np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)


def _joined(config: Mapping[str, Value], names: list[str]) -> Value:
    return config[names[0]] if len(names) == 1 else ", ".join(str(config[n]) for n in names)


def metric_moves(graph: CausalGraph | None, before: Mapping[str, float], after: Mapping[str, float],
                 changed_params: list[str], objective: str) -> pd.DataFrame:
    """The metrics logged by both trials that moved, read top-down along the graph.

    Rows ``metric, before, after, change`` (relative: ``after / before - 1``; NaN when
    ``before`` is 0), ``hops`` (edges from the metric to ``objective`` in ``graph``; NaN off
    its paths), ``moved_by`` (the changed parameters among its ancestors, comma-separated, in
    the order of ``changed_params``: pass them most important first) and ``via`` (its parents
    in the graph). Metrics nearest the objective come first, then by the size of their move;
    metrics off the objective's paths last.
    """
    g = graph.to_networkx() if graph is not None else nx.DiGraph()
    g.remove_nodes_from(HIDDEN)  # a warm start's task indicator is no parent a person can act on
    hops = nx.shortest_path_length(g.reverse(copy=False), objective) if objective in g else {}
    rows = []
    for name in sorted(set(before) & set(after)):
        a, b = float(before[name]), float(after[name])
        if not (np.isfinite(a) and np.isfinite(b)) or a == b:
            continue
        ancestors = nx.ancestors(g, name) if name in g else set()
        rows.append({"metric": name, "before": a, "after": b,
                     "change": b / a - 1 if a != 0 else np.nan, "hops": hops.get(name, np.nan),
                     "moved_by": ", ".join(p for p in changed_params if p in ancestors),
                     "via": ", ".join(sorted(g.predecessors(name))) if name in g else ""})
    table = pd.DataFrame(rows, columns=["metric", "before", "after", "change", "hops", "moved_by", "via"])
    table["_size"] = table["change"].abs().fillna(np.inf)
    table = table.sort_values(["hops", "_size"], ascending=[True, False], na_position="last")
    return table.drop(columns="_size").reset_index(drop=True)
