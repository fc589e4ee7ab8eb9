"""How long one ``propose()`` takes, phase by phase, as trials accumulate.

    python -m benchmarks.propose_time [--trials 20 50 100] [--repeats 3] [--out benchmarks/results]

On the default :class:`SyntheticSystem` (12 parameters in 4 groups, chains of 3 metrics: 13
modelled nodes) with its true graph, so structure learning is not timed (see
``benchmarks.overhead`` for that). Reports the median wall time of fitting both surrogates,
cross-validating them, and optimising the acquisition, plus the process CPU time and the
machine's load average: on a shared machine wall time mostly measures the neighbours.
Writes ``propose_time.csv`` and ``propose_time.md``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.run import RESULTS
from benchmarks.summary import markdown_table
from boanon.acquisition import propose
from boanon.objectives import Objective
from boanon.synthetic import SyntheticSystem


def measure(n_trials: int, strategy: str, seed: int) -> dict:
    system = SyntheticSystem(seed=seed)
    table = system.sample_table(n_trials, seed=seed)
    cpu, wall = time.process_time(), time.perf_counter()
    p = propose(system.space, table, [Objective("cost")], graph=system.true_graph(), proposer=strategy,
                rng=np.random.default_rng(seed))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"trials": n_trials, "strategy": strategy, "seed": seed, "surrogate": p.surrogate,
            **{f"{k}_s": v for k, v in p.info["timings_s"].items()}, "wall_s": wall, "cpu_s": cpu,
            "load_1min": os.getloadavg()[0], "true_cost": system.evaluate(p.config, noise=False)["cost"],
            "best_observed": float(table["objective:cost"].min())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    measure(10, "structured", 99)  # warm up imports and caches
    rows = [measure(n, strategy, seed) for n in args.trials for strategy in ("structured", "gp")
            for seed in range(args.repeats)]
    frame = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "propose_time.csv", index=False)
    cols = ["fit_s", "cv_s", "acquisition_s", "total_s", "cpu_s", "load_1min"]
    summary = frame.groupby(["trials", "strategy"])[cols].median().round(3).reset_index()
    (args.out / "propose_time.md").write_text(
        "# One propose() on SyntheticSystem(seed) with its true graph (medians)\n\n"
        f"{os.cpu_count()} CPUs; load_1min is the machine's load average during the run.\n\n"
        + markdown_table(summary))
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
