import numpy as np
import pandas as pd
import pytest

from boanon.errors import ConfigError
from boanon.multiobjective import (
    OutputConstraint,
    format_front,
    front_table,
    infer_reference_point,
    nondominated_ranks,
    objective_matrix,
    pareto_flags,
    pareto_mask,
    parse_output_constraints,
    reference_point,
)
from boanon.objectives import Objective
from boanon.synthetic import SyntheticSystem
from boanon.table import records_to_table


def test_pareto_mask_keeps_ties_and_drops_dominated():
    pts = np.array([[1, 4], [2, 2], [4, 1], [3, 3], [2, 2], [5, 5]], dtype=float)
    assert pareto_mask(pts).tolist() == [True, True, True, False, True, False]


def test_invalid_rows_neither_join_nor_dominate():
    pts = np.array([[0, 0], [1, 1], [np.nan, 0], [2, 0.5]])
    mask = pareto_mask(pts, valid=[False, True, True, True])
    assert mask.tolist() == [False, True, False, True]


def test_ranks_match_brute_force_peeling():
    rng = np.random.default_rng(3)
    pts = rng.random((40, 3))
    ranks = nondominated_ranks(pts)
    for i in range(len(pts)):
        dominators = [j for j in range(len(pts)) if np.all(pts[j] <= pts[i]) and np.any(pts[j] < pts[i])]
        # a point's rank is one more than the highest rank among those dominating it
        assert ranks[i] == (max(ranks[j] for j in dominators) + 1 if dominators else 0)


def test_directions_flip_through_objective_matrix():
    table = pd.DataFrame({"trial": ["a", "b", "c"], "objective:lat": [1.0, 2.0, 3.0],
                         "objective:tput": [10.0, 30.0, 20.0]})
    objs = [Objective("lat", "minimize"), Objective("tput", "maximize")]
    assert objective_matrix(table, objs)[:, 1].tolist() == [-10.0, -30.0, -20.0]
    assert pareto_flags(table, objs).tolist() == [True, True, False]
    assert front_table(table, objs)["trial"].tolist() == ["a", "b"]


def test_infeasible_trials_are_off_the_front():
    table = pd.DataFrame({"trial": ["a", "b", "c"], "objective:e": [1.0, 2.0, 3.0],
                          "objective:l": [1.0, 2.0, 0.5], "metric:area": [9.0, 1.0, np.nan]})
    objs = [Objective("e"), Objective("l")]
    flags = pareto_flags(table, objs, [OutputConstraint("area", max=5.0)])
    # a dominates b, but a breaks the area bound and c's area was not measured
    assert flags.tolist() == [False, True, False]
    text = format_front(table, objs, [OutputConstraint("area", max=5.0)])
    assert "1 of 3 trials" in text and "feasible: 1" in text


def test_an_output_no_trial_reported_leaves_every_trial_infeasible():
    table = pd.DataFrame({"trial": ["a", "b"], "objective:e": [1.0, 2.0], "objective:l": [2.0, 1.0]})
    objs, bound = [Objective("e"), Objective("l")], [OutputConstraint("area", max=5.0)]
    assert pareto_flags(table, objs, bound).tolist() == [False, False]  # it was a KeyError, and
    assert "0 of 2 trials" in format_front(table, objs, bound)            # `boanon status` a traceback


def test_reference_point_inferred_beyond_the_nadir_or_given_in_own_units():
    pts = np.array([[0.0, 4.0], [2.0, 1.0], [9.0, 9.0]])
    ref = infer_reference_point(pts, margin=0.1)
    assert np.allclose(ref, [2.2, 4.3])  # nadir of the front (2, 4) plus 10% of its range
    objs = [Objective("lat"), Objective("tput", "maximize")]
    assert reference_point(objs, given=[5.0, 100.0]).tolist() == [5.0, -100.0]
    with pytest.raises(ValueError, match="2 objectives"):
        reference_point(objs, given=[1.0])


def test_output_constraints_from_config_name_the_field():
    cons = parse_output_constraints([{"name": "area", "max": "2.0e6"}, {"name": "p99", "min": 0, "max": 5}])
    assert cons[0].max == 2.0e6 and cons[1].holds([-1, 3, np.nan]).tolist() == [False, True, False]
    with pytest.raises(ConfigError, match=r"outputs\[0\].*unknown key"):
        parse_output_constraints([{"name": "area", "maximum": 3}], source="tune.yaml")
    with pytest.raises(ConfigError, match="needs a 'max' or a 'min'"):
        parse_output_constraints([{"name": "area"}])


