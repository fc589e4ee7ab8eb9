"""``run_tuning``: what ``boanon tune`` does, called from Python without the command line."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from boanon.errors import ConfigError
from boanon.store import Store
from boanon.tuning import CONFIG_NOTE, AlreadyStored, TuneRequest, open_run, run_tuning

ROOT = Path(__file__).resolve().parents[1]


def _yaml(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(changes)
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the current directory


def test_run_tuning_runs_the_yaml_into_its_store_and_releases_it(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    seen = []
    run = run_tuning(TuneRequest(_yaml(tmp_path, n_init=3), budget=4, store=store, strategy="random", seed=2),
                     callback=seen.append)
    assert [t.name for t in seen] == ["t0000", "t0001", "t0002", "t0003"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the loop's handler is gone with it
    with Store(store) as s:
        assert s.counts()["done"] == 4 and s.activity()["state"] == "finished"
        assert (s.study().strategy, s.study().seed) == ("random", 2)
        assert s.note(CONFIG_NOTE) == str((tmp_path / "tune.yaml").resolve())
    assert run.tuner.n_trials() == 4
    with open_run(TuneRequest(_yaml(tmp_path, n_init=3), budget=6, store=store, resume=True,
                                strategy="random", seed=2)) as resumed:
        resumed.loop()  # the lock of the first run was released: the store can be written again
        assert resumed.tuner.n_trials() == 6
    with pytest.raises(AlreadyStored, match="a run is already stored here"):
        open_run(TuneRequest(_yaml(tmp_path), budget=4, store=store))


def test_a_run_that_cannot_start_leaves_no_store_and_no_lock_held(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    with pytest.raises(ConfigError, match="strategy: expected one of"):
        open_run(TuneRequest(_yaml(tmp_path, strategy="bayes"), budget=4, store=store))
    # the Tuner refuses it after the store was created: the store goes again
    with pytest.raises(ValueError, match="feasible configurations"):
        open_run(TuneRequest(_yaml(tmp_path, constraints=["x0 > 2"]), budget=4, store=store))
    assert not store.exists()
    with open_run(TuneRequest(_yaml(tmp_path), budget=4, store=store)) as run:  # nothing holds it
        assert run.tuner.n_trials() == 0
