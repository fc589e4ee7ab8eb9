"""A strategy is one proposer class registered by name: the loop, the YAML and the store take a
new one without a change elsewhere (docs/contributing.md walks through this file)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from boanon.acquisition.proposers import Proposer, RandomProposer
from boanon.config import load_config
from boanon.graph import CausalGraph
from boanon.models import PlainGPSurrogate, Surrogate
from boanon.objectives import Objective
from boanon.space import Space
from boanon.strategies import models_graph, register_strategy, strategy_names
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

SYSTEM = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=0)


@register_strategy
class GPOnGraph(Proposer):
    """A throwaway strategy: the plain GP, once a graph is learned; random configurations before."""

    name = "test-gp-on-graph"

    def needs_graph(self, related_outputs: Sequence[str] = ()) -> bool:
        return True

    def without_graph(self, why: str) -> tuple[Proposer, str]:
        return RandomProposer(), f"waiting for a graph ({why}); "

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        return [PlainGPSurrogate(space, objectives, outputs)], ""


def _trials(tuner: Tuner, n: int = 3) -> list:
    for _ in range(n):
        trial = tuner.ask()
        tuner.tell(trial.id, SYSTEM.evaluate(trial.config))
    return tuner.store.trials()


def test_a_proposer_object_runs_the_loop_with_the_graph_it_needs() -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], proposer=GPOnGraph(), graph=SYSTEM.true_graph(), n_init=2, seed=0)
    trials = _trials(tuner)
    assert [t.surrogate for t in trials] == ["init", "init", "gp"]
    assert trials[2].graph_id is not None  # it said it needs the graph: the loop gave it one
    assert tuner.store.study().strategy == "test-gp-on-graph" and tuner.strategy == "test-gp-on-graph"


def test_a_registered_name_works_where_a_strategy_is_named_and_its_fallback_is_used(tmp_path: Path) -> None:
    assert "test-gp-on-graph" in strategy_names() and not models_graph("test-gp-on-graph")
    # a learner that gives no graph (tests/conftest.py): the proposer's own fallback proposes, and says why
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="test-gp-on-graph", n_init=5, seed=0,
                  learn_options={"learner": "graphless"})
    sixth = _trials(tuner, 6)[5]
    assert sixth.surrogate == "random"
    assert sixth.reason.startswith("waiting for a graph (learning from 5 trials failed: ValueError")
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump({
        "space": {"x": {"type": "float", "low": 0, "high": 1}}, "objectives": ["cost"],
        "runner": {"callable": "examples.synthetic_system:evaluate"}, "strategy": "test-gp-on-graph"}))
    assert load_config(config).strategy == "test-gp-on-graph"


def test_a_proposer_and_a_strategy_name_together_are_refused() -> None:
    with pytest.raises(TypeError, match="not both"):
        Tuner(SYSTEM.space, ["cost"], proposer=GPOnGraph(), strategy="gp")
    with pytest.raises(ValueError, match="unknown strategy 'magic'; available: gp, multitask"):
        Tuner(SYSTEM.space, ["cost"], strategy="magic")
