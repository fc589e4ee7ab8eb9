"""benchmarks/best_factors.py: which parameters of the bests go with a better re-measured ratio."""

from __future__ import annotations

import json

import pandas as pd

from benchmarks.best_factors import correlations, where_bests_sit, with_remeasured
from boanon.space import Categorical, Float, Int, Space

SPACE = Space([Int("cache_size", 1 << 20, 512 << 20, log=True), Float("jobs", 1.0, 8.0),
               Float("inert", 0.0, 1.0), Categorical("c", ("a", "b"))])


def runs() -> pd.DataFrame:
    """Six runs whose ratio falls as the cache grows and rises with the jobs; ``inert`` is
    unrelated; a seventh run was never re-measured."""
    rows = []
    for i, (cache, jobs, inert) in enumerate([(1, 8, .5), (4, 6, .1), (16, 7, .9), (64, 3, .3), (256, 2, .7),
                                              (512, 1, .2), (8, 4, .4)]):
        config = {"cache_size": cache << 20, "jobs": float(jobs), "inert": inert, "c": "a"}
        tuner = "f:random" if i % 2 else "f:boanon"
        rows.append({"tuner": tuner, "seed": i, "best_config": json.dumps(config)})
    return pd.DataFrame(rows)


def remeasured() -> pd.DataFrame:
    """The first six runs' ratios, best last."""
    return pd.DataFrame({"tuner": ["f:boanon", "f:random"] * 3, "seed": range(6),
                         "cpu_per_op_ratio": [0.9, 0.85, 0.8, 0.7, 0.65, 0.6]})


def test_only_remeasured_runs_are_kept_with_their_ratio():
    table = with_remeasured(runs(), remeasured())
    assert table["seed"].tolist() == list(range(6)) and table["cpu_ratio"].tolist()[-1] == 0.6


def test_parameters_are_ranked_by_their_rank_correlation_with_the_ratio():
    ranked = correlations(SPACE, with_remeasured(runs(), remeasured()))
    assert ranked["parameter"].tolist()[0] == "cache_size" and ranked["rho"].tolist()[0] == -1.0
    assert ranked.set_index("parameter").loc["jobs", "rho"] > 0.8
    assert "c" not in ranked["parameter"].tolist()  # a category has no order to correlate


def test_bests_are_summarised_per_tuner_with_sizes_in_binary_units():
    table = where_bests_sit(SPACE, with_remeasured(runs(), remeasured()), ["cache_size", "jobs"])
    boanon = table.set_index("tuner").loc["f:boanon"]
    assert boanon["cache_size"] == "16 MiB" and boanon["jobs"] == 7.0 and boanon["runs"] == 3
