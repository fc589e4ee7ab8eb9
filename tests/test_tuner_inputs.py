"""What a library user hands the Tuner: one objective or a path where a list is expected, values
that are not numbers, configurations of their own. Each is taken as meant or refused naming it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boanon.errors import ConfigError
from boanon.objectives import Objective, parse_objectives
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

SYSTEM = SyntheticSystem(n_params=4, n_groups=2, seed=0)


def _ran(path: Path, n: int = 3) -> Path:
    """A store of ``n`` finished random trials."""
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random", n_init=n, store=path)
    for _ in range(n):
        trial = tuner.ask()
        tuner.tell(trial.id, SYSTEM.evaluate(trial.config))
    tuner.store.close()
    return path


def test_a_lone_objective_is_one_objective_not_one_per_letter() -> None:
    assert parse_objectives("cost") == [Objective("cost")]
    assert parse_objectives({"name": "ops", "direction": "max"}) == [Objective("ops", "maximize")]
    assert Tuner(SYSTEM.space, "cost", strategy="random").objectives == [Objective("cost")]


def test_warm_start_takes_a_path_as_the_optuna_sampler_does(tmp_path: Path) -> None:
    store = _ran(tmp_path / "a.db")
    for warm_start in (store, str(store), [str(store)]):
        tuner = Tuner(SYSTEM.space, ["cost"], strategy="random", warm_start=warm_start)
        assert [len(t.table) for t in tuner.related] == [3]


def test_a_told_value_that_is_not_a_number_is_refused_naming_it_and_the_trial_stays_running() -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    trial = tuner.ask()
    with pytest.raises(ConfigError, match=r"tell\(t0000\): queue: expected a number, got 'high'"):
        tuner.tell(trial.id, {"cost": 1.0, "queue": "high"})
    with pytest.raises(ConfigError, match=r"tell\(t0000\): result: expected a TrialRecord.*got list"):
        tuner.tell(trial.id, [1.0])  # type: ignore[arg-type]
    assert tuner.store.trial(trial.id).status == "running"
    assert tuner.tell(trial.id, {"cost": 1.0, "queue": None}).status == "done"


def test_a_name_that_is_both_a_parameter_and_a_result_is_refused() -> None:
    # an objective named like a parameter raised KeyError from the model once the initial design
    # was done; a told metric named like one was stored, and the learned graph lost the parameter
    with pytest.raises(ConfigError, match=r"Tuner: objectives: 'x0' is both a parameter and an objective"):
        Tuner(SYSTEM.space, ["cost", "x0"], strategy="random")
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    trial = tuner.ask()
    with pytest.raises(ConfigError, match=r"tell\(t0000\): x1: is both a parameter and a result"):
        tuner.tell(trial.id, {"cost": 1.0, "x1": 0.5})
    assert tuner.store.trial(trial.id).status == "running"
    assert tuner.tell(trial.id, {"cost": 1.0, "x1_seen": 0.5}).status == "done"


def test_a_misspelt_learn_or_propose_option_is_refused_when_the_tuner_is_made() -> None:
    # learn_options={"alhpa": ...} was a failure to learn at every re-learn point, said only in the
    # proposals' reasons (the plain GP for the whole run); a propose option a TypeError at trial n_init
    with pytest.raises(ValueError, match=r"'tiered-pc' has no option 'alhpa' \(did you mean 'alpha'\?\)"):
        Tuner(SYSTEM.space, ["cost"], learn_options={"alhpa": 0.05})
    with pytest.raises(ValueError, match=r"unknown learner 'tiered_pc'"):
        Tuner(SYSTEM.space, ["cost"], learn_options={"learner": "tiered_pc"})
    with pytest.raises(ValueError, match=r"no option 'n_candidatez' \(did you mean 'n_candidates'\?\)"):
        Tuner(SYSTEM.space, ["cost"], propose_options={"n_candidatez": 64})
    tuner = Tuner(SYSTEM.space, ["cost"], n_init=5, propose_options={"n_candidates": 64},
                  learn_options={"alpha": 0.05, "max_parents": 3, "max_depth": 2})
    for _ in range(6):
        trial = tuner.ask()
        tuner.tell(trial.id, SYSTEM.evaluate(trial.config))
    assert tuner.graph is not None and not tuner.learn_note


def test_a_non_finite_objective_fails_the_trial_saying_so_not_that_it_is_missing() -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    for value, said in ((float("nan"), "NaN"), (float("inf"), "inf")):
        stored = tuner.tell(tuner.ask().id, {"cost": value})
        assert stored.status == "failed"
        assert stored.error == f"objective 'cost' is not finite ({said})"


@pytest.mark.parametrize("value", [True, "3.5"])
def test_a_told_boolean_or_number_as_text_is_refused_as_a_log_reader_refuses_it(value: object) -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    trial = tuner.ask()
    for values in ({"cost": value}, {"cost": 1.0, "queue": value}):
        key = next(k for k, v in values.items() if v is value)
        with pytest.raises(ConfigError, match=rf"tell\(t0000\): {key}: expected a number, got {value!r}"):
            tuner.tell(trial.id, values)
    assert tuner.store.trial(trial.id).status == "running"


@pytest.mark.parametrize(("value", "said"), [(float("inf"), "is not finite (inf)"),
                                             (2 ** 70, "is out of range (beyond what 64 bits hold)")])
def test_a_told_metric_a_log_could_not_hold_fails_the_trial_naming_it_not_stored_as_null(
        value: float, said: str) -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    stored = tuner.tell(tuner.ask().id, {"cost": 1.0, "queue": value})
    assert (stored.status, stored.error) == ("failed", f"metric 'queue' {said}")


def test_a_told_objective_of_none_is_missing_not_nan() -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    stored = tuner.tell(tuner.ask().id, {"cost": None, "queue": 2.0})
    assert stored.status == "failed" and "objective 'cost'" in stored.error and "nan" not in stored.error
    numpy_told = tuner.tell(tuner.ask().id, {"cost": np.float32(2.5)})
    assert numpy_told.status == "done" and numpy_told.objectives == {"cost": 2.5}


def test_an_enqueued_configuration_is_checked_when_enqueued_and_a_misspelt_name_refused() -> None:
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    default = SYSTEM.space.default()
    with pytest.raises(ConfigError, match=r"enqueue: x0: expected a number in \[0.0, 1.0\], got 5"):
        tuner.enqueue({**default, "x0": 5})
    with pytest.raises(ConfigError, match=r"enqueue: x01: unknown key \(did you mean 'x[01]'\?\)"):
        tuner.enqueue({**default, "x01": 0.5})
    tuner.enqueue({**default, "x1": 0.25})
    trial = tuner.ask()
    assert trial.config["x1"] == 0.25 and trial.surrogate == "user"


def test_a_space_given_as_a_mapping_is_refused_pointing_at_from_dict() -> None:
    from boanon.acquisition import propose
    from boanon.targets.rocksdb import default_space

    with pytest.raises(ConfigError, match=r"Tuner: space: expected a Space, got dict: Space.from_dict"):
        Tuner(default_space(), ["cost"])
    with pytest.raises(ConfigError, match=r"propose: space: expected a Space, got dict"):
        propose(default_space(), SYSTEM.sample_table(3), ["cost"])


def test_output_bounds_that_contradict_are_refused_when_the_tuner_is_made_naming_both() -> None:
    from boanon.multiobjective import OutputConstraint

    bounds = [OutputConstraint("g0_m0", min=2.0), OutputConstraint("g0_m0", max=1.0)]
    with pytest.raises(ConfigError, match=r"^Tuner: output_constraints\[1\]: g0_m0 >= 2.0 \("
                                          r"output_constraints\[0\]\) contradicts g0_m0 <= 1.0 \("
                                          r"output_constraints\[1\]\)"):
        Tuner(SYSTEM.space, ["cost"], strategy="random", output_constraints=bounds)
    kept = Tuner(SYSTEM.space, ["cost"], strategy="random", output_constraints=[*bounds[:1], {"name": "g0_m0",
                                                                                              "max": 2.0}])
    assert kept.output_constraints == [bounds[0], OutputConstraint("g0_m0", max=2.0)]


def test_a_told_zero_dimensional_array_is_the_number_it_holds():
    # np.array(2.0) (a model's or a loss's scalar) was refused as "expected a number" since the
    # told values follow the log readers' rule; before that rule it was taken through float()
    tuner = Tuner(SYSTEM.space, ["cost"], strategy="random")
    trial = tuner.ask()
    stored = tuner.tell(trial.id, {"cost": np.array(2.0), "queue": np.float32(1.5)})
    assert stored.status == "done" and stored.objectives == {"cost": 2.0} and stored.metrics == {"queue": 1.5}
