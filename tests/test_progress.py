"""``boanon tune``'s progress: a bar with elapsed time, ETA and the best on a terminal, and one
plain line per trial with the same figures when the output is piped."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


def _config(tmp_path: Path) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data["runner"]["options"]["delay"] = 0.2  # trials take time, so the ETA is a figure
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump({**data, "n_init": 4}))
    return path


def test_piped_output_has_one_line_per_trial_with_elapsed_eta_and_best(tmp_path):
    args = [BOANON, "tune", str(_config(tmp_path)), "--budget", "4", "--store", str(tmp_path / "r.db")]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("t000")]
    assert len(lines) == 4
    for k, line in enumerate(lines, start=1):
        assert re.search(rf"best cost=[\d.]+  \({k}/4 trials, 00:0\d elapsed, ETA 00:0\d\)  \[init\]$",
                         line), line
    assert "ETA 00:00)" in lines[-1]
    assert "\r" not in done.stdout + done.stderr and "tuning:" not in done.stderr  # no bar in a log


def test_a_terminal_gets_a_bar_with_the_best_so_far(tmp_path):
    args = [BOANON, "tune", str(_config(tmp_path)), "--budget", "3", "--store", str(tmp_path / "r.db")]
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # a 160-column terminal
    proc = subprocess.Popen(args, cwd=ROOT, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal's other end closed: the run is over
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    screen = b"".join(chunks).decode(errors="replace")
    assert re.search(r"tuning: 3/3 \|.*\| 00:0\d elapsed, ETA 00:00, best cost=11\.8272", screen), screen
    assert re.search(r"t0002  cost=[\d.]+  best cost=11\.8272  \[init\]\r?\n", screen)  # no figures


def test_the_eta_counts_proposals_at_their_measured_pace():
    """Fast initial-design trials promised seconds where each proposal then took a minute: the
    ETA is a lower bound until a proposed trial has been timed, then uses the proposed ones' pace."""
    import io

    from boanon.cli.progress import Progress

    progress = Progress(8, 0, err=io.StringIO(), out=io.StringIO(), n_init=3)
    for _ in range(3):  # the initial design: a second each
        progress.last -= 1.0
        progress.count(True, proposed=False)
    assert progress.eta.startswith(">")  # five proposals to go, none timed yet
    progress.last -= 60.0  # the first proposal and its trial: a minute
    progress.count(True, proposed=True)
    assert progress.eta == "04:00"  # four more at a minute each, not four more seconds


def test_a_lower_bound_under_a_second_is_no_eta():
    """Initial-design trials of a few milliseconds printed "ETA >00:00", which says nothing."""
    import io

    from boanon.cli.progress import Progress

    progress = Progress(8, 0, err=io.StringIO(), out=io.StringIO(), n_init=3)
    for _ in range(3):
        progress.last -= 0.01
        progress.count(True, proposed=False)
    assert progress.eta == "-"


def test_a_line_s_best_is_among_the_trials_shown_so_far(tmp_path, capsys):
    # workers store the trials that end together, then show each: the first one's line showed
    # the best of the second, printed on the next line
    from types import SimpleNamespace

    from boanon.cli.tune import _loop
    from boanon.space import Float, Space
    from boanon.tuner import Tuner

    tuner = Tuner(Space([Float("x", 0.0, 1.0)]), ["cost"], n_init=2)
    asked = [tuner.ask(), tuner.ask()]

    def loop(report):  # as tune_parallel does with a batch: all stored first, then shown
        stored = [tuner.tell(t.id, {"cost": cost}) for t, cost in zip(asked, [5.0, 1.0], strict=True)]
        for trial in stored:
            report(trial)

    _loop(SimpleNamespace(tuner=tuner, store_file=tmp_path / "r.db", budget=2, loop=loop))
    lines = capsys.readouterr().out.splitlines()
    assert [re.search(r"best cost=(\S+)", ln)[1] for ln in lines] == ["5", "1"], lines

