"""Fault injection on trial processes: a SIGKILLed loop leaves no process behind whatever its
trials are doing (even still starting up), a trial process does not re-import the CLI, and a
trial's timeout counts its own work, not its process's start-up. Real ``boanon tune`` runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


def tagged(tag: str) -> list[int]:
    """Live processes whose environment holds ``tag``: every descendant of a process started
    with it, however it was re-parented (a killed loop's orphans go to init)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if tag.encode() not in (entry / "environ").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def write_system(tmp_path: Path, import_s: float, run_s: float) -> Path:
    """A callable system whose module takes ``import_s`` to import (heavy imports) and whose
    function runs ``run_s``; and a tuning YAML for it."""
    (tmp_path / "slow_system.py").write_text(
        f"import time\ntime.sleep({import_s})\n\n"
        f"def evaluate(config):\n    time.sleep({run_s})\n    return {{'cost': config['x']}}\n")
    config = tmp_path / "tune.yaml"
    config.write_text("space: {x: {type: float, low: 0, high: 1, default: 0.5}}\n"
                      "objectives: [{name: cost, direction: minimize}]\n"
                      f"runner: {{callable: '{tmp_path / 'slow_system.py'}:evaluate'}}\n"
                      "n_init: 4\nstrategy: random\n")
    return config


def test_sigkill_of_the_loop_leaves_no_process_even_while_trials_start(tmp_path: Path) -> None:
    """Killed while its two trial processes import the system (4 s): before the fix the fork
    server, the resource tracker and both trial processes ran on until their imports ended."""
    config = write_system(tmp_path, import_s=4, run_s=60)
    tag = f"BOANON_TEST_TAG={uuid.uuid4().hex}"
    env = {**os.environ, tag.split("=")[0]: tag.split("=")[1]}
    loop = subprocess.Popen([BOANON, "tune", str(config), "--budget", "4", "--workers", "2", "--store",
                             str(tmp_path / "run.db")], cwd=tmp_path, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        # the loop, the fork server, the resource tracker and two trial processes
        while len(tagged(tag)) < 5:
            assert loop.poll() is None and time.monotonic() < deadline, "trials never started"
            time.sleep(0.05)
        time.sleep(0.5)  # the trial processes are importing the system
    finally:
        loop.kill()
        loop.wait()
    deadline = time.monotonic() + 3.0
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = tagged(tag)
    described = [(p, Path(f"/proc/{p}/cmdline").read_bytes()[:90]) for p in left]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running 3 s after the loop was killed: {described}"


def test_a_trial_process_does_not_import_the_cli_again(tmp_path: Path) -> None:
    """``-X importtime`` lists every import of every process: ``boanon.cli`` is imported by the
    loop and once by the fork server, never by a trial (it was once per trial)."""
    config = write_system(tmp_path, import_s=0, run_s=0)
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    run = subprocess.run([BOANON, "tune", str(config), "--budget", "4", "--workers", "2", "--store",
                          str(tmp_path / "run.db")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    imports = [line for line in run.stderr.splitlines() if line.rstrip().endswith("| boanon.cli")]
    assert len(imports) <= 2, f"boanon.cli imported {len(imports)} times in a run of 4 trials"


def test_the_trial_timeout_counts_the_trials_own_work_not_its_start_up(tmp_path: Path) -> None:
    """Each trial imports its system for 3 s (start-up) and works 0.2 s: a 2 s timeout holds."""
    config = write_system(tmp_path, import_s=3, run_s=0.2)
    run = subprocess.run([BOANON, "tune", str(config), "--budget", "2", "--workers", "1",
                          "--trial-timeout", "2", "--store", str(tmp_path / "run.db")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "timed out" not in run.stdout + run.stderr
    from boanon.store import Store

    with Store(tmp_path / "run.db", read_only=True) as store:
        assert store.counts()["done"] == 2
