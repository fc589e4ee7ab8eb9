"""Run the benchmark: every (problem, tuner, seed) with the same budget, one row per evaluation.

    python -m benchmarks.run --quick                  # the quick suite (<= 10 min on 2 cores)
    python -m benchmarks.run                          # the full suite (hours; see the README)
    python -m benchmarks.run --problems sgd --tuners tpe boanon --seeds 5 --budget 50

Results go to ``<out>/<problem>.csv`` (``problem,tuner,seed,evaluation,best_so_far``), written
row by row; ``<out>/runs.csv`` gets one line per finished run (timings, failures). A stopped run
resumes: finished (problem, tuner, seed, budget) runs are skipped, partial ones start again.
Plots and the summary table are redrawn at the end (``benchmarks.plot``, ``benchmarks.summary``).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from benchmarks.problems import PROBLEMS, Problem, make_problem
from benchmarks.tuners import TUNERS, BenchTuner, make_tuner, with_fixed_hash_seed
from boanon.errors import LogParseError
from boanon.runners.base import TrialFailed, exit_on_sigterm
from boanon.table import TrialRecord, Value

RESULT_COLUMNS = ["problem", "tuner", "seed", "evaluation", "best_so_far"]
RESULTS = Path(__file__).parent / "results"
MAX_INFEASIBLE = 1000
"""Infeasible suggestions in a row before a run is abandoned (they cost no evaluation)."""

DEFAULT_TUNERS = [name for name, cls in TUNERS.items() if not cls.needs]
"""Tuners run when none are named: those that need nothing beyond the problem itself."""

QUICK = {"problems": ["synthetic", "sgd"], "seeds": 3, "budget": 15, "out": RESULTS / "quick"}
"""The quick suite: every tuner on the two problems that evaluate in well under a second."""


@dataclass
class RunStats:
    """One finished run, as a row of ``runs.csv``."""

    problem: str
    tuner: str
    seed: int
    budget: int
    status: str = "ok"
    best: float | None = None
    wall_s: float = 0.0
    suggest_s: float = 0.0
    evaluate_s: float = 0.0
    failures: int = 0
    infeasible: int = 0
    finished_at: str = ""
    best_config: str = ""
    """The best configuration found, as JSON: what a re-measurement runs again."""
    commit: str = ""
    """The code measured: ``git describe`` of the working tree (``-dirty`` with local changes)."""


def ask_feasible(tuner: BenchTuner, problem: Problem, stats: RunStats,
                 worst: float | None) -> dict[str, Value]:
    """The tuner's next feasible suggestion; infeasible ones are told to the tuner and cost nothing.

    Only BoAnon and random search know the space's constraints; the generic tuners learn them
    from feedback, as they would in a user's hands, but are not charged an evaluation for them.
    An infeasible suggestion is told as the worst value seen so far, the penalty a user would
    return (a failure while nothing has been seen): a sampler that ignores failed trials, such as
    Optuna's GP, would otherwise propose the same region forever.
    """
    for _ in range(MAX_INFEASIBLE):
        config = tuner.ask()
        if problem.space.is_feasible(config):
            return config
        stats.infeasible += 1
        tuner.tell(None if worst is None else
                   TrialRecord("infeasible", config, {}, {problem.objective.name: worst}))
    raise RuntimeError(f"{tuner.name} made {MAX_INFEASIBLE} infeasible suggestions in a row")


def evaluate(problem: Problem, config: dict[str, Value]) -> TrialRecord | None:
    """The trial record, or ``None`` when the system failed (a spent evaluation either way)."""
    try:
        record = problem.evaluate(config)
    except (TrialFailed, LogParseError) as exc:
        print(f"    evaluation failed: {exc}", file=sys.stderr)
        return None
    return record


def run_one(problem: Problem, tuner_name: str, seed: int, budget: int, rows: csv.writer,
            flush: Callable[[], None]) -> RunStats:
    """One seeded run of one tuner on one problem; writes a result row per evaluation."""
    stats = RunStats(problem.name, tuner_name, seed, budget)
    start = time.perf_counter()
    default = problem.space.default()
    first = default if problem.space.is_feasible(default) else None
    tuner = make_tuner(tuner_name, problem.space, problem.objective, seed=seed, budget=budget, start=first,
                       knowledge=problem.knowledge)
    best = worst = None
    for evaluation in range(1, budget + 1):
        t0 = time.perf_counter()
        config = ask_feasible(tuner, problem, stats, worst)
        t1 = time.perf_counter()
        record = evaluate(problem, config)
        t2 = time.perf_counter()
        tuner.tell(record)
        stats.suggest_s += (t1 - t0) + (time.perf_counter() - t2)
        stats.evaluate_s += t2 - t1
        value = tuner.value(record)
        if value is None:
            stats.failures += 1
        else:
            if best is None or problem.objective.better(value, best):
                best, stats.best_config = value, json.dumps(config, sort_keys=True)
            worst = value if worst is None or problem.objective.better(worst, value) else worst
        rows.writerow([problem.name, tuner_name, seed, evaluation, "" if best is None else repr(best)])
        flush()
    stats.best = best
    stats.wall_s = time.perf_counter() - start
    return stats


def finished_runs(out: Path) -> pd.DataFrame:
    """``runs.csv`` (empty with the right columns when there is none yet)."""
    path = out / "runs.csv"
    if path.is_file():
        return pd.read_csv(path)
    return pd.DataFrame(columns=list(RunStats.__dataclass_fields__))


def drop_runs(path: Path, keep: Callable[[tuple[str, int]], bool]) -> None:
    """Keep only the result rows of the (tuner, seed) runs for which ``keep`` is true."""
    if not path.is_file():
        return
    table = pd.read_csv(path)
    mask = [keep((t, int(s))) for t, s in zip(table["tuner"], table["seed"], strict=True)]
    if not all(mask):
        table[mask].to_csv(path, index=False)


@functools.cache
def code_version() -> str:
    """The commit of the code being measured, marked ``-dirty`` when the tree has changes; read
    once per process (``main`` asks first), so a later commit does not relabel code loaded before."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record_versions(out: Path) -> None:
    """Add this run's Python and library versions to ``versions.json`` (one entry per commit)."""
    from importlib import metadata

    path = out / "versions.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    libraries = {}
    for name in ("numpy", "scipy", "scikit-learn", "optuna", "smac", "torch", "botorch", "gpytorch",
                 "zigzag-dse"):
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    known[code_version()] = {"python": sys.version.split()[0], **libraries}
    path.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")


