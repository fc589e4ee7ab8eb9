import warnings

import numpy as np
import pandas as pd
import pytest

from boanon.graph import CausalGraph, Edge
from boanon.models import DAGSurrogate, PlainGPSurrogate
from boanon.models.inputs import NodeInputs
from boanon.objectives import Objective
from boanon.space import Float, Space
from boanon.synthetic import SyntheticSystem

SPACE = Space([Float("x", 0.0, 1.0), Float("z", 0.0, 1.0)])
COST = [Objective("y")]


def _graph(edges, roles, node_models=None):
    return CausalGraph(roles=roles, edges=[Edge(a, b) for a, b in edges], node_models=node_models or {})


def _chain_table(n=80, noise_m=0.5, seed=0):
    """x -> m -> y with a noisy middle metric and an almost deterministic, nonlinear y = m^2."""
    rng = np.random.default_rng(seed)
    x, z = rng.random(n), rng.random(n)
    m = 3 * x + noise_m * rng.standard_normal(n)
    y = m**2 + 0.01 * rng.standard_normal(n)
    return pd.DataFrame({"trial": [f"t{i}" for i in range(n)], "param:x": x, "param:z": z,
                         "metric:m": m, "objective:y": y})


CHAIN = _graph([("x", "m"), ("m", "y")], {"x": "param", "z": "param", "m": "metric", "y": "objective"})


def test_mc_propagation_carries_parent_uncertainty():
    """The child's spread must include its parent's: more than passing the parent's mean would give."""
    model = DAGSurrogate(SPACE, CHAIN, COST).fit(_chain_table())
    config = [{"x": 0.8, "z": 0.5}]
    samples = model.sample(config, 4000, np.random.default_rng(0))
    assert set(samples) == {"m", "y"}
    m_mean = samples["m"].mean()
    assert m_mean == pytest.approx(2.4, abs=0.3) and samples["m"].std() == pytest.approx(0.5, rel=0.3)
    y_node = model.models_["y"]
    _, var_mean_passing = y_node.predict(NodeInputs(np.zeros((1, 0)), {"m": np.array([[m_mean]])}),
                                         noise=False)
    var_mc = samples["y"].var()
    # y = m^2 with m ~ N(2.4, 0.5^2): Var(y) = 4 mu^2 s^2 + 2 s^4 ~ 5.9
    assert var_mc > 20 * float(np.ravel(var_mean_passing)[0])
    assert var_mc == pytest.approx(4 * 2.4**2 * 0.25 + 2 * 0.5**4, rel=0.4)
    assert samples["y"].mean() == pytest.approx(2.4**2 + 0.25, rel=0.15)


def test_nodes_are_fitted_on_the_trials_that_have_them():
    table = _chain_table(60)
    table.loc[:19, "metric:m"] = np.nan  # an older log format without this metric
    table.loc[40:, "objective:y"] = np.nan  # failed runs measured m but no objective
    model = DAGSurrogate(SPACE, CHAIN, COST, learn_forms=False).fit(table)  # GP nodes: their rows
    assert len(model.models_["m"]._gp.gp_.X_train_) == 40
    assert len(model.models_["y"]._gp.gp_.X_train_) == 20


def test_fallbacks_for_missing_data_and_parentless_objective():
    roles = {"x": "param", "z": "param", "m": "metric", "ghost": "metric", "y": "objective"}
    graph = _graph([("x", "m"), ("m", "ghost"), ("ghost", "y")], roles)
    model = DAGSurrogate(SPACE, graph, COST).fit(_chain_table())
    assert model.report_["dropped_without_data"] == ["ghost"]
    assert model.report_["objectives_without_parents"] == ["y"]
    assert model.models_["y"].param_parents == ["x", "z"]
    assert "m" not in model.order_  # m no longer reaches the objective
    mean, _ = model.predict([{"x": 0.9, "z": 0.1}, {"x": 0.1, "z": 0.1}], np.random.default_rng(0))["y"]
    assert mean[0] > mean[1] + 3


def test_only_ancestors_of_the_objectives_are_modelled():
    rng = np.random.default_rng(1)
    table = _chain_table(40)
    table["metric:side"] = rng.random(40)
    graph = _graph([("x", "m"), ("m", "y"), ("z", "side")],
                   {"x": "param", "z": "param", "m": "metric", "side": "metric", "y": "objective"})
    assert DAGSurrogate(SPACE, graph, COST).fit(table).order_ == ["m", "y"]
    order = DAGSurrogate(SPACE, graph, COST, outputs=["side"]).fit(table).order_
    assert sorted(order) == ["m", "side", "y"] and order.index("m") < order.index("y")


