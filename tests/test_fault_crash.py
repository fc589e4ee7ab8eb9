"""Fault injection: a configuration whose callable segfaults the sequential loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")
# The first configuration other than the default crashes the process in native code (SIGSEGV),
# every time it is run; the others are evaluated as usual.
SYSTEM = '''
import ctypes, json, pathlib
from examples.synthetic_system import evaluate as healthy

def evaluate(config, poison):
    path = pathlib.Path(poison)
    if config["x0"] != 0.5 and not path.exists():
        path.write_text(json.dumps(config))
    if path.exists() and json.loads(path.read_text()) == config:
        ctypes.string_at(0)  # a read of address 0: SIGSEGV
    return healthy(config)
'''


def test_a_configuration_that_kills_the_loop_is_failed_after_one_rerun(tmp_path: Path) -> None:
    (tmp_path / "crashing.py").write_text(SYSTEM)
    config = tmp_path / "tune.yaml"
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=4, runner={"callable": f"{tmp_path / 'crashing.py'}:evaluate",
                                  "options": {"poison": str(tmp_path / "poison.json")}})
    config.write_text(yaml.safe_dump(data))
    args = [BOANON, "tune", str(config), "--budget", "4", "--store", str(tmp_path / "run.db")]

    def tune(*more: str) -> subprocess.CompletedProcess:
        return subprocess.run([*args, *more], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})

    first = tune()
    assert first.returncode == -11, first.stderr  # the loop itself died: t0001 crashed it
    again = tune("--resume")
    assert again.returncode == -11, again.stderr  # a SIGKILL looks the same: it gets one re-run
    assert "t0001: running when the run died: its configuration runs again" in again.stdout
    last = tune("--resume")
    assert last.returncode == 0, last.stderr
    assert "t0002: running when the run died: FAILED (the run died twice while this " \
           "configuration ran (as t0001 and t0002)" in last.stdout
    with Store(tmp_path / "run.db") as store:
        trials = store.trials()
    assert [t.status for t in trials] == ["done", "interrupted", "failed", "done", "done"]
    assert trials[2].retry_of == 1 and trials[1].interrupted and not trials[2].interrupted
