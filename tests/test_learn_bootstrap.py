"""Bootstrap stability on a table whose categorical has a rare level: subsamples miss levels."""

import numpy as np
import pandas as pd
import pytest

from boanon.annotations import Knowledge
from boanon.learners import get_learner, learn
from boanon.learners.preprocess import preprocess


def _rare_level_table(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    comp = np.array(["a"] * 27 + ["b"] + ["c"] * 2)
    x = rng.uniform(0, 1, n)
    load = 3 * x + (comp == "c") * 2 + rng.normal(0, 0.3, n)
    return pd.DataFrame({"trial": [f"t{i}" for i in range(n)], "param:x": x, "param:comp": comp,
                         "metric:load": load, "objective:cost": load + rng.normal(0, 0.3, n)})


def test_resample_encodes_only_the_levels_it_sees():
    prep = preprocess(_rare_level_table())
    assert prep.encodings["comp"] == ["b", "c"]
    without_b = prep.resample(np.r_[0:27, 28:30])
    x, names, _ = without_b.matrix()
    assert without_b.encodings["comp"] == ["c"] and x.shape[1] == len(names)
    only_a = prep.resample(np.arange(27))
    x, names, _ = only_a.matrix()
    assert only_a.basis["comp"].shape == (27, 0) and "comp=b" not in names and x.shape[1] == len(names)
    for learner in ("tiered-pc", "pc"):  # a one-level categorical explains nothing in these rows
        partial = get_learner(learner).fn(only_a, Knowledge())
        assert ("x", "load") in partial.directed and not any("comp" in e for e in partial.directed)


@pytest.mark.parametrize("learner", ["tiered-pc", "pc", "pgmpy-pc"])
def test_bootstrap_survives_a_rare_categorical_level(learner):
    result = learn(_rare_level_table(), learner=learner, bootstrap=8, seed=1)
    assert result.graph.edges
    assert all(0.0 <= e.stability <= 1.0 for e in result.graph.edges)


def test_a_relations_edges_are_in_every_resample():
    rng = np.random.default_rng(0)  # the exact sum's edges read stability 0.00, the most certain ones
    x, y = rng.uniform(0, 1, 30), rng.uniform(0, 1, 30)
    a, b = 2 * x + rng.normal(0, 0.1, 30), 3 * y ** 2 + rng.normal(0, 0.1, 30)
    table = pd.DataFrame({"trial": [f"t{i}" for i in range(30)], "param:x": x, "param:y": y,
                          "metric:a": a, "metric:b": b, "objective:total": a + b})
    result = learn(table, bootstrap=4, seed=1)
    assert result.graph.node_models["total"]["function"] in ("a + b", "b + a")
    assert {e.source: e.stability for e in result.graph.edges if e.target == "total"} == {"a": 1.0, "b": 1.0}
    plain = learn(table, bootstrap=4, seed=1, relations=False)  # edges the tests find are still counted
    assert all(e.stability is not None and 0 <= e.stability <= 1 for e in plain.graph.edges)
