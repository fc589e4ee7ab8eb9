"""A full disk and a read-only file system under a real ``boanon tune``: one clear line, no
traceback, nothing stored lost, and ``--resume`` goes on once there is space.

The file systems are real: a tiny tmpfs mounted in a private mount namespace of the test's own
(``unshare --user --map-root-user --mount``, which needs no privilege where the kernel allows
user namespaces). Where it does not, the tests are skipped saying so.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


def _in_own_mounts(script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the shell ``script`` in a private mount namespace (its mounts vanish with it)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs util-linux's unshare to mount a small file system without privileges")
    command = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c"]
    probe = subprocess.run([*command, "mount -t tmpfs -o size=64k none /tmp"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("this kernel does not let an unprivileged process mount a file system in a "
                    f"user namespace: {probe.stderr.strip()}")
    return subprocess.run([*command, "set -u\n" + script], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _yaml(path: Path, budget: int) -> Path:
    """The synthetic system, every trial from the initial design (quick: no model fits)."""
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=budget, budget=budget)
    path.write_text(yaml.safe_dump(data))
    return path


def test_disk_full_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    budget = 8
    config, disk, out = _yaml(tmp_path / "tune.yaml", budget), tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    store = disk / "run.db"
    tune = shlex.join([BOANON, "tune", str(config), "--store", str(store), "--trials-dir",
                       str(tmp_path / "trials")])
    export = shlex.join([BOANON, "export", str(store), "-o"])
    result = _in_own_mounts(f"""
mount -t tmpfs -o size=200k none {disk}
{tune} > {out}/full.txt 2>&1; echo $? > {out}/full.rc
{export} {out}/before.csv
mount -o remount,size=16m {disk}
{tune} --resume > {out}/resume.txt 2>&1; echo $? > {out}/resume.rc
{export} {out}/after.csv
""")
    assert result.returncode == 0, result.stderr
    full = (out / "full.txt").read_text()
    assert (out / "full.rc").read_text().strip() == "1", full
    assert f"{store}: store: disk full" in full and "Traceback" not in full, full
    assert "--resume" in full, full  # how to go on
    resumed = (out / "resume.txt").read_text()
    assert (out / "resume.rc").read_text().strip() == "0", resumed
    before, after = pd.read_csv(out / "before.csv"), pd.read_csv(out / "after.csv")
    assert 1 <= len(before) < budget, full
    assert len(after) == budget
    kept = after.set_index("trial").loc[before["trial"]].reset_index()
    pd.testing.assert_frame_equal(kept[before.columns], before)  # every finished trial, unchanged


def test_read_only_file_system_is_one_clear_error(tmp_path: Path) -> None:
    config, disk = _yaml(tmp_path / "tune.yaml", 2), tmp_path / "disk"
    disk.mkdir()
    store = disk / "run.db"
    tune = shlex.join([BOANON, "tune", str(config), "--store", str(store)])
    result = _in_own_mounts(f"mount -t tmpfs -o ro,size=64k none {disk}\n{tune}")
    assert result.returncode == 2, result.stdout + result.stderr  # refused as the command line is read
    assert result.stderr.endswith(f"{store}: directory {disk} is not writable\n"), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
