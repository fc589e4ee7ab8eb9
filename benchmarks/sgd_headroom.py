"""How much better than its default the ``sgd`` problem can get, on the simulator's ground truth.

    python -m benchmarks.sgd_headroom [--samples 2000] [--steps 3000]

Reads the noise-free ``steady_iteration_time`` (no tuner gets this), so it is a reference for the
benchmark's numbers, not a tuner: the share of uniform random configurations that beat the default,
and the best a long first-improvement local search from the default reaches.
"""

from __future__ import annotations

import argparse

import numpy as np

from boanon.space import Space
from boanon.targets.sgd import default_constraints, default_space
from boanon.targets.sgd.cluster import get_network
from boanon.targets.sgd.simulator import InvalidConfig, steady_iteration_time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sgd_headroom",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    network = get_network("googlenet")
    space = Space.from_dict(default_space(), default_constraints())
    rng = np.random.default_rng(args.seed)

    def cost(config: dict) -> float:
        try:
            return steady_iteration_time(config, network)
        except InvalidConfig:
            return float("inf")

    best = space.default()
    best_cost = default_cost = cost(best)
    samples = np.array([cost(c) for c in space.sample(args.samples, rng, sobol=False)])
    for _ in range(args.steps):
        for candidate in space.neighbours(best, 1, rng, scale=0.2):
            value = cost(candidate)
            if value < best_cost:
                best, best_cost = candidate, value
    print(f"default: {default_cost:.3f} s per iteration (noise-free)")
    print(f"random ({args.samples}): best {samples.min():.3f}; "
          f"{100 * np.mean(samples < default_cost):.2f} % beat the default")
    print(f"local search ({args.steps} steps from the default): {best_cost:.3f}")


if __name__ == "__main__":
    main()
