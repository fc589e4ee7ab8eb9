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
    assert p[0] > 0.5 > max(p[1], p[2]) and p[0] > 2 * max(p[1], p[2])


def test_a_categorical_or_boolean_can_be_what_fails() -> None:
    ran, failed = _grid([0.1, 0.5, 0.9]), _grid([0.1, 0.5, 0.9], fast=True)
    p = SuccessModel(SPACE).fit(ran, failed).probability([{"a": 0.3, "b": 0.3, "fast": False},
                                                         {"a": 0.3, "b": 0.3, "fast": True}])
    assert p[0] > 0.5 > p[1]


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


def test_an_acquisition_with_negative_values_is_refused_by_name() -> None:
    # a product with a negative value would rank the configuration most likely to fail first
    model = SuccessModel(SPACE).fit(_grid([0.1, 0.3, 0.5]), _grid([0.7, 0.9]))

    class LogImprovement:
        def __call__(self, configs, n_samples):
            return np.full(len(configs), -3.0)

        def describe(self):
            return {"kind": "log_ei"}

    with pytest.raises(ValueError, match="acquisition 'log_ei' gave a negative value"):
        SuccessWeighted(LogImprovement(), model)([{"a": 0.2, "b": 0.5, "fast": False}], 8)


def test_a_proposal_leaves_the_neighbourhood_of_failed_configurations() -> None:
    # the cost is lowest at a = 0.7, in a band the system cannot run (0.6 < a < 0.85): the model,
    # fitted on the trials that ran, puts its optimum there, and excluding the failed
    # configurations themselves only moved the proposal between them (to a = 0.68)
    space = Space([Float("a", 0, 1, default=0.3), Float("b", 0, 1, default=0.3)])
    ran = [{"a": a, "b": b} for a in (0.0, 0.2, 0.4, 0.55, 0.9, 1.0) for b in (0.1, 0.5, 0.9)]
    failed = [{"a": a, "b": b} for a in (0.65, 0.72, 0.8) for b in (0.2, 0.5, 0.8)]
    cost = {i: (c["a"] - 0.7) ** 2 + 0.1 * (c["b"] - 0.5) ** 2 for i, c in enumerate(ran)}
    records = [TrialRecord(f"t{i}", params=c, objectives={"cost": cost[i]}) for i, c in enumerate(ran)]
    p = propose(space, records_to_table(records), [Objective("cost")], proposer="gp", rng=0,
                failed=failed, early_trials=0)
    assert not 0.6 < p.config["a"] < 0.85
    assert p.info["acquisition"]["success_weighted"] == {"n_ran": len(ran), "n_failed": len(failed)}


def test_a_proposal_too_early_to_model_counts_its_trials_in_words() -> None:
    """The reason read "1 trial(s) with all objectives"."""
    space = Space([Float("a", 0, 1, default=0.3)])
    table = records_to_table([TrialRecord("t0", params={"a": 0.3}, objectives={"cost": 1.0})])
    p = propose(space, table, [Objective("cost")], proposer="gp", rng=0)
    assert p.reason == "1 trial with all objectives: too few to model"
