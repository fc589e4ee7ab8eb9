"""The scaled node model (``y = parent * g(other parents)``) and where the safety net picks it."""

import numpy as np
import pandas as pd
import pytest

from boanon.graph import CausalGraph, Edge
from boanon.models import DAGSurrogate
from boanon.models.inputs import NodeInputs
from boanon.models.nodes import node_model_from_spec
from boanon.models.scaled import ScaledNode
from boanon.objectives import Objective
from boanon.space import Float, Space

SPACE = Space([Float("x", 0.0, 1.0), Float("z", 0.0, 1.0)])


def _factor(x):
    """A factor that changes sign, as Alpine2's sqrt(10 x) sin(10 x) does."""
    return np.sqrt(10 * x) * np.sin(10 * x)


def _product_table(n=30, seed=0):
    """m = 2 + 3 z (the parent), y = m * g(x): y's relation to (m, x) is a product."""
    rng = np.random.default_rng(seed)
    x, z = rng.random(n), rng.random(n)
    m = 2 + 3 * z
    return pd.DataFrame({"trial": [f"t{i}" for i in range(n)], "param:x": x, "param:z": z,
                         "metric:m": m, "objective:y": m * _factor(x)})


def _inputs(x, m, n_samples=1):
    x, m = np.atleast_1d(x), np.asarray(m, dtype=float)
    return NodeInputs(x[:, None], {"x": x[None, :], "m": m.reshape(-1, len(x))}, n_samples)


def test_scales_its_parent_by_a_gp_of_the_others_beyond_the_parent_values_seen():
    table = _product_table()
    inputs = _inputs(table["param:x"].to_numpy(), table["metric:m"].to_numpy())
    model = ScaledNode(["x"], ["m"], "m").fit(inputs, table["objective:y"].to_numpy())
    # a parent value ten times any seen: the product carries over, a GP over (x, m) could not
    x = np.array([0.2, 0.5, 0.8])
    mean, var = model.predict(_inputs(x, np.full(3, 50.0)))
    assert np.ravel(mean) == pytest.approx(50.0 * _factor(x), rel=0.05)
    # sampled parents (S, C) scale each sample's prediction, and the variance with the square
    mean, var = model.predict(_inputs(x, np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]), n_samples=2))
    assert mean.shape == (2, 3) and np.allclose(mean[1], 2 * mean[0]) and np.allclose(var[1], 4 * var[0])


def test_trials_with_a_zero_parent_do_not_train_the_ratio():
    table = _product_table(24)
    x, y = table["param:x"].to_numpy(), table["objective:y"].to_numpy()
    m = table["metric:m"].to_numpy().copy()
    m[:3] = 0.0  # y / m undefined there
    model = ScaledNode(["x"], ["m"], "m").fit(_inputs(x, m), np.where(m == 0, 0.0, y))
    assert model.ratio_
    mean, _ = model.predict(_inputs(np.array([0.3]), np.array([4.0])))
    assert float(np.ravel(mean)[0]) == pytest.approx(4.0 * _factor(0.3), rel=0.1)
    with pytest.raises(ValueError, match="not a metric parent"):
        ScaledNode(["x"], ["m"], "x")
    with pytest.raises(ValueError, match="nothing but 'm'"):
        ScaledNode([], ["m"], "m")


def test_without_two_nonzero_scales_it_is_a_gp_over_all_its_parents_until_refitted_with_them():
    """A view refits a recorded model on a run's first trials, where the scaling worker may have
    logged zeros only; a cross-validation fold may hold the only nonzero ones."""
    table = _product_table(24)
    x, m, y = table["param:x"].to_numpy(), table["metric:m"].to_numpy(), table["objective:y"].to_numpy()
    zeros = np.where(np.arange(24) < 23, 0.0, m)
    model = ScaledNode(["x"], ["m"], "m").fit(_inputs(x, zeros), y * (zeros != 0))
    assert not model.ratio_ and model.describe()["inputs"] == ["x", "m"]
    mean, var = model.predict(_inputs(x[:3], zeros[:3]))
    assert np.all(np.isfinite(mean)) and np.all(var >= 0)
    refitted = model.refit(_inputs(x, m), y)  # now with scales: the ratio
    assert refitted.ratio_ and not model.ratio_
    mean, _ = refitted.predict(_inputs(np.array([0.3]), np.array([4.0])))
    assert float(np.ravel(mean)[0]) == pytest.approx(4.0 * _factor(0.3), rel=0.1)


