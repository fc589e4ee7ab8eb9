"""Each run's best so far over its own default, at given evaluations: a comparison across sessions.

A RocksDB search's numbers move with the machine's load: the default configuration, every
tuner's first trial, read 6.7 to 9.7 us/op in one session's runs and more beside other work.
Runs measured in different sessions (or beside other benchmarks) compare better as the search's
best over the default the same run measured: the load scales both. This prints, per tuner (a
folder's ``runs.csv`` and per-evaluation csv, tuners named ``folder:tuner`` as
:mod:`benchmarks.rocksdb_remeasure` names them), the median [min, max] of that ratio at each
``--at`` evaluation, and seed by seed against ``--against`` (better / equal / worse, lower is
better for a minimised objective):

    R=benchmarks/results
    python -m benchmarks.over_default --results $R/rocksdb-r29/rdb-var10 $R/rocksdb-r29/rdb-gen50 \\
        $R/rocksdb-r30/mix-gen10 --at 10 50 --against rocksdb-r29/rdb-var10:boanon
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchmarks.problems import make_problem
from benchmarks.rocksdb_remeasure import finished_runs
from benchmarks.summary import markdown_table


def ratios(searched: pd.DataFrame, at: list[int]) -> pd.DataFrame:
    """Rows ``tuner, seed, evaluation, ratio``: the best so far at each of ``at`` over the run's
    first evaluation (the default), for the runs that got that far."""
    first = searched[searched["evaluation"] == 1].set_index(["tuner", "seed"])["best_so_far"]
    kept = searched[searched["evaluation"].isin(at)].copy()
    kept["ratio"] = [b / first[(t, s)] for t, s, b in
                     zip(kept["tuner"], kept["seed"], kept["best_so_far"], strict=True)]
    return kept[["tuner", "seed", "evaluation", "ratio"]].reset_index(drop=True)


def summary(table: pd.DataFrame, against: str | None, minimize: bool = True) -> pd.DataFrame:
    """Per tuner and evaluation: runs, median [min, max] ratio, and the sign against ``against``
    at the same evaluation (its runs' seeds in common)."""
    rows = []
    for (tuner, evaluation), part in table.groupby(["tuner", "evaluation"], sort=False):
        ratio = part["ratio"]
        row = {"tuner": tuner, "at": int(evaluation), "runs": len(part), "median": round(ratio.median(), 3),
               "range": f"[{ratio.min():.3f}, {ratio.max():.3f}]"}
        same_point = table[(table["tuner"] == against) & (table["evaluation"] == evaluation)]
        ref = same_point.set_index("seed")["ratio"]
        if against is not None and tuner != against and len(ref):
            mine = part.set_index("seed")["ratio"]
            common = mine.index.intersection(ref.index)
            diff = (mine[common] - ref[common]) * (1 if minimize else -1)
            row[f"vs {against}"] = f"{(diff < 0).sum()} / {(diff == 0).sum()} / {(diff > 0).sum()}"
        rows.append(row)
    return pd.DataFrame(rows).fillna("")  # no sign where a tuner meets itself or no reference


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="folders with runs.csv")
    parser.add_argument("--problem", default="rocksdb-mixgraph")
    parser.add_argument("--at", type=int, nargs="+", default=[10], help="evaluations to compare at")
    parser.add_argument("--against", help="the tuner the others are paired with, seed by seed (folder:tuner "
                        "with several folders)")
    args = parser.parse_args(argv)
    runs, searched = finished_runs(args.results, args.problem)
    if runs.empty:
        parser.error(f"--results: no finished {args.problem} run in {', '.join(map(str, args.results))} "
                     "(runs.csv); another --problem?")
    tuners = sorted(set(runs["tuner"]))
    if args.against is not None and args.against not in tuners:
        parser.error(f"--against {args.against}: no such tuner; the runs' tuners: {', '.join(tuners)}")
    finished = set(zip(runs["tuner"], runs["seed"], strict=True))  # not a run cut short, nor its retry
    searched = searched[[k in finished for k in zip(searched["tuner"], searched["seed"], strict=True)]]
    minimize = make_problem(args.problem).objective.direction == "minimize"
    print(f"best so far over the run's own default ({'lower' if minimize else 'higher'} is better); "
          "against: better / equal / worse seeds")
    print(markdown_table(summary(ratios(searched, args.at), args.against, minimize)))


if __name__ == "__main__":
    main()
