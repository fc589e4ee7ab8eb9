"""Would a noisy run's best be better picked by the model than by its luckiest measurement?

A search that proposes near its incumbent keeps the luckiest of close neighbours: re-measured,
cold BoAnon's RocksDB bests lose more to the re-measurement than random search's (winner's
curse). BoTorch recommends the observed configuration with the best posterior mean instead. This
runs BoAnon as :mod:`benchmarks.run` does (same wrapper, seed and budget, the default first),
then fits BoAnon's plain GP on the run's trials and picks the observed trial with the best
posterior mean. Each run becomes a row of two ``runs.csv`` tables, ``<out>/measured`` (the best
measured trial, as the harness keeps it) and ``<out>/posterior`` (the model's pick), which
:mod:`benchmarks.rocksdb_remeasure` re-measures side by side; ``<out>/picks.csv`` says per run
where the two part.

    python -m benchmarks.posterior_pick --problem rocksdb-readwhilewriting --seeds 10 --budget 10 --out DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.run import RunStats, append_run, code_version, record_versions
from benchmarks.step_through import fresh_run
from boanon.models.base import param_configs
from boanon.models.plain import PlainGPSurrogate
from boanon.objectives import Objective
from boanon.space import Space

SAMPLES = 512


def posterior_means(space: Space, table: pd.DataFrame, objective: Objective, seed: int) -> np.ndarray:
    """The plain GP's posterior mean of ``objective`` (to minimise) at each trial of ``table``."""
    gp = PlainGPSurrogate(space, [objective]).fit(table)
    draws = gp.sample(param_configs(space, table), SAMPLES, np.random.default_rng(seed))[objective.name]
    return objective.to_minimize(draws.mean(axis=0))


def run_and_pick(problem_name: str, seed: int, budget: int) -> dict:
    """One BoAnon run; its best measured trial and the trial with the best posterior mean."""
    problem, tuner = fresh_run(problem_name, "boanon", seed, budget)
    for _ in range(budget):
        config = tuner.ask()
        tuner.tell(problem.evaluate(config))
    table = tuner.table().reset_index(drop=True)
    objective = problem.objective
    measured = objective.to_minimize(table[f"objective:{objective.name}"].to_numpy(dtype=float))
    means = posterior_means(problem.space, table, objective, seed)
    configs = param_configs(problem.space, table)
    picks = {"measured": int(np.argmin(measured)), "posterior": int(np.argmin(means))}
    return {"problem": problem.name, "seed": seed, "budget": budget, "picks": picks,
            "values": objective.from_minimize(measured).tolist(),
            "means": objective.from_minimize(means).tolist(),
            "configs": {k: json.dumps(configs[i], sort_keys=True, default=lambda v: v.item())
                        for k, i in picks.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="rocksdb-readwhilewriting")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    commit = code_version()
    rows = []
    for seed in range(args.seeds):
        run = run_and_pick(args.problem, seed, args.budget)
        for kind, i in run["picks"].items():
            folder = args.out / kind
            folder.mkdir(parents=True, exist_ok=True)
            append_run(folder, RunStats(run["problem"], "boanon", seed, args.budget, best=run["values"][i],
                                        best_config=run["configs"][kind], commit=commit))
        rows.append({"seed": seed, "measured_trial": run["picks"]["measured"] + 1,
                     "posterior_trial": run["picks"]["posterior"] + 1,
                     "measured_best": run["values"][run["picks"]["measured"]],
                     "posterior_pick_measured": run["values"][run["picks"]["posterior"]],
                     "posterior_pick_mean": run["means"][run["picks"]["posterior"]]})
        print(rows[-1], flush=True)
    pd.DataFrame(rows).to_csv(args.out / "picks.csv", index=False, float_format="%.6g")
    record_versions(args.out)


if __name__ == "__main__":
    main()
