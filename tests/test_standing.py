"""benchmarks/standing.py: the away suite's verdict from the folders a manifest names."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchmarks.standing import cell_bests, cells, verdict


def write_runs(folder: Path, problem: str, runs: list[tuple[str, int, int, list[float]]]) -> None:
    """``runs``: (tuner, seed, budget, values per evaluation) -> runs.csv and <problem>.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    per_eval, finished = [], []
    for tuner, seed, budget, values in runs:
        best = float("inf")
        for i, v in enumerate(values, start=1):
            best = min(best, v)
            per_eval.append({"problem": problem, "tuner": tuner, "seed": seed, "evaluation": i,
                             "best_so_far": best})
        finished.append({"problem": problem, "tuner": tuner, "seed": seed, "budget": budget, "status": "ok",
                         "best": best})
    pd.DataFrame(per_eval).to_csv(folder / f"{problem}.csv", index=False)
    pd.DataFrame(finished).to_csv(folder / "runs.csv", index=False)


def test_budget_bound_tuners_are_read_only_from_runs_of_the_cells_budget(tmp_path: Path) -> None:
    # BoAnon's design is sized by the budget: its @2 is not the 2nd evaluation of a 3-evaluation run.
    # Random search's is: a longer run is read at the evaluation.
    write_runs(tmp_path / "a", "synthetic", [("boanon", 0, 3, [9.0, 5.0, 4.0]), ("boanon", 1, 2, [9.0, 7.0]),
                                             ("random", 0, 3, [9.0, 8.0, 1.0])])
    assert cell_bests(tmp_path / "a", "synthetic", "boanon", 2).to_dict() == {1: 7.0}
    assert cell_bests(tmp_path / "a", "synthetic", "random", 2).to_dict() == {0: 8.0}
    with pytest.raises(SystemExit, match="no finished boanon run of synthetic with budget = 4"):
        cell_bests(tmp_path / "a", "synthetic", "boanon", 4)


def test_the_aims_are_judged_on_medians_and_the_plain_gp_also_seed_by_seed(tmp_path: Path) -> None:
    def runs(tuner: str, budget: int, values: list[float]) -> list[tuple[str, int, int, list[float]]]:
        return [(tuner, s, budget, [9.0, v, 0.0][:budget]) for s, v in enumerate(values)]

    write_runs(tmp_path / "mine", "synthetic", runs("boanon", 2, [3.0, 5.0, 4.0]))
    write_runs(tmp_path / "gp", "synthetic", runs("boanon-gp", 2, [3.0, 6.0, 2.0]))
    write_runs(tmp_path / "peers", "synthetic", runs("tpe", 3, [5.0, 6.0]) + runs("random", 3, [4.0, 4.0]))
    manifest = pd.DataFrame({"problem": "synthetic", "budget": 2,
                             "tuner": ["boanon", "boanon-gp", "tpe", "random"],
                             "folder": ["mine", "gp", "peers", "peers"]})
    row = verdict(cells(manifest, tmp_path)).iloc[0]
    assert row["structured"] == "4 [3.5, 4.5] (3)" and row["plain GP"] == "3 [2.5, 4.5] (3)"
    assert row["vs plain GP, b / e / w"] == "1 / 1 / 1 (p = 1)"
    assert row["aim 1"] == "missed"  # median 4 against 3
    assert row["aim 2"] == "missed: random" and row["best generic"] == "random 4"  # level is not ahead


def test_in_regret_a_maximised_problem_reads_as_distances_keeping_seed_by_seed_sense(tmp_path: Path) -> None:
    # fn-dropwave is maximised, optimum 1: a best of 0.9 is a regret of 0.1, and the seed that is
    # higher is still the better one (the seed-by-seed counts must not flip with the sign)
    write_runs(tmp_path / "f", "fn-dropwave", [("boanon", 0, 1, [0.9]), ("boanon", 1, 1, [0.6]),
                                               ("boanon-gp", 0, 1, [0.8]), ("boanon-gp", 1, 1, [0.5])])
    manifest = pd.DataFrame({"problem": "fn-dropwave", "budget": 1, "tuner": ["boanon", "boanon-gp"],
                             "folder": "f"})
    by_cell = cells(manifest, tmp_path)
    plain, regret = verdict(by_cell).iloc[0], verdict(by_cell, regret=True).iloc[0]
    assert plain["vs plain GP, b / e / w"] == regret["vs plain GP, b / e / w"] == "2 / 0 / 0 (p = 0.5)"
    assert regret["structured"] == "0.25 [0.175, 0.325] (2)" and regret["aim 1"] == "met"
    assert regret["problem"] == "`fn-dropwave` (regret)"


def test_regret_is_refused_for_a_problem_without_a_known_optimum(tmp_path: Path) -> None:
    write_runs(tmp_path / "p", "pipeline", [("boanon", 0, 1, [30.0]), ("boanon-gp", 0, 1, [31.0])])
    manifest = pd.DataFrame({"problem": "pipeline", "budget": 1, "tuner": ["boanon", "boanon-gp"],
                             "folder": "p"})
    with pytest.raises(SystemExit, match="--regret: pipeline has no known optimum"):
        verdict(cells(manifest, tmp_path), regret=True)
