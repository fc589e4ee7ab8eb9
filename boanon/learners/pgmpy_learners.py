"""Learners from pgmpy: PC and hill climbing, with its ``ExpertKnowledge``.

Tiers go in as pgmpy's ``temporal_order`` (parameters, metric tiers, other metrics, objectives):
forbidding ``metric -> param`` edges one by one would, with ``enforce_expert_knowledge=True``,
delete the adjacency in both directions, and forbidding parameter pairs can crash its collider
step. Expert forbids and requirements are passed as edges; postprocessing makes them hold.
"""

from __future__ import annotations

import warnings

import pandas as pd

from boanon.annotations import Knowledge
from boanon.learners.base import PartialGraph, register_learner
from boanon.learners.preprocess import Prepared


def expert_knowledge(columns: list[str], owner: dict[str, str], roles: dict[str, str], knowledge: Knowledge):
    """pgmpy ExpertKnowledge over ``columns``: temporal order from roles and metric tiers."""
    from pgmpy.causal_discovery import ExpertKnowledge

    def rank(c: str) -> tuple[int, int]:
        role = roles[owner[c]]
        if role != "metric":
            return (0, 0) if role == "param" else (2, 0)
        tier = knowledge.metric_tier(owner[c])
        return (1, tier if tier is not None else len(knowledge.tiers))

    order: dict[tuple[int, int], list[str]] = {}
    for c in columns:
        order.setdefault(rank(c), []).append(c)
    wanted = set(knowledge.required_edges())
    forbidden = {(a, b) for a in columns for b in columns
                 if (owner[a], owner[b]) in set(knowledge.forbidden)}
    return ExpertKnowledge(temporal_order=[order[k] for k in sorted(order)],
                           forbidden_edges=forbidden or None,
                           required_edges={(a, b) for a in columns for b in columns
                                           if (owner[a], owner[b]) in wanted} or None)


def _read_pdag(pdag, owner: dict[str, str], strength: dict[frozenset[str], float]) -> PartialGraph:
    out = PartialGraph(strength=strength)
    directed = getattr(pdag, "directed_edges", None)
    undirected = getattr(pdag, "undirected_edges", set())
    for a, b in (pdag.edges() if directed is None else directed):
        if owner[a] != owner[b]:
            out.directed.add((owner[a], owner[b]))
    for a, b in undirected:
        if owner[a] != owner[b] and not out.adjacent(owner[a], owner[b]):
            out.undirected.add(frozenset((owner[a], owner[b])))
    return out


def _frame(prepared: Prepared) -> tuple[pd.DataFrame, dict[str, str], dict[frozenset[str], float]]:
    x, columns, owner = prepared.matrix()
    return pd.DataFrame(x, columns=columns), owner, prepared.pair_correlations()


@register_learner("pgmpy-pc", "pgmpy PC (Pearson partial correlation) with ExpertKnowledge temporal order")
def pgmpy_pc(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01, seed: int = 0,
             max_depth: int = 3) -> PartialGraph:
    from pgmpy.causal_discovery import PC

    frame, owner, strength = _frame(prepared)
    ek = expert_knowledge(list(frame.columns), owner, prepared.roles, knowledge)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PC(ci_test="pearsonr", significance_level=alpha, max_cond_vars=max_depth,
                   expert_knowledge=ek, show_progress=False, n_jobs=1).fit(frame)
    return _read_pdag(model.causal_graph_, owner, strength)


@register_learner("pgmpy-hillclimb", "pgmpy hill climbing (Gaussian BIC) with ExpertKnowledge temporal order")
def pgmpy_hillclimb(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01, seed: int = 0,
                    max_indegree: int | None = 6) -> PartialGraph:
    from pgmpy.causal_discovery import HillClimbSearch

    frame, owner, strength = _frame(prepared)
    ek = expert_knowledge(list(frame.columns), owner, prepared.roles, knowledge)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HillClimbSearch(scoring_method="bic-g", max_indegree=max_indegree, expert_knowledge=ek,
                                return_type="dag", show_progress=False).fit(frame)
    return _read_pdag(model.causal_graph_, owner, strength)
