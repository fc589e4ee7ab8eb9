"""On the real RocksDB readrandom dataset, the learned graph holds the dependencies RocksDB's design implies.

The dataset (40 db_bench runs at random configurations, ``boanon generate rocksdb``) ships in
``datasets/rocksdb-readrandom``; the test is skipped only when that directory is absent.
"""

import re
from pathlib import Path

import networkx as nx
import pytest

from boanon.adapters import ingest
from boanon.learners import learn

DATASET = Path(__file__).resolve().parent.parent / "datasets" / "rocksdb-readrandom"

pytestmark = pytest.mark.skipif(not DATASET.is_dir(), reason=f"{DATASET} is absent")

DESIGN = {
    # parameter: the metrics (anchored patterns) it must reach, by RocksDB's design
    "cache_size": r"block_cache_(data_)?miss",                                # block cache misses
    "bloom_bits": r"bloom_filter_(useful|full_positive|full_true_positive|false_positive)",  # filter hits
    "write_buffer_size": r"flush_count",                                      # number of flushes
    "compression_type": r"bytes_compressed_.*|flush_write_bytes|compact_write_bytes",  # compressed bytes
}


@pytest.fixture(scope="module")
def table():
    return ingest(DATASET).table


def _reached(result, table, param: str, pattern: str) -> list[str]:
    """Nodes standing for a metric matching ``pattern`` (itself or its merged representative)
    that ``param`` has a directed path to."""
    graph = result.graph.to_networkx()
    rep = {m: r for r, members in result.report["merged"].items() for m in members}
    metrics = [c.split(":", 1)[1] for c in table.columns if c.startswith("metric:")]
    nodes = {rep.get(m, m) for m in metrics if re.fullmatch(pattern, m)}
    assert nodes, f"no metric matches {pattern!r}: the adapter's names changed?"
    return sorted(n for n in nodes if n in graph and nx.has_path(graph, param, n))


def test_learned_structure_has_the_design_dependencies(table):
    """Every metric kept (no pruning towards the objectives): the four design dependencies are learnt."""
    result = learn(table, prune=False)
    for param, pattern in DESIGN.items():
        assert _reached(result, table, param, pattern), f"{param} has no directed path to {pattern}"
    graph = result.graph
    assert graph.roles["compression_type"] == "param"  # the categorical parameter is learnt from
    assert any(e.source == "compression_type" for e in graph.edges)


def test_tuning_graph_keeps_the_dependencies_that_reach_throughput(table):
    """The default (pruned) graph keeps the flush and compression chains towards the objectives;
    every varied parameter stays in it, and the tiers hold."""
    result = learn(table)
    graph = result.graph
    for param in ("write_buffer_size", "compression_type"):
        assert _reached(result, table, param, DESIGN[param]), param
    varied = [c.split(":", 1)[1] for c in table.columns
              if c.startswith("param:") and table[c].astype(str).nunique() > 1]
    assert set(varied) <= set(graph.nodes("param"))
    assert graph.parents("readrandom_ops_per_sec")
    g = graph.to_networkx()
    for p in varied:
        assert any(nx.has_path(g, p, o) for o in graph.nodes("objective")), p
    for e in graph.edges:
        assert graph.roles[e.target] != "param" and graph.roles[e.source] != "objective"
