"""From a learner's partially directed output to the final graph every learner shares.

Steps, in order: orient by tiers (reversing a tier-breaking arrow where the reverse is allowed,
dropping it otherwise), Meek's rules, then the still-undirected edges from upstream to downstream
(distance from the parameters) without cycles; weigh every edge by its partial correlation given
the other parents; add the required edges; cap the number of parents (keeping required and
strongest); reverse an arrow from a metric on an objective's path into a metric that looks like
a part of it and predicts it; drop metrics with no directed path to an objective; connect every
parameter with no path to any objective straight to the objectives, so that no parameter is lost
from the model.
"""

from __future__ import annotations

from collections import deque
from functools import cache
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from boanon import units
from boanon.annotations import Knowledge
from boanon.graph import CausalGraph, Edge
from boanon.learners.base import PartialGraph
from boanon.learners.citest import partial_tests
from boanon.learners.predictive import predicts
from boanon.learners.preprocess import Prepared


def orient(partial: PartialGraph, roles: dict[str, str], knowledge: Knowledge) -> nx.DiGraph:
    """A DAG over ``roles`` from the learner's output; every arrow respects the knowledge."""

    def ok(a: str, b: str) -> bool:
        return knowledge.allows(a, b, roles)

    directed: set[tuple[str, str]] = set()
    undirected: set[frozenset[str]] = set()
    for a, b in partial.directed:
        if ok(a, b):
            directed.add((a, b))
        elif ok(b, a):
            directed.add((b, a))
    for pair in partial.undirected:
        a, b = sorted(pair)
        if ok(a, b) and ok(b, a):
            undirected.add(pair)
        elif ok(a, b) or ok(b, a):
            directed.add((a, b) if ok(a, b) else (b, a))
    undirected = {p for p in undirected if not any(tuple(sorted(p, reverse=r)) in directed for r in (0, 1))}
    _meek(directed, undirected)

    dag = nx.DiGraph()
    dag.add_nodes_from(roles)
    strength = partial.strength
    for a, b in sorted(directed, key=lambda e: -strength.get(frozenset(e), 0.0)):
        if not nx.has_path(dag, b, a):  # a learner's arrows may close a cycle: drop the weakest
            dag.add_edge(a, b)
    depth = _distance_from_params(roles, directed, undirected)
    for pair in sorted(undirected, key=lambda p: (-strength.get(p, 0.0), sorted(p))):
        a, b = sorted(pair, key=lambda n: (depth.get(n, np.inf), n))
        if nx.has_path(dag, b, a):
            a, b = b, a
        dag.add_edge(a, b)
    return dag


def _meek(directed: set[tuple[str, str]], undirected: set[frozenset[str]]) -> None:
    """Apply Meek's rules R1-R3 until nothing changes (in place)."""
    def adjacent(a: str, b: str) -> bool:
        return (a, b) in directed or (b, a) in directed or frozenset((a, b)) in undirected

    changed = True
    while changed:
        changed = False
        into: dict[str, set[str]] = {}
        for a, b in directed:
            into.setdefault(b, set()).add(a)
        neigh: dict[str, set[str]] = {}
        for p in undirected:
            a, b = tuple(p)
            neigh.setdefault(a, set()).add(b)
            neigh.setdefault(b, set()).add(a)
        for pair in list(undirected):
            for x, y in (tuple(pair), tuple(pair)[::-1]):
                r1 = any(not adjacent(a, y) for a in into.get(x, ()) if a != y)
                r2 = any((x, m) in directed for m in into.get(y, ()))
                feeders = [c for c in into.get(y, ()) if c in neigh.get(x, ())]
                r3 = any(not adjacent(c, d) for i, c in enumerate(feeders) for d in feeders[i + 1:])
                if r1 or r2 or r3:
                    undirected.discard(pair)
                    directed.add((x, y))
                    changed = True
                    break
            if changed:
                break


def _distance_from_params(roles: dict[str, str], directed: set[tuple[str, str]],
                          undirected: set[frozenset[str]]) -> dict[str, int]:
    """Skeleton distance from the nearest parameter: upstream metrics are closer."""
    neigh: dict[str, set[str]] = {n: set() for n in roles}
    for a, b in list(directed) + [tuple(p) for p in undirected]:
        neigh[a].add(b)
        neigh[b].add(a)
    dist = {n: 0 for n, r in roles.items() if r == "param"}
    queue = deque(dist)
    while queue:
        n = queue.popleft()
        for m in neigh[n]:
            if m not in dist:
                dist[m] = dist[n] + 1
                queue.append(m)
    return dist


def edge_weights(dag: nx.DiGraph, prepared: Prepared) -> dict[tuple[str, str], float]:
    """Each edge's strength: sqrt of the partial R^2 of the parent given the other parents.

    Edges whose node has too many parents for the trials to test are left out (weight None).
    """
    out: dict[tuple[str, str], float] = {}
    for v in dag.nodes:
        parents = [p for p in dag.predecessors(v) if p in prepared.basis]
        if v not in prepared.basis:
            continue
        y = prepared.basis[v][:, 0]
        for p in parents:
            others = [prepared.basis[o] for o in parents if o != p]
            _, s = partial_tests(y, [prepared.basis[p]], np.hstack(others) if others else None)
            if np.isfinite(s[0]):  # else too few trials for this many parents: weight unknown
                out[(p, v)] = round(float(s[0]), 4)
    return out


