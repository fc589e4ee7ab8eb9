"""Fault injection: a Ctrl-C (a real SIGINT) that lands between storing a trial and the loop's
note of it (``ask``), or between the loop forgetting a trial and storing its end (``tell``),
leaves no trial ``running`` in the store. Such a trial was read by the next ``--resume`` as one a
dead run left running (a second time, its configuration was failed for good), and ``status``
counted it running after a clean stop."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from boanon.runners import make_runner
from boanon.store import Store
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner


class SignalledStore(Store):
    """A store that sends this process a real SIGINT inside one of its writes (``when``: after
    a trial's start is committed, or before a trial's end is written), once."""

    def __init__(self, path: Path, when: str):
        super().__init__(path)
        self.when, self.sent = when, False

    def _send(self) -> None:
        if not self.sent:
            self.sent = True
            signal.raise_signal(signal.SIGINT)

    def start_trial(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        stored = super().start_trial(*args, **kwargs)
        if self.when == "start" and stored.id == 2:
            self._send()
        return stored

    def finish_trial(self, trial_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.when == "finish" and trial_id == 2:
            self._send()
        return super().finish_trial(trial_id, *args, **kwargs)


@pytest.mark.parametrize("when", ["start", "finish"])
def test_a_ctrl_c_between_a_store_write_and_the_loops_note_leaves_no_trial_running(
        tmp_path: Path, when: str, ctrl_c_raises: None) -> None:
    system = SyntheticSystem(seed=0)
    store = SignalledStore(tmp_path / "run.db", when)
    tuner = Tuner(system.space, [{"name": "cost", "direction": "minimize"}], strategy="random",
                  seed=0, store=store)
    runner = make_runner("callable", function=system.evaluate, objectives=["cost"])
    with pytest.raises(KeyboardInterrupt):
        tuner.optimize(runner, budget=5, trials_dir=tmp_path / "trials")
    assert store.sent
    states = {t.name: t.status for t in store.trials()}
    assert "running" not in states.values(), states
    assert states["t0002"] == ("interrupted" if when == "start" else "done"), states
