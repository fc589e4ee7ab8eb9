"""Two tuners compared seed by seed: how often one ends better, and whether that is more than chance.

A median over 10 seeds moves with one seed, and where two tuners run identically on most seeds
(structured BoAnon and its plain GP do, whenever the plain GP wins every model choice), the
median compares the one or two seeds where they part. This pairs the final bests of the same
(problem, seed) of two tuners, counts the seeds where the first is better, equal and worse,
and gives the exact two-sided sign test's p-value over the seeds where they differ: a verdict
that rests on 2 differing seeds of 10 cannot be told from a coin.

    python -m benchmarks.paired benchmarks/results/away-r4/r4-15:boanon \
        benchmarks/results/away-r4/r4-15:boanon-gp

Each side is ``DIR:TUNER`` (``runs.csv`` in DIR); problems are those both sides ran.
"""

from __future__ import annotations

import argparse
from math import comb
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.problems import make_problem
from benchmarks.summary import markdown_table


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign-test p-value of ``wins`` against ``losses`` (ties left out)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def final_bests(side: str) -> tuple[str, pd.DataFrame]:
    """``DIR:TUNER`` -> its label and its finished runs' final bests (problem, seed, best)."""
    folder, _, tuner = side.rpartition(":")
    runs = pd.read_csv(Path(folder) / "runs.csv")
    runs = runs[(runs["tuner"] == tuner) & (runs["status"] == "ok")]
    label = f"{tuner} ({Path(folder).name})"
    return label, runs[["problem", "budget", "seed", "best"]].drop_duplicates(["problem", "budget", "seed"])


def compare(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, budget) both ran: seeds, first better / equal / worse, medians, sign-test p."""
    both = first.merge(second, on=["problem", "budget", "seed"], suffixes=("_a", "_b"))
    rows = []
    for (problem, budget), g in both.groupby(["problem", "budget"]):
        objective = make_problem(problem).objective
        diff = objective.to_minimize(g["best_a"].to_numpy()) - objective.to_minimize(g["best_b"].to_numpy())
        tie = np.isclose(g["best_a"], g["best_b"], rtol=1e-9, atol=0.0)
        # diff < 0: the first is better
        wins, losses = int(np.sum((diff < 0) & ~tie)), int(np.sum((diff > 0) & ~tie))
        rows.append({"problem": problem, "budget": int(budget), "seeds": len(g), "better": wins,
                     "equal": int(tie.sum()), "worse": losses, "median_first": g["best_a"].median(),
                     "median_second": g["best_b"].median(), "sign_test_p": sign_test(wins, losses)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", help="DIR:TUNER")
    parser.add_argument("second", help="DIR:TUNER")
    args = parser.parse_args(argv)
    (label_a, a), (label_b, b) = final_bests(args.first), final_bests(args.second)
    table = compare(a, b)
    if table.empty:
        parser.error("the two sides share no (problem, budget, seed)")
    print(f"first: {label_a}; second: {label_b}")
    print(markdown_table(table.map(lambda v: f"{v:.4g}" if isinstance(v, float) else v)))


if __name__ == "__main__":
    main()