def finalize(dag: nx.DiGraph, prepared: Prepared, knowledge: Knowledge, *, max_parents: int | None,
             report: dict[str, Any], prune: bool = True, alpha: float = 0.01) -> CausalGraph:
    """Weights, required edges, parent cap, pruning and orphan parameters; returns the graph.

    ``prune=False`` keeps metrics without a directed path to an objective (to study a system's
    structure; the surrogate has no use for them).
    """
    roles = prepared.all_roles
    dag = dag.copy()
    dag.add_nodes_from(roles)
    required = [e for e in knowledge.required_edges() if e[0] in roles and e[1] in roles]
    dag.add_edges_from(required)
    _break_cycles(dag, set(required), report)
    weights = edge_weights(dag, prepared)
    objectives = [n for n, r in roles.items() if r == "objective"]

    if max_parents is not None:
        for v in list(dag.nodes):
            parents = sorted(dag.predecessors(v),
                             key=lambda p: ((p, v) not in required, -weights.get((p, v), 0.0)))
            for p in parents[max_parents:]:
                if (p, v) not in required:
                    dag.remove_edge(p, v)
                    report["edges_capped"].append(f"{p} -> {v}")

    expert = [e for e in required if e[1] not in knowledge.learned]  # a learned relation: only on a path
    keep = set(objectives) | {n for e in expert for n in e} | (set() if prune else set(dag.nodes))
    keep |= _on_paths(dag, objectives)
    if prune and prepared.n >= MIN_REVERSAL_TRIALS:
        keep = _reverse_into_path(dag, keep, objectives, prepared, knowledge, set(required), report)
    for n in list(dag.nodes):
        if roles[n] == "metric" and n not in keep:
            dag.remove_node(n)
            report["dropped"][n] = "no directed path to an objective"
    knowledge = knowledge.without_learned(dag.nodes)

    for p in [n for n, r in roles.items() if r == "param"]:
        if not any(nx.has_path(dag, p, o) for o in objectives):
            for o in objectives:
                target = _fallback_target(p, o, dag, prepared, knowledge)
                if knowledge.allows(p, target, roles):
                    dag.add_edge(p, target)
                    report["params_connected"].append(f"{p} -> {target}")
    _link_dependent_params(dag, prepared, knowledge, objectives, alpha, report)
    weights = edge_weights(dag, prepared)
    graph = CausalGraph(roles={n: r for n, r in roles.items() if n in dag},
                        edges=[Edge(a, b, weights.get((a, b))) for a, b in _sorted_edges(dag)])
    return knowledge.apply(graph, strict=False)


def _reverse_into_path(dag: nx.DiGraph, keep: set[str], objectives: list[str], prepared: Prepared,
                       knowledge: Knowledge, required: set[tuple[str, str]],
                       report: dict[str, Any]) -> set[str]:
    """``keep`` and the metrics kept by reversing their arrow from a metric on an objective's
    path (``dag`` changed in place), each reversal reported.

    Between two metrics an arrow's direction is the learner's weakest guess: ordered by the
    variance the parameters explain, a running total (a chain of stages, each adding its own
    parameters' effect) comes after the later stages and before its earlier parts, which then
    hang below it and would be dropped. A metric below the path joins it as a parent only where
    it looks like a part of the path metric (:func:`_part_of`) and makes its ranks clearly more
    predictable held out than the parameters alone do (:func:`~boanon.learners.predictive.predicts`):
    a copy, a sibling through shared parameters, a factor of a product (a count in other units)
    is still dropped."""
    roles = prepared.roles
    table = pd.DataFrame({f"{role}:{n}": prepared.raw[n] for n, role in roles.items()})

    @cache  # a pair checked again on a later pass (after another reversal) costs nothing
    def predicted(part: str, total: str) -> bool:
        return predicts(table, part, total)

    keep = set(keep)
    changed = True
    while changed:
        changed = False
        for a, b in _sorted_edges(dag):
            if a not in keep or b in keep or roles.get(a) != "metric" or roles.get(b) != "metric" \
                    or (a, b) in required or not knowledge.allows(b, a, roles):
                continue
            dag.remove_edge(a, b)
            if not _part_of(b, a, prepared.raw) or nx.has_path(dag, a, b) \
                    or not predicted(b, a):  # not a part, a cycle, or no gain
                dag.add_edge(a, b)
                continue
            dag.add_edge(b, a)
            report.setdefault("reversed", []).append(f"{a} -> {b}")
            keep |= _on_paths(dag, objectives)
            changed = True
    return keep


def _on_paths(dag: nx.DiGraph, objectives: list[str]) -> set[str]:
    """Every node with a directed path to one of the ``objectives``."""
    return set().union(*(nx.ancestors(dag, o) for o in objectives))


