"""Node kinds come from one registry: a new kind is one registered NodeModel subclass, and the
annotations, the DAG surrogate, the recorded structure, the graph's picture and the dashboard
all read it through :data:`boanon.nodespec.NODE_KINDS`."""

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from boanon.annotations import Knowledge
from boanon.dashboard.data import graph_view
from boanon.errors import ConfigError
from boanon.graph_render import to_dot
from boanon.models import DAGSurrogate
from boanon.models.nodes import NodeModel
from boanon.nodespec import NODE_KINDS, NodeSpec, annotated_kinds, register_node_kind
from boanon.objectives import Objective
from boanon.synthetic import SyntheticSystem


class Scaled(NodeModel):
    """The walkthrough of docs/contributing.md: ``node = c * expression`` with ``c`` fitted by
    least squares and Gaussian noise; an annotation writes ``{scaled: EXPRESSION}``."""

    kind = "scaled_for_test"
    description = "a fitted multiple of an expression"
    annotation = ()

    def __init__(self, expression, param_parents, metric_parents):
        super().__init__(param_parents, metric_parents)
        self._expression = expression

    @property
    def expression(self):
        return self._expression

    @classmethod
    def from_annotation(cls, spec: NodeSpec, parents: list[str], param_names: set[str]) -> "Scaled":
        names = sorted(spec.expression.names)
        return cls(spec.expression, [p for p in names if p in param_names],
                   [p for p in names if p not in param_names])

    def fit(self, inputs, y):
        x = np.ravel(np.broadcast_to(self._expression.evaluate(inputs.raw), (1, len(y))))
        self.c_ = float(x @ y / (x @ x))
        self.var_ = float(np.mean((y - self.c_ * x) ** 2))
        return self

    def predict(self, inputs, noise=True):
        mean = self.c_ * self._expression.evaluate(inputs.raw)
        return mean, np.full_like(mean, self.var_ if noise else 0.0, dtype=float)

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "expression": self._expression.text}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> "Scaled":
        return cls(NodeSpec.parse("", {cls.kind: spec["expression"]}).expression,
                   list(spec["param_parents"]), list(spec["metric_parents"]))


@pytest.fixture
def scaled() -> Iterator[type[Scaled]]:
    register_node_kind(Scaled)
    yield Scaled
    NODE_KINDS.entries.pop(Scaled.kind, None)


def test_a_registered_node_kind_is_parsed_from_yaml_fitted_and_shown(scaled, tmp_path):
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=0, n_duplicates=0, seed=0)
    path = tmp_path / "annotations.yaml"
    path.write_text("node_models:\n  g0_m1: {scaled_for_test: 'g0_load'}\n")
    knowledge = Knowledge.from_yaml(path)
    assert ("g0_load", "g0_m1") in knowledge.required_edges()
    graph = knowledge.apply(system.true_graph())
    table = system.sample_table(9, seed=0)  # below the safety net, which may cut g0_m1 out
    model = DAGSurrogate(system.space, graph, [Objective("cost")]).fit(table)

    node = model.models_["g0_m1"]
    assert type(node) is Scaled and node.parents == ["g0_load"]
    x, y = table["metric:g0_load"].to_numpy(), table["metric:g0_m1"].to_numpy()
    assert node.c_ == pytest.approx(x @ y / (x @ x))
    record = model.structure_record()
    recorded = record["nodes"]["g0_m1"]
    assert recorded["kind"] == Scaled.kind and recorded["source"] == "annotation"
    rebuilt = DAGSurrogate(system.space, graph, [Objective("cost")], structure=record).fit(table)
    assert rebuilt.models_["g0_m1"].c_ == node.c_

    assert 'label="g0_m1\n~ g0_load"' in to_dot(graph)
    forms = {n["id"]: n["form"] for n in graph_view(graph, system.space, ["cost"], "all")["nodes"]}
    assert forms["g0_m1"] == {"kind": Scaled.kind, "text": "g0_load", "source": "annotated"}


def test_a_node_kind_s_annotation_is_checked_by_the_one_parser(scaled):
    assert [k.kind for k in annotated_kinds()] == ["formula", "function", Scaled.kind]
    with pytest.raises(ConfigError, match=r"a\.yaml: node_models\.n\.free: unknown key"):
        NodeSpec.parse("n", {Scaled.kind: "m", "free": {}}, "a.yaml")
    with pytest.raises(ConfigError, match=f"or a '{Scaled.kind}' \\(a fitted multiple of an expression\\)"):
        NodeSpec.parse("n", {"weird": "m"}, "a.yaml")
    assert NodeSpec.parse("n", {Scaled.kind: "2 * m"}).to_dict() == {Scaled.kind: "2 * m"}


def test_kinds_that_annotations_cannot_write_are_refused_by_name():
    with pytest.raises(ConfigError, match=r"node_models\.n: needs a 'formula' \(with free parameters\) "
                                          r"or a 'function' \(deterministic\): give exactly one"):
        NodeSpec.parse("n", {"gp": "m"})
    assert NODE_KINDS.get("gp").annotation is None and NODE_KINDS.get("marginal").annotation is None
