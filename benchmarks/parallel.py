"""Wall-clock time to a given quality with 1, 2 and 4 workers (asynchronous parallel tuning).

    .venv/bin/python -m benchmarks.parallel --seeds 3 --budget 18 --delay 2    # ~15 min, 2 busy cores

Two problems whose evaluation time is dominated by waiting, as with a real system:

* ``synthetic``: ``SyntheticSystem`` (12 parameters, known optimum) through the ``callable``
  runner, each evaluation sleeping ``--delay`` seconds;
* ``sgd``: the simulated parameter-server cluster (``sgd`` runner) played in scaled real time:
  each simulated iteration sleeps its simulated duration x ``--pace``, so a slow configuration
  takes longer, as on the real cluster. Run with no early stopping and with ASHA.

Each run is ``boanon.parallel.optimize_parallel`` on a ``LocalExecutor`` (one process per
trial) with the ``gp`` strategy, exactly the loop ``boanon tune --workers N`` runs. Writes one row
per finished trial to ``benchmarks/results/parallel.csv`` (seconds since the start, objective,
best so far) and ``parallel.png`` (best so far against wall-clock seconds), and prints the time
each configuration took to reach a quality every run reached.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from boanon.config import TuneConfig, parse_config  # noqa: E402
from boanon.early_stopping import SuccessiveHalving  # noqa: E402
from boanon.executors import LocalExecutor  # noqa: E402
from boanon.parallel import optimize_parallel  # noqa: E402
from boanon.runners import make_runner  # noqa: E402
from boanon.runners.base import Runner  # noqa: E402
from boanon.store import StoredTrial  # noqa: E402
from boanon.targets.sgd import SgdRunner  # noqa: E402
from boanon.tuner import Tuner  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parents[1]


NAIVE_DEFAULTS = {"synthetic": lambda name: 0.05,  # a corner, far from every subsystem's optimum
                  "sgd": lambda name: 0.0 if name.endswith("_gpu_share") else None}  # GPUs left idle
"""Each example's default configuration is already good (no tuner beats it within a short
budget), which would make "time to quality" the time of the first trial: the benchmark starts
from a naive default instead."""


def problem(name: str, delay: float, pace: float) -> tuple[TuneConfig, Runner, str]:
    """The tuning YAML of ``name`` with its naive default, its runner and the objective's name."""
    source = ROOT / "examples" / f"{name}.yaml"
    spec = yaml.safe_load(source.read_text())
    for param, param_spec in spec["space"].items():
        default = NAIVE_DEFAULTS[name](param)
        if default is not None:
            param_spec["default"] = default
    config = parse_config(spec, str(source))
    if name == "synthetic":
        runner = make_runner("callable", function="examples.synthetic_system:evaluate",
                             objectives=["cost"], seed=0, delay=delay)
    else:
        runner = SgdRunner(pace=pace, network="googlenet", iterations=30, warmup=5)
    return config, runner, config.objectives[0].name


def one_run(name: str, workers: int, early_stopping: str, seed: int, budget: int, delay: float,
            pace: float) -> pd.DataFrame:
    config, runner, objective = problem(name, delay, pace)
    tuner = Tuner(config.space, config.objectives, strategy="gp", seed=seed, n_init=6)
    # rungs at 8 and 16 of 30 iterations (after the 5 warm-up ones): the better half goes on at each
    stopper = SuccessiveHalving(min_resource=8, reduction_factor=2) if early_stopping == "asha" else None
    rows, start, best = [], time.monotonic(), float("inf")

    def record(trial: StoredTrial) -> None:
        nonlocal best
        value = trial.objectives.get(objective)
        if value is not None and trial.status == "done":  # a stopped trial's partial mean is no result
            best = min(best, value)
        rows.append({"problem": name, "workers": workers, "early_stopping": early_stopping, "seed": seed,
                     "trial": trial.name, "status": trial.status, "seconds": time.monotonic() - start,
                     "objective": value, "best_so_far": best if best < float("inf") else None})

    with tempfile.TemporaryDirectory() as tmp, LocalExecutor(workers) as executor:
        optimize_parallel(tuner, runner, budget, executor, trials_dir=tmp, stopper=stopper,
                          callback=record)
    return pd.DataFrame(rows)


