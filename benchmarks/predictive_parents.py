"""The learned graph's node -> node edges against the true function network, at 10/15/30 trials.

    python -m benchmarks.predictive_parents fn-alpine2 fn-ackley fn-rosenbrock fn-epidemic

For each problem and trial count, random (seeded Sobol) trials are learned from twice: by the
default ``learn()`` (relations, tiered PC) and by the predictive-parents search alone
(:mod:`boanon.learners.predictive`); the metric -> node edges of each are printed beside the
network's true ones, with the search's time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks.problems import make_problem
from boanon.learners import learn
from boanon.learners.predictive import predictive_parents
from boanon.table import records_to_table

TRIALS = (10, 15, 30)


def node_edges(edges: list[tuple[str, str]], params: set[str]) -> list[tuple[str, str]]:
    return sorted(e for e in edges if e[0] not in params)


def main(problems: list[str]) -> None:
    for name in problems:
        problem = make_problem(name)
        params = set(problem.space.names)
        network = problem.knowledge.get("network")
        truth = sorted((p, node.name) for node in network.nodes for p in node.parents) if network else []
        print(f"{name}: true node edges {truth}", flush=True)
        for n in TRIALS:
            configs = problem.space.sample(n, np.random.default_rng(0))
            table = records_to_table([problem.evaluate(c) for c in configs])
            start = time.perf_counter()
            found = node_edges(predictive_parents(table), params)
            took = time.perf_counter() - start
            graph = learn(table, seed=0).graph
            learned = node_edges([(e.source, e.target) for e in graph.edges], params)
            print(f"  {n} trials: learn() {learned}\n"
                  f"            predictive ({took:.1f} s) {found}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
