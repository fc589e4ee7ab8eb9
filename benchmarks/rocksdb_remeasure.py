"""Re-measure each benchmark run's best RocksDB configuration against the default, interleaved.

A tuner's best value on a noisy system is partly luck (the best of N noisy draws), so the
verdict on ``rocksdb-mixgraph`` does not rest on it: every finished run's best configuration
(``runs.csv``'s ``best_config``) is run again as one trial of the ``rocksdb`` runner with
``repeats`` runs, each followed by a run of the problem's default (``reference``): candidate,
default, candidate, default... so that each pair shares the machine's load of the moment. The
improvement is the median over pairs of candidate / default (throughput: higher is better; CPU
time per operation: lower is better), with its quartiles over pairs.

    nice .venv/bin/python -m benchmarks.rocksdb_remeasure --results benchmarks/results --repeats 10

Writes ``<results>/<problem>-remeasure.csv`` (one row per run re-measured) and prints the
medians per tuner, beside the search's own best at 10 evaluations and at the run's budget.
Trials stay in ``--trials``; one that already parses is read back (a stopped re-measurement
resumes). Runs are re-measured seed by seed (every tuner's seed 0, then seed 1...), so that no
tuner gets a quieter hour of the machine than another. Several ``--results`` folders (blocks
of runs measured apart) are re-measured together, each run's tuner named ``folder:tuner``:

    python -m benchmarks.rocksdb_remeasure --results A/mix-boanon A/mix-tpe B/mix-boanon --out X.csv
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.problems import make_problem
from benchmarks.run import RESULTS
from benchmarks.summary import markdown_table
from boanon.adapters.rocksdb import REFERENCE_DIR, repeated_runs
from boanon.errors import LogParseError
from boanon.runners.base import exit_on_sigterm
from boanon.runners.trial import run_config
from boanon.targets.rocksdb import RocksDBRunner


def quantities(runner: RocksDBRunner) -> dict[str, str]:
    """What is compared per pair (the measured benchmark's throughput, CPU time per operation),
    and the column prefix each gets."""
    return {f"{runner.benchmarks()[-1]}_ops_per_sec": "throughput", "cpu_micros_per_op": "cpu_per_op"}


def pair_ratios(trial: Path, names: Iterable[str]) -> dict[str, list[float]]:
    """Per quantity in ``names``, candidate / default of each interleaved pair of runs in ``trial``."""
    runs, refs = repeated_runs(trial), repeated_runs(trial / REFERENCE_DIR)
    if len(runs) != len(refs):
        raise LogParseError(trial, f"{len(runs)} candidate runs but {len(refs)} default runs")
    return {name: [r.objectives[name] / f.objectives[name] for r, f in zip(runs, refs, strict=True)]
            for name in names}


def remeasure(runner: RocksDBRunner, runs: pd.DataFrame, trials: Path, log=print) -> pd.DataFrame:
    """One row per run of ``runs`` (with a ``best_config``): the median and quartiles of its
    pairs, each configuration run by ``runner`` (with its ``repeats`` and ``reference``)."""
    repeats, compared = runner.repeats, quantities(runner)
    throughput = next(iter(compared))
    rows = []
    for run in runs.itertuples(index=False):
        trial = trials / f"{run.tuner.replace(':', '/')}-seed{int(run.seed)}"
        ratios = None
        if trial.is_dir():
            try:
                ratios = pair_ratios(trial, compared)
            except (LogParseError, KeyError):
                pass  # cut short by a stop: run again below
        if ratios is None or len(ratios["cpu_micros_per_op"]) != repeats:
            shutil.rmtree(trial, ignore_errors=True)
            trial.mkdir(parents=True)
            started = time.monotonic()
            run_config(runner, json.loads(run.best_config), trial)
            ratios = pair_ratios(trial, compared)
            log(f"{run.tuner} seed {int(run.seed)}: {time.monotonic() - started:.0f} s, throughput x"
                f"{statistics.median(ratios[throughput]):.3f}, CPU/op x"
                f"{statistics.median(ratios['cpu_micros_per_op']):.3f}")
        row = {"tuner": run.tuner, "seed": int(run.seed), "budget": int(run.budget),
               "best_in_search": run.best, "pairs": repeats}
        for name, prefix in compared.items():
            q1, median, q3 = np.percentile(ratios[name], [25, 50, 75])
            row.update({f"{prefix}_ratio": median, f"{prefix}_q1": q1, f"{prefix}_q3": q3})
        rows.append(row)
    return pd.DataFrame(rows)


def finished_runs(folders: list[Path], problem: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The finished runs of ``problem`` with a best configuration in ``folders`` (their
    ``runs.csv``) seed-major, and their per-evaluation rows; with several folders each tuner is
    named ``folder:tuner`` (the folder relative to the folders' common parent)."""
    common = Path(os.path.commonpath([f.resolve() for f in folders])) if len(folders) > 1 else None
    runs, searched = [], []
    for folder in folders:
        found = pd.read_csv(folder / "runs.csv")
        found = found[(found["problem"] == problem) & (found["status"] == "ok")
                      & found["best_config"].notna()]
        rows = pd.read_csv(folder / f"{problem}.csv") if (folder / f"{problem}.csv").is_file() else None
        if common is not None:
            label = folder.resolve().relative_to(common).as_posix()
            found = found.assign(tuner=label + ":" + found["tuner"])
            rows = None if rows is None else rows.assign(tuner=label + ":" + rows["tuner"])
        runs.append(found)
        searched += [] if rows is None else [rows]
    runs = pd.concat(runs, ignore_index=True).sort_values("seed", kind="stable", ignore_index=True)
    return runs, pd.concat(searched, ignore_index=True) if searched else pd.DataFrame(
        columns=["tuner", "seed", "evaluation", "best_so_far"])


def per_tuner(table: pd.DataFrame, searched: pd.DataFrame, early: int) -> pd.DataFrame:
    """Per tuner: the median over its runs of the search's best at ``early`` evaluations and at
    its budget (``searched``: the problem's per-evaluation results, of the same runs), and of
    each run's median re-measured ratio, with the runs' range."""
    measured = set(zip(table["tuner"], table["seed"], strict=True))
    keys = zip(searched["tuner"], searched["seed"], strict=True)
    searched = searched.loc[np.array([key in measured for key in keys], dtype=bool)]  # [] is no mask
    at = {evaluation: searched[searched["evaluation"] == evaluation].groupby("tuner")["best_so_far"].median()
          for evaluation in (early, *set(table["budget"]))}  # empty where no run got that far
    out = table.groupby("tuner", sort=False).agg(
        runs=("seed", "size"), budget=("budget", "max"),
        throughput=("throughput_ratio", "median"), throughput_min=("throughput_ratio", "min"),
        throughput_max=("throughput_ratio", "max"), cpu_per_op=("cpu_per_op_ratio", "median")).reset_index()
    out.insert(3, f"search_at_{early}", [at[early].get(t) for t in out["tuner"]])
    out.insert(4, "search_final", [at[b].get(t) for t, b in zip(out["tuner"], out["budget"], strict=True)])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, nargs="+", default=[RESULTS],
                        help="folders with runs.csv (several: tuners named folder:tuner)")
    parser.add_argument("--problem", default="rocksdb-mixgraph")
    parser.add_argument("--tuners", nargs="+", help="default: every tuner with a finished run")
    parser.add_argument("--seeds", type=int, help="re-measure seeds 0..N-1 only (default: all)")
    parser.add_argument("--repeats", type=int, default=10, help="interleaved pairs per configuration")
    parser.add_argument("--early", type=int, default=10, help="the search's best is also shown here")
    parser.add_argument("--trials", type=Path, default=Path("runs/rocksdb_remeasure"))
    parser.add_argument("--out", type=Path, help="default: <results>/<problem>-remeasure.csv")
    args = parser.parse_args(argv)
    if args.out is None and len(args.results) > 1:
        parser.error("several --results folders: name the table with --out")
    out = args.out or args.results[0] / f"{args.problem}-remeasure.csv"
    runs, searched = finished_runs(args.results, args.problem)
    if args.tuners:
        runs = runs[runs["tuner"].isin(args.tuners)]
    if args.seeds:
        runs = runs[runs["seed"] < args.seeds]
    if runs.empty:
        parser.error(f"no finished run of {args.problem} with a best configuration in the "
                     f"runs.csv of {', '.join(map(str, args.results))}")
    start = time.monotonic()
    problem = make_problem(args.problem)
    runner = RocksDBRunner(**{**problem.info["runner_options"], "repeats": args.repeats,
                              "reference": problem.space.default()})
    table = remeasure(runner, runs, args.trials)
    table.to_csv(out, index=False, float_format="%.6g")
    summary = per_tuner(table, searched, args.early)
    print(markdown_table(summary.map(lambda v: f"{v:.3f}" if isinstance(v, float) else v)))
    print(f"{len(table)} configurations x {args.repeats} interleaved pairs in "
          f"{time.monotonic() - start:.0f} s; wrote {out}")


if __name__ == "__main__":
    exit_on_sigterm()  # the process's own: a killed run kills db_bench and removes its DB
    main()
