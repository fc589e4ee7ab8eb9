"""benchmarks/over_default.py: each run's best so far over its own default, compared seed by seed."""

from __future__ import annotations

import pandas as pd

from benchmarks.over_default import ratios, summary


def searched() -> pd.DataFrame:
    """Two tuners, two seeds, 3 evaluations each; seed 1 ran under load (its default reads 2x)."""
    rows = []
    for tuner, seed, values in [("a", 0, [10, 8, 6]), ("a", 1, [20, 16, 14]),
                                ("b", 0, [10, 7, 7]), ("b", 1, [20, 18, 18])]:
        best = float("inf")
        for i, v in enumerate(values, start=1):
            best = min(best, v)
            rows.append({"tuner": tuner, "seed": seed, "evaluation": i, "best_so_far": best})
    return pd.DataFrame(rows)


def test_the_best_is_divided_by_the_runs_own_first_evaluation():
    table = ratios(searched(), [2, 3])
    at3 = table[table["evaluation"] == 3].set_index(["tuner", "seed"])["ratio"]
    assert at3[("a", 0)] == 0.6 and at3[("a", 1)] == 0.7 and at3[("b", 1)] == 0.9


def test_tuners_are_paired_seed_by_seed_at_each_evaluation():
    out = summary(ratios(searched(), [2, 3]), "a").set_index(["tuner", "at"])
    assert out.loc[("b", 2), "vs a"] == "1 / 0 / 1"  # 0.7 < 0.8 on seed 0, 0.9 > 0.8 on seed 1
    assert out.loc[("b", 3), "vs a"] == "0 / 0 / 2"
    assert out.loc[("a", 3), "median"] == 0.65 and out.loc[("a", 3), "vs a"] == ""
    flipped = summary(ratios(searched(), [3]), "a", minimize=False).set_index(["tuner", "at"])
    assert flipped.loc[("b", 3), "vs a"] == "2 / 0 / 0"


def test_a_folder_without_the_problem_or_an_unknown_tuner_is_named_in_the_error(tmp_path, capsys):
    # A folder of readwhilewriting runs read as mixgraph (the default problem) failed with
    # KeyError: 'evaluation'; an --against named as folder:tuner with one folder paired nothing.
    import pytest

    from benchmarks.over_default import main

    problem = "rocksdb-readwhilewriting"
    table = searched().assign(problem=problem)
    columns = ["problem", "tuner", "seed", "evaluation", "best_so_far"]
    table[columns].to_csv(tmp_path / f"{problem}.csv", index=False)
    pd.DataFrame({"problem": problem, "tuner": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1], "budget": 3,
                  "status": "ok", "best_config": "{}"}).to_csv(tmp_path / "runs.csv", index=False)
    with pytest.raises(SystemExit):
        main(["--results", str(tmp_path)])
    assert f"no finished rocksdb-mixgraph run in {tmp_path} (runs.csv)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--results", str(tmp_path), "--problem", problem, "--against", f"{tmp_path.name}:a"])
    assert f"--against {tmp_path.name}:a: no such tuner; the runs' tuners: a, b" in capsys.readouterr().err
    main(["--results", str(tmp_path), "--problem", problem, "--at", "3", "--against", "a"])
    assert "| b | 3 | 2 | 0.8 | [0.700, 0.900] | 0 / 0 / 2 |" in capsys.readouterr().out
