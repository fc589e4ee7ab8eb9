"""benchmarks/at_bounds.py: which numeric parameters of a configuration sit at an end of their range."""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.at_bounds import at_bounds, count_per_run
from boanon.space import Categorical, Float, Int, Space

SPACE = Space([Float("lr", 1e-4, 1.0, log=True), Int("n", 1, 100), Float("m", 0.0, 1.0),
               Categorical("c", ("a", "b"))])


def test_the_ends_of_linear_and_log_ranges_count_and_the_middle_and_categoricals_do_not():
    assert at_bounds(SPACE, {"lr": 1e-4, "n": 100, "m": 0.5, "c": "a"}) == ["lr", "n"]
    assert at_bounds(SPACE, {"lr": 0.9, "n": 50, "m": 0.01, "c": "b"}) == ["lr", "m"]  # log: 0.9 is near 1
    assert at_bounds(SPACE, {"lr": 0.01, "n": 50, "m": 0.5, "c": "a"}) == []
    assert at_bounds(SPACE, {"lr": 0.01, "n": 50, "m": 0.05, "c": "a"}, edge=0.1) == ["m"]


def test_each_run_is_counted_by_its_best_configuration():
    runs = pd.DataFrame([
        {"tuner": "random", "seed": 0, "best_config": json.dumps({"lr": 0.01, "n": 50, "m": 0.5, "c": "a"})},
        {"tuner": "boanon", "seed": 0, "best_config": json.dumps({"lr": 1.0, "n": 1, "m": 1.0, "c": "b"})}])
    table = count_per_run(SPACE, runs, 0.02)
    assert table["at_bounds"].tolist() == [0, 3] and table["tuner"].tolist() == ["random", "boanon"]
