"""``boanon status``'s text against the store it summarises."""

from __future__ import annotations

from pathlib import Path

from boanon.cli.status import summary
from boanon.results import origin
from boanon.runners.base import TrialFailed
from boanon.runners.function import CallableRunner
from boanon.space import Float, Space
from boanon.tuner import Tuner


def test_status_lists_as_many_failures_as_its_header_says(tmp_path: Path) -> None:
    """With 6 failed trials and room for 10, all 6 are listed (a negative slice start listed
    the last 2 and said "last 6 shown")."""
    calls = []

    def system(config: dict) -> dict:
        calls.append(config)
        if len(calls) <= 6:
            raise TrialFailed(f"crash {len(calls)}")
        return {"cost": config["x"]}

    tuner = Tuner(Space([Float("x", 0.0, 1.0)]), ["cost"], store=tmp_path / "run.db", n_init=2, seed=0,
                  strategy="random")
    tuner.optimize(CallableRunner(system), 8)
    text = summary(tuner.store, n_failures=10)
    listed = [line for line in text.splitlines() if ": crash " in line]
    assert "failures (6, last 6 shown):" in text and len(listed) == 6
    assert len([line for line in summary(tuner.store, n_failures=4).splitlines() if ": crash " in line]) == 4
    tuner.store.close()


def test_status_says_where_the_trials_came_from_not_that_init_is_a_surrogate(tmp_path: Path) -> None:
    """The design's trials were listed as "surrogates: init 3", and the best "in t0001 [init]"."""
    tuner = Tuner(Space([Float("x", 0.0, 1.0)]), ["cost"], store=tmp_path / "run.db", n_init=3, seed=0,
                  strategy="random")
    tuner.optimize(CallableRunner(lambda config: {"cost": abs(config["x"] - 0.5)}), 5)
    text = summary(tuner.store)
    assert "origins:    3 from the initial design, 2 drawn at random" in text
    best = tuner.best()
    assert f"in {best.name} ({origin(best.surrogate)})" in text
    assert "surrogates:" not in text and "[init]" not in text
    tuner.store.close()


def test_status_gives_the_origins_of_every_trial_however_it_ended(tmp_path: Path) -> None:
    """It counted only the done trials, unsaid ("origins:    " with nothing after it when all failed)."""
    def system(config: dict) -> dict:
        raise TrialFailed("crash")

    tuner = Tuner(Space([Float("x", 0.0, 1.0)]), ["cost"], store=tmp_path / "run.db", n_init=2, seed=0,
                  strategy="random")
    tuner.optimize(CallableRunner(system), 2)
    text = summary(tuner.store)
    assert "2: 0 done, 0 stopped early, 2 failed" in text and "failures (2, last 2 shown):" in text
    assert "origins:    2 from the initial design\n" in text
    tuner.store.close()


def test_status_gives_the_hypervolume_the_plot_and_the_dashboard_give(tmp_path: Path) -> None:
    """On one two-objective run status said 2.46 (a point inferred from the front) where the page
    and the figure said 37.4 (the point fixed from the run's start): it now gives theirs."""
    import re

    from boanon.report import hypervolume_history, read_run
    from boanon.store import Store
    from boanon.synthetic import SyntheticSystem

    system = SyntheticSystem(n_params=4, n_groups=2, n_objectives=2, seed=2)
    tuner = Tuner(system.space, ["cost", "cost2"], strategy="random", n_init=6, seed=0,
                  store=tmp_path / "mo.db")
    tuner.optimize(CallableRunner(system.evaluate), 6, trials_dir=tmp_path / "mo.trials")
    with Store(tmp_path / "mo.db") as store:
        views = hypervolume_history(read_run(store))
        said = re.search(r"hypervolume: (\S+) \(reference point (.*?):", summary(store))
    assert said and float(said.group(1)) == float(f"{views['hypervolume'].iloc[-1]:.6g}") > 0
    assert said.group(2) == ", ".join(f"{k}={v:.4g}" for k, v in views.attrs["reference_point"].items())
