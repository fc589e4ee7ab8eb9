"""Decisions between scores that differ only in their last bits are made the same way on every
machine: the earlier candidate keeps its place; a real difference still decides."""

import numpy as np
import pytest

from boanon.acquisition import maximize
from boanon.acquisition.optimize import SearchSettings
from boanon.space import Float, Int, Space
from boanon.ties import RTOL, better, first_best, rounded, stable_order

LAST_BITS = 4 * np.finfo(float).eps  # what another BLAS or processor changes in a sum


def test_better_needs_more_than_the_tolerance() -> None:
    assert not better(1.0 + LAST_BITS, 1.0) and not better(1.0, 1.0 + LAST_BITS)
    assert not better(-3.0 * (1 + LAST_BITS), -3.0) and not better(-3.0, -3.0 * (1 + LAST_BITS))
    assert better(1.0 + 10 * RTOL, 1.0) and better(-1.0, -1.0 - 10 * RTOL)
    assert better(0.0, -np.inf) and not better(-np.inf, -np.inf) and better(np.inf, 1e308)


def test_first_best_keeps_the_earliest_of_near_equal_scores() -> None:
    assert first_best([1.0, 1.0 + LAST_BITS, 1.0 - LAST_BITS]) == 0
    assert first_best([0.5, 1.0 - LAST_BITS, 1.0]) == 1  # ties with the highest, and earlier
    assert first_best([0.5, 1.0, 1.0 + 1e-6]) == 2  # a real difference decides
    assert first_best([np.nan, -np.inf, 2.0]) == 2 and first_best([-np.inf, -np.inf]) == 0
    assert first_best([0.0, 1e-300]) == 1  # tiny but real (the tolerance is relative)
    with pytest.raises(ValueError, match="no scores"):
        first_best([])


def test_first_best_is_the_first_score_the_highest_does_not_beat() -> None:
    rng = np.random.default_rng(0)
    pool = [0.0, -0.0, 1.0, 1.0 + LAST_BITS, 1.0 + 1e-6, -1.0, 1e-300, np.inf, -np.inf, np.nan]
    for _ in range(2000):
        scores = rng.choice(pool, size=int(rng.integers(1, 7)))
        if np.isnan(scores).all():
            continue
        losing = np.where(np.isnan(scores), -np.inf, scores)  # NaN counts as the lowest score
        top = float(losing.max())
        expected = next(i for i, v in enumerate(losing) if not better(top, float(v)))
        assert first_best(scores) == expected, scores


def test_stable_order_ranks_last_bit_ties_by_position() -> None:
    values = np.array([3.0, 1.0 + LAST_BITS, 2.0, 1.0, 1.0 - LAST_BITS, -np.inf])
    assert stable_order(values).tolist() == [5, 1, 3, 4, 2, 0]
    assert stable_order(np.ones(200)).tolist() == list(range(200))  # exact ties: never reordered
    assert rounded([123.456789012345678, 0.0, np.inf]).tolist() == [123.456789012, 0.0, np.inf]


def test_the_acquisition_search_keeps_the_incumbent_when_every_score_ties() -> None:
    """Scores that differ only in the last bits (a flat acquisition, as EI is far from the data)
    leave the first-scored candidate, the incumbent, as the proposal; a real slope still moves it."""
    space = Space([Float("x", 0.0, 1.0), Float("y", 1.0, 100.0, log=True), Int("n", 1, 8)])
    start = {"x": 0.3, "y": 10.0, "n": 4}
    settings = SearchSettings(n_sobol=32, n_local=16, local_rounds=2, top=4, n_final=4, trust_region=0.2)

    def flat(configs, n_samples):  # equal up to the last bits, differing by configuration
        return np.array([1.0 + LAST_BITS * np.sin(1e3 * (c["x"] + c["y"] + c["n"])) for c in configs])

    for seed in range(3):
        config, _, _ = maximize(space, flat, np.random.default_rng(seed), starts=[start], settings=settings)
        assert config == start, seed

    def sloped(configs, n_samples):
        return np.array([1.0 + 1e-6 * c["x"] for c in configs])

    config, _, _ = maximize(space, sloped, np.random.default_rng(0), starts=[start], settings=settings)
    assert config["x"] > 0.5
