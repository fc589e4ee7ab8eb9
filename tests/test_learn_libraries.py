"""causal-learn and pgmpy learners behind the same interface, and the pitfalls they come with."""

import numpy as np
import pandas as pd
import pytest
from causallearn.graph.GraphNode import GraphNode
from causallearn.search.ConstraintBased.PC import pc
from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge

from boanon.annotations import Knowledge
from boanon.errors import ConfigError
from boanon.learners import learn
from boanon.learners.causallearn_learners import background_knowledge
from boanon.learners.preprocess import preprocess
from boanon.synthetic import SyntheticSystem


@pytest.fixture(scope="module")
def system_table():
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=6, n_duplicates=1,
                             nonlinear=False, noise=0.3, seed=5)
    return system, system.sample_table(60, seed=5)


@pytest.mark.parametrize("learner", ["pc", "fci", "boss", "grasp", "pgmpy-pc"])
def test_library_learners_respect_tiers_and_knowledge(system_table, learner):
    _, table = system_table
    knowledge = Knowledge().forbid("g0_m1", "cost").require("x5", "g1_load")
    graph = learn(table, knowledge, learner=learner).graph
    for e in graph.edges:
        assert graph.roles[e.target] != "param" and graph.roles[e.source] != "objective", e
    assert not graph.has_edge("g0_m1", "cost")
    assert graph.has_edge("x5", "g1_load")
    assert graph.metadata["learner"] == learner
    assert set(graph.nodes("param")) == {f"x{i}" for i in range(6)}


def test_pitfall_causallearn_ignores_knowledge_with_unmatched_names():
    """causal-learn drops a forbid whose names differ from node_names without a word ..."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=200)
    data = np.column_stack([a, a + rng.normal(0, 0.5, 200)])
    bk = BackgroundKnowledge()
    bk.add_forbidden_by_node(GraphNode("X1"), GraphNode("X2"))  # default names, not ours
    bk.add_forbidden_by_node(GraphNode("X2"), GraphNode("X1"))
    cg = pc(data, 0.01, "fisherz", background_knowledge=bk, node_names=["a", "b"], show_progress=False)
    assert cg.G.graph[0, 1] != 0  # the edge is still there: the knowledge was ignored
    # ... while ours refuses names that are not nodes, and builds knowledge from exact column names.
    with pytest.raises(ConfigError, match=r"unknown node 'g0_m'.*did you mean 'g0_m\d'"):
        learn(SyntheticSystem(n_params=4, n_groups=2, seed=0).sample_table(20),
              Knowledge().forbid("g0_m", "cost"))


def test_background_knowledge_is_built_on_the_exact_column_names(system_table):
    _, table = system_table
    prep = preprocess(table)
    x, columns, owner = prep.matrix()
    bk = background_knowledge(columns, owner, prep.roles, Knowledge().forbid("g0_load", "g0_m1"))
    node = {c: GraphNode(c) for c in columns}
    assert bk.is_forbidden(node["g0_load"], node["g0_m1"])
    assert not bk.is_forbidden(node["g0_m1"], node["g0_load"])
    assert bk.is_forbidden(node["g0_load"], node["x0"])  # metric -> param
    assert bk.is_forbidden(node["x0"], node["x1"])  # param -> param
    assert bk.is_forbidden(node["cost"], node["g0_load"])  # objective -> anything
    assert not bk.is_forbidden(node["x0"], node["g0_load"])


def test_pitfall_required_edge_removed_by_the_skeleton_is_restored():
    rng = np.random.default_rng(1)
    n = 80
    p = rng.uniform(size=n)
    table = pd.DataFrame({"trial": range(n), "param:p": p, "param:unused": rng.uniform(size=n),
                          "metric:m": 3 * p + rng.normal(0, 0.2, n), "metric:other": rng.normal(size=n)})
    table["objective:o"] = table["metric:m"] + rng.normal(0, 0.2, n)
    # causal-learn alone: "unused" and "other" are independent, so PC removes the pair in its
    # skeleton phase even though the knowledge requires it
    prep = preprocess(table)
    x, columns, owner = prep.matrix()
    bk = background_knowledge(columns, owner, prep.roles, Knowledge().require("unused", "other"))
    cg = pc(x, 0.01, "fisherz", background_knowledge=bk, node_names=columns, show_progress=False)
    i, j = columns.index("unused"), columns.index("other")
    assert cg.G.graph[i, j] == 0 and cg.G.graph[j, i] == 0
    # through learn() the required edge holds (and keeps "other" in the graph)
    for learner in ("pc", "tiered-pc"):
        graph = learn(table, Knowledge().require("unused", "other"), learner=learner).graph
        assert graph.has_edge("unused", "other"), learner


def test_pitfall_pc_runs_unstable_by_default(system_table, monkeypatch):
    """PC with stable=True (causal-learn's default) slows down badly above ~150 variables."""
    import causallearn.search.ConstraintBased.PC as pc_module

    seen = {}
    real = pc_module.pc

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(pc_module, "pc", spy)
    learn(system_table[1], learner="pc")
    assert seen["stable"] is False
    learn(system_table[1], learner="pc", stable=True)
    assert seen["stable"] is True
