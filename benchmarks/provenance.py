"""What a benchmark result was measured with: the commit, the Python and the library versions."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def provenance(packages: tuple[str, ...] = ("boanon", "numpy", "scipy", "scikit-learn")) -> dict[str, Any]:
    """The commit (with ``+dirty`` for uncommitted changes), Python and ``packages``' versions."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    versions = {}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    dirty = "+dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    return {"commit": git("rev-parse", "--short", "HEAD") + dirty, "python": platform.python_version(),
            "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs", "versions": versions}
