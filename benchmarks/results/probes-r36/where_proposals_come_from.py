"""Step one BoAnon run and say, per proposal, its unit coordinates, the model's prediction and
which step of the acquisition search found it (round 36 probe, not on main).

The search (:func:`boanon.acquisition.optimize.maximize`) scores a Sobol design or trust-region
neighbours, local rounds, then a finite-difference ascent; each candidate is tagged with the step
that first scored it. Run from the repository root:

    PYTHONPATH=. python benchmarks/results/probes-r36/where_proposals_come_from.py fn-pharma 0 15 boanon-gp
"""

from __future__ import annotations

import sys
from typing import Any

import boanon.acquisition.optimize as optimize
from benchmarks.problems import make_problem
from benchmarks.tuners import make_tuner
from boanon.space import Space

PROPOSE = sys.modules["boanon.acquisition.propose"]  # the package exports a function of that name
stage = ["start"]
origin: dict[str, str] = {}


def tagged(method: Any, name: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        stage[0] = name(*args, **kwargs) if callable(name) else name
        return method(*args, **kwargs)
    return call


def add(pool: Any, candidates: Any, _add: Any = optimize._Pool.add) -> None:
    for c in candidates:
        origin.setdefault(optimize.config_key({n: c[n] for n in pool.space.names}), stage[0])
    _add(pool, candidates)


def maximize(*args: Any, **kwargs: Any) -> Any:
    origin.clear()
    stage[0] = "start"
    found = optimize.maximize(*args, **kwargs)
    print(f"   found by: {origin.get(optimize.config_key(found[0]), '?')}")
    return found


def neighbour_step(self: Space, config: Any, n: int, rng: Any, scale: float = 0.1, *rest: Any,
                   **kwargs: Any) -> str:
    return f"neighbours (step {scale:.3g})"


def main(problem_name: str, seed: int, budget: int, tuner_name: str) -> None:
    optimize._Pool.add = add
    optimize._ascend = tagged(optimize._ascend, "ascent")
    Space.neighbours = tagged(Space.neighbours, neighbour_step)
    Space.sample = tagged(Space.sample, "sobol")
    PROPOSE.maximize = maximize
    problem = make_problem(problem_name)
    space = problem.space
    tuner = make_tuner(tuner_name, space, problem.objective, seed=seed, budget=budget,
                       start=space.default(), knowledge=problem.knowledge)
    numeric = [n for n in space.names if hasattr(space.params[n], "to_unit")]
    for i in range(budget):
        config = tuner.ask()
        tuner.tell(problem.evaluate(config))
        trial = tuner.last_trial
        units = " ".join(f"{space.params[n].to_unit(config[n]):.2f}" for n in numeric)
        predicted = " ".join(f"{k} {v['mean']:.3g} +- {v['sd']:.2g}"
                             for k, v in trial.info.get("predicted", {}).items())
        print(f"{i:2d} {trial.surrogate:5s} u=[{units}] {predicted}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "boanon")