def test_graph_errors_are_clear():
    table = _chain_table(20)
    cycle = _graph([("m", "y"), ("y", "m")], {"m": "metric", "y": "objective"})
    with pytest.raises(ValueError, match="cycle"):
        DAGSurrogate(SPACE, cycle, COST).fit(table)
    with pytest.raises(ValueError, match="no column for output 'y'"):
        DAGSurrogate(SPACE, CHAIN, COST).fit(table.drop(columns=["objective:y"]))


def test_semi_parametric_node_inside_the_graph():
    rng = np.random.default_rng(2)
    n = 40
    x, z = rng.random(n), rng.random(n)
    load = 1 + 5 * x
    y = 2.0 * load / (1 + z) + 0.5 + 0.01 * rng.standard_normal(n)
    table = pd.DataFrame({"trial": range(n), "param:x": x, "param:z": z, "metric:load": load,
                          "objective:y": y})
    graph = _graph([("x", "load"), ("load", "y"), ("z", "y")],
                   {"x": "param", "z": "param", "load": "metric", "y": "objective"},
                   {"y": {"formula": "a * load / (1 + z) + b", "free": {"a": 1.0, "b": 0.0}}})
    model = DAGSurrogate(SPACE, graph, COST).fit(table)
    assert model.models_["y"].constants == pytest.approx({"a": 2.0, "b": 0.5}, abs=0.05)
    described = model.describe()["nodes"]["y"]
    assert described["kind"] == "formula" and described["parents"] == ["z", "load"]


def test_structured_beats_plain_gp_on_held_out_synthetic_trials():
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, seed=4)
    table, test = system.sample_table(40, seed=0), system.sample_table(100, seed=9)
    configs = [{n: r[f"param:{n}"] for n in system.space.names} for _, r in test.iterrows()]
    y = test["objective:cost"].to_numpy()
    errors = {}
    for model in (DAGSurrogate(system.space, system.true_graph(), [Objective("cost")]),
                  PlainGPSurrogate(system.space, [Objective("cost")])):
        mean, _ = model.fit(table).predict(configs, np.random.default_rng(0), n_samples=128)["cost"]
        errors[model.name] = np.sqrt(np.mean((mean - y) ** 2))
    assert errors["structured"] < 0.5 * errors["gp"]


def test_fantasize_conditions_on_pending_points():
    table = _chain_table(30)
    model = DAGSurrogate(SPACE, CHAIN, COST, learn_forms=False).fit(table)
    pending = [{"x": 0.5, "z": 0.5}]
    before = model.predict(pending, rng=np.random.default_rng(0))["y"][1][0]
    after_model = model.fantasize(pending, np.random.default_rng(0))
    after = after_model.predict(pending, rng=np.random.default_rng(0))["y"][1][0]
    assert len(after_model.table_) == 31 and len(model.table_) == 30
    assert after <= before
    assert len(after_model.models_["m"]._gp.gp_.X_train_) == 31


def test_a_trial_outside_the_space_is_named():
    table = _chain_table(10)
    table.loc[3, "param:x"] = 1.5
    with pytest.raises(ValueError, match=r"trial 't3': parameter 'x': expected a number in \[0.0, 1.0\]"):
        DAGSurrogate(SPACE, CHAIN, COST).fit(table)


def test_a_function_node_reads_its_names_even_without_edges():
    rng = np.random.default_rng(3)
    n = 30
    x, z = rng.random(n), rng.random(n)
    energy, latency = 1 + x + 0.01 * rng.standard_normal(n), 2 + z + 0.01 * rng.standard_normal(n)
    table = pd.DataFrame({"trial": range(n), "param:x": x, "param:z": z, "metric:energy": energy,
                          "metric:latency": latency, "objective:edp": energy * latency})
    roles = {"x": "param", "z": "param", "energy": "metric", "latency": "metric", "edp": "objective"}
    graph = _graph([("x", "energy"), ("z", "latency")], roles, {"edp": {"function": "energy * latency"}})
    model = DAGSurrogate(SPACE, graph, [Objective("edp")]).fit(table)
    assert model.order_.index("edp") == 2 and model.models_["edp"].kind == "function"
    mean, sd = model.predict([{"x": 0.5, "z": 0.5}], np.random.default_rng(0), n_samples=512)["edp"]
    assert mean[0] == pytest.approx(1.5 * 2.5, rel=0.03) and sd[0] < 0.1
    graph.node_models["edp"] = {"function": "energy * power"}
    with pytest.raises(ValueError, match=r"names \['power'\]: neither graph nodes nor parameters"):
        DAGSurrogate(SPACE, graph, [Objective("edp")]).fit(table)


