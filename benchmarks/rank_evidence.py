"""How often does a proposal set a new best, by whether its model ranked held-out trials?

Each proposal's reason carries the cross-validation that chose its surrogate; this replays runs
step by step (:func:`benchmarks.step_through.step_through`, the harness's tuner wrapper, seeds
and budget) and counts, per problem, the proposals made when the chosen model's held-out rank
correlation was positive and when it was not, and how many of each set a new best. It measures
whether the rank correlation of a young run is a usable signal of a model worth following.

    python -m benchmarks.rank_evidence --seeds 0 1 2 --budget 15
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from benchmarks.provenance import provenance
from benchmarks.step_through import step_through

PROBLEMS = ["fn-ackley", "fn-dropwave", "fn-epidemic", "fn-alpine2", "fn-rosenbrock", "pipeline",
            "synthetic", "synthetic-40", "sgd"]


def proposals(problem: str, seed: int, budget: int, tuner: str = "boanon") -> pd.DataFrame:
    """One row per cross-validated proposal: its model's rank correlation, whether it set a new best."""
    records = step_through(problem, tuner, seed, budget, print_=lambda *_: None)
    rows, best = [], None
    for r in records:
        improved = best is not None and r["best"] != best
        best = r["best"]
        if r["rank_correlation"] is not None:
            rows.append({"problem": problem, "seed": seed, "step": r["step"],
                         "rank_correlation": r["rank_correlation"], "new_best": improved})
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    table = table.assign(ranks=table.rank_correlation > 0)
    by = [*table.groupby(["problem", "ranks"]), *[(("all", k), g) for k, g in table.groupby("ranks")]]
    return pd.DataFrame([{"problem": p, "model ranks held-out trials": bool(k), "proposals": len(g),
                          "new bests": int(g.new_best.sum()), "share": round(float(g.new_best.mean()), 2)}
                         for (p, k), g in by])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=PROBLEMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--budget", type=int, default=15)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/rank_evidence"))
    args = parser.parse_args(argv)
    table = pd.concat([proposals(p, s, args.budget) for p in args.problems for s in args.seeds],
                      ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "proposals.csv", index=False)
    result = summary(table)
    result.to_csv(args.out / "summary.csv", index=False)
    (args.out / "provenance.json").write_text(json.dumps({**provenance(), "seeds": args.seeds,
                                                          "budget": args.budget}, indent=2) + "\n")
    print(result.to_string(index=False))


if __name__ == "__main__":
    main()
