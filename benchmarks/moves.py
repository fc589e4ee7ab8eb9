"""How far each proposal moves from the incumbent, for any tuner: the distance on the unit scale
and how many booleans and categoricals it changed.

Two tuners that share a model family can still part on how they move: BoTorch's default BO
optimises a continuous relaxation and rounds a switch back unless its acquisition carries it
past the middle, while a search over neighbours can flip a switch in one step, the farthest move
a kernel sees. This replays a run as :mod:`benchmarks.run` does (same tuner wrapper, seed and
budget, the default first: :func:`benchmarks.step_through.fresh_run`) and prints, per trial, its
value, the incumbent it moved from (the best trial before it), the L2 and largest coordinate move
on the space's unit encoding (categoricals one-hot) and the switches (booleans and
categoricals) it changed.

    python -m benchmarks.moves sgd --tuners botorch boanon-gp --seeds 1 --budget 15
"""

from __future__ import annotations

import numpy as np

from benchmarks.step_through import fresh_run, replay_each
from benchmarks.tuners import with_fixed_hash_seed


def moves(problem_name: str, tuner_name: str, seed: int, budget: int, print_=print) -> list[dict]:
    """Run ``tuner_name`` on ``problem_name`` and print (and return) one record per trial."""
    problem, tuner = fresh_run(problem_name, tuner_name, seed, budget)
    space = problem.space
    switches = space.switch_names
    configs: list[dict] = []
    values: list[float] = []
    records = []
    print_(f"=== {problem_name} {tuner_name} seed={seed} budget={budget}")
    for step in range(1, budget + 1):
        config = tuner.ask()
        record = problem.evaluate(config)
        tuner.tell(record)
        value = tuner.value(record)
        row = {"step": step, "value": value, "config": dict(config),
               "from": None, "l2": None, "largest": None, "switches": None}
        finite = [i for i, v in enumerate(values) if v is not None and np.isfinite(v)]
        if finite:
            incumbent = min(finite, key=lambda i: problem.objective.to_minimize(values[i]))
            move = space.encode([config])[0] - space.encode([configs[incumbent]])[0]
            row.update({"from": incumbent + 1, "l2": float(np.linalg.norm(move)),
                        "largest": float(np.abs(move).max()),
                        "switches": sum(config[n] != configs[incumbent][n] for n in switches)})
            print_(f"{step:3d} value={value} from trial {row['from']}: L2 {row['l2']:.3f}, "
                   f"largest {row['largest']:.3f}, switches changed {row['switches']} of {len(switches)}")
        else:
            print_(f"{step:3d} value={value}")
        configs.append(dict(config))
        values.append(value)
        records.append(row)
    return records


def main(argv: list[str] | None = None) -> None:
    replay_each(moves, __doc__, argv)


if __name__ == "__main__":
    with_fixed_hash_seed()  # replays a SMAC run as the harness ran it
    main()
