"""The ``zigzag`` runner: one accelerator design -> ZigZag's cost estimate in a trial directory.

A configuration is a point of :func:`default_space`. The runner writes the generated
``accelerator.yaml`` and ``mapping.yaml`` (ZigZag's inputs) and ``design.json`` (the parameters,
derived quantities and area breakdown ZigZag does not report), then runs ZigZag in a subprocess
(:mod:`boanon.targets.zigzag.worker`) with the trial directory as its dump folder.
The ``zigzag`` adapter reads the result back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from boanon.errors import ConfigError, InvalidOption, did_you_mean, is_whole
from boanon.runners.base import Runner, TrialFailed, register_runner
from boanon.table import Value
from boanon.targets.zigzag import hardware
from boanon.targets.zigzag.layout import (
    ACCELERATOR_FILE,
    DESIGN_FILE,
    FAILURE_PREFIX,
    FAILURE_STATUS,
    LOG_FILE,
    MAPPING_FILE,
)
from boanon.targets.zigzag.workload import DEFAULT_LAYERS, MODELS, conv_slice


def default_space() -> dict[str, dict[str, Any]]:
    """The design space as the tuning YAML's ``space`` mapping.

    Sizes are bytes (register files, per PE) or KiB (global buffer); bandwidths are bits per
    cycle per port (the partial-sum register file gets twice ``rf_bandwidth``). The defaults are
    a 16x16 weight-stationary array with a 256 KiB buffer, close to an edge inference chip.
    """
    return {
        "pe_rows": {"type": "int", "low": 4, "high": 64, "log": True, "default": 16},
        "pe_cols": {"type": "int", "low": 4, "high": 64, "log": True, "default": 16},
        "rf_weight_bytes": {"type": "int", "low": 2, "high": 256, "log": True, "default": 32},
        "rf_input_bytes": {"type": "int", "low": 2, "high": 256, "log": True, "default": 16},
        "rf_output_bytes": {"type": "int", "low": 2, "high": 256, "log": True, "default": 16},
        "rf_bandwidth": {"type": "int", "low": 8, "high": 64, "log": True, "default": 16},
        "gb_kib": {"type": "int", "low": 16, "high": 4096, "log": True, "default": 256},
        "gb_bandwidth": {"type": "int", "low": 64, "high": 2048, "log": True, "default": 512},
        "dram_bandwidth": {"type": "int", "low": 16, "high": 512, "log": True, "default": 64},
        "dataflow": {"type": "categorical", "choices": list(hardware.DATAFLOWS),
                     "default": "weight_stationary"},
    }


def _defaults() -> dict[str, Value]:
    return {name: spec["default"] for name, spec in default_space().items()}


def _layers(model: str, layers: Sequence[int] | None) -> list[int]:
    """The Conv indices of ``layers`` (None: the model's default slice), each a whole number
    among the model's Conv layers, checked here, not in every trial. ``int()`` of each made
    ``[a]`` a bare "invalid literal for int()" filed under ``runner``, and ``[1.5]`` layer 1."""
    chosen = list(DEFAULT_LAYERS[model] if layers is None else layers)
    for i, value in enumerate(chosen):
        if not is_whole(value):
            raise InvalidOption(f"layers[{i}]", f"expected a Conv layer's index (an integer), got "
                                f"{value!r} ({type(value).__name__})")
    indices = [int(i) for i in chosen]
    try:
        conv_slice(model, indices)
    except ValueError as exc:
        raise InvalidOption("layers", str(exc)) from None
    return indices


@register_runner
class ZigZagRunner(Runner):
    """Evaluates accelerator designs with ZigZag on a slice of a shipped ONNX model.

    Options (the YAML ``runner.options``): ``model`` (resnet18, alexnet, mobilenetv2),
    ``layers`` (Conv indices; default :data:`~boanon.targets.zigzag.workload.DEFAULT_LAYERS`),
    ``opt`` (what ZigZag's mapper minimises: EDP, energy or latency), ``lpf_limit`` (ZigZag's
    temporal-mapping search breadth), ``timeout`` (s), and the cost model's ``mac_energy_pj``,
    ``mac_area_um2`` and ``dram_pj_per_bit`` (see :class:`~hardware.CostModel`).
    """

    name = "zigzag"
    adapter = "zigzag"

    def __init__(self, model: str = "resnet18", layers: Sequence[int] | None = None,
                 opt: str = "EDP", lpf_limit: int = 4, timeout: float = 600.0,
                 mac_energy_pj: float = hardware.CostModel.mac_energy_pj,
                 mac_area_um2: float = hardware.CostModel.mac_area_um2,
                 dram_pj_per_bit: float = hardware.CostModel.dram_pj_per_bit):
        if model not in MODELS:
            raise InvalidOption("model", f"expected one of {list(MODELS)}")
        if opt not in ("EDP", "energy", "latency"):
            raise InvalidOption("opt", "expected EDP, energy or latency")
        self.model = model
        self.layers = _layers(model, layers)
        self.opt = opt
        self.lpf_limit = int(lpf_limit)
        self.timeout = float(timeout)
        self.costs = hardware.CostModel(float(mac_energy_pj), float(mac_area_um2),
                                        float(dram_pj_per_bit))

    def design(self, config: Mapping[str, Value]) -> dict[str, Value]:
        """The full design: ``config`` over the space's defaults, as plain ints and strings.

        Ranges are not checked here (a tuning YAML may widen them; ZigZag rejects what it cannot
        build); unknown names and non-integral sizes are a :class:`ConfigError`.
        """
        space = default_space()
        design = _defaults()
        for name, value in config.items():
            if name not in space:
                raise ConfigError("configuration", name, f"not a zigzag design parameter"
                                  f"{did_you_mean(name, space)}; its parameters: {', '.join(space)}")
            if space[name]["type"] == "categorical":
                design[name] = str(value)
            elif isinstance(value, bool) or float(value) != int(float(value)):
                raise ConfigError("configuration", name, f"expected an integer, got {value!r}")
            else:
                design[name] = int(float(value))
        return design

    def run(self, config: dict[str, Value], trial_dir: Path) -> None:
        trial_dir = Path(trial_dir)
        design = self.design(config)
        try:
            accel = hardware.accelerator(design, self.costs)
            mapping = hardware.mapping(design)
        except ValueError as exc:
            raise TrialFailed(f"invalid design: {exc}") from None
        for name, doc in ((ACCELERATOR_FILE, accel), (MAPPING_FILE, mapping)):
            # memory order matters to ZigZag (innermost first): never sort the keys
            (trial_dir / name).write_text(yaml.safe_dump(doc, sort_keys=False))
        summary = {
            "params": design,
            "derived": hardware.design_summary(design, accel),
            "workload": {"model": self.model, "layers": self.layers, "opt": self.opt,
                         "lpf_limit": self.lpf_limit},
            "cost_model": asdict(self.costs),
        }
        (trial_dir / DESIGN_FILE).write_text(json.dumps(summary, indent=2) + "\n")
        self._evaluate(trial_dir)

    def _evaluate(self, trial_dir: Path) -> None:
        command = [sys.executable, "-m", "boanon.targets.zigzag.worker", str(trial_dir),
                   "--model", self.model, "--layers", ",".join(map(str, self.layers)),
                   "--opt", self.opt, "--lpf-limit", str(self.lpf_limit)]
        log = trial_dir / LOG_FILE
        with log.open("w") as out:
            try:
                proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT,
                                      timeout=self.timeout, check=False)
            except subprocess.TimeoutExpired:
                raise TrialFailed(f"ZigZag timed out after {self.timeout:g} s") from None
        if proc.returncode != 0:
            raise TrialFailed(_failure_reason(log, proc.returncode))


def _failure_reason(log: Path, returncode: int) -> str:
    """The worker's one-line failure message, or the log's last line for a crash."""
    lines = log.read_text(errors="replace").splitlines()
    for line in reversed(lines):
        if line.startswith(FAILURE_PREFIX):
            return line[len(FAILURE_PREFIX):]
    tail = lines[-1] if lines else "no output"
    kind = "failed" if returncode == FAILURE_STATUS else f"exited with status {returncode}"
    return f"ZigZag {kind}: {tail}"
