"""Learners from causal-learn: PC and FCI with background knowledge, BOSS and GRaSP without.

causal-learn matches background knowledge by node name and silently ignores names it does not
know, and its pattern rules use ``re.match`` (a prefix match). :func:`background_knowledge`
therefore builds the knowledge only from the exact column names it is given, anchors every
pattern, and raises on a name that is not a column. Categorical parameters enter as one-hot
columns (``name=level``) and are folded back into one node afterwards.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterable

import numpy as np
from causallearn.graph.GraphNode import GraphNode
from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge

from boanon.annotations import Knowledge
from boanon.errors import ConfigError
from boanon.learners.base import PartialGraph, register_learner
from boanon.learners.preprocess import Prepared


def _alternation(names: Iterable[str]) -> str:
    names = sorted(names)
    return "(?:" + "|".join(re.escape(n) for n in names) + r")\Z" if names else r"(?!)"


def background_knowledge(columns: list[str], owner: dict[str, str], roles: dict[str, str],
                         knowledge: Knowledge) -> BackgroundKnowledge:
    """causal-learn background knowledge over ``columns`` (the names given to ``node_names``).

    Tiers become anchored pattern rules (later role -> earlier role, parameter -> parameter,
    objective -> anything, later metric tier -> earlier one); explicit and pattern forbids are
    expanded to the exact column pairs they hit; required edges become required node pairs.
    """
    known = set(columns)
    by_role: dict[str, list[str]] = {r: [c for c in columns if roles[owner[c]] == r]
                                     for r in ("param", "metric", "objective")}
    bk = BackgroundKnowledge()
    everything = _alternation(columns)
    bk.add_forbidden_by_pattern(_alternation(by_role["metric"] + by_role["objective"]),
                                _alternation(by_role["param"]))
    bk.add_forbidden_by_pattern(_alternation(by_role["param"]), _alternation(by_role["param"]))
    bk.add_forbidden_by_pattern(_alternation(by_role["objective"]), everything)
    tiers: dict[int, list[str]] = {}
    for c in by_role["metric"]:
        t = knowledge.metric_tier(owner[c])
        if t is not None:
            tiers.setdefault(t, []).append(c)
    for later, later_cols in tiers.items():
        for earlier, earlier_cols in tiers.items():
            if later > earlier:
                bk.add_forbidden_by_pattern(_alternation(later_cols), _alternation(earlier_cols))
    wanted = set(knowledge.required_edges())
    required = {(a, b) for a in columns for b in columns if (owner[a], owner[b]) in wanted}
    explicit = []
    if knowledge.forbidden or knowledge.forbidden_patterns:
        explicit = [(a, b) for a in columns for b in columns if owner[a] != owner[b]
                    and roles[owner[b]] != "param" and roles[owner[a]] != "objective"
                    and not knowledge.allows(owner[a], owner[b], roles)]
    for a, b in explicit:
        bk.add_forbidden_by_node(_node(a, known), _node(b, known))
    for a, b in required:
        bk.add_required_by_node(_node(a, known), _node(b, known))
    return bk


def _node(name: str, known: set[str]) -> GraphNode:
    if name not in known:
        raise ConfigError("background knowledge", name, "is not a column given to causal-learn "
                          "(causal-learn would silently ignore it)")
    return GraphNode(name)


def read_endpoints(matrix: np.ndarray, columns: list[str], owner: dict[str, str],
                   strength: dict[frozenset[str], float]) -> PartialGraph:
    """A causal-learn endpoint matrix as a PartialGraph over nodes (one-hot columns folded).

    ``matrix[i, j] == -1 and matrix[j, i] == 1`` is ``i -> j``; circle endpoints (FCI's ``o->``)
    count as tails, and anything else adjacent (``--``, ``<->``, ``o-o``) stays undirected.
    """
    out = PartialGraph(strength=strength)
    d = len(columns)
    for i in range(d):
        for j in range(i + 1, d):
            a, b = owner[columns[i]], owner[columns[j]]
            if a == b or (matrix[i, j] == 0 and matrix[j, i] == 0):
                continue
            tail_i, tail_j = matrix[i, j] in (-1, 2), matrix[j, i] in (-1, 2)
            if tail_i and matrix[j, i] == 1:
                out.directed.add((a, b))
            elif tail_j and matrix[i, j] == 1:
                out.directed.add((b, a))
            else:
                out.undirected.add(frozenset((a, b)))
    both = {frozenset(e) for e in out.directed}
    out.undirected -= both
    return out


@register_learner("pc", "causal-learn PC (Fisher-z, stable=False) with tiers as background knowledge")
def causallearn_pc(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01, seed: int = 0,
                   stable: bool = False, max_depth: int | None = None) -> PartialGraph:
    """causal-learn's PC. ``stable=True`` is the library default but slows down badly above ~150 nodes."""
    from causallearn.search.ConstraintBased.PC import pc

    x, columns, owner = prepared.matrix()
    bk = background_knowledge(columns, owner, prepared.roles, knowledge)
    cg = pc(x, alpha, "fisherz", stable=stable, background_knowledge=bk, node_names=columns,
            show_progress=False, max_k=max_depth)
    return read_endpoints(cg.G.graph, columns, owner, prepared.pair_correlations())


@register_learner("fci", "causal-learn FCI (Fisher-z) with tiers as background knowledge")
def causallearn_fci(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01, seed: int = 0,
                    max_depth: int = -1) -> PartialGraph:
    from causallearn.search.ConstraintBased.FCI import fci

    x, columns, owner = prepared.matrix()
    bk = background_knowledge(columns, owner, prepared.roles, knowledge)
    with contextlib.redirect_stdout(io.StringIO()):  # FCI prints every knowledge-based orientation
        g, _ = fci(x, "fisherz", alpha, depth=max_depth, background_knowledge=bk, node_names=columns,
                   show_progress=False, verbose=False)
    return read_endpoints(g.graph, columns, owner, prepared.pair_correlations())


def _permutation(method: str, prepared: Prepared, seed: int) -> PartialGraph:
    from causallearn.search.PermutationBased.BOSS import boss
    from causallearn.search.PermutationBased.GRaSP import grasp

    x, columns, owner = prepared.matrix()
    state = np.random.get_state()
    np.random.seed(seed)  # both shuffle their start order with numpy's global generator
    try:
        g = (boss if method == "boss" else grasp)(x, node_names=columns, verbose=False)
    finally:
        np.random.set_state(state)
    return read_endpoints(g.graph, columns, owner, prepared.pair_correlations())


@register_learner("boss", "causal-learn BOSS (BIC score); tier-breaking arrows reversed or removed after")
def causallearn_boss(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01,
                     seed: int = 0) -> PartialGraph:
    """BOSS takes no background knowledge: postprocessing makes its output respect the tiers."""
    return _permutation("boss", prepared, seed)


@register_learner("grasp", "causal-learn GRaSP (BIC score); tier-breaking arrows reversed or removed after")
def causallearn_grasp(prepared: Prepared, knowledge: Knowledge, *, alpha: float = 0.01,
                      seed: int = 0) -> PartialGraph:
    return _permutation("grasp", prepared, seed)
