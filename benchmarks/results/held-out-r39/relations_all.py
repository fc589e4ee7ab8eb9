"""Every relation found on 10-50 random trials (seeds 0 and 1) of each function network and home
problem, and on the shipped datasets: run in two checkouts and diff the outputs.

    PYTHONPATH=<checkout> python benchmarks/results/held-out-r39/relations_all.py > relations.txt
"""

from __future__ import annotations

import sys
import time

from benchmarks.relation_scan import DATASETS, dataset, random_trials
from boanon.learners.relations import find_relations

PROBLEMS = ("fn-epidemic", "fn-ackley", "fn-dropwave", "fn-alpine2", "fn-rosenbrock", "fn-envmodel",
            "fn-pharma", "fn-ackmat", "fn-gpnet", "synthetic", "synthetic-40", "pipeline", "sgd")


def _line(source: str, table) -> str:
    found = sorted(r.describe() for r in find_relations(table))
    return f"{source}: {len(found)} | " + " | ".join(found)


def main() -> None:
    start = time.process_time()
    for seed in (0, 1):
        for problem in PROBLEMS:
            table = random_trials(problem, 50, seed)
            for n in (10, 15, 20, 25, 30, 40, 50):
                print(_line(f"{problem} s{seed} n{n}", table.iloc[:n]), flush=True)
    for name in DATASETS:
        table = dataset(name)
        for n in (10, 20, 40, len(table)):
            print(_line(f"{name} n{n}", table.iloc[:n]), flush=True)
    print(f"cpu {time.process_time() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
