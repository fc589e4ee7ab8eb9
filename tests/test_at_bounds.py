"""benchmarks/at_bounds.py: which numeric parameters of a configuration sit at an end of their range."""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.at_bounds import at_bounds, count_per_run
from boanon.space import Bool, Categorical, Float, Int, Space

SPACE = Space([Float("lr", 1e-4, 1.0, log=True), Int("n", 1, 100), Float("m", 0.0, 1.0),
               Categorical("c", ("a", "b")), Bool("b")])


def config(lr: float, n: int, m: float) -> dict:
    return {"lr": lr, "n": n, "m": m, "c": "a", "b": True}  # at an end of their choices: not counted


def test_the_ends_of_linear_and_log_ranges_count_and_the_middle_categoricals_and_booleans_do_not():
    assert at_bounds(SPACE, config(1e-4, 100, 0.5)) == ["lr", "n"]
    assert at_bounds(SPACE, config(0.9, 50, 0.01)) == ["lr", "m"]  # on a log scale 0.9 is near 1
    assert at_bounds(SPACE, config(0.01, 50, 0.5)) == []
    assert at_bounds(SPACE, config(0.01, 50, 0.05), edge=0.1) == ["m"]


def test_each_run_is_counted_by_its_best_configuration():
    runs = pd.DataFrame([{"tuner": "random", "seed": 0, "best_config": json.dumps(config(0.01, 50, 0.5))},
                         {"tuner": "boanon", "seed": 0, "best_config": json.dumps(config(1.0, 1, 1.0))}])
    table = count_per_run(SPACE, runs, 0.02)
    assert table["at_bounds"].tolist() == [0, 3] and table["tuner"].tolist() == ["random", "boanon"]
