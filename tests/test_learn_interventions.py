"""Parameter parents re-selected by regression on the parameters (they are interventions)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from boanon.annotations import Knowledge
from boanon.learners import learn
from boanon.learners.interventions import select_parameters
from boanon.learners.preprocess import preprocess


def _table(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, (n, 4))
    load = 8 * (p[:, 0] - 0.5) ** 2 + 2 * p[:, 2] + rng.normal(0, 0.05, n)  # a bowl and a slope
    queue = 3 * load + rng.normal(0, 1.0, n)  # downstream of load only
    return pd.DataFrame({"trial": range(n), **{f"param:p{i}": p[:, i] for i in range(4)},
                         "metric:load": load, "metric:queue": queue,
                         "objective:cost": queue + rng.normal(0, 1.5, n)})


def test_a_bowl_and_a_slope_are_found_and_nothing_else():
    prepared = preprocess(_table())
    chosen = select_parameters(prepared, "load", [], ["p0", "p1", "p2", "p3"], alpha=0.01)
    assert sorted(chosen) == ["p0", "p2"]
    # downstream, given its metric parent, no parameter adds anything
    assert select_parameters(prepared, "queue", ["load"], ["p0", "p1", "p2", "p3"], alpha=0.01) == []


def test_learn_gives_the_metric_its_parameter_parents_and_keeps_knowledge():
    graph = learn(_table(), relations=False, interventions=True).graph
    assert {"p0", "p2"} <= set(graph.parents("load"))
    assert not {"p1", "p3"} & set(graph.parents("load"))
    forbidden = learn(_table(), Knowledge().forbid("p2", "load"), relations=False, interventions=True).graph
    assert "p2" not in forbidden.parents("load")
    assert learn(_table(), relations=False).graph.metadata["interventions"] is False  # opt-in
