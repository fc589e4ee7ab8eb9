"""The early search holds booleans and categoricals once the run's own flips stop paying."""

import numpy as np
import pandas as pd
import pytest

from boanon.acquisition import maximize, propose
from boanon.acquisition.optimize import SearchSettings
from boanon.acquisition.switch_record import FLIP_FAILURES, switches_pay
from boanon.multitask.tasks import combine_tasks
from boanon.objectives import Objective
from boanon.space import Bool, Categorical, Float, Int, Space
from boanon.tuner import Tuner

SPACE = Space([Float("x", 0, 1, default=0.5), Int("n", 1, 9, default=5), Bool("on", default=False),
               Categorical("kind", ["a", "b", "c"], default="a")])
TIME = [Objective("time", "min")]


def _table(rows: list[tuple[float, int, bool, str, float]]) -> pd.DataFrame:
    return pd.DataFrame({"trial": [f"t{i}" for i in range(len(rows))],
                         "param:x": [r[0] for r in rows], "param:n": [r[1] for r in rows],
                         "param:on": [r[2] for r in rows], "param:kind": [r[3] for r in rows],
                         "objective:time": [r[4] for r in rows]})


# the default, then a design of two that change its switches: both lose, or one gains
DESIGN = [(0.5, 5, False, "a", 10.0), (0.1, 2, True, "c", 30.0), (0.9, 8, True, "b", 20.0)]
DESIGN_GAIN = [(0.5, 5, False, "a", 10.0), (0.1, 2, True, "c", 8.0), (0.9, 8, True, "b", 20.0),
               (0.3, 7, False, "b", 15.0)]


def test_the_incumbents_switches_are_kept_until_a_trial_that_changed_them_gains():
    assert not switches_pay(SPACE, _table(DESIGN), TIME, design_trials=3)
    # the design's last two trials lost to the second, which changed the switches and gained: a
    # design trial's loss is not a failed flip (it changed everything at once)
    assert switches_pay(SPACE, _table(DESIGN_GAIN), TIME, design_trials=4)
    assert not switches_pay(SPACE, _table(DESIGN_GAIN), TIME, design_trials=0)  # counted, they would
    numbers_only = [(0.55, 6, False, "a", 9.0)]  # a gain that kept the switches frees nothing
    assert not switches_pay(SPACE, _table(DESIGN + numbers_only), TIME, design_trials=3)
    flip_gain = [(0.55, 6, True, "a", 8.5)]
    assert switches_pay(SPACE, _table(DESIGN + numbers_only + flip_gain), TIME, design_trials=3)


def test_consecutive_failed_flips_keep_the_switches_again_and_a_gain_by_a_flip_frees_them():
    flip_fails = [(0.2, 3, False, "c", 9.0), (0.1, 2, True, "a", 8.5)]  # from the incumbent (True, "c")
    assert FLIP_FAILURES == 2
    assert switches_pay(SPACE, _table(DESIGN_GAIN + flip_fails[:1]), TIME, design_trials=4)
    assert not switches_pay(SPACE, _table(DESIGN_GAIN + flip_fails), TIME, design_trials=4)
    numbers_only = [(0.15, 2, True, "c", 7.0), (0.12, 2, True, "c", 7.5)]  # neither count nor reset
    assert not switches_pay(SPACE, _table(DESIGN_GAIN + flip_fails + numbers_only), TIME, design_trials=4)
    gain = [(0.15, 2, False, "c", 6.0)]  # a flip from the incumbent at the time that gains
    assert switches_pay(SPACE, _table(DESIGN_GAIN + flip_fails + numbers_only + gain), TIME, design_trials=4)


def test_a_maximised_objective_counts_gains_upwards_and_failed_trials_are_skipped():
    rows = [(0.5, 5, False, "a", 10.0), (0.6, 5, True, "a", 12.0), (0.4, 5, True, "b", np.nan),
            (0.4, 5, False, "c", 11.0)]
    assert switches_pay(SPACE, _table(rows), [Objective("time", "max")], design_trials=1)
    assert not switches_pay(SPACE, _table(rows), TIME, design_trials=1)


