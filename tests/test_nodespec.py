import pytest

from boanon.annotations import Knowledge
from boanon.errors import ConfigError
from boanon.graph import CausalGraph
from boanon.nodespec import NodeSpec


@pytest.mark.parametrize("written", [
    {"function": "energy * latency"},
    {"formula": "a * m", "free": {"a": {"mean": 1.0, "sd": 0.5}}, "residual": "gp"},
    {"formula": "a * reads / hit + b", "free": {"a": {"init": 1.0, "low": 0.0}, "b": {}}, "residual": "none"},
])
def test_the_on_disk_form_round_trips(written):
    spec = NodeSpec.parse("n", written)
    assert spec.to_dict() == written
    assert NodeSpec.parse("n", spec.to_dict()) == spec
    graph = CausalGraph.from_dict({"nodes": [], "edges": [], "node_models": {"n": spec.to_dict()}})
    assert NodeSpec.parse("n", graph.to_dict()["node_models"]["n"]) == spec


def test_graph_forms_read_the_same_as_annotations():
    """A graph's lenient forms (free as a list, a bare start value, a kind key) mean the
    annotation form, and knowledge keeps the annotation form."""
    lenient = {"kind": "formula", "formula": "a * m + b", "free": {"a": 2.0, "b": None}, "residual": "GP"}
    spec = NodeSpec.parse("n", lenient)
    assert spec.to_dict() == {"formula": "a * m + b", "free": {"a": {"init": 2.0}, "b": {}}, "residual": "gp"}
    assert spec.parents == {"m"} and [f.init for f in spec.free_parameters()] == [2.0, 1.0]
    assert NodeSpec.parse("n", {"formula": "a * m", "free": ["a"]}).parents == {"m"}
    assert Knowledge().node_model("n", formula="a * m", free={"a": {}}).node_models["n"] == \
        NodeSpec.parse("n", {"formula": "a * m", "free": ["a"]}).to_dict()


def test_a_contradicting_kind_names_the_field():
    with pytest.raises(ConfigError, match=r"g.json: node_models\.n\.kind: 'function' contradicts"):
        NodeSpec.parse("n", {"kind": "function", "formula": "a * m", "free": ["a"]}, "g.json")