def time_to_quality(table: pd.DataFrame) -> pd.DataFrame:
    """Per problem and configuration, median seconds to reach two targets and to finish.

    ``loose``: the worst final best over all runs (every run reaches it). ``sequential``: the
    median final best of the 1-worker runs (what the sequential loop reaches with the budget);
    runs that never reach it are counted in ``reached_sequential``.
    """
    out = []
    for name, runs in table.groupby("problem"):
        finals = runs.groupby(["workers", "early_stopping", "seed"])["best_so_far"].last()
        targets = {"loose": float(finals.max()),
                   "sequential": float(finals.xs((1, "none"), level=["workers", "early_stopping"]).median())}
        for (workers, es), group in runs.groupby(["workers", "early_stopping"]):
            row = {"problem": name, "workers": workers, "early_stopping": es}
            for label, target in targets.items():
                reach = pd.Series([g.loc[g["best_so_far"] <= target, "seconds"].min()
                                   for _, g in group.groupby("seed")])
                row[f"target_{label}"] = round(target, 3)
                row[f"median_s_to_{label}"] = round(float(reach.median()), 1)  # NaN if most never did
                row[f"reached_{label}"] = f"{int(reach.notna().sum())}/{len(reach)}"
            row["median_s_to_budget"] = round(float(group.groupby("seed")["seconds"].max().median()), 1)
            row["stopped_trials"] = int((group["status"] == "stopped").sum())
            out.append(row)
    return pd.DataFrame(out)


def plot(table: pd.DataFrame, path: Path) -> None:
    problems = sorted(table["problem"].unique())
    fig, axes = plt.subplots(1, len(problems), figsize=(6 * len(problems), 4), squeeze=False)
    colors = {1: "tab:gray", 2: "tab:blue", 4: "tab:red"}
    for ax, name in zip(axes[0], problems, strict=True):
        for (workers, es, seed), run in table[table["problem"] == name].groupby(
                ["workers", "early_stopping", "seed"]):
            label = f"{workers} worker{'s' if workers > 1 else ''}" + (f" + {es}" if es != "none" else "")
            ax.step(run["seconds"], run["best_so_far"], where="post", color=colors.get(workers, "k"),
                    linestyle="--" if es != "none" else "-", alpha=0.8, label=label if seed == 0 else None)
        ax.set_title(name)
        ax.set_xlabel("wall-clock seconds")
        ax.set_ylabel("best objective so far (lower is better)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--budget", type=int, default=18)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds per synthetic evaluation")
    parser.add_argument("--pace", type=float, default=0.002, help="wall seconds per simulated second")
    parser.add_argument("--problems", nargs="+", default=["synthetic", "sgd"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--summary-only", action="store_true", help="redraw from parallel.csv")
    args = parser.parse_args(argv)
    if args.summary_only:
        return summarise(pd.read_csv(args.out / "parallel.csv"), args.out)
    warnings.filterwarnings("ignore")  # GP fit warnings: noise, not news
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [(p, w, "none") for p in args.problems for w in (1, 2, 4)]
    runs += [("sgd", 4, "asha")] if "sgd" in args.problems else []
    with LocalExecutor(1) as warm:  # start the fork server (imports, once per process) before timing
        warm.submit(int, 0).result()
    frames = []
    for seed in range(args.seeds):
        for name, workers, es in runs:
            frame = one_run(name, workers, es, seed, args.budget, args.delay, args.pace)
            frames.append(frame)
            print(f"{name} workers={workers} early_stopping={es} seed={seed}: "
                  f"{frame['seconds'].max():.1f} s, best {frame['best_so_far'].iloc[-1]:.4g}", flush=True)
            table = pd.concat(frames, ignore_index=True)
            table.to_csv(args.out / "parallel.csv", index=False)
    summarise(table, args.out)


def summarise(table: pd.DataFrame, out: Path) -> None:
    plot(table, out / "parallel.png")
    summary = time_to_quality(table)
    summary.to_csv(out / "parallel-summary.csv", index=False)
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
