"""The ``sgd`` runner: one configuration of the parameter-server cluster, simulated and logged.

A trial directory gets three files:

* ``config.json``: the full configuration run (missing parameters filled from the defaults);
* ``run.json``: the runner options and the seed used, so the trial can be re-run exactly;
* ``workers.jsonl`` (``workers.jsonl.gz`` with ``compress``): one JSON line per (iteration,
  machine, device), written and flushed iteration by iteration so progress can be followed
  (or a run stopped) while it runs; a flushed gzip stream is readable up to the last flush.

A dataset: ``boanon generate sgd --trials 40 --seed 1 --out datasets/sgd-googlenet
--network googlenet --noise-seed 1 --compress true`` (docs/sgd.md).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from boanon.adapters.files import write_config
from boanon.adapters.sgd import LOG as WORKERS_LOG
from boanon.errors import ConfigError, InvalidOption, did_you_mean
from boanon.runners.base import Runner, TrialFailed, register_runner
from boanon.table import Value
from boanon.targets.sgd.cluster import CLUSTER, get_network
from boanon.targets.sgd.simulator import InvalidConfig, simulate

RUN_FILE = "run.json"

Progress = Callable[[int, float], "bool | None"]
"""Called after each iteration with (iteration, iteration_s); returning False stops the run."""


def default_space() -> dict[str, dict[str, Any]]:
    """The search space as the tuning YAML's ``space`` mapping.

    Defaults are BOAT's "uniform" baseline: every machine a worker with an equal share of the
    batch, GPUs taking all of their machine's share, and the first machine the only server.
    """
    space: dict[str, dict[str, Any]] = {}
    for i, machine in enumerate(CLUSTER):
        space[f"{machine.name}_worker"] = {"type": "bool", "default": True}
        space[f"{machine.name}_ps"] = {"type": "bool", "default": i == 0}
        space[f"{machine.name}_share"] = {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5}
        if machine.type.gpu:
            space[f"{machine.name}_gpu_share"] = {"type": "float", "low": 0.0, "high": 1.0,
                                                  "default": 1.0}
    return space


def default_constraints() -> list[str]:
    """What a runnable configuration needs: a worker with a non-zero share and a server."""
    return [
        " or ".join(f"({m.name}_worker and {m.name}_share > 0)" for m in CLUSTER),
        " or ".join(f"{m.name}_ps" for m in CLUSTER),
    ]


def default_config() -> dict[str, Value]:
    """The default value of every parameter of :func:`default_space`."""
    return {name: spec["default"] for name, spec in default_space().items()}


@register_runner
class SgdRunner(Runner):
    """Simulates ``iterations`` SGD iterations of ``network`` on the ten-machine cluster.

    ``noise_seed=None`` draws fresh noise per trial; an integer makes each trial's noise a
    function of the seed and the configuration, so a dataset is reproducible while different
    configurations still see different stragglers. The seed used goes to ``run.json``.

    ``pace`` runs the simulation in scaled real time: each iteration takes its simulated
    duration x ``pace`` of wall time before it is logged and reported (0: as fast as possible).
    A slow configuration then costs more time than a fast one, as on the real cluster, and an
    early-stopping rule has a running trial to cut; at 0 a trial ends before any stop reaches it.
    """

    name = "sgd"
    adapter = "sgd"
    progress_direction = "minimize"  # each iteration's time

    def __init__(self, network: str = "googlenet", iterations: int = 30, warmup: int = 5,
                 noise_seed: int | None = None, noise: float = 0.05, straggler_prob: float = 0.03,
                 compress: bool = False, pace: float = 0.0, progress: Progress | None = None):
        try:
            self.network = get_network(network)
        except ValueError as exc:
            raise InvalidOption("network", str(exc)) from None
        if not 0 <= warmup < iterations:
            raise InvalidOption("warmup", f"need 0 <= warmup < iterations, got {warmup} "
                                f"and {iterations}")
        if noise < 0:
            raise InvalidOption("noise", f"must be >= 0, got {noise}")
        if not 0 <= straggler_prob <= 1:
            raise InvalidOption("straggler_prob", f"must be in [0, 1], got {straggler_prob}")
        if not 0 <= pace < math.inf:
            raise InvalidOption("pace", f"must be a finite number >= 0, got {pace}")
        self.iterations, self.warmup, self.noise_seed = iterations, warmup, noise_seed
        self.pace = float(pace)
        self.noise, self.straggler_prob = noise, straggler_prob
        self.compress, self.progress = compress, progress

    def run(self, config: dict[str, Value], trial_dir: Path) -> bool:
        unknown = sorted(set(config) - set(default_space()))
        if unknown:
            raise ConfigError("sgd trial config", unknown[0], "not a parameter of the sgd space"
                              + did_you_mean(unknown[0], default_space()))
        full = {**default_config(), **config}
        write_config(trial_dir, full)
        seed = self._seed(full)
        (trial_dir / RUN_FILE).write_text(json.dumps(self._run_info(seed), indent=2) + "\n")
        try:
            iterations = simulate(full, self.network, iterations=self.iterations,
                                  warmup=self.warmup, seed=seed, noise=self.noise,
                                  straggler_prob=self.straggler_prob)
        except InvalidConfig as exc:
            raise TrialFailed(f"invalid configuration: {exc}") from exc
        with self._open_log(trial_dir) as log:
            for rows in iterations:
                time.sleep(rows[0]["iteration_s"] * self.pace)
                log.writelines(json.dumps(_rounded(r)) + "\n" for r in rows)
                log.flush()
                iteration = rows[0]["iteration"]
                stop = self.progress and self.progress(iteration, rows[0]["iteration_s"]) is False
                if stop and not rows[0]["warmup"]:  # a log of warm-up alone measures nothing
                    return iteration + 1 < self.iterations  # a stop at the last one ends nothing
        return False

    def _seed(self, config: dict[str, Value]) -> int:
        if self.noise_seed is None:
            return int(np.random.SeedSequence().entropy % 2**32)
        digest = zlib.crc32(json.dumps(config, sort_keys=True).encode())
        return int(np.random.SeedSequence([self.noise_seed, digest]).generate_state(1)[0])

    def _open_log(self, trial_dir: Path) -> io.TextIOBase:
        if not self.compress:
            return open(trial_dir / WORKERS_LOG, "w", encoding="utf-8")
        raw = gzip.GzipFile(trial_dir / f"{WORKERS_LOG}.gz", "wb", mtime=0)
        return io.TextIOWrapper(raw, encoding="utf-8")

    def _run_info(self, seed: int) -> dict[str, Any]:
        net = self.network
        return {
            "network": net.name, "batch_size": net.batch_size, "parameters": net.parameters,
            "gflop_per_sample": net.gflop_per_sample, "iterations": self.iterations,
            "warmup": self.warmup, "noise_seed": self.noise_seed, "seed": seed, "noise": self.noise,
            "straggler_prob": self.straggler_prob,
            "cluster": {m.name: m.type.name for m in CLUSTER},
        }


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    """Floats to six decimals (microseconds, bytes): far below the noise, and smaller logs."""
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}
