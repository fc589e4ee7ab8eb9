"""The away suite's problems (function networks, the pipeline simulator, ZigZag on other networks)
and its strongest peers (BoTorch's default BO, BOFN given the network)."""

from __future__ import annotations

import csv
import importlib.util
import io
import math

import numpy as np
import pytest

from benchmarks import bo_peers
from benchmarks.function_networks import (
    ACKLEY_OPTIMUM,
    ACKMAT_OPTIMUM,
    DROPWAVE_OPTIMUM,
    ENVMODEL_TRUTH,
    EPIDEMIC_BETA,
    EPIDEMIC_GAMMA,
    HELD_OUT,
    NETWORKS,
)
from benchmarks.pipeline import NODES, STAGES
from benchmarks.problems import make_problem
from benchmarks.run import run_one
from benchmarks.tuners import make_tuner
from boanon.expressions import Expression
from boanon.space import Bool, Categorical, Float, Int

HAS_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("botorch") is not None
AWAY = [*NETWORKS, "pipeline"]


@pytest.mark.parametrize("name", AWAY)
def test_default_is_valid_finite_and_not_the_optimum(name):
    problem = make_problem(name)
    default = problem.space.validate(problem.space.default())
    record = problem.evaluate(default)
    value = record.objectives[problem.objective.name]
    assert math.isfinite(value)
    assert all(math.isfinite(v) for v in record.metrics.values())
    if problem.optimum is not None:
        regret = (value - problem.optimum) * (1 if problem.objective.direction == "minimize" else -1)
        assert regret > 0.05 * max(abs(problem.optimum), 1.0)
        return
    # no known optimum: some other configuration does better than the default
    rng = np.random.default_rng(0)
    others = [problem.evaluate(c).objectives[problem.objective.name]
              for c in problem.space.sample(64, rng, sobol=False)]
    assert any(problem.objective.better(v, value) for v in others)


@pytest.mark.parametrize("name", list(NETWORKS))
def test_every_node_is_logged_and_the_objective_is_the_network_output(name):
    problem = make_problem(name)
    network = problem.knowledge["network"]
    config = problem.space.sample(1, np.random.default_rng(1), sobol=False)[0]
    record = problem.evaluate(config)
    assert set(record.metrics) == set(network.metrics)
    outputs = network.outputs(config)
    stacked = np.array([outputs[n.name] for n in network.nodes])
    assert record.objectives[network.objective] == pytest.approx(float(network.objective_of(stacked)))
    # every node reads only declared parents and parameters, which exist
    names = [n.name for n in network.nodes]
    for k, node in enumerate(network.nodes):
        assert set(node.parents) <= set(names[:k])
        assert set(node.inputs) <= set(problem.space.names)


def test_shifted_optima_and_calibration_truth_reach_the_known_optimum():
    ackley = NETWORKS["fn-ackley"]()
    best = ackley.record("t", dict(zip(ackley.params, map(float, ACKLEY_OPTIMUM), strict=True)))
    assert best.objectives["ackley"] == pytest.approx(0.0, abs=1e-9)
    dropwave = NETWORKS["fn-dropwave"]()
    best = dropwave.record("t", dict(zip(dropwave.params, map(float, DROPWAVE_OPTIMUM), strict=True)))
    assert best.objectives["dropwave"] == pytest.approx(1.0)
    epidemic = NETWORKS["fn-epidemic"]()
    truth = dict(zip(epidemic.params, [*map(float, EPIDEMIC_BETA.ravel()), EPIDEMIC_GAMMA], strict=True))
    assert epidemic.record("t", truth).objectives["calibration_error"] == pytest.approx(0.0, abs=1e-12)
    alpine = NETWORKS["fn-alpine2"]()
    peak = alpine.record("t", {p: 0.7917055 for p in alpine.params}).objectives["alpine_6"]
    assert peak == pytest.approx(alpine.optimum, rel=1e-6)


def test_held_out_networks_reach_their_stated_optimum_and_nothing_beats_it():
    ackmat = NETWORKS["fn-ackmat"]()
    at = dict(zip(ackmat.params, map(float, ACKMAT_OPTIMUM), strict=True))
    assert ackmat.record("t", at).objectives["matyas"] == pytest.approx(0.0, abs=1e-12)
    envmodel = NETWORKS["fn-envmodel"]()
    at = dict(zip(envmodel.params, map(float, ENVMODEL_TRUTH), strict=True))
    assert envmodel.record("t", at).objectives["calibration_error"] == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(3)
    for name in HELD_OUT:
        network = NETWORKS[name]()
        sign = 1.0 if network.direction == "maximize" else -1.0  # on a maximised scale
        values = [sign * network.record("t", c).objectives[network.objective]
                  for c in network.space().sample(2000, rng, sobol=False)]
        optimum = sign * network.optimum
        assert max(values) <= optimum + 1e-9  # the optimum is a bound
        assert max(values) > optimum - 0.2 * (optimum - float(np.median(values)))


