"""Acquisitions are named classes chosen in one place from what each declares it applies to; a
new one is a registered subclass, usable by name without touching BoAnon's modules."""

from collections.abc import Iterator

import numpy as np
import pytest

from boanon.acquisition import (
    ACQUISITIONS,
    AcquisitionFunction,
    Problem,
    build_acquisition,
    choose_acquisition,
    register_acquisition,
    score_candidates,
)
from boanon.models import PlainGPSurrogate
from boanon.multiobjective import OutputConstraint, Scalarization
from boanon.objectives import Objective
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

TWO = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, n_objectives=2, seed=0)
OBJECTIVES = (Objective("cost"), Objective("cost2"))


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names registered by the test, removed afterwards (the registry is the process's)."""
    names: list[str] = []
    yield names
    for name in names:
        ACQUISITIONS.entries.pop(name, None)


@pytest.mark.parametrize(("objectives", "constraints", "scalarization", "expected"), [
    (OBJECTIVES[:1], (), None, "ei"),
    (OBJECTIVES[:1], (), Scalarization("chebyshev"), "ei"),  # nothing to fold in one objective
    (OBJECTIVES[:1], (OutputConstraint("g0_load", max=1e9),), None, "ehvi"),
    (OBJECTIVES, (), None, "ehvi"),
    (OBJECTIVES, (), Scalarization("chebyshev"), "scalarized_ei"),
    (OBJECTIVES, (OutputConstraint("g0_load", max=-1e9),), None, "probability_of_feasibility"),
])
def test_the_problem_chooses_its_acquisition(objectives, constraints, scalarization, expected):
    problem = Problem(TWO.sample_table(6), objectives, constraints, None, scalarization)
    assert choose_acquisition(problem).name == expected


def test_without_a_measured_trial_there_is_nothing_to_improve_on():
    table = TWO.sample_table(4)
    table["objective:cost"] = np.nan
    with pytest.raises(ValueError, match="nothing to improve on"):
        choose_acquisition(Problem(table, OBJECTIVES))


def test_a_named_acquisition_must_apply():
    problem = Problem(TWO.sample_table(6), OBJECTIVES)
    assert choose_acquisition(problem, "ehvi").name == "ehvi"
    with pytest.raises(ValueError, match="'ei' does not apply to 2 objectives, 0 output constraints, no "
                                         "scalarisation, 6 feasible trials$"):  # was "2 objective(s)"
        choose_acquisition(problem, "ei")
    one = Problem(TWO.sample_table(1), OBJECTIVES[:1], (OutputConstraint("g0_load", max=1e9),))
    with pytest.raises(ValueError, match="'scalarized_ei' does not apply to 1 objective, 1 output "
                                         "constraint, no scalarisation, 1 feasible trial$"):
        choose_acquisition(one, "scalarized_ei")
    with pytest.raises(ValueError, match="unknown acquisition 'nope'; available: ehvi, ei, "):
        choose_acquisition(problem, "nope")


def test_describe_is_fixed_when_built_not_filled_while_evaluated():
    """The old closure filled its info dict on each evaluation; an acquisition's description is
    its own, computed once, and what score_candidates reports from the same samples."""
    table = TWO.sample_table(8)
    model = PlainGPSurrogate(TWO.space, list(OBJECTIVES)).fit(table)
    acquisition = build_acquisition(model, table, OBJECTIVES, [], np.random.default_rng(0))
    before = acquisition.describe()
    assert before["kind"] == "ehvi" and before["n_feasible_trials"] == 8 and before["n_front"] >= 1
    configs = TWO.space.sample(5, np.random.default_rng(1))
    values = acquisition(configs, 16)
    assert acquisition.describe() == before
    samples = model.sample(configs, 16, acquisition._draws(16))
    scores, info = score_candidates(samples, table, OBJECTIVES)
    np.testing.assert_array_equal(scores, values)
    assert {k: v for k, v in info.items() if k != "probability_of_feasibility"} == before


def test_two_defaults_that_apply_with_one_priority_are_refused(registered):
    @register_acquisition
    class Everything(AcquisitionFunction):
        name = "everything_for_test"
        priority = 1

        @classmethod
        def applies(cls, problem):
            return True

        def score(self, samples):
            return np.zeros(1)

        def describe(self):
            return {"kind": self.name}

    registered.append(Everything.name)
    with pytest.raises(ValueError, match=r"\['ei', 'everything_for_test'\] all apply"):
        choose_acquisition(Problem(TWO.sample_table(6), OBJECTIVES[:1]))


def test_a_registered_acquisition_runs_a_tuner(registered):
    """The walkthrough of docs/contributing.md: one class, registered, named in the tuner's
    propose options; its scores pick the proposals and its description is recorded."""
    calls = []

    @register_acquisition
    class LowestMean(AcquisitionFunction):
        """Pure exploitation: the candidate whose predicted cost is lowest."""

        name = "lowest_mean_for_test"
        default = False  # used only when named

        @classmethod
        def applies(cls, problem):
            return len(problem.objectives) == 1

        def score(self, samples):
            calls.append(1)
            o = self.problem.objectives[0]
            return -np.mean(o.to_minimize(samples[o.name]), axis=0)

        def describe(self):
            return {"kind": self.name, "trials": len(self.problem.trials)}

    registered.append(LowestMean.name)
    system = SyntheticSystem(n_params=4, n_groups=2, n_distractors=1, n_duplicates=0, seed=1)
    tuner = Tuner(system.space, system.objectives, strategy="gp", seed=0, n_init=3,
                  propose_options={"acquisition": LowestMean.name})
    kinds = []
    for _ in range(5):
        trial = tuner.ask()
        kinds.append((trial.info or {}).get("acquisition", {}).get("kind"))
        tuner.tell(trial.id, system.evaluate(trial.config))
    assert kinds == [None, None, None, LowestMean.name, LowestMean.name]
    assert calls
    recorded = [t.info["acquisition"] for t in tuner.store.trials() if t.info and "acquisition" in t.info]
    assert [a["trials"] for a in recorded] == [3, 4]
