"""Compare a learned graph with a known one: edge and ancestry precision and recall.

Used by the structure-learning benchmark and tests on synthetic systems whose graph is known.
Preprocessing merges near-duplicate metrics into one representative, so the true graph is first
contracted through the learner's merged groups.
"""

from __future__ import annotations

import networkx as nx

from boanon.graph import CausalGraph


def contract(true: CausalGraph, merged: dict[str, list[str]]) -> nx.DiGraph:
    """The true graph with every merged duplicate group collapsed onto its representative."""
    rep = {m: r for r, members in merged.items() for m in members}
    g = nx.DiGraph()
    g.add_nodes_from({rep.get(n, n) for n in true.roles})
    for e in true.edges:
        a, b = rep.get(e.source, e.source), rep.get(e.target, e.target)
        if a != b:
            g.add_edge(a, b)
    return g


def score(true: CausalGraph, learned: CausalGraph, merged: dict[str, list[str]] | None = None
          ) -> dict[str, float]:
    """Edge and ancestry precision/recall of ``learned`` against ``true``.

    ``precision``/``recall``: directed edges (recall over the edges among ancestors of an
    objective); ``precision_learned`` leaves out the parameter -> objective edges added for
    parameters without a path (``learned.metadata["params_connected"]``); ``skel_*`` ignore
    direction; ``anc_precision``: edges ``a -> b`` with ``a`` a true ancestor of ``b``;
    ``anc_recall``: (parameter, objective) pairs with a true directed path that have one in ``learned``.
    """
    merged = merged if merged is not None else learned.metadata.get("merged", {})
    added = {tuple(s.split(" -> ")) for s in learned.metadata.get("params_connected", [])}
    t = contract(true, merged)
    objectives = true.nodes("objective")
    relevant = set(objectives).union(*(nx.ancestors(t, o) for o in objectives))
    true_edges = set(t.edges)
    relevant_edges = {e for e in true_edges if e[0] in relevant and e[1] in relevant}
    learned_edges = {(e.source, e.target) for e in learned.edges}
    skel = {frozenset(e) for e in true_edges}
    learned_skel = {frozenset(e) for e in learned_edges}
    hit = learned_edges & true_edges
    lg = learned.to_networkx()
    ancestors = {n: nx.ancestors(t, n) for n in t.nodes}
    pairs = [(p, o) for o in objectives for p in true.nodes("param") if p in ancestors[o]]
    found = sum(1 for p, o in pairs if p in lg and o in lg and nx.has_path(lg, p, o))
    return {
        "edges": len(learned_edges),
        "precision": len(hit) / max(1, len(learned_edges)),
        "precision_learned": len(hit - added) / max(1, len(learned_edges - added)),
        "recall": len(hit & relevant_edges) / max(1, len(relevant_edges)),
        "skel_precision": sum(frozenset(e) in skel for e in learned_edges) / max(1, len(learned_edges)),
        "skel_recall": sum(frozenset(e) in learned_skel for e in relevant_edges)
        / max(1, len(relevant_edges)),
        "anc_precision": sum(a in ancestors.get(b, ()) for a, b in learned_edges)
        / max(1, len(learned_edges)),
        "anc_recall": found / max(1, len(pairs)),
    }