def test_without_switches_or_with_several_objectives_the_switches_are_never_held():
    floats = Space([Float("x", 0, 1)])
    table = pd.DataFrame({"trial": ["a", "b", "c"], "param:x": [0.1, 0.2, 0.3],
                          "objective:time": [1.0, 2.0, 3.0]})
    assert switches_pay(floats, table, TIME)
    rows = _table(DESIGN + [(0.6, 5, True, "a", 12.0), (0.4, 5, False, "b", 11.0)])
    rows["objective:cost"] = 1.0
    assert switches_pay(SPACE, rows, [*TIME, Objective("cost", "min")], design_trials=3)


def _rewards_flips(configs, n_samples):
    """As expected improvement from a model fitted to a few trials does: a flip is the farthest move."""
    return np.array([2.0 * c["on"] + (c["kind"] != "a") - (c["x"] - 0.6) ** 2 - (c["n"] - 6) ** 2 / 64
                     for c in configs])


def test_held_switches_keep_the_starts_values_and_the_numbers_still_move():
    start = SPACE.default()
    held = SearchSettings(n_sobol=64, trust_region=0.2, hold_switches=True)
    best, _, _ = maximize(SPACE, _rewards_flips, np.random.default_rng(0), starts=[start], exclude=[start],
                          settings=held)
    assert (best["on"], best["kind"]) == (False, "a")
    assert best["x"] == pytest.approx(0.6, abs=0.02) and best["n"] == 6
    free = SearchSettings(n_sobol=64, trust_region=0.2)
    flipped, _, _ = maximize(SPACE, _rewards_flips, np.random.default_rng(0), starts=[start], exclude=[start],
                             settings=free)
    assert flipped["on"] or flipped["kind"] != "a"


def test_a_short_runs_proposal_keeps_the_defaults_switches_until_a_change_of_them_gains():
    rng = np.random.default_rng(0)
    rows = list(DESIGN)
    for _ in range(4):  # proposals near the default that keep its switches
        x, n = float(rng.uniform(0.4, 0.6)), int(rng.integers(4, 7))
        rows.append((x, n, False, "a", 10.0 + rng.uniform(-1, 1)))
    p = propose(SPACE, _table(rows), TIME, proposer="gp", rng=np.random.default_rng(1), design_trials=3,
                budget=15)
    assert p.info["acquisition"]["switches_held"]
    assert (p.config["on"], p.config["kind"]) == (False, "a")
    # a run that goes on past the early phase (or of unknown length) keeps flipping: a failed
    # flip is data its model uses later
    for budget in (50, None):
        longer = propose(SPACE, _table(rows), TIME, proposer="gp", rng=np.random.default_rng(1),
                         design_trials=3, budget=budget)
        assert not longer.info["acquisition"]["switches_held"]
    # nor does a warm start: its model has seen flips in the related task's trials
    related = _table(DESIGN_GAIN).assign(trial=lambda t: "r" + t["trial"])
    warm = combine_tasks(_table(rows), related)
    assert len(warm) == len(rows) + len(DESIGN_GAIN)
    warm_run = propose(SPACE, warm, TIME, proposer="gp", rng=np.random.default_rng(1), design_trials=3,
                       budget=15)
    assert not warm_run.info["acquisition"]["switches_held"]
    rows[1] = (0.1, 2, True, "c", 8.0)  # the design's second trial changed them and gained
    free = propose(SPACE, _table(rows[:3]), TIME, proposer="gp", rng=np.random.default_rng(1),
                   design_trials=3, budget=15)
    assert not free.info["acquisition"]["switches_held"]


def test_the_tuner_tells_proposals_its_budget_and_design():
    """A short run's proposals after failed flips keep the default's switches; a longer one's do not."""
    def run(budget):
        tuner = Tuner(SPACE, TIME, strategy="gp", seed=0, n_init=3, budget=budget)
        for *config, value in DESIGN + [(0.6, 5, True, "b", 12.0), (0.4, 6, True, "a", 11.0)]:
            tuner.enqueue(dict(zip(["x", "n", "on", "kind"], config, strict=True)))
            tuner.tell(tuner.ask().id, {"time": value})
        return tuner.ask()
    assert run(12).info["acquisition"]["switches_held"]
    assert not run(50).info["acquisition"]["switches_held"]
