"""How many of each run's best configuration's parameters sit at the edge of their range.

A model fitted to fewer trials than the space has parameters extrapolates a trend to the
space's bounds; on a system whose extreme settings are poor (RocksDB's smallest SST files, its
largest L0 triggers) a search that lands there picks worse configurations than random points,
which fall in the middle of most ranges. This counts, per run in ``runs.csv`` folders, the
numeric parameters of the best configuration within ``--edge`` (unit scale, log-scaled ranges
as the space encodes them) of either end, and prints the median per tuner:

    python -m benchmarks.at_bounds --results benchmarks/results/rocksdb-r5/mix-boanon \\
        benchmarks/results/rocksdb-r5/mix-random
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.problems import make_problem
from benchmarks.rocksdb_remeasure import finished_runs
from benchmarks.summary import markdown_table
from boanon.space import Float, Space


def numeric(space: Space) -> dict[str, Float]:
    """The parameters with a range (``Float`` and ``Int``; not categoricals or booleans)."""
    return {n: p for n, p in space.params.items() if isinstance(p, Float)}


def at_bounds(space: Space, config: Mapping[str, Any], edge: float = 0.02) -> list[str]:
    """The numeric parameters of ``config`` within ``edge`` of an end of their range."""
    units = {n: p.to_unit(config[n]) for n, p in numeric(space).items()}
    return [n for n, u in units.items() if u <= edge or u >= 1 - edge]


def count_per_run(space: Space, runs: pd.DataFrame, edge: float) -> pd.DataFrame:
    """Per run: its tuner, seed and how many of its best configuration's parameters are at a bound."""
    counts = [len(at_bounds(space, json.loads(c), edge)) for c in runs["best_config"]]
    return runs[["tuner", "seed"]].assign(at_bounds=counts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="folders with runs.csv")
    parser.add_argument("--problem", default="rocksdb-mixgraph")
    parser.add_argument("--edge", type=float, default=0.02, help="unit-scale distance counted as a bound")
    args = parser.parse_args(argv)
    space = make_problem(args.problem).space
    runs, _ = finished_runs(args.results, args.problem)
    table = count_per_run(space, runs, args.edge)
    summary = table.groupby("tuner", sort=False)["at_bounds"].agg(["count", "median", "min", "max"])
    print(f"numeric parameters of the best configuration within {args.edge} of a bound "
          f"(of {len(numeric(space))}), per run:")
    print(markdown_table(summary.reset_index().rename(columns={"count": "runs"})))


if __name__ == "__main__":
    main()
