import importlib
import itertools

import numpy as np
import pandas as pd
import pytest

from boanon.multiobjective import (
    hypervolume,
    hypervolume_improvement,
    hypervolume_trace,
    nondominated_boxes,
    table_hypervolume,
)
from boanon.objectives import Objective

hv_module = importlib.import_module("boanon.multiobjective.hypervolume")


def inclusion_exclusion(points, ref):
    """Exact hypervolume by inclusion-exclusion over all subsets (tiny sets only)."""
    points = points[np.all(points < ref, axis=1)]
    total = 0.0
    for k in range(1, len(points) + 1):
        for subset in itertools.combinations(range(len(points)), k):
            total += (-1) ** (k + 1) * np.prod(ref - points[list(subset)].max(axis=0))
    return total


def test_two_dimensional_staircase_by_hand():
    pts = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0], [2.5, 2.5]])
    # vertical slices [1,2], [2,3], [3,4] of heights 1, 2, 3; (2.5, 2.5) is dominated
    assert hypervolume(pts, np.array([4.0, 4.0])) == pytest.approx(6.0)


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_exact_against_inclusion_exclusion(d):
    rng = np.random.default_rng(d)
    for _ in range(3):
        pts = rng.random((8, d))
        ref = np.full(d, 1.05)
        assert hypervolume(pts, ref) == pytest.approx(inclusion_exclusion(pts, ref), rel=1e-12)


def test_points_beyond_the_reference_add_nothing_and_nan_is_ignored():
    ref = np.array([1.0, 1.0])
    assert hypervolume(np.array([[2.0, 0.0], [0.5, 1.0]]), ref) == 0.0
    assert hypervolume(np.array([[0.5, 0.5], [np.nan, 0.0]]), ref) == pytest.approx(0.25)


def test_monte_carlo_fallback_when_the_grid_is_too_large(monkeypatch):
    rng = np.random.default_rng(0)
    pts = rng.random((8, 3))
    ref = np.ones(3)
    exact = hypervolume(pts, ref)
    monkeypatch.setattr(hv_module, "MAX_GRID", 10)
    with pytest.warns(UserWarning, match="Monte Carlo"):
        estimate = hypervolume(pts, ref)
    assert estimate == pytest.approx(exact, rel=0.02)


@pytest.mark.parametrize("d", [2, 3])
def test_improvement_equals_difference_of_hypervolumes(d):
    rng = np.random.default_rng(10 + d)
    front = rng.random((12, d))
    ref = np.full(d, 1.1)
    new = rng.random((30, d)) * 1.2 - 0.1
    hvi = hypervolume_improvement(new, nondominated_boxes(front, ref))
    base = hypervolume(front, ref)
    expected = [hypervolume(np.vstack([front, p]), ref) - base for p in new]
    assert np.allclose(hvi, expected)
    assert (hvi > 0).any() and (hvi == 0).any()


def test_empty_front_improvement_is_the_dominated_box():
    boxes = nondominated_boxes(np.empty((0, 2)), np.array([1.0, 2.0]))
    assert hypervolume_improvement(np.array([[0.0, 0.0], [2.0, 0.0]]), boxes).tolist() == [2.0, 0.0]


def test_table_hypervolume_respects_directions_and_trace_grows():
    table = pd.DataFrame({"trial": list("abcd"), "objective:lat": [3.0, 1.0, 2.0, 0.5],
                          "objective:tput": [5.0, 1.0, 6.0, 0.5]})
    objs = [Objective("lat"), Objective("tput", "maximize")]
    ref = [4.0, 0.0]
    # minimised points (3,-5), (1,-1), (2,-6), (0.5,-0.5) against (4, 0)
    minimised = np.array([[3, -5], [1, -1], [2, -6], [0.5, -0.5]], dtype=float)
    expected = hypervolume(minimised, np.array([4.0, 0]))
    assert table_hypervolume(table, objs, ref_point=ref) == pytest.approx(expected)
    trace = hypervolume_trace(table, objs, ref)
    assert np.all(np.diff(trace) >= 0) and trace[-1] == pytest.approx(expected)
