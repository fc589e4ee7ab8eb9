"""Expert knowledge: the YAML file, the Python API, and that it holds on every graph."""

import pytest

from boanon.annotations import Knowledge
from boanon.errors import ConfigError
from boanon.graph import CausalGraph, Edge
from boanon.learners import learn
from boanon.synthetic import SyntheticSystem

ROLES = {"x": "param", "y": "param", "m1": "metric", "m10": "metric", "m2": "metric", "cost": "objective"}

YAML = """
require:
  - x -> m2
  - [y, m1]
forbid:
  - {source: m1, target: cost}
forbid_patterns:
  - {source: "m1", target: "cost"}
tiers:
  - [m10]
  - ["m[12]"]
node_models:
  cost:
    formula: "a * m2 / m10 + b"
    free: {a: {init: 1.0, low: 0.0}, b: {}}
    residual: gp
  m1:
    function: "x * y"
"""


@pytest.fixture
def knowledge(tmp_path):
    path = tmp_path / "annotations.yaml"
    path.write_text(YAML)
    return Knowledge.from_yaml(path)


def test_yaml_reads_every_kind_of_knowledge(knowledge):
    assert knowledge.required == [("x", "m2"), ("y", "m1")]
    assert knowledge.forbidden == [("m1", "cost")]
    assert knowledge.tiers == [["m10"], ["m[12]"]]
    assert knowledge.node_models["cost"]["free"] == {"a": {"init": 1.0, "low": 0.0}, "b": {}}
    # node models make their parents required
    assert {("m2", "cost"), ("m10", "cost"), ("x", "m1"), ("y", "m1")} <= set(knowledge.required_edges())


def test_python_api_matches_the_yaml(knowledge):
    built = (Knowledge().require("x", "m2").require("y", "m1").forbid("m1", "cost")
             .forbid_pattern("m1", "cost").add_tier(["m10"]).add_tier(["m[12]"])
             .node_model("cost", formula="a * m2 / m10 + b", free={"a": {"init": 1.0, "low": 0.0}, "b": {}})
             .node_model("m1", function="x * y"))
    assert built.to_dict() == knowledge.to_dict()


def test_patterns_are_anchored():
    k = Knowledge().forbid_pattern("m1", "cost")
    assert not k.allows("m1", "cost", ROLES)
    assert k.allows("m10", "cost", ROLES)  # re.match("m1", "m10") would have matched


def test_tiers_roles_and_forbids_in_allows(knowledge):
    assert not knowledge.allows("m1", "m10", ROLES)  # later tier -> earlier tier
    assert knowledge.allows("m10", "m1", ROLES)
    assert not knowledge.allows("m1", "x", ROLES)  # parameters have no parents
    assert not knowledge.allows("x", "y", ROLES)  # no parameter -> parameter
    assert not knowledge.allows("cost", "m1", ROLES)  # objectives have no children
    assert knowledge.allows("m2", "cost", ROLES)


def test_a_required_edge_is_allowed_over_forbids_and_metric_tiers_but_not_role_tiers():
    k = Knowledge().add_tier(["m10"]).add_tier(["m1"]).forbid_pattern("m.*", "cost")
    assert not k.allows("m1", "m10", ROLES) and not k.allows("m2", "cost", ROLES)
    k.require("m1", "m10")  # each change forgets the answers given before it
    assert k.allows("m1", "m10", ROLES)  # the expert's word beats the metric tiers
    assert not k.allows("m2", "cost", ROLES)
    k.node_model("cost", function="m2 * 2")
    assert k.allows("m2", "cost", ROLES)  # a node model's parent beats a forbid pattern
    assert not k.require("m1", "x").allows("m1", "x", ROLES)  # parameters never get parents


def test_apply_enforces_knowledge_on_a_user_graph(knowledge):
    graph = CausalGraph(roles=dict(ROLES), edges=[Edge("m1", "cost", 0.9), Edge("m1", "x"), Edge("x", "m10")])
    out = knowledge.apply(graph)
    edges = {(e.source, e.target) for e in out.edges}
    assert ("m1", "cost") not in edges and ("m1", "x") not in edges
    assert {("x", "m2"), ("y", "m1"), ("m2", "cost"), ("m10", "cost"), ("x", "m10")} <= edges
    assert set(out.node_models) == {"cost", "m1"}
    assert graph.has_edge("m1", "cost")  # the input is not modified