def record_problem(out: Path, problem: Problem) -> None:
    """Add the problem's description to ``problems.json`` (objective, direction, optimum)."""
    path = out / "problems.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    known[problem.name] = problem.describe()
    path.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")


def run_problem(problem: Problem, tuners: list[str], seeds: int, budget: int, out: Path) -> None:
    """Every (tuner, seed) run of ``problem`` not already finished with this budget."""
    record_problem(out, problem)
    record_versions(out)
    commit = code_version()
    runs = finished_runs(out)
    ok = runs[(runs["problem"] == problem.name) & (runs["status"] == "ok")]
    finished = {(t, int(s)): int(b) for t, s, b in zip(ok["tuner"], ok["seed"], ok["budget"], strict=True)}
    done = {key for key, b in finished.items() if b == budget}
    path = out / f"{problem.name}.csv"
    # Rows of runs that never finished go (their tuner state is gone; they start again); finished
    # runs with another budget stay unless this call redoes them.
    drop_runs(path, lambda key: key in finished)
    for seed in range(seeds):  # seed-major: a run stopped early has all tuners on its first seeds
        for tuner_name in tuners:
            key = (tuner_name, seed)
            lacking = [k for k in TUNERS[tuner_name].needs if k not in problem.knowledge]
            if key in done or lacking:
                if lacking and seed == 0:
                    print(f"{problem.name:15s} {tuner_name:10s} skipped: the problem has no "
                          f"{', '.join(lacking)}")
                continue
            drop_runs(path, lambda k, key=key: k != key)
            new = not path.is_file()
            with open(path, "a", newline="") as fh:
                writer = csv.writer(fh)
                if new:
                    writer.writerow(RESULT_COLUMNS)
                try:
                    stats = run_one(problem, tuner_name, seed, budget, writer, fh.flush)
                except Exception as exc:  # a tuner bug must not cost the other runs
                    traceback.print_exc()
                    stats = RunStats(problem.name, tuner_name, seed, budget,
                                     status=f"error: {type(exc).__name__}: {exc}"[:300])
            if stats.status != "ok":
                drop_runs(path, lambda k, key=key: k != key)
            stats.finished_at = time.strftime("%Y-%m-%dT%H:%M:%S")
            stats.commit = commit
            append_run(out, stats)
            print(f"{problem.name:15s} {tuner_name:10s} seed={seed} {stats.status} best={stats.best} "
                  f"wall={stats.wall_s:.1f}s suggest={stats.suggest_s:.1f}s "
                  f"failures={stats.failures} infeasible={stats.infeasible}", flush=True)


def append_run(out: Path, stats: RunStats) -> None:
    path = out / "runs.csv"
    new = not path.is_file()
    if not new and pd.read_csv(path, nrows=0).columns.tolist() != list(RunStats.__dataclass_fields__):
        # written before a field was added: rewrite it with every column, old rows left blank
        table = pd.concat([pd.read_csv(path), pd.DataFrame([asdict(stats)])])
        table[list(RunStats.__dataclass_fields__)].to_csv(path, index=False)
        return
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RunStats.__dataclass_fields__))
        if new:
            writer.writeheader()
        writer.writerow(asdict(stats))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"the quick suite: {QUICK['problems']}, {QUICK['seeds']} seeds, "
                             f"budget {QUICK['budget']}, into {QUICK['out']}")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), help="default: all")
    parser.add_argument("--tuners", nargs="+", choices=list(TUNERS),
                        help=f"default: {' '.join(DEFAULT_TUNERS)}")
    parser.add_argument("--seeds", type=int, help="seeds 0..N-1 per tuner (default 5)")
    parser.add_argument("--budget", type=int, help="evaluations per run (default: the problem's)")
    parser.add_argument("--out", type=Path, help=f"results folder (default {RESULTS})")
    parser.add_argument("--no-plots", action="store_true", help="do not redraw plots and the summary")
    args = parser.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) is None:
                setattr(args, key, value)
    args.problems = args.problems or list(PROBLEMS)
    args.tuners = args.tuners or DEFAULT_TUNERS
    args.seeds = args.seeds or 5
    args.out = args.out or RESULTS
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    code_version()
    # Small GP fits routinely hit kernel bounds; the warnings would drown the progress lines.
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for name in args.problems:
        problem = make_problem(name)
        run_problem(problem, args.tuners, args.seeds, args.budget or problem.budget, args.out)
    print(f"benchmark finished in {time.perf_counter() - start:.0f} s", flush=True)
    if not args.no_plots:
        from benchmarks.plot import plot_all

        for path in plot_all(args.out, args.problems):
            print(f"wrote {path}")


if __name__ == "__main__":
    with_fixed_hash_seed()  # SMAC repeats only under one string-hash seed
    exit_on_sigterm()  # the process's own: a killed run kills db_bench and removes its DB
    main()
