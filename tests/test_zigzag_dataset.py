"""datasets/zigzag-resnet18: complete, parseable, and exactly what its recipe draws."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from boanon.adapters import ingest
from boanon.space import Space
from boanon.targets.zigzag import default_space

DATASET = Path(__file__).parents[1] / "datasets" / "zigzag-resnet18"
pytestmark = pytest.mark.skipif(not DATASET.is_dir(), reason="dataset not checked out")


def test_every_trial_parses_with_all_objectives():
    result = ingest(DATASET)
    assert result.adapter == "zigzag" and not result.skipped
    table = result.table
    assert len(table) >= 40
    for name in ("energy", "latency", "area", "edp"):
        values = table[f"objective:{name}"]
        assert values.notna().all() and (values > 0).all() and values.map(math.isfinite).all()
    assert set(table["param:dataflow"]) == {"weight_stationary", "output_stationary",
                                            "pixel_parallel"}


def test_trials_and_failures_are_the_recipes_draws():
    recipe = yaml.safe_load((DATASET / "dataset.yaml").read_text())
    assert recipe["space"] == default_space() and recipe["runner"]["name"] == "zigzag"
    space = Space.from_dict(recipe["space"], recipe["constraints"])
    # boanon generate draws three configurations per wanted trial, uniformly, from the seed
    pool = space.sample(3 * recipe["trials"], np.random.default_rng(recipe["seed"]), sobol=False)
    trials = sorted(DATASET.glob("trial-*"))
    for trial in trials:
        assert json.loads((trial / "config.json").read_text()) == pool[int(trial.name[6:])]
    failed = [json.loads(line) for line in (DATASET / "failed.jsonl").read_text().splitlines()]
    for entry in failed:
        assert entry["config"] == pool[int(entry["trial"][6:])]
        assert not (DATASET / entry["trial"]).exists()
        assert "NoValidLoopOrderingFoundException" in entry["reason"]
    assert len(trials) + len(failed) == int(trials[-1].name[6:]) + 1  # no draw left out