def test_knowledge_holds_after_learning():
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=4, n_duplicates=0,
                             noise=0.3, seed=2)
    table = system.sample_table(60, seed=2)
    plain = learn(table).graph
    assert plain.has_edge("g0_m1", "cost")
    k = (Knowledge().forbid("g0_m1", "cost").require("x0", "d0")
         .node_model("cost", formula="a * g0_load + g1_m1", free={"a": {}}))
    graph = learn(table, k).graph
    assert not graph.has_edge("g0_m1", "cost")
    assert graph.has_edge("x0", "d0") and "d0" in graph.roles  # kept although not on a path
    assert graph.has_edge("g0_load", "cost") and graph.has_edge("g1_m1", "cost")
    assert graph.node_models["cost"]["formula"] == "a * g0_load + g1_m1"


@pytest.mark.parametrize("text,field,message", [
    ("require: [x -> nowhere]", "require", "unknown node 'nowhere'"),
    ("forbid: [m1]", "forbid[0]", "expected 'a -> b'"),
    ("colour: red", "colour", "unknown key"),
    ("forbidd: [m1 -> cost]", "forbidd", "unknown key (did you mean 'forbid'?); expected one of"),
    ("1: a\nfoo: b", "1", "unknown key; expected one of"),  # it was a TypeError (1 < 'foo')
    ("node_models: {cost: {function: m2, 1: a, foo: b}}", "node_models.cost.1", "unknown key"),
    ("node_models: {cost: {formula: 'a * m2', residul: gp}}", "node_models.cost.residul",
     "unknown key (did you mean 'residual'?)"),
    ("forbid_patterns: [{source: '(', target: cost}]", "forbid_patterns.source", "invalid regular"),
    ("node_models: {cost: {formula: 'a * m2', function: 'm2'}}", "node_models.cost", "exactly one"),
    ("node_models: {cost: {formula: 'a *'}}", "node_models.cost.formula", "cannot parse"),
    ("node_models: {cost: {formula: 'a * m2', free: {c: {}}}}", "node_models.cost.free.c", "not used"),
    ("node_models: {cost: {formula: 'a * m2', free: {a: {init: 1, scale: 2}}}}", "node_models.cost.free.a",
     "expected a mapping"),
    ("node_models: {cost: {formula: 'a * m2', residual: nn}}", "node_models.cost.residual", "'gp' or 'none'"),
    ("node_models: {cost: {formula: 'a * b', free: {a: {}, b: {}}}}", "node_models.cost", "reads no parent"),
    ("node_models: {cost: {function: 'm2 * mystery'}}", "node_models.cost", "'mystery' is neither"),
    ("require: [x -> m1]\nforbid: [x -> m1]", "forbid", "both required and forbidden"),
    ("require: [m1 -> x]", "require", "breaks the role tiers"),
    ("node_models: {x: {function: 'y * 2'}}", "node_models.x", "edge y -> x breaks the role tiers"),  # named
    ("node_models: {m1: {function: 'cost * 2'}}", "node_models.m1", "edge cost -> m1 breaks"),  # `require`
    ("require: [m1 -> m2, m2 -> m1]", "require", "cycle"),
    ("tiers: [[m10], [m1, m2x]]", "tiers[1]", "unknown node 'm2x' (did you mean 'm2'?)"),  # was ignored
])
def test_bad_annotations_name_the_file_and_field(tmp_path, text, field, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        Knowledge.from_yaml(path).validate(ROLES)
    assert err.value.source == str(path)
    assert err.value.field == field
    assert message in str(err.value)


def test_invalid_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("require:\n  - x -> m1\n forbid: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml: line \d+: invalid YAML"):
        Knowledge.from_yaml(path)


@pytest.mark.parametrize("source, allowed", [
    ("wall_seconds", False), ("user_seconds", False), ("system_seconds", False), ("cpu_seconds", False),
    ("readrandomwriterandom_seconds", False),  # the phase's wall time: it was the strongest parent
    ("uptime_seconds", False), ("stall_seconds", True), ("block_cache_miss", True)])
def test_rocksdb_annotations_keep_the_runs_times_from_the_cpu_objective(source: str, allowed: bool) -> None:
    from pathlib import Path

    knowledge = Knowledge.from_yaml(Path(__file__).parent.parent / "examples" / "rocksdb-annotations.yaml")
    roles = {source: "metric", "cpu_micros_per_op": "objective"}
    assert knowledge.allows(source, "cpu_micros_per_op", roles) is allowed


def test_a_tier_pattern_may_match_no_node():
    Knowledge.from_dict({"tiers": [["m1.*"], ["disk_.*"]]}).validate(ROLES)  # a pattern, not a name