@pytest.mark.parametrize(("bounds", "shown"), [
    ({"max": 0.123456789}, "g <= 0.123456789"),  # :g showed 0.123457, another bound
    ({"min": 0.1, "max": 0.9}, "0.1 <= g <= 0.9"),
    ({"max": 2.0}, "g <= 2"), ({"max": 2.0e6}, "g <= 2e+06"), ({"max": 1234567.0}, "g <= 1234567"),
    ({"min": -1e-7}, "-1e-07 <= g"), ({"max": 1 / 3}, "g <= 0.3333333333333333")])
def test_a_bound_is_described_as_written(bounds, shown):
    assert OutputConstraint("g", **bounds).describe() == shown


def test_synthetic_front_lies_on_the_known_pareto_set():
    system = SyntheticSystem(n_params=6, n_groups=2, n_objectives=2, seed=4)
    rng = np.random.default_rng(0)
    randoms = system.space.sample(60, rng, sobol=False)
    optimal = system.pareto_configs(200, rng)
    records = [system.record(f"r{i}", c) for i, c in enumerate(randoms)]
    records += [system.record(f"p{i}", c) for i, c in enumerate(optimal)]
    for r in records:  # noise-free values
        values = system.evaluate(r.params, noise=False)
        r.objectives = {k: values[k] for k in system.objectives}
    table = records_to_table(records)
    objs = [Objective(n) for n in system.objectives]
    front = table[pareto_flags(table, objs).to_numpy()]
    assert len(front) > 10
    assert front["trial"].str.startswith("p").all()


def test_pareto_plot_writes_a_png_per_objective_pair(tmp_path):
    from boanon.multiobjective.plot import plot_pareto, plot_traces

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"trial": [f"t{i}" for i in range(20)], "objective:a": rng.random(20),
                          "objective:b": rng.random(20), "objective:c": rng.random(20),
                          "metric:area": rng.random(20)})
    objs = [Objective("a"), Objective("b", "maximize"), Objective("c")]
    path = plot_pareto(table, objs, tmp_path / "front.png", [OutputConstraint("area", max=0.7)],
                       known_front=rng.random((5, 3)))
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="two objectives"):
        plot_pareto(table, objs[:1], tmp_path / "x.png")
    trace = plot_traces({"ehvi": rng.random((3, 10)), "random": rng.random((3, 10))}, tmp_path / "hv.png")
    assert trace.stat().st_size > 1000


@pytest.mark.parametrize("dx, dy", [("minimize", "minimize"), ("minimize", "maximize"),
                                    ("maximize", "minimize"), ("maximize", "maximize")])
def test_the_front_staircase_passes_only_corners_its_points_attain(dx, dy):
    """Between two front points the region they attain reaches the worse ``y`` of the two up to the
    other's ``x``: the step's corner is (the next x, this y), never (this x, the next y), which is
    better than both. Where the directions differed (a time minimised, a ratio maximised) the plot
    stepped in ``y`` first and drew that corner."""
    import matplotlib.pyplot as plt
    from matplotlib.cbook import STEP_LOOKUP_MAP

    from boanon.multiobjective.plot import _staircase

    x = np.array([1.0, 2.0, 3.0] if dx == "minimize" else [3.0, 2.0, 1.0])  # best x first
    y = np.array([3.0, 2.0, 1.0] if dy == "minimize" else [1.0, 2.0, 3.0])  # so worst y first
    fig, ax = plt.subplots()
    _staircase(ax, x[::-1].copy(), y[::-1].copy(), Objective("x", dx))  # any order in
    (line,) = ax.lines
    drawn = {tuple(p) for p in np.asarray(STEP_LOOKUP_MAP[line.get_drawstyle()](*line.get_xydata().T)).T}
    plt.close(fig)
    assert {(x[1], y[0]), (x[2], y[1])} <= drawn  # the corners the points attain
    assert not {(x[0], y[1]), (x[1], y[2])} & drawn  # the corners no trial reached
