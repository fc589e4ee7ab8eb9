"""``python -m boanon`` is the ``boanon`` command (for an environment whose scripts are not on PATH)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_python_m_boanon_runs_the_command_line_under_its_name(tmp_path: Path) -> None:
    # it failed: "No module named boanon.__main__; 'boanon' is a package and cannot be directly executed"
    result = subprocess.run([sys.executable, "-m", "boanon", "--help"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: boanon [OPTIONS] COMMAND [ARGS]...")
    assert "tune" in result.stdout and "explain" in result.stdout
