"""One writer per store, with real ``boanon tune`` processes: a second writer (fresh or
``--resume``) is refused naming the live one, readers are never blocked, and a run that loses a
race to start never deletes the winner's store."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from boanon.errors import StoreError
from boanon.store import Store
from boanon.store_lock import lock_path

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _yaml(path: Path, **changes) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return path


def _boanon(*args: str) -> subprocess.Popen:
    return subprocess.Popen([BOANON, *args], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _counts(store: Path) -> dict[str, int]:
    try:
        with Store(store, read_only=True, follow=True) as s:
            return s.counts()
    except StoreError:  # not there yet, or created and not yet initialised
        return {}


def test_second_writer_is_refused_while_readers_read(tmp_path: Path) -> None:
    """A run whose first trial waits for a gate file: while it is live, a second fresh start and
    a ``--resume`` are refused naming it, ``status`` reads it; then the gate opens and the run
    ends undisturbed."""
    gate = tmp_path / "gate"
    gated = tmp_path / "gated_system.py"
    gated.write_text("import time\nfrom pathlib import Path\n\n"
                     "from examples.synthetic_system import evaluate as measure\n\n\n"
                     "def evaluate(config, gate, **options):\n"
                     "    while not Path(gate).exists():\n        time.sleep(0.05)\n"
                     "    return measure(config, **options)\n")
    budget = 3
    config = _yaml(tmp_path / "tune.yaml", n_init=budget, runner={
        "callable": f"{gated}:evaluate", "options": {"seed": 0, "gate": str(gate)}})
    store = tmp_path / "run.db"
    live = _boanon("tune", str(config), "--budget", str(budget), "--store", str(store))
    deadline = time.monotonic() + 120
    while not _counts(store).get("running") and live.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live.poll() is None, live.communicate()[0]
    fresh = _boanon("tune", str(config), "--budget", str(budget), "--store", str(store))
    resume = _boanon("tune", str(config), "--budget", str(budget), "--store", str(store), "--resume")
    status = _boanon("status", str(store))
    try:
        outputs = {name: (p.wait(60), p.communicate()[0])
                   for name, p in (("fresh", fresh), ("resume", resume), ("status", status))}
    except subprocess.TimeoutExpired as exc:  # a second writer that was let in waits on the gate
        for p in (fresh, resume, status, live):
            p.kill()
        pytest.fail(f"not refused: {exc.cmd} went on running")
    gate.touch()
    for name in ("fresh", "resume"):
        code, out = outputs[name]
        assert code == 1 and "Traceback" not in out, out
        assert f"{store}: store: in use by another run (pid {live.pid} on host " in out, out
        assert f"boanon tune {config}" in out, out  # the live one's command line
    code, out = outputs["status"]
    assert code == 0 and "1 running" in out, out  # a reader is never blocked
    out = live.communicate(timeout=120)[0]
    assert live.returncode == 0, out
    with Store(store, read_only=True) as s:  # the live run went on undisturbed
        counts = s.counts()
        assert counts["done"] == budget and counts["failed"] == 0, counts
    assert not lock_path(store).exists()  # a run that ended removes its lock file


def test_racing_fresh_starts_leave_the_winners_store(tmp_path: Path) -> None:
    """Two fresh starts of different runs on one store: the first checks that the store is new,
    then builds its runner, whose set-up waits (on a gate file) until the second has started and
    ended. The second must not take a store the first is making, and the first must not delete
    a store the second made: one wins, its store stays, the other is refused cleanly."""
    gate, imports = tmp_path / "gate", tmp_path / "slow_system.imports"
    slow_module = tmp_path / "slow_system.py"
    slow_module.write_text(
        "import time\nfrom pathlib import Path\n\n"
        f"imports, gate = Path({str(imports)!r}), Path({str(gate)!r})\n"
        "with imports.open('a') as log:\n    log.write('imported\\n')\n"
        "while len(imports.read_text().split()) > 1 and not gate.exists():  # building the runner\n"
        "    time.sleep(0.05)\n"
        "from examples.synthetic_system import evaluate  # noqa: E402,F401\n")
    budget = 4
    slow = _yaml(tmp_path / "slow.yaml", n_init=budget, seed=1, runner={
        "callable": f"{slow_module}:evaluate", "options": {"seed": 0}})
    quick = _yaml(tmp_path / "quick.yaml", n_init=budget, seed=2, runner={
        "callable": "examples.synthetic_system:evaluate", "options": {"seed": 0}})
    store = tmp_path / "run.db"
    first = _boanon("tune", str(slow), "--budget", str(budget), "--store", str(store))
    deadline = time.monotonic() + 120
    while len(imports.read_text().split() if imports.exists() else []) < 2 and first.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.05)  # its config is loaded and the store checked: it is building its runner
    second = _boanon("tune", str(quick), "--budget", str(budget), "--store", str(store))
    ended = {2: (second.wait(120), second.communicate()[0])}
    gate.touch()
    ended[1] = (first.wait(120), first.communicate()[0])
    winners = [seed for seed, (code, _) in ended.items() if code == 0]
    assert len(winners) == 1, ended
    for seed, (_, out) in ended.items():
        assert "Traceback" not in out, out
        if seed not in winners:
            assert "in use by another run" in out or "a run is already stored here" in out, out
    assert store.is_file(), f"the winner's store was deleted; its output:\n{ended[winners[0]][1]}"
    with Store(store, read_only=True) as s:
        assert s.study().seed == winners[0]
        assert s.counts()["done"] == budget


def test_a_run_over_whose_dashboard_stays_up_lets_another_resume_the_store(tmp_path: Path) -> None:
    """``tune --dashboard --dashboard-keep`` serves the page after the run: a view of the store,
    no writer. A ``--resume`` then goes on at once (it was refused as "in use by another run"
    until the page went down)."""
    config = _yaml(tmp_path / "tune.yaml", n_init=2, strategy="random")
    store = tmp_path / "run.db"
    served = _boanon("tune", str(config), "--budget", "2", "--store", str(store), "--dashboard",
                     "--dashboard-port", "0", "--dashboard-keep", "120")
    try:
        assert served.stdout is not None
        lines = []
        for line in served.stdout:
            lines.append(line)
            if line.startswith("the run is over"):
                break
        assert lines and lines[-1].startswith("the run is over"), "".join(lines)
        resumed = subprocess.run([BOANON, "tune", str(config), "--budget", "3", "--store", str(store),
                                  "--resume"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                                 timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert _counts(store)["done"] == 3
    finally:
        served.terminate()
        served.wait(timeout=60)
