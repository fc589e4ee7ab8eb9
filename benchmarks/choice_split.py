"""How much the cross-validation split decides the model choice, at one point of a run.

The structured strategy keeps its plain GP unless the learned graph's model beats it held out
(:func:`boanon.acquisition.selection.select_surrogate`). This replays a run to ``--trials``
trials, learns the graph and fits the structured strategy's candidates once (those its runs
compare: :mod:`boanon.acquisition.proposers`), then makes the choice ``--draws`` times,
each with another draw of the split, with 5 folds and leaving one out: the spread of the
structured model's lead is what the split alone contributes.

    python -m benchmarks.choice_split synthetic --seed 0 --trials 12 --budget 15
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.run import evaluate
from benchmarks.step_through import replay
from boanon.acquisition.proposers import make_proposer
from boanon.acquisition.selection import select_surrogate
from boanon.learners import learn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--budget", type=int, default=15, help="the budget the replayed run was made for")
    parser.add_argument("--draws", type=int, default=20)
    args = parser.parse_args(argv)
    problem, tuner = replay(args.problem, "boanon", args.seed, max(args.trials, args.budget))
    for _ in range(args.trials):
        config = tuner.ask()
        tuner.tell(evaluate(problem, config))
    table, objectives = tuner.table(), [problem.objective]
    graph = learn(table, seed=args.seed).graph
    candidates, _ = make_proposer("structured").candidates(problem.space, table, objectives, graph, [],
                                                           np.random.default_rng(args.seed))
    for candidate in candidates:
        candidate.fit(table)
    for label, limit in (("5 folds", 0), ("leave-one-out", len(table))):
        leads, chosen = [], 0
        for draw in range(args.draws):
            best, _, scores = select_surrogate(candidates, table, np.random.default_rng(draw),
                                               leave_one_out=limit)
            lpd = {name: score["log_predictive_density"] for name, score in scores.items()}
            leads.append(lpd["structured"] - lpd["gp"])
            chosen += best.name == "structured"
        print(f"{args.problem} seed {args.seed}, {args.trials} trials, {label}: structured chosen "
              f"{chosen} of {args.draws}; its lead {min(leads):.2f} to {max(leads):.2f} nats per trial")


if __name__ == "__main__":
    main()
