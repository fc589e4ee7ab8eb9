"""Generate a dataset of ``sgd`` trials with independently randomised configurations."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from boanon.table import Value
from boanon.targets.sgd.cluster import get_network
from boanon.targets.sgd.runner import WORKERS_LOG, SgdRunner, default_space
from boanon.targets.sgd.simulator import InvalidConfig, plan

MAX_DRAWS = 1000


def sample_config(space: dict[str, dict[str, Any]], rng: np.random.Generator) -> dict[str, Value]:
    """One configuration drawn uniformly from a bool/float ``space`` mapping."""
    config: dict[str, Value] = {}
    for name, spec in space.items():
        if spec["type"] == "bool":
            config[name] = bool(rng.random() < 0.5)
        elif spec["type"] == "float":
            config[name] = round(float(rng.uniform(spec["low"], spec["high"])), 4)
        else:
            raise ValueError(f"{name}: cannot sample a parameter of type {spec['type']!r}")
    return config


def sample_valid_config(network: str, rng: np.random.Generator) -> dict[str, Value]:
    """Draw until the cluster can run the configuration (a worker, a server, some work)."""
    space = default_space()
    for _ in range(MAX_DRAWS):
        config = sample_config(space, rng)
        try:
            plan(config, get_network(network))
        except InvalidConfig:
            continue
        return config
    raise RuntimeError(f"no runnable configuration in {MAX_DRAWS} draws")


def generate(out: Path, trials: int, seed: int, **options: Any) -> list[Path]:
    """Run ``trials`` random configurations into ``out/trial-NNN`` (logs gzipped).

    ``options`` are the runner's (network, iterations, warmup, noise, straggler_prob); each
    trial gets its own noise seed drawn from ``seed``, so the dataset is reproducible.
    """
    rng = np.random.default_rng(seed)
    network = options.get("network", "googlenet")
    out.mkdir(parents=True, exist_ok=True)
    dirs = []
    for i in range(trials):
        config = sample_valid_config(network, rng)
        runner = SgdRunner(seed=int(rng.integers(2**31)), **options)
        trial_dir = out / f"trial-{i:03d}"
        if trial_dir.exists():
            shutil.rmtree(trial_dir)
        trial_dir.mkdir()
        runner.run(config, trial_dir)
        _gzip(trial_dir / WORKERS_LOG)
        dirs.append(trial_dir)
    return dirs


def _gzip(path: Path) -> None:
    """Compress ``path`` into ``path.gz`` reproducibly (no timestamp) and remove it."""
    with open(path, "rb") as src, gzip.GzipFile(path.with_name(path.name + ".gz"), "wb",
                                                mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()