def test_logged_parameters_outside_the_search_space_are_dropped():
    table = _chain_table(30)
    table["param:arena"] = table["param:x"] / 8  # logged by the adapter, derived, not tuned
    roles = {"x": "param", "z": "param", "arena": "param", "m": "metric", "y": "objective"}
    graph = _graph([("arena", "m"), ("x", "m"), ("m", "y")], roles)
    model = DAGSurrogate(SPACE, graph, COST).fit(table)
    assert model.report_["dropped_untuned_params"] == ["arena"]
    assert model.models_["m"].parents == ["x"]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("random_state", [0, 1, 2])
def test_the_node_safety_net_keeps_the_parents_of_the_true_graph(seed, random_state):
    """On 30 trials the held-out comparison may swap a learned form for a GP on the same parents,
    or add parameters to a node (8 of 18 seed/fold combinations measured), but no node of the true
    graph may lose a parent: the alternative over all parameters without the metric parents
    would cut the chain."""
    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, seed=seed)
    table = system.sample_table(30, seed)
    graph = system.true_graph()
    model = DAGSurrogate(system.space, graph, [Objective("cost")], random_state=random_state).fit(table)
    for node, replacement in model.report_["safety_net"].items():
        assert set(graph.parents(node)) <= set(replacement["parents"]), node
    assert model.order_ and model.report_["unused_after_safety_net"] == []


@pytest.mark.slow
def test_on_a_real_dataset_the_learned_graph_predicts_better_than_the_plain_gp():
    """sgd-googlenet (40 simulated cluster runs), graph learned without annotations: before the
    safety net the DAG surrogate ranked held-out trials at 0.42 against the plain GP's 0.72."""
    from pathlib import Path

    from boanon.acquisition.selection import cross_validate
    from boanon.adapters.ingest import ingest
    from boanon.learners import learn

    root = Path(__file__).resolve().parents[1] / "datasets" / "sgd-googlenet"
    space = Space.from_yaml(root / "dataset.yaml")
    table = ingest(root).table
    objectives = [Objective("iteration_time")]
    dag = DAGSurrogate(space, learn(table, seed=0).graph, objectives).fit(table)
    gp = PlainGPSurrogate(space, objectives).fit(table)
    scores = {s.name: cross_validate(s, table, np.random.default_rng(0)) for s in (dag, gp)}
    assert dag.report_["safety_net"]  # learned nodes were repaired
    assert scores["structured"]["log_predictive_density"] > scores["gp"]["log_predictive_density"]
    assert scores["structured"]["rank_correlation"] > scores["gp"]["rank_correlation"]


def test_plain_gp_models_a_heavy_tailed_objective_on_a_log_scale_and_predicts_it_better():
    """y = exp(6 x) spans two orders of magnitude: on a log scale it is a smooth line."""
    from boanon.acquisition.selection import cross_validate

    rng = np.random.default_rng(3)
    n = 30
    x, z = rng.random(n), rng.random(n)
    y = np.exp(6 * x) * np.exp(0.05 * rng.standard_normal(n))
    table = pd.DataFrame({"trial": [f"t{i}" for i in range(n)], "param:x": x, "param:z": z,
                          "objective:y": y})
    fitted = PlainGPSurrogate(SPACE, COST).fit(table)
    assert fitted.models_["y"].log_target
    samples = fitted.sample([{"x": 0.1, "z": 0.5}], 2000, np.random.default_rng(0))["y"]
    assert samples.min() > 0  # a log-normal never predicts a negative energy or latency
    logged = cross_validate(fitted, table, np.random.default_rng(0))
    table_linear = table.assign(**{"objective:y": 6 * x + 0.05 * rng.standard_normal(n)})
    assert not PlainGPSurrogate(SPACE, COST).fit(table_linear).models_["y"].log_target
    # The same data forced onto the raw scale predicts held-out trials worse.
    raw = PlainGPSurrogate(SPACE, COST).fit(table)
    raw.models_["y"] = type(raw.models_["y"])(SPACE.names, [], log_target=False)
    raw._fit(table, refit=False)
    raw_score = cross_validate(raw, table, np.random.default_rng(0))["log_predictive_density"]
    assert logged["log_predictive_density"] > raw_score + 0.3