def test_the_environmental_model_s_early_concentrations_read_only_mass_and_diffusion():
    """Before the second spill's earliest time no node may read its place or time: the
    network's structure, which a learner can find in the logs."""
    network = NETWORKS["fn-envmodel"]()
    early = [n for n in network.nodes if n.name.endswith(("_t15", "_t30"))]
    assert len(early) == 6 and all(n.inputs == ("mass", "diffusion") for n in early)
    base = dict(zip(network.params, map(float, ENVMODEL_TRUTH), strict=True))
    moved = network.outputs({**base, "place": 0.9, "tau": 0.05})
    for name, value in network.outputs(base).items():
        assert (moved[name] == value) == (name in {n.name for n in early})


def test_pipeline_space_has_every_type_and_logs_stage_and_node_times():
    problem = make_problem("pipeline")
    kinds = {type(p) for p in problem.space.params.values()}
    assert {Int, Float, Categorical, Bool} <= kinds
    params = problem.space.params.values()
    assert any(isinstance(p, Float) and not isinstance(p, Int) and p.log for p in params)
    assert any(isinstance(p, Int) and p.log for p in params)
    record = problem.evaluate(problem.space.default())
    for stage in STAGES:
        assert f"{stage}_time" in record.metrics
        assert all(f"{stage}_node{n:02d}_time" in record.metrics for n in range(NODES))
    total = record.metrics["startup_time"] + sum(record.metrics[f"{s}_time"] for s in STAGES)
    assert record.objectives["job_time"] == pytest.approx(total)
    # the same configuration gives the same value (noise seeded by the configuration)
    assert problem.evaluate(problem.space.default()).objectives == record.objectives


def test_pipeline_inert_parameters_change_nothing_but_the_noise_draw():
    problem = make_problem("pipeline")
    base = problem.space.default()
    values = [problem.evaluate({**base, "ui_enabled": flag}).objectives["job_time"] for flag in (True, False)]
    assert values[0] == pytest.approx(values[1], rel=0.25)
    more = problem.evaluate({**base, "executor_instances": 32, "executor_cores": 4,
                             "executor_memory_gb": 16.0}).objectives["job_time"]
    assert more < values[0] / 5


@pytest.mark.parametrize("name", ["zigzag-alexnet", "zigzag-mobilenetv2"])
def test_zigzag_on_other_networks_builds(name):
    pytest.importorskip("zigzag")
    problem = make_problem(name)
    assert problem.info["runner_options"]["model"] in name


def test_unit_encoding_round_trips_every_parameter_type():
    space = make_problem("pipeline").space
    encoding = bo_peers.UnitEncoding(space)
    assert encoding.dim == len(space) + sum(len(p.choices) - 1 for p in space.params.values()
                                            if isinstance(p, Categorical))
    for config in [space.default(), *space.sample(20, np.random.default_rng(2), sobol=False)]:
        u = encoding.encode(config)
        assert u.min() >= 0.0 and u.max() <= 1.0
        back = encoding.decode(u)
        for name, p in space.params.items():
            if isinstance(p, Float) and not isinstance(p, Int):
                assert back[name] == pytest.approx(config[name])
            else:
                assert back[name] == config[name]


@pytest.mark.parametrize("name", list(NETWORKS))
def test_the_true_graph_feeds_each_node_from_its_inputs_and_parents_only(name):
    network = NETWORKS[name]()
    graph = network.graph()
    assert set(graph.nodes("param")) == set(network.params)
    assert graph.nodes("objective") == [network.objective]
    for node in network.nodes:
        assert set(graph.parents(node.name)) == {*node.inputs, *node.parents}
    if network.target is not None:  # a calibration: the objective is computed from every node
        assert set(graph.parents(network.objective)) == {n.name for n in network.nodes}
    assert len(graph.edges) == sum(len(n.inputs) + len(n.parents) for n in network.nodes) \
        + (len(network.nodes) if network.target is not None else 0)


