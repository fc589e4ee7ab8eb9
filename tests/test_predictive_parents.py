"""Metric parents found by held-out prediction (boanon.learners.predictive)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from boanon.learners import learn
from boanon.learners.predictive import predictive_parents


def _product_network(n: int = 30, seed: int = 0) -> pd.DataFrame:
    """``f = a * cos(2 pi x2)`` with ``a = sin(2 pi (x1 + x3))``: f is uncorrelated with its
    parent a (the second factor changes sign) but a function of 2 inputs given a where it is one
    of 3 parameters without; a noise metric ``d`` feeds nothing."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 3))
    a = np.sin(2 * np.pi * (x[:, 0] + x[:, 2]))
    f = a * np.cos(2 * np.pi * x[:, 1])
    return pd.DataFrame({"trial": range(n), "param:x1": x[:, 0], "param:x2": x[:, 1], "param:x3": x[:, 2],
                         "metric:a": a, "metric:d": rng.normal(size=n), "objective:f": f})


def test_a_parent_without_correlation_is_found_by_prediction():
    table = _product_network()
    assert abs(np.corrcoef(table["metric:a"], table["objective:f"])[0, 1]) < 0.3
    edges = predictive_parents(table)
    assert ("a", "f") in edges and ("x2", "f") in edges
    assert not any("d" in e for e in edges)


def test_too_few_trials_or_a_skipped_node_find_nothing():
    table = _product_network()
    assert predictive_parents(table.iloc[:8]) == []
    assert predictive_parents(table, skip=["f"]) == []
    assert ("a", "f") not in predictive_parents(table, allows=lambda source, target: source != "a")


def test_learn_requires_the_edges_prediction_found():
    table = _product_network()
    plain = learn(table, seed=0, predictive=False).graph
    found = learn(table, seed=0, predictive=True).graph
    assert ("a", "f") not in {(e.source, e.target) for e in plain.edges}  # the tests miss it
    assert ("a", "f") in {(e.source, e.target) for e in found.edges}


def test_no_edge_closes_a_cycle_with_the_known_edges():
    table = _product_network()
    assert ("a", "f") in predictive_parents(table)
    # f already reaches a through required edges (a relation's, an expert's): a -> f would close a cycle
    assert ("a", "f") not in predictive_parents(table, known=[("f", "d"), ("d", "a")])


def test_the_search_on_real_db_bench_logs_gives_a_graph_the_learner_can_require():
    """On the shipped RocksDB dataset, tuned for read throughput, the search once chained three
    timing metrics into a cycle (read seconds -> get micros -> read micros -> read seconds) and
    ``learn`` raised."""
    from boanon.adapters.ingest import ingest

    table = ingest(Path(__file__).resolve().parent.parent / "datasets" / "rocksdb-readrandom").table
    table = table[[c for c in table.columns
                   if not c.startswith("objective:") or c == "objective:readrandom_ops_per_sec"]]
    graph = learn(table, seed=0, predictive=True).graph
    assert nx.is_directed_acyclic_graph(graph.to_networkx())
    assert any(graph.roles[e.source] == "metric" for e in graph.edges)


def test_auto_searches_only_where_the_tests_left_an_objective_without_a_metric_parent():
    table = _product_network()
    auto = learn(table, seed=0)  # "auto", the default
    assert auto.report["predictive_searched"] == ["f"]  # the tests gave f no metric parent
    assert ("a", "f") in {(e.source, e.target) for e in auto.graph.edges}
    # a chain the tests find: no search, the same graph as without it
    from boanon.synthetic import SyntheticSystem

    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, n_distractors=12, noise=0.3, seed=0)
    chained = system.sample_table(80, seed=0)
    found = learn(chained)
    assert found.report["predictive_searched"] == []
    assert found.graph.to_dict()["edges"] == learn(chained, predictive=False).graph.to_dict()["edges"]
    assert learn(table, predictive=True).report["predictive_searched"] == ["f"]
    assert learn(table, predictive=False).report["predictive_searched"] == []
    with pytest.raises(ValueError, match="predictive must be one of"):
        learn(table, predictive="yes")


def _alpine_chain(n: int, seed: int = 0) -> pd.DataFrame:
    """BOFN's Alpine2 as a 4-node chain: node k = node k-1 * g(x_k), g = sqrt(10 x) sin(10 x), which
    changes sign, so ranks of parent and child relate in neither direction nor magnitude."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 4))
    g = np.sqrt(10 * x) * np.sin(10 * x)
    nodes = np.cumprod(g, axis=1)
    return pd.DataFrame({"trial": range(n), **{f"param:x{k + 1}": x[:, k] for k in range(4)},
                         **{f"metric:a{k + 1}": nodes[:, k] for k in range(3)}, "objective:a4": nodes[:, 3],
                         "metric:noise": rng.normal(size=n)})


@pytest.mark.parametrize("seed", [1, 2])
def test_a_chain_of_products_is_found_link_by_link_where_ranks_find_none_of_it(seed):
    """15 trials of these two seeds: on ranks alone, no link is found (measured)."""
    table = _alpine_chain(15, seed)
    edges = predictive_parents(table)
    assert {("a3", "a4"), ("a2", "a3"), ("a1", "a2")} <= set(edges)
    assert not any("noise" in e for e in edges)


def test_a_scale_is_not_taken_from_an_unrelated_metric():
    table = _alpine_chain(30)
    rng = np.random.default_rng(1)
    table["metric:unrelated"] = rng.uniform(1, 3, size=30)  # never zero: a candidate scale
    table["objective:a4"] = np.sin(6 * table["param:x1"]) + np.cos(5 * table["param:x4"])
    table = table.drop(columns=["metric:a1", "metric:a2", "metric:a3"])
    assert not any(source == "unrelated" for source, _ in predictive_parents(table))
