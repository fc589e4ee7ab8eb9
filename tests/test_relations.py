"""Relation discovery: the compositions an expert writes by hand, found in the logs."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from boanon.adapters import ingest
from boanon.annotations import Knowledge
from boanon.expressions import Expression
from boanon.learners import learn, relations
from boanon.learners.relations import Relation, find_relations, name_groups
from boanon.table import with_objectives

ROOT = Path(__file__).resolve().parent.parent


def _by_target(relations):
    return {r.target: r for r in relations}


def _table(columns: dict[str, np.ndarray], params: tuple[str, ...] = ()) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    data = {"trial": range(n)}
    for name, values in columns.items():
        role = "param" if name in params else "objective" if name == "cost" else "metric"
        data[f"{role}:{name}"] = values
    return pd.DataFrame(data)


def test_known_sum_max_product_and_share_are_found_with_their_inputs():
    rng = np.random.default_rng(0)
    n = 30
    shares = {f"w{i}_share": rng.uniform(0.1, 1.0, n) for i in range(4)}
    parts = {f"g{i}_time": rng.gamma(2.0, 1.0, n) for i in range(4)}
    a, b = rng.uniform(1, 5, n), rng.uniform(1, 5, n)
    total = sum(shares.values())
    cols = {**shares, **parts, "a": a, "b": b,
            "w2_load": np.round(1000 * shares["w2_share"] / total),  # a batch split by shares
            "slowest": np.max(np.column_stack(list(parts.values())), axis=1),
            "area": a * b,
            "noise1": rng.normal(size=n), "noise2": rng.normal(size=n)}
    cols["cost"] = cols["slowest"] + cols["area"]
    found = _by_target(find_relations(_table(cols, params=tuple(shares))))
    assert set(found["cost"].inputs) == {"slowest", "area"} and found["cost"].kind == "sum"
    assert found["slowest"].kind == "group max"
    assert set(found["slowest"].inputs) == set(parts)
    assert found["area"].kind == "product" and set(found["area"].inputs) == {"a", "b"}
    assert found["w2_load"].kind == "share" and "w2_share" in found["w2_load"].inputs
    assert "noise1" not in found and "noise2" not in found
    assert all(r.exact for r in found.values())


def test_a_share_is_found_when_some_of_its_switches_rarely_moved():
    # A run's trials near its default: each machine's switch (worker or not) flipped in only a
    # couple of trials. The share has one constant, so a switch that seldom moved is still an
    # input it can use (a weight per input would need the input to vary; this form has none).
    rng = np.random.default_rng(3)
    n, machines = 12, 5
    shares = {f"m{i}_share": rng.uniform(0.2, 1.0, n) for i in range(machines)}
    workers = {f"m{i}_worker": np.ones(n) for i in range(machines)}
    for i, off in enumerate(([1], [3, 7], [4], [5, 9], [10])):
        workers[f"m{i}_worker"][off] = 0.0
    weights = {i: shares[f"m{i}_share"] * workers[f"m{i}_worker"] for i in range(machines)}
    total = sum(weights.values())
    cols = {**shares, **workers, "m0_samples": 512 * weights[0] / total,
            "cost": rng.gamma(2.0, 1.0, n)}
    found = _by_target(find_relations(_table(cols, params=(*shares, *workers))))
    assert found["m0_samples"].kind == "share" and found["m0_samples"].exact
    assert set(workers) <= set(found["m0_samples"].inputs)


def test_a_sum_of_switches_is_found_when_most_rarely_moved_but_not_a_max_of_such_metrics():
    # Trials near a default flip each machine's switch in a trial or two. A parameter is set, not
    # predicted, so the count of workers is their sum however seldom each moved; a metric that
    # seldom moved would be a node whose model cannot predict its moves (held out, the trial
    # where it moved is missed with confidence), so a max over such metrics is left to the GP.
    rng = np.random.default_rng(4)
    n = 12
    switches = {f"m{i}_worker": np.ones(n) for i in range(5)}
    updates = {f"m{i}_update_s": np.zeros(n) for i in range(5)}
    updates["m0_update_s"] = rng.uniform(1.0, 2.0, n)
    switches["m0_worker"][7] = 0.0
    off_rows, busy_rows = ([2, 5], [5, 8], [2, 9], [11]), ([2], [5, 8], [9], [11])
    for i, (off, busy) in enumerate(zip(off_rows, busy_rows, strict=True), start=1):
        switches[f"m{i}_worker"][off] = 0.0
        updates[f"m{i}_update_s"][busy] = rng.uniform(2.5, 4.0, len(busy))
    cols = {**switches, **updates, "workers": sum(switches.values()),
            "update_max_s": np.max(np.column_stack(list(updates.values())), axis=1),
            "cost": rng.gamma(2.0, 1.0, n)}
    found = _by_target(find_relations(_table(cols, params=tuple(switches))))
    assert found["workers"].kind == "group sum" and found["workers"].exact
    assert set(found["workers"].inputs) == set(switches)
    assert "update_max_s" not in found or not found["update_max_s"].kind.startswith("group")


def test_no_relation_among_independent_noisy_metrics():
    rng = np.random.default_rng(1)
    n = 40
    cols = {f"m{i}_x": rng.lognormal(0, 0.5, n) for i in range(12)}
    cols |= {f"q{i}": rng.normal(10, 1, n) for i in range(12)}
    # a sum hidden under 30 % noise is not a deterministic relation either
    cols["cost"] = cols["q0"] + cols["q1"] + rng.normal(0, 0.3 * 1.4, n)
    assert find_relations(_table(cols)) == []


def test_a_loss_of_squared_deviations_is_found_with_its_targets():
    # a calibration error: how far each simulated quantity is from its observed value
    rng = np.random.default_rng(3)
    n = 30
    params = {f"beta{i}": rng.uniform(0, 1, n) for i in range(4)}
    sims = {f"sim{i}": np.exp(params[f"beta{i}"]) + params[f"beta{(i + 1) % 4}"] for i in range(4)}
    observed = {"sim0": 1.9, "sim1": 2.2, "sim2": 1.5, "sim3": 2.6}
    for name, target in observed.items():  # one trial on every target: a loss of exactly 0
        sims[name][0] = target
    cost = sum((sims[k] - t) ** 2 for k, t in observed.items())
    assert cost[0] == 0.0
    cols = {**params, **sims, "noise": rng.normal(size=n), "cost": cost}
    found = _by_target(find_relations(_table(cols, params=tuple(params))))
    rel = found["cost"]
    assert rel.kind == "squares" and rel.exact and set(rel.inputs) == set(observed)
    values = Expression.parse(rel.node_model()["function"]).evaluate(cols)
    assert np.allclose(values, cost, rtol=1e-4)
    for name, target in observed.items():  # each term names its quantity's target
        assert f"({name} - {target:g})" in rel.expression


def test_an_unweighted_loss_is_found_from_fewer_trials_than_a_weighted_one():
    # six simulated shares against their history, one weight for all: 12 trials identify it
    # (k + 6), where a weight per share needs 17 (2k + 5); the parameters that drive the shares
    # are not mistaken for its quantities
    rng = np.random.default_rng(8)
    n = 12
    params = {f"beta{i}": rng.uniform(0, 1, n) for i in range(6)}
    sims = {f"sim{i}": np.exp(params[f"beta{i}"]) * (1 + params[f"beta{(i + 1) % 6}"]) for i in range(6)}
    observed = {f"sim{i}": 1.5 + 0.2 * i for i in range(6)}
    cost = sum((sims[k] - t) ** 2 for k, t in observed.items())
    cols = {**params, **sims, "cost": cost}
    rel = _by_target(find_relations(_table(cols, params=tuple(params))))["cost"]
    assert rel.kind == "squares" and rel.exact and set(rel.inputs) == set(observed)
    assert np.allclose(Expression.parse(rel.node_model()["function"]).evaluate(cols), cost, rtol=1e-4)


def _calibration_trials(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """``n`` random trials of the environmental model calibration (composite BO): 4 parameters
    drive 12 concentrations (nearly collinear), the objective their unweighted squared error."""
    from benchmarks.relation_scan import random_trials
    table = random_trials("fn-envmodel", n, seed)
    return table, {c.split(":", 1)[1]: table[c].to_numpy() for c in table.columns if ":" in c}


@pytest.mark.parametrize(("n", "seed"), [(30, 0), (50, 1)])
def test_a_calibration_over_twelve_collinear_outputs_is_found_with_one_weight(n, seed):
    # more quantities than the old cap of 8; and on seed 1's 50 trials ten of them with a
    # weight each fit every loss within 1 % held out, with their minimum in the wrong place
    table, cols = _calibration_trials(n, seed)
    rel = _by_target(find_relations(table))["calibration_error"]
    assert rel.kind == "squares" and rel.exact and len(rel.inputs) == 12
    assert len(re.findall(r"(?<![\d.e-])1 \* \(", rel.expression)) == 12  # one weight, 1, for each
    values = Expression.parse(rel.node_model()["function"]).evaluate(cols)
    assert np.allclose(values, cols["calibration_error"], rtol=1e-4, atol=1e-4)


def test_a_weighted_loss_keeps_its_weights_when_one_weight_over_more_would_not_hold():
    # a weight each, found first, is kept aside while one weight over more quantities needs
    # fewer constants; none holds here, so the weighted loss is the relation, weights and all
    rng = np.random.default_rng(11)
    n = 30
    params = {f"beta{i}": rng.uniform(0, 1, n) for i in range(4)}
    sims = {f"sim{i}": np.exp(params[f"beta{i}"]) + params[f"beta{(i + 1) % 4}"] for i in range(4)}
    sims |= {f"other{i}": rng.normal(2, 0.3, n) for i in range(3)}
    weights, targets = (1.0, 3.0, 0.5, 2.0), (1.9, 2.2, 1.5, 2.6)
    cost = sum(w * (sims[f"sim{i}"] - t) ** 2 for i, (w, t) in enumerate(zip(weights, targets, strict=True)))
    cols = {**params, **sims, "cost": cost}
    rel = _by_target(find_relations(_table(cols, params=tuple(params))))["cost"]
    assert rel.kind == "squares" and rel.exact and set(rel.inputs) == {f"sim{i}" for i in range(4)}
    assert np.allclose(Expression.parse(rel.node_model()["function"]).evaluate(cols), cost, rtol=1e-4)
    for i, (w, t) in enumerate(zip(weights, targets, strict=True)):
        assert f"{w:g} * (sim{i} - {t:g}) ** 2" in rel.expression


def test_a_noisy_parabola_far_from_zero_is_no_loss():
    # a noisy parabola about 100 is within 1 % of every value: a loss must be exact to the spread too
    rng = np.random.default_rng(9)
    n = 10
    x = rng.uniform(0, 1, n)
    latency = 100 + 8 * (x - 0.5) ** 2 + 0.1 * rng.normal(size=n)
    cols = {"x": x, "latency": latency, "noise": rng.normal(size=n)}
    assert [r for r in find_relations(_table(cols, params=("x",))) if "squares" in r.kind] == []


def test_a_bent_monotone_dependence_is_not_a_loss():
    # a quadratic fits a square root closely, but its floor lies far outside the data: no loss
    rng = np.random.default_rng(4)
    n = 30
    m = rng.uniform(10, 20, n)
    cols = {"m": m, "cost": np.sqrt(m), "noise": rng.normal(size=n)}
    assert find_relations(_table(cols)) == []


def test_a_parabola_through_three_values_is_not_a_loss():
    # RocksDB's GB counters printed to 0.1: through three values any parabola is exact
    read = np.array([0, 0, 0, .1, 0, 0, 0, 0, 0, .1, .2, 0, 0, 0, .2])
    cols = {"read_gb": read, "wnew_gb": np.where(read > 0, 0.1, 0.0),
            "noise": np.random.default_rng(7).normal(size=len(read))}
    assert [r for r in find_relations(_table(cols)) if "squares" in r.kind] == []


def test_a_distance_from_a_point_is_the_root_of_a_loss():
    rng = np.random.default_rng(5)
    n = 15
    x1, x2 = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    cols = {"x1": x1, "x2": x2, "cost": 10 * np.sqrt((x1 - 0.3) ** 2 + (x2 - 0.7) ** 2)}
    (rel,) = find_relations(_table(cols, params=("x1", "x2")))
    assert rel.kind == "root of squares" and set(rel.inputs) == {"x1", "x2"}
    assert "(x1 - 0.3)" in rel.expression and "(x2 - 0.7)" in rel.expression
    assert np.allclose(Expression.parse(rel.node_model()["function"]).evaluate(cols), cols["cost"])


def test_a_counter_proportional_to_another_is_no_distance():
    # often zero, so its "target" sits at zero with trials on one side only: a line, not a root
    rng = np.random.default_rng(6)
    n = 30
    misses = np.where(rng.uniform(size=n) < 0.4, 0.0, rng.uniform(1e3, 1e6, n))
    cols = {"misses": misses, "data_misses": misses.copy(), "noise": rng.normal(size=n),
            "cost": rng.normal(size=n)}
    assert [r for r in find_relations(_table(cols)) if "squares" in r.kind] == []


def test_an_aggregate_a_few_percent_off_is_approximate():
    rng = np.random.default_rng(2)
    n = 40
    parts = {f"w{i}_busy": rng.uniform(1, 10, n) for i in range(5)}
    cols = {**parts, "cost": 1.05 * np.max(np.column_stack(list(parts.values())), axis=1)
            + rng.normal(0, 0.02, n)}
    (rel,) = find_relations(_table(cols))
    assert rel.target == "cost" and rel.kind == "group max" and not rel.exact
    assert rel.node_model()["residual"] == "gp"


def test_name_groups_by_number_and_by_word():
    names = ["m0_cpu_time", "m1_cpu_time", "m2_cpu_time", "m1_gpu_time", "m2_gpu_time", "m3_gpu_time", "x",
             "m0_cpu_s", "m1_cpu_s", "m2_cpu_s", "m1_gpu_s", "m2_gpu_s", "m3_gpu_s"]
    groups = name_groups(names)
    assert groups["m#_cpu_time"] == ["m0_cpu_time", "m1_cpu_time", "m2_cpu_time"]
    assert sorted(groups["m#_*_time"]) == sorted(names[:6])
    assert "m#_*_s" not in groups  # a unit alone does not make different quantities one family
    assert "x" not in {n for g in groups.values() for n in g}


def test_sgd_dataset_composition_without_annotations():
    result = learn(ingest(ROOT / "datasets" / "sgd-googlenet").table)
    rel = _by_target(Relation.from_dict(r) for r in result.report["relations"])
    assert rel["iteration_time"].expression == "worker_busy_max_s + ps_update_max_s"
    assert rel["ps_update_max_s"].kind == "group max"
    assert rel["m3_cpu_samples"].kind == "share"
    graph = result.graph
    assert graph.node_models["iteration_time"] == {"function": "worker_busy_max_s + ps_update_max_s"}
    params = graph.nodes("param")
    through_metrics = [p for p in params if f"{p} -> iteration_time" not in result.report["params_connected"]]
    assert len(through_metrics) >= 0.9 * len(params)


def test_zigzag_edp_product_and_latency_sum():
    table = with_objectives(ingest(ROOT / "datasets" / "zigzag-resnet18").table, ["edp"], [])
    rel = _by_target(find_relations(table))
    assert rel["edp"].kind == "product" and set(rel["edp"].inputs) == {"energy", "latency"}
    assert rel["latency"].expression == "latency_computation + latency_onloading + latency_offloading"


def test_an_expert_model_wins_and_learned_relations_avoid_its_cycles():
    table = with_objectives(ingest(ROOT / "datasets" / "zigzag-resnet18").table, ["edp"], [])
    knowledge = Knowledge.from_yaml(ROOT / "examples" / "zigzag-edp-annotations.yaml")
    known = knowledge.required_edges()
    found = find_relations(table, skip=knowledge.node_models, known=known)
    assert found and not {r.target for r in found} & set(knowledge.node_models)
    graph = nx.DiGraph(known + [(i, r.target) for r in found for i in r.inputs])
    assert nx.is_directed_acyclic_graph(graph)
    # latency = its three parts is the expert's: a learned relation must not explain a part by it
    assert not any(r.target.startswith("latency_") and "latency" in r.inputs for r in found)
    learned = learn(table, knowledge).graph
    for node, spec in knowledge.node_models.items():
        assert learned.node_models[node] == spec


def test_a_forbidden_edge_is_never_a_relation_input():
    rng = np.random.default_rng(3)
    parts = {"mb": rng.uniform(1, 5, 30), "mc": rng.uniform(1, 5, 30)}
    table = _table({**parts, "cost": parts["mb"] + parts["mc"]})
    assert {"mb", "mc"} <= set(find_relations(table)[0].inputs)
    graph = learn(table, Knowledge().forbid("mb", "cost")).graph
    assert not graph.has_edge("mb", "cost")
    assert "mb" not in graph.node_models.get("cost", {}).get("function", "")


@pytest.mark.parametrize("enabled", [True, False])
def test_relations_can_be_switched_off(enabled):
    table = with_objectives(ingest(ROOT / "datasets" / "zigzag-resnet18").table, ["edp"], [])
    result = learn(table, relations=enabled)
    assert bool(result.report["relations"]) == enabled


def test_the_squares_bound_holds_every_fit_within_tolerance():
    """A step of the loss search is skipped when least squares over its widest design misses
    ``_squares_bound``: sound only if every fit within tolerance of each trial (of the value,
    or of its root) has a residual sum inside it, rows below the floor included."""
    rng = np.random.default_rng(0)
    for root in (False, True):
        for _ in range(200):
            y = rng.uniform(0.1, 3.0, 12)
            allowed = 0.05 * np.maximum(np.abs(y), 0.5)  # a floor above some values
            bound = relations._squares_bound(y, allowed, root)
            value = y + rng.choice([-1.0, 1.0], 12) * allowed  # a fit at the edges of its tolerance
            if root and np.any(value < 0):
                continue
            fitted = value**2 if root else value
            target = y**2 if root else y
            assert float(np.sum((fitted - target) ** 2)) <= bound


def test_the_squares_bound_is_finite_only_where_a_root_cannot_hide_below_zero():
    y = np.array([0.0, 1.0, 2.0])
    assert relations._squares_bound(y, np.full(3, 0.01), root=True) == np.inf
    assert np.isfinite(relations._squares_bound(y + 1, np.full(3, 0.01), root=True))
    assert np.isfinite(relations._squares_bound(y, np.full(3, 0.01), root=False))


def test_distinct_counts_match_numpy_unique():
    rng = np.random.default_rng(1)
    matrix = rng.integers(0, 5, (30, 8)).astype(float) * rng.choice([1.0, 0.5, -0.0], (30, 8))
    expected = [len(np.unique(c)) for c in matrix.T]
    assert relations._distinct_counts(matrix).tolist() == expected
