"""Independent parameter groups: BOAT's decomposed acquisition optimisation.

When the graph splits the parameters into groups whose effects reach the objectives through
disjoint subgraphs (their descendant sets meet only at objective nodes), each group can be
searched in its own, lower-dimensional space while the other groups stay put.

Assumption (documented in docs/models.md): where the groups meet, the objective combines their
contributions additively (a sum, as a total time or cost is). The graph cannot show that; under
an interaction that is not additive, group-wise search is still a valid search step (every
candidate is scored by the full model), just a less efficient one.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from boanon.graph import CausalGraph
from boanon.models.dag import model_graph
from boanon.space import Space


def parameter_groups(space: Space, graph: CausalGraph, objectives: Sequence[str]) -> list[list[str]]:
    """Groups of parameters that reach ``objectives`` through disjoint subgraphs.

    Parameters are linked when their descendant sets (objectives excluded) overlap or a
    search-space constraint names both. Parameters that reach no objective are left out. A
    single group means no decomposition.
    """
    g = model_graph(graph, space)
    targets = set(objectives) & set(g)
    relevant = set().union(*(nx.ancestors(g, o) for o in targets)) if targets else set()
    params = [p for p in space.names if p in relevant]
    reach = {p: (nx.descendants(g, p) & relevant) - targets for p in params}
    links = nx.Graph()
    links.add_nodes_from(params)
    owner: dict[str, str] = {}
    for p in params:
        for node in reach[p]:
            if node in owner:
                links.add_edge(owner[node], p)
            else:
                owner[node] = p
    for c in space.constraints:
        named = [p for p in params if p in c.names]
        links.add_edges_from(zip(named, named[1:], strict=False))
    order = {p: i for i, p in enumerate(space.names)}
    groups = [sorted(comp, key=order.__getitem__) for comp in nx.connected_components(links)]
    return sorted(groups, key=lambda grp: order[grp[0]])