def test_the_spec_rebuilds_the_same_kind():
    model = node_model_from_spec(ScaledNode(["x"], ["m", "k"], "k").spec())
    assert isinstance(model, ScaledNode) and model.scale == "k" and model.parents == ["x", "m", "k"]


def test_the_safety_net_picks_it_for_a_product_node_and_the_chain_predicts_beyond_the_trials():
    table = _product_table(30)
    graph = CausalGraph(roles={"x": "param", "z": "param", "m": "metric", "y": "objective"},
                        edges=[Edge("z", "m"), Edge("m", "y"), Edge("x", "y")])
    model = DAGSurrogate(SPACE, graph, [Objective("y")]).fit(table)
    assert model.report_["safety_net"]["y"]["kind"] == "scaled"
    assert model.structure_record()["nodes"]["y"]["kind"] == "scaled"
    configs = [{"x": 0.79, "z": 1.0}, {"x": 0.48, "z": 1.0}]
    predicted = model.sample(configs, 256, np.random.default_rng(0))["y"].mean(axis=0)
    assert predicted == pytest.approx(5.0 * _factor(np.array([0.79, 0.48])), rel=0.1)


def test_the_safety_net_keeps_a_gp_where_the_node_is_no_product_of_its_parent():
    rng = np.random.default_rng(1)
    table = _product_table(30)
    table["objective:y"] = table["metric:m"] + np.sin(6 * table["param:x"]) + 0.01 * rng.standard_normal(30)
    graph = CausalGraph(roles={"x": "param", "z": "param", "m": "metric", "y": "objective"},
                        edges=[Edge("z", "m"), Edge("m", "y"), Edge("x", "y")])
    model = DAGSurrogate(SPACE, graph, [Objective("y")]).fit(table)
    assert model.report_["safety_net"].get("y", {}).get("kind") != "scaled"


def test_a_recorded_scaled_node_is_refitted_on_trials_whose_scale_is_all_zero():
    """The dashboard refits the proposal's recorded structure on the run's own trials only (here
    3, the scale zero in all): every node must still be fitted (it was the plain GP's view)."""
    table = _product_table(30)
    graph = CausalGraph(roles={"x": "param", "z": "param", "m": "metric", "y": "objective"},
                        edges=[Edge("z", "m"), Edge("m", "y"), Edge("x", "y")])
    recorded = DAGSurrogate(SPACE, graph, [Objective("y")]).fit(table).structure_record()
    assert recorded["nodes"]["y"]["kind"] == "scaled"
    few = table.iloc[:3].copy()
    few["metric:m"] = 0.0
    few["objective:y"] = 0.0
    model = DAGSurrogate(SPACE, graph, [Objective("y")], structure=recorded).fit(few)
    assert isinstance(model.models_["y"], ScaledNode) and not model.models_["y"].ratio_


def test_with_fewer_trials_than_min_scaled_trials_no_scaled_alternative_is_tried():
    from boanon.models.dag import MIN_SCALED_TRIALS

    graph = CausalGraph(roles={"x": "param", "z": "param", "m": "metric", "y": "objective"},
                        edges=[Edge("z", "m"), Edge("m", "y"), Edge("x", "y")])
    young = DAGSurrogate(SPACE, graph, [Objective("y")]).fit(_product_table(MIN_SCALED_TRIALS - 1))
    assert young.report_["safety_net"].get("y", {}).get("kind") != "scaled"
    grown = DAGSurrogate(SPACE, graph, [Objective("y")]).fit(_product_table(MIN_SCALED_TRIALS))
    assert grown.report_["safety_net"]["y"]["kind"] == "scaled"