def test_boanon_given_the_network_proposes_with_that_graph_and_never_learns_one():
    problem = make_problem("fn-rosenbrock")
    buffer = io.StringIO()
    stats = run_one(problem, "boanon-network", seed=0, budget=7, rows=csv.writer(buffer), flush=lambda: None)
    assert stats.status == "ok"
    tuner = make_tuner("boanon-network", problem.space, problem.objective, 0, 7, knowledge=problem.knowledge)
    for _ in range(7):
        config = tuner.ask()
        tuner.tell(problem.evaluate(config))
    truth = problem.knowledge["network"].graph()
    assert {(e.source, e.target) for e in tuner.graph.edges} == {(e.source, e.target) for e in truth.edges}
    assert tuner.last_trial.surrogate in ("structured", "gp")  # past the design, a model proposes


@pytest.mark.parametrize("name", ["fn-epidemic", "fn-envmodel"])
def test_a_calibration_s_expert_annotation_is_its_objective(name):
    # boanon-expert on a calibration: the objective as the function a user holding the
    # observations writes, which must be the network's own objective everywhere
    problem = make_problem(name)
    network, knowledge = problem.knowledge["network"], problem.knowledge["annotations"]
    (function,) = (spec["function"] for spec in knowledge.to_dict()["node_models"].values())
    rng = np.random.default_rng(0)
    for _ in range(5):
        outputs = network.outputs({p: float(rng.uniform()) for p in network.params})
        expected = float(network.objective_of(np.array(list(outputs.values()))))
        assert Expression.parse(function).evaluate(outputs) == pytest.approx(expected, rel=1e-12)
    tuner = make_tuner("boanon-expert", problem.space, problem.objective, 0, 7, knowledge=problem.knowledge)
    for _ in range(7):
        tuner.tell(problem.evaluate(tuner.ask()))
    assert {e.source for e in tuner.graph.edges if e.target == network.objective} == set(network.metrics)


def test_a_network_without_a_target_has_no_calibration_to_annotate():
    assert "annotations" not in make_problem("fn-alpine2").knowledge


@pytest.mark.skipif(not HAS_TORCH, reason="botorch and torch are the bench-gp extra")
@pytest.mark.parametrize("tuner", ["botorch", "bofn"])
def test_torch_peers_run_past_their_initial_design(tuner, monkeypatch):
    monkeypatch.setattr(bo_peers, "N_INIT", 2)  # reach the model-based proposal within 3 evaluations
    monkeypatch.setattr(bo_peers, "RAW_SAMPLES", 32)
    monkeypatch.setattr(bo_peers, "NETWORK_RAW_SAMPLES", 32)
    problem = make_problem("fn-dropwave")
    buffer = io.StringIO()
    stats = run_one(problem, tuner, seed=0, budget=3, rows=csv.writer(buffer), flush=lambda: None)
    rows = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert stats.status == "ok" and stats.failures == 0 and len(rows) == 3
    first = problem.evaluate(problem.space.default()).objectives["dropwave"]
    assert float(rows[0][-1]) == pytest.approx(first)  # every tuner starts at the default
    assert all(math.isfinite(float(r[-1])) for r in rows)


def test_summary_regret_and_verdicts_on_a_maximised_network(tmp_path):
    from benchmarks.run import record_problem
    from benchmarks.summary import aim, rows

    problem = make_problem("fn-dropwave")  # maximised, optimum 1
    record_problem(tmp_path, problem)
    finals = {"random": 0.5, "bofn": 0.9, "boanon": 0.85, "boanon-gp": 0.7}
    lines = [f"fn-dropwave,{t},{s},{e},{v * e / 50}" for t, v in finals.items() for s in range(2)
             for e in range(1, 51)]
    header = "problem,tuner,seed,evaluation,best_so_far\n"
    (tmp_path / "fn-dropwave.csv").write_text(header + "\n".join(lines))
    table = rows(tmp_path)
    regret = {r["tuner"]: r["regret"] for r in table}
    assert regret["bofn"] == pytest.approx(0.1) and regret["random"] == pytest.approx(0.5)
    checks = aim(table, {"fn-dropwave": problem.describe()})
    assert any("boanon regret @50 within 2x of bofn's: met" in c for c in checks)
    assert any("boanon-gp regret @50 within 2x of bofn's: NOT met" in c for c in checks)
    assert any("boanon @50 vs boanon-gp @50: met" in c for c in checks)
