"""Where one proposal's expected improvement came from: each modelled node's samples at the
proposed configuration.

Expected improvement over a minimised positive objective (a time, an energy) never exceeds the
incumbent; when a proposal's does, the model is sampling values the system cannot produce. This
replays a benchmark run as :mod:`benchmarks.step_through` does, rebuilds the model of the
proposal at ``--step`` from the structure it recorded (:func:`boanon.report.fit_run_model`, the
same rebuild every view uses) on the trials before it, and prints each node's sample quantiles
and the share at or below zero.

    python -m benchmarks.proposal_samples zigzag-mobilenetv2 --seed 3 --step 10
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from benchmarks.step_through import replay
from boanon.report import fit_run_model


def proposal_samples(problem_name: str, seed: int, step: int, budget: int = 15, tuner_name: str = "boanon",
                     n_samples: int = 512) -> tuple[Any, dict[str, np.ndarray]]:
    """The trial proposed at ``step`` (1-based) and each node's samples at its configuration,
    from that proposal's model refitted on the trials before it."""
    problem, tuner = replay(problem_name, tuner_name, seed, budget)
    for _ in range(step - 1):
        tuner.tell(problem.evaluate(tuner.ask()))
    before = tuner.table()
    tuner.ask()
    trial, graph = tuner.last_trial, tuner.graph  # the graph the proposal was made with
    structure = trial.info.get("structure")
    model = fit_run_model(problem.space, before, [problem.objective], [], graph, structure)
    print(f"=== {problem_name} {tuner_name} seed={seed}: step {step} proposed by {trial.surrogate} "
          f"({type(model).__name__} rebuilt on {len(before)} trials); "
          f"acquisition {trial.info.get('acquisition')}")
    samples = model.sample([dict(trial.config)], n_samples, np.random.default_rng(0))
    for node, values in samples.items():
        v = np.ravel(values)
        p5, p50, p95 = np.percentile(v, [5, 50, 95])
        print(f"  {node:32s} p5 {p5:11.4g}  median {p50:11.4g}  p95 {p95:11.4g}  "
              f"at or below zero {np.mean(v <= 0):5.1%}")
    return trial, samples


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=int, required=True, help="the trial whose proposal to inspect (1-based)")
    ap.add_argument("--budget", type=int, default=15, help="the run's budget (it sizes the initial design)")
    ap.add_argument("--tuner", default="boanon")
    args = ap.parse_args(argv)
    proposal_samples(args.problem, args.seed, args.step, args.budget, args.tuner)


if __name__ == "__main__":
    main()
