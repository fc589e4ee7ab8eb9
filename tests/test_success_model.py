"""The model of where a system fails, and the acquisition it weights."""

import numpy as np
import pytest

from boanon.acquisition import propose
from boanon.acquisition.success import SuccessWeighted
from boanon.models.success import SuccessModel
from boanon.objectives import Objective
from boanon.space import Bool, Float, Space
from boanon.table import TrialRecord, records_to_table

SPACE = Space([Float("a", 0, 1, default=0.3), Float("b", 0, 1, default=0.3), Bool("fast", default=False)])


def _grid(a_values: list[float], fast: bool = False) -> list[dict]:
    return [{"a": a, "b": b, "fast": fast} for a in a_values for b in (0.1, 0.5, 0.9)]


def test_it_learns_the_region_that_fails() -> None:
    ran, failed = _grid([0.1, 0.3, 0.5]), _grid([0.7, 0.9])
    model = SuccessModel(SPACE).fit(ran, failed)
    p = model.probability([{"a": 0.2, "b": 0.5, "fast": False}, {"a": 0.95, "b": 0.5, "fast": False},
                           {"a": 0.8, "b": 0.3, "fast": False}])
    assert p[0] > 0.9 and p[1] < 0.1 and p[2] < 0.1
    assert model.latent([{"a": 0.2, "b": 0.5, "fast": False}])[0] > 0 > model.latent(failed[:1])[0]


def test_a_categorical_or_boolean_can_be_what_fails() -> None:
    ran, failed = _grid([0.1, 0.5, 0.9]), _grid([0.1, 0.5, 0.9], fast=True)
    p = SuccessModel(SPACE).fit(ran, failed).probability([{"a": 0.3, "b": 0.3, "fast": False},
                                                         {"a": 0.3, "b": 0.3, "fast": True}])
    assert p[0] > 0.9 > 0.1 > p[1]


def test_it_needs_both_outcomes() -> None:
    with pytest.raises(ValueError, match="ran and trials that failed .got 3 and 0"):
        SuccessModel(SPACE).fit(_grid([0.1]), [])


def test_the_weighted_acquisition_is_the_product_and_says_so() -> None:
    model = SuccessModel(SPACE).fit(_grid([0.1, 0.3, 0.5]), _grid([0.7, 0.9]))

    class Flat:
        def __call__(self, configs, n_samples):
            return np.full(len(configs), 2.0)

        def describe(self):
            return {"kind": "flat"}

    configs = [{"a": 0.2, "b": 0.5, "fast": False}, {"a": 0.95, "b": 0.5, "fast": False}]
    weighted = SuccessWeighted(Flat(), model)
    np.testing.assert_allclose(weighted(configs, 8), 2.0 * model.probability(configs))
    assert weighted.describe() == {"kind": "flat", "success_weighted": {"n_ran": 9, "n_failed": 6}}


def test_a_proposal_leaves_the_neighbourhood_of_failed_configurations() -> None:
    # the cost falls towards a = 1, but everything past a = 0.6 fails: the model, fitted on the
    # trials that ran, extrapolates into the failing region; excluding the failed configurations
    # themselves only moved the proposal beside them
    space = Space([Float("a", 0, 1, default=0.3), Float("b", 0, 1, default=0.3)])
    ran = [{"a": a, "b": b} for a in (0.0, 0.15, 0.3, 0.45, 0.6) for b in (0.1, 0.5, 0.9)]
    failed = [{"a": a, "b": b} for a in (0.7, 0.85, 1.0) for b in (0.3, 0.5, 0.7)]
    records = [TrialRecord(f"t{i}", params=c, objectives={"cost": 1.0 - c["a"] + 0.1 * abs(c["b"] - 0.5)})
               for i, c in enumerate(ran)]
    p = propose(space, records_to_table(records), [Objective("cost")], proposer="gp", rng=0,
                failed=failed, early_trials=0)
    assert p.config["a"] <= 0.65
    assert p.info["acquisition"]["success_weighted"] == {"n_ran": len(ran), "n_failed": len(failed)}
