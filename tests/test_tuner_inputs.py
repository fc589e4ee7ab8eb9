"""What a library user hands the Tuner: one objective or a path where a list is expected, values
that are not numbers, configurations of their own. Each is taken as meant or refused naming it."""

from __future__ import annotations

from pathlib import Path

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
