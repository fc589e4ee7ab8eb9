"""The default learner recovers known DAGs of seeded synthetic systems, and the tiers always hold."""

import numpy as np
import pandas as pd
import pytest

from boanon.learners import DEFAULT_LEARNER, learn
from boanon.learners.evaluate import score
from boanon.synthetic import SyntheticSystem


def _check_tiers(graph):
    for e in graph.edges:
        assert graph.roles[e.target] != "param", e
        assert graph.roles[e.source] != "objective", e
    assert graph.to_networkx().number_of_edges() == len(graph.edges)
    import networkx as nx
    assert nx.is_directed_acyclic_graph(graph.to_networkx())


@pytest.mark.parametrize("nonlinear,seed", [(False, 0), (True, 1), (True, 2)])
def test_default_learner_recovers_a_known_dag(nonlinear, seed):
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, n_distractors=12, n_duplicates=2,
                             noise=0.3, nonlinear=nonlinear, seed=seed)
    result = learn(system.sample_table(80, seed=seed))
    assert result.graph.metadata["learner"] == DEFAULT_LEARNER
    s = score(system.true_graph(), result.graph)
    assert s["precision"] >= 0.8, s
    assert s["recall"] >= 0.75, s
    assert s["anc_recall"] == 1.0, s
    _check_tiers(result.graph)
    # distractor metrics have no path to the objective and are pruned, with the reason recorded
    assert all(r == "no directed path to an objective" for n, r in result.report["dropped"].items()
               if n.startswith("d") and n[1:].isdigit() and n not in result.report["merged"])


def test_every_parameter_keeps_a_path_to_an_objective():
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=2, n_distractors=4, n_inert=2, noise=0.3,
                             seed=3)
    result = learn(system.sample_table(50, seed=3))
    g = result.graph.to_networkx()
    import networkx as nx
    for p in system.space.names:
        assert nx.has_path(g, p, "cost"), p
    # the inert ones get there through the fallback edge, which the report names
    assert {"x6 -> cost", "x7 -> cost"} <= set(result.report["params_connected"])


def test_two_objectives_and_parent_cap():
    system = SyntheticSystem(n_params=10, n_groups=3, chain_length=2, n_distractors=6, n_objectives=2,
                             noise=0.3, seed=4)
    result = learn(system.sample_table(80, seed=4), max_parents=2)
    _check_tiers(result.graph)
    added = result.report["params_connected"] + result.report["params_linked"]
    connected = {tuple(e.split(" -> ")) for e in added}
    connected |= {(i, r["target"]) for r in result.report["relations"] for i in r["inputs"]}
    for n in result.graph.roles:  # edges added for parameters without a path, or of a relation, are exempt
        assert len([p for p in result.graph.parents(n) if (p, n) not in connected]) <= 2, n
    assert result.report["edges_capped"]
    assert set(result.graph.nodes("objective")) == {"cost", "cost2"}


def test_categorical_and_boolean_parameters_are_learnt():
    rng = np.random.default_rng(0)
    n = 60
    comp = rng.choice(["none", "lz4", "zlib"], n)
    fsync = rng.integers(0, 2, n).astype(bool)
    size = rng.uniform(1, 100, n)
    compressed = np.select([comp == "none", comp == "lz4"], [1.0, 0.6], 0.35) * size + rng.normal(0, 2, n)
    syncs = 50 * fsync + rng.normal(0, 3, n)
    table = pd.DataFrame({"trial": range(n), "param:compression": comp, "param:fsync": fsync,
                          "param:size": size, "metric:compressed_bytes": compressed,
                          "metric:sync_calls": syncs, "metric:unrelated": rng.normal(size=n),
                          "objective:latency": compressed + 0.5 * syncs + rng.normal(0, 2, n)})
    graph = learn(table).graph
    for edge in [("compression", "compressed_bytes"), ("size", "compressed_bytes"), ("fsync", "sync_calls"),
                 ("compressed_bytes", "latency"), ("sync_calls", "latency")]:
        assert graph.has_edge(*edge), edge
    assert not graph.has_edge("compression", "latency")
    assert "unrelated" not in graph.roles


def test_u_shaped_parameter_effect_is_found():
    """A plain linear test misses an effect that peaks inside the range; the quadratic term sees it."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 60)
    m = (x - 0.5) ** 2 * 10 + rng.normal(0, 0.1, 60)
    table = pd.DataFrame({"trial": range(60), "param:x": x, "param:y": rng.uniform(0, 1, 60), "metric:m": m,
                          "objective:o": m + rng.normal(0, 0.1, 60)})
    assert abs(np.corrcoef(x, m)[0, 1]) < 0.3
    graph = learn(table).graph
    assert graph.has_edge("x", "m") and graph.has_edge("m", "o")


def test_unknown_learner_is_a_clear_error():
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=0, n_duplicates=0, seed=0)
    with pytest.raises(ValueError, match="unknown learner 'nope'; available: .*tiered-pc"):
        learn(system.sample_table(10), learner="nope")


def test_a_misspelt_learner_option_is_refused_naming_the_closest_before_any_work(monkeypatch):
    """``learn(table, max_dept=2)`` was Python's "tiered_pc() got an unexpected keyword argument",
    raised only after the relations were searched."""
    import boanon.learners as learners

    def no_search(*args, **kwargs):
        raise AssertionError("searched before checking the options")

    monkeypatch.setattr(learners, "find_relations", no_search)
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=0, n_duplicates=0, seed=0)
    with pytest.raises(ValueError, match=r"learner 'tiered-pc' has no option 'max_dept' \(did you mean"):
        learn(system.sample_table(10), max_dept=2)


def test_tier_only_ordering_orients_colliders_and_still_recovers_the_graph():
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, n_distractors=12, n_duplicates=2,
                             noise=0.3, nonlinear=True, seed=1)
    result = learn(system.sample_table(80, seed=1), order="tiers")
    assert result.graph.metadata["options"] == {"order": "tiers"}
    _check_tiers(result.graph)
    assert score(system.true_graph(), result.graph)["anc_recall"] == 1.0
    with pytest.raises(ValueError, match="order must be"):
        learn(system.sample_table(20), order="alphabetical")


def test_tiered_pc_is_deterministic_whatever_the_seed():
    """It draws nothing at random, so its seed changes nothing (bootstrap resamples do use it)."""
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=4, seed=5)
    table = system.sample_table(40, seed=5)
    graphs = [learn(table, seed=s, relations=False).graph for s in (0, 1)]
    assert graphs[0].to_dict()["edges"] == graphs[1].to_dict()["edges"]


@pytest.mark.parametrize("option", [{"bootstrap": -1}, {"max_parents": 0}, {"max_metrics": 0},
                                    {"max_parents": 2.5}, {"bootstrap": True}])
def test_a_count_out_of_its_range_is_refused_naming_it(option):
    # bootstrap=-1 gave every edge stability -0.0, max_parents=0 a graph whose fallback edges undid the cap
    table = SyntheticSystem(n_params=4, n_groups=2, seed=0).sample_table(12, seed=0)
    name = next(iter(option))
    with pytest.raises(ValueError, match=f"{name} must be an integer"):
        learn(table, **option)
