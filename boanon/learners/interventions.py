"""Parameter -> metric edges from the fact that parameters are interventions.

The tuner sets the parameters: nothing in the system causes them, so a metric's dependence on a
parameter, given the other parameters that move it, is that parameter's effect (no back-door
path to block). PC instead tests a parameter against a metric given *metrics* too, and on a
run's trials, concentrated around the best configurations and so correlated, conditioning on a
downstream metric or on a correlated parameter hides real effects (a tuning run's graph missed
most parameter -> metric edges that random trials reveal).

So each metric's parameter parents are re-selected by a forward regression: given its metric
parents from the learner (a metric downstream of another is explained through it), the
parameter whose basis (linear + quadratic for numbers, one-hot for categoricals, as the tests
see them) adds the most explained variance is added while its partial F-test is significant at
``alpha``. Threshold, bowl-shaped and categorical effects enter through that basis.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from boanon.annotations import Knowledge
from boanon.learners.citest import MIN_DOF, partial_tests
from boanon.learners.preprocess import Prepared


def select_parameters(prepared: Prepared, node: str, given: list[str], candidates: list[str],
                      alpha: float) -> list[str]:
    """Parameters (of ``candidates``) that move ``node`` given the nodes ``given``, in the order
    they were added (forward selection by partial F-tests at ``alpha``)."""
    y = prepared.basis[node][:, 0]
    chosen: list[str] = []
    left = list(candidates)
    while left:
        z_parts = [prepared.basis[g] for g in given + chosen]
        z = np.hstack(z_parts) if z_parts else None
        used = 0 if z is None else z.shape[1]
        if prepared.n - used - max(prepared.basis[c].shape[1] for c in left) - 1 < MIN_DOF:
            break
        pvals, strength = partial_tests(y, [prepared.basis[c] for c in left], z)
        pvals = np.where(np.isfinite(strength), pvals, 1.0)
        best = int(np.argmin(pvals))
        if pvals[best] > alpha:
            break
        chosen.append(left.pop(best))
    return chosen


def reselect_parameter_parents(dag: nx.DiGraph, prepared: Prepared, knowledge: Knowledge,
                               alpha: float) -> None:
    """Replace every learnt node's parameter parents in ``dag`` by :func:`select_parameters`'
    (in place); required edges stay, forbidden ones are never added, learned function nodes
    (their inputs are known) are left alone."""
    roles = prepared.all_roles
    params = [n for n, r in prepared.roles.items() if r == "param"]
    for node in list(dag.nodes):
        if roles.get(node) == "param" or node not in prepared.basis or knowledge.is_function(node):
            continue
        given = [p for p in dag.predecessors(node) if roles.get(p) != "param" and p in prepared.basis]
        allowed = [p for p in params if knowledge.allows(p, node, roles)]
        keep = set(select_parameters(prepared, node, given, allowed, alpha))
        required = {s for s, t in knowledge.required_edges() if t == node}
        for p in [p for p in dag.predecessors(node) if roles.get(p) == "param"]:
            if p not in keep and p not in required:
                dag.remove_edge(p, node)
        dag.add_edges_from((p, node) for p in keep)