MIN_REVERSAL_TRIALS = 20
"""Fewer trials: no arrow is reversed. From a dozen trials the prediction check passes by chance
as often as not, and on ``synthetic`` at 15 trials a chain metric brought back (a true one)
made runs worse, where from 30 trials the chains of the function networks gain."""

MIN_SHARE, MAX_SHARE = 0.1, 0.9
"""A part is at least the first share of its total in the median trial (a count or a time in
other units can sit below a total without being any part of it) and at most the second: a part
that is nearly all of its total is a proxy for it, and a second layer of model only adds error
(ZigZag's computation latency, nearly all of the latency, made MobileNetV2's runs worse)."""


def _part_of(part: str, total: str, raw: pd.DataFrame) -> bool:
    """Whether ``part`` is never negative, never above ``total``, and a share of it between
    :data:`MIN_SHARE` and :data:`MAX_SHARE`: the signature of one term of a sum among others.
    Where both names say a unit (:func:`boanon.units.infer`), it is the same one: megabytes
    sent are no part of seconds busy, however their values compare."""
    unit, total_unit = units.infer(part), units.infer(total)
    if unit is not None and total_unit is not None and unit != total_unit:
        return False
    p, t = raw[part].to_numpy(dtype=float), raw[total].to_numpy(dtype=float)
    if not (np.all(p >= 0) and np.all(t >= p)):
        return False
    share = np.divide(p, t, out=np.ones_like(p), where=t > 0)
    return bool(MIN_SHARE <= np.median(share) <= MAX_SHARE)


def _fallback_target(param: str, objective: str, dag: nx.DiGraph, prepared: Prepared,
                     knowledge: Knowledge) -> str:
    """Where a parameter without a learned path joins ``objective``: the objective itself, or,
    when it is a deterministic function (a relation), the modelled node it is a function of that
    the parameter correlates with most (a function node reads only its inputs)."""
    frontier, todo = [], [objective]
    while todo:
        node = todo.pop()
        if knowledge.is_function(node):
            todo += [q for q in dag.predecessors(node) if prepared.all_roles.get(q) != "param"]
        else:
            frontier.append(node)
    frontier = [n for n in dict.fromkeys(frontier) if n in prepared.basis]
    if param not in prepared.basis or not frontier:
        return objective
    x = prepared.basis[param]
    return max(frontier, key=lambda n: (float(np.max(np.abs(np.nan_to_num(x.T @ prepared.basis[n])))), n))


def _link_dependent_params(dag: nx.DiGraph, prepared: Prepared, knowledge: Knowledge, objectives: list[str],
                           alpha: float, report: dict[str, Any]) -> None:
    """Add ``p -> o`` where a parameter without a path to objective ``o`` still predicts ``o``
    given ``o``'s parents.

    A parameter is a root, so the graph claims ``o`` independent of it given ``Pa(o)`` (local
    Markov property); a significant partial test shows a missed path, and the direct edge repairs
    the claim (it matters with several objectives, where a parameter found on the way to one
    objective can miss its way to another).
    """
    roles = prepared.all_roles
    for o in objectives:
        if o not in prepared.basis or knowledge.is_function(o):
            continue  # a function reads only its inputs
        ancestors = nx.ancestors(dag, o)
        missing = [p for p, r in prepared.roles.items() if r == "param" and p not in ancestors
                   and knowledge.allows(p, o, roles)]
        parents = [q for q in dag.predecessors(o) if q in prepared.basis]
        if not missing:
            continue
        z = np.hstack([prepared.basis[q] for q in parents]) if parents else None
        pvals, strength = partial_tests(prepared.basis[o][:, 0], [prepared.basis[p] for p in missing], z)
        for p, pv, s in zip(missing, pvals, strength, strict=True):
            if pv <= alpha and np.isfinite(s):  # NaN strength: too few trials to test
                dag.add_edge(p, o)
                report.setdefault("params_linked", []).append(f"{p} -> {o}")


def _break_cycles(dag: nx.DiGraph, required: set[tuple[str, str]], report: dict[str, Any]) -> None:
    """Required edges win: a learned edge closing a cycle with them is removed (and reported).

    The learner orients edges before the knowledge's required edges are added, so a learned
    ``b -> a`` (or a longer path back) can contradict a required ``a -> b``.
    """
    while True:
        try:
            cycle = nx.find_cycle(dag)
        except nx.NetworkXNoCycle:
            return
        learned = [(a, b) for a, b, *_ in cycle if (a, b) not in required]
        if not learned:
            raise ValueError(f"the required edges form a cycle: {[e[:2] for e in cycle]}")
        dag.remove_edge(*learned[0])
        report["edges_capped"].append(f"{learned[0][0]} -> {learned[0][1]} (cycle with required edges)")


def _sorted_edges(dag: nx.DiGraph) -> list[tuple[str, str]]:
    order = {n: i for i, n in enumerate(nx.lexicographical_topological_sort(dag))}
    return sorted(dag.edges, key=lambda e: (order[e[1]], order[e[0]]))
