"""Which parameters separate the best configurations that re-measure well from those that do not.

Every run's best configuration was re-measured against the default (:mod:`benchmarks.rocksdb_remeasure`);
tuners whose bests re-measure worse picked them somewhere else in the space. This ranks, over
all runs of the ``--results`` folders, each numeric parameter of the bests (unit scale, log
ranges as the space encodes them) by its Spearman rank correlation with the re-measured CPU
time per operation over the default's, and shows where each tuner's bests sit in the
parameters that matter most (median of the values):

    R=benchmarks/results/rocksdb-r29
    python -m benchmarks.best_factors --results $R/rdb-var10 $R/rdb-gen50 \\
        --remeasured $R/rocksdb-mixgraph-remeasure.csv
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

from benchmarks.at_bounds import numeric
from benchmarks.problems import make_problem
from benchmarks.rocksdb_remeasure import finished_runs
from benchmarks.summary import markdown_table
from boanon.best import human_size
from boanon.space import Int, Space


def with_remeasured(runs: pd.DataFrame, remeasured: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with each run's re-measured CPU time per op over the default's (runs not
    re-measured are left out: a tuner is named ``folder:tuner`` in both tables)."""
    ratios = remeasured.set_index(["tuner", "seed"])["cpu_per_op_ratio"]
    keys = list(zip(runs["tuner"], runs["seed"], strict=True))
    kept = [k in ratios.index for k in keys]
    return runs[kept].assign(cpu_ratio=[float(ratios[k]) for k, keep in zip(keys, kept, strict=True) if keep])


def correlations(space: Space, runs: pd.DataFrame) -> pd.DataFrame:
    """Per numeric parameter: Spearman's rho of its unit value in the bests with ``cpu_ratio``
    and the test's p-value, strongest first."""
    configs = [json.loads(c) for c in runs["best_config"]]
    rows = []
    for name, p in numeric(space).items():
        rho, pvalue = spearmanr([p.to_unit(c[name]) for c in configs], runs["cpu_ratio"])
        rows.append({"parameter": name, "rho": round(float(rho), 2), "p": round(float(pvalue), 3)})
    return pd.DataFrame(rows).sort_values("p", kind="stable", ignore_index=True)


def where_bests_sit(space: Space, runs: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Per tuner: its runs, the median re-measured ratio and the median of each of ``names``
    in its bests (the parameter's own units; byte sizes as ``64 MiB``)."""
    configs = [json.loads(c) for c in runs["best_config"]]
    values = pd.DataFrame({n: [c[n] for c in configs] for n in names}, index=runs.index)
    table = pd.concat([runs[["tuner", "cpu_ratio"]], values], axis=1)
    out = table.groupby("tuner", sort=False).median().round(3)
    for n in names:
        if isinstance(space.params[n], Int) and space.params[n].low >= 1024:  # a size in bytes
            out[n] = [human_size(int(v)) for v in out[n]]
    return out.assign(runs=table.groupby("tuner", sort=False).size()).reset_index()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="folders with runs.csv")
    parser.add_argument("--remeasured", type=Path, required=True, help="benchmarks.rocksdb_remeasure's csv")
    parser.add_argument("--problem", default="rocksdb-mixgraph")
    parser.add_argument("--top", type=int, default=3, help="parameters shown per tuner")
    args = parser.parse_args(argv)
    space = make_problem(args.problem).space
    runs, _ = finished_runs(args.results, args.problem)
    runs = with_remeasured(runs, pd.read_csv(args.remeasured))
    ranked = correlations(space, runs)
    print(f"{len(runs)} re-measured runs: Spearman's rho of each parameter of the bests (unit scale) "
          "with the re-measured CPU time per op / default's (negative: higher values re-measure faster)")
    print(markdown_table(ranked))
    print()
    print(markdown_table(where_bests_sit(space, runs, ranked["parameter"].head(args.top).tolist())))


if __name__ == "__main__":
    main()