def test_a_recorded_structure_rebuilds_the_model_the_proposal_used():
    """What a proposal records (``structure_record``, JSON in the store) rebuilds the same node
    models: kinds, forms, parents, safety-net choices and predictions; views refit this one
    structure instead of searching forms and parents again (and finding others)."""
    import json

    from boanon.models.dag import node_label

    system = SyntheticSystem(n_params=8, n_groups=2, chain_length=3, seed=4)
    table = system.sample_table(24, seed=0)
    chosen = DAGSurrogate(system.space, system.true_graph(), [Objective("cost")], random_state=3).fit(table)
    record = json.loads(json.dumps(chosen.structure_record()))  # as the store keeps it
    assert record["order"] == chosen.order_
    labels = {n: node_label(s) for n, s in record["nodes"].items()}
    assert any(label.endswith(" form") for label in labels.values())  # named as status names them
    rebuilt = DAGSurrogate(system.space, system.true_graph(), [Objective("cost")],
                           structure=record).fit(table)
    assert rebuilt.order_ == chosen.order_
    for node in chosen.order_:
        mine, theirs = rebuilt.models_[node], chosen.models_[node]
        assert (mine.kind, mine.parents) == (theirs.kind, theirs.parents), node
    assert rebuilt.structure_record() == record
    configs = [system.space.default()]
    ours = rebuilt.predict(configs, np.random.default_rng(0), n_samples=256)["cost"][0]
    used = chosen.predict(configs, np.random.default_rng(0), n_samples=256)["cost"][0]
    assert ours == pytest.approx(used, rel=1e-6)


@pytest.mark.parametrize("method", ["sample", "predict", "fantasize", "refit", "describe"])
def test_a_surrogate_used_before_fit_says_so_naming_the_method(method):
    # each was an AttributeError on an attribute fit sets ('models_', 'order_', 'model_')
    from sklearn.exceptions import NotFittedError

    from boanon.multitask.surrogate import MultiTaskGPSurrogate

    configs, rng = [{"x": 0.5, "z": 0.5}], np.random.default_rng(0)
    args = {"sample": (configs, 4, rng), "predict": (configs, rng), "fantasize": (configs, rng),
            "refit": (_chain_table(),), "describe": ()}[method]
    for model in (PlainGPSurrogate(SPACE, COST), DAGSurrogate(SPACE, CHAIN, COST),
                  MultiTaskGPSurrogate(SPACE, COST)):
        with pytest.raises(NotFittedError, match=rf"this {type(model).__name__} is not fitted yet: "
                                                 rf"call fit\(table\) before {method}\(\)"):
            getattr(model, method)(*args)


def test_a_surrogate_s_own_reports_before_fit_say_so_too():
    from sklearn.exceptions import NotFittedError

    from boanon.multitask.surrogate import MultiTaskGPSurrogate

    dag, rng = DAGSurrogate(SPACE, CHAIN, COST), np.random.default_rng(0)
    for call, method in ((dag.structure_record, "structure_record"),
                         (lambda: dag.node_scores(rng), "node_scores"),
                         (MultiTaskGPSurrogate(SPACE, COST).output_correlation, "output_correlation")):
        with pytest.raises(NotFittedError, match=rf"before {method}\(\)"):
            call()


def test_fantasize_on_a_wide_space_builds_its_rows_at_once():
    """Pending rows were built a column at a time: past 100 columns (the sgd example's 37
    parameters and its nodes) pandas printed a PerformanceWarning on the run's console at every
    proposal of a parallel run."""
    space = Space([Float(f"x{i}", 0.0, 1.0) for i in range(120)])
    rng = np.random.default_rng(0)
    x = rng.random((12, 120))
    table = pd.DataFrame({"trial": [f"t{i}" for i in range(12)],
                          **{f"param:x{i}": x[:, i] for i in range(120)}, "objective:y": x.sum(axis=1)})
    model = PlainGPSurrogate(space, COST).fit(table)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.PerformanceWarning)
        fantasized = model.fantasize([{f"x{i}": 0.5 for i in range(120)}], np.random.default_rng(0))
    assert len(fantasized.table_) == 13 and fantasized.table_["param:x7"].iloc[-1] == 0.5
