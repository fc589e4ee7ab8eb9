"""Shared fixtures: real tuning runs of the synthetic system, for the commands that look at a run."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boanon.cli import main
from boanon.learners import register_learner

ROOT = Path(__file__).resolve().parents[1]


@register_learner("graphless", "gives no graph (a ValueError), as degenerate trials do: for the tests "
                  "of a tuner whose learning fails (an unknown learner is refused when it is made)")
def _graphless(prepared, knowledge, **options):
    raise ValueError("these trials give no graph")


@pytest.fixture(scope="session")
def synthetic_run() -> Callable[..., Path]:
    """``synthetic_run(directory, budget, **yaml_changes)``: run ``boanon tune`` on
    examples/synthetic.yaml (structured, the default first, then Sobol points, then the models)
    into ``directory/run.db``; returns the store's path."""
    def run(directory: Path, budget: int, **changes) -> Path:
        data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
        data.update({"n_init": 5, "relearn_every": 3, **changes})
        config = directory / "synthetic.yaml"
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        store = directory / "run.db"
        mp = pytest.MonkeyPatch()
        mp.chdir(ROOT)  # examples.synthetic_system is imported from the repository root
        try:
            result = CliRunner().invoke(main, ["tune", str(config), "--budget", str(budget), "--store",
                                               str(store)], catch_exceptions=False)
        finally:
            mp.undo()
        assert result.exit_code == 0, result.output
        return store
    return run


@pytest.fixture(scope="session")
def descriptors_held() -> Callable[[Path], set[tuple[str, str]]]:
    """``descriptors_held(folder)``: the files under ``folder`` this process holds a descriptor on
    (/proc/self/fd), each with its descriptor."""
    def held(folder: Path) -> set[tuple[str, str]]:
        out = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:  # the listing's own descriptor, closed meanwhile
                continue
            if target.startswith(str(folder)):
                out.add((fd, Path(target).name))
        return out
    return held


@pytest.fixture(scope="session")
def processes_running() -> Callable[[str], list[int]]:
    """``processes_running(marker)``: the live processes whose command line contains ``marker``."""
    def running(marker: str) -> list[int]:
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:  # it ended while we looked
                    continue
                if marker in cmdline:
                    pids.append(int(entry.name))
        return pids
    return running


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt, as in a terminal: a process started in the background
    (``make test &``, some CI runners) inherits SIGINT ignored, and the signal then does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
