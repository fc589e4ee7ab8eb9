"""Which relations the search finds on each problem's random trials and on the shipped datasets.

A new relation form must find the compositions that are there and invent none that are not.
This runs :func:`boanon.learners.relations.find_relations` on the first 10, 15, 25 and 40 of 40
uniformly random trials of each benchmark problem (seeded) and of each shipped dataset, and
lists every relation of the given kinds (default: the losses, ``squares`` and
``root of squares``) with the count of all relations found, so a false positive shows by name.

    python -m benchmarks.relation_scan                       # ~2 min on 2 shared cores
    python -m benchmarks.relation_scan --problems fn-epidemic --kinds squares

Writes ``benchmarks/results/relation_scan.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.problems import make_problem
from boanon.adapters import ingest
from boanon.learners.relations import find_relations
from boanon.table import records_to_table, with_objectives

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ("fn-epidemic", "fn-ackley", "fn-dropwave", "fn-alpine2", "fn-rosenbrock", "synthetic",
            "synthetic-40", "pipeline", "sgd")
DATASETS = {"rocksdb-mixgraph": None, "rocksdb-readrandom": None, "rocksdb-readrandomwriterandom": None,
            "sgd-alexnet": None, "sgd-googlenet": None, "zigzag-resnet18": ["edp"]}
"""Dataset -> the objectives to name (None: the dataset's own)."""
TRIALS = (10, 15, 25, 40)


def random_trials(problem_name: str, n: int, seed: int) -> pd.DataFrame:
    """``n`` evaluations of uniformly random configurations of the problem, as a tidy table."""
    problem = make_problem(problem_name)
    rng = np.random.default_rng(seed)
    return records_to_table(problem.evaluate(c) for c in problem.space.sample(n, rng, sobol=False))


def dataset(name: str) -> pd.DataFrame:
    table = ingest(ROOT / "datasets" / name).table
    objectives = DATASETS[name]
    return with_objectives(table, objectives, []) if objectives else table


def scan(tables: dict[str, pd.DataFrame], kinds: set[str], trials=TRIALS) -> pd.DataFrame:
    """One row per (source, trials): how many relations were found, and those of ``kinds``."""
    rows = []
    for source, table in tables.items():
        for n in trials:
            found = find_relations(table.iloc[:n])
            listed = [r.describe() for r in found if r.kind in kinds]
            rows.append({"source": source, "trials": n, "relations": len(found),
                         "of_kinds": len(listed), "which": " | ".join(listed)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--kinds", nargs="+", default=["squares", "root of squares"])
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "relation_scan.csv")
    args = parser.parse_args(argv)
    tables = {p: random_trials(p, max(TRIALS), args.seed) for p in args.problems}
    tables |= {d: dataset(d) for d in args.datasets}
    result = scan(tables, set(args.kinds))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result.to_csv(args.out, index=False)
    with pd.option_context("display.max_colwidth", 160, "display.width", 250):
        print(result.to_string(index=False))


if __name__ == "__main__":
    main()
