"""The ``zigzag`` adapter: a ZigZag dump folder (plus the runner's ``design.json``) -> one trial row.

Files read (each may be gzipped):

* ``overall_simple.json`` (ZigZag's ``SimpleSaveStage``): total energy (pJ) and latency (cycles)
  over the workload -> objectives ``energy``, ``latency`` and ``edp`` (their product);
* ``<layer>_complete.json`` (``CompleteSaveStage``), one per layer, summed over layers:
  ``energy_mac``, ``energy_memory``; per memory and layer operand (W, I, O)
  ``energy_<mem>_<op>``, ``reads_<mem>_<op>``, ``writes_<mem>_<op>`` (word accesses: reads
  to the level below plus reads to the level above, likewise writes) and the largest
  ``capacity_util_<mem>_<op>`` over layers; ``latency_onloading``, ``latency_computation``,
  ``latency_offloading``; latency-weighted means of ZigZag's MAC utilisations
  ``util_spatial`` (ideal), ``util_compute`` (with stalls), ``util_onloading`` and ``util``
  (with stalls, on- and off-loading);
* ``design.json`` (the ``zigzag`` runner's): parameters, ``area`` (objective) and derived
  metrics ``area_mac_array``, ``area_rf``, ``area_gb``, ``area_memory``, ``pe_count``,
  ``rf_bytes_per_pe``, ``onchip_bytes``. ZigZag reports no area for a non-IMC array. Without
  ``design.json`` (a dump BoAnon's runner did not make) the trial has no area and no parameters
  beyond ``config.json``.
"""

from __future__ import annotations

import math
import re
from functools import partial
from pathlib import Path
from typing import Any

from boanon import units
from boanon.adapters.base import Adapter, register_adapter
from boanon.adapters.files import find_file, read_json, read_json_object, require_file
from boanon.errors import LogParseError
from boanon.table import TrialRecord

OVERALL = "overall_simple.json"
DESIGN = "design.json"
LAYER_SUFFIXES = ("_complete.json", "_complete.json.gz")
OVERALL_COMPLETE = "overall_complete"
DERIVED = ("area_mac_array", "area_rf", "area_gb", "area_memory", "pe_count", "rf_bytes_per_pe",
           "onchip_bytes")
UTILISATIONS = {"ideal": "util_spatial", "stalls": "util_compute",
                "stalls_onloading": "util_onloading", "stalls_onloading_offloading": "util"}
"""ZigZag's ``mac_utilization`` keys -> metric names."""
_INSTANCE = re.compile(r"instance=([^,]+),")


@register_adapter
class ZigZagAdapter(Adapter):
    name = "zigzag"

    def detect(self, trial_dir: Path) -> bool:
        return find_file(trial_dir, OVERALL) is not None and bool(layer_files(trial_dir))

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        overall_path = require_file(trial_dir, OVERALL)
        overall = read_json(overall_path)
        energy = _number(overall, ("energy",), overall_path)
        latency = _number(overall, ("latency",), overall_path)
        record = TrialRecord(trial=trial_dir.name,
                             objectives={"energy": energy, "latency": latency,
                                         "edp": energy * latency})
        design_path = find_file(trial_dir, DESIGN)
        expected = None
        if design_path is not None:
            design = read_json_object(design_path, "describing the design")
            record.params.update(_params(design, design_path))
            derived = design.get("derived")
            if not isinstance(derived, dict):
                raise LogParseError(design_path, "missing the 'derived' object")
            record.objectives["area"] = _number(derived, ("area",), design_path)
            record.metrics.update({k: _number(derived, (k,), design_path) for k in DERIVED})
            workload = design.get("workload")
            expected = len(workload.get("layers", [])) if isinstance(workload, dict) else None
        layers = layer_files(trial_dir)
        if not layers:
            raise LogParseError(trial_dir / f"<layer>{LAYER_SUFFIXES[0]}", "no per-layer result")
        if expected is not None and len(layers) != expected:
            found = units.count(len(layers), "layer result")
            raise LogParseError(layers[0].parent, f"truncated output: {found} for the "
                                f"{units.count(expected, 'layer')} in {DESIGN}")
        record.metrics.update(layer_metrics(layers))
        return record


def layer_files(trial_dir: Path) -> list[Path]:
    """ZigZag's per-layer ``*_complete.json`` dumps (not the overall one), sorted by name."""
    return sorted(p for p in trial_dir.iterdir()
                  if p.name.endswith(LAYER_SUFFIXES) and not p.name.startswith(OVERALL_COMPLETE))


def _get(data: Any, keys: tuple[str, ...], path: Path) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise LogParseError(path, f"missing field {'.'.join(keys)!r}")
        data = data[key]
    return data


def _finite(value: Any, what: str, path: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LogParseError(path, f"{what} is not a finite number: {value!r}")
    return float(value)


def _number(data: Any, keys: tuple[str, ...], path: Path) -> float:
    return _finite(_get(data, keys, path), f"field {'.'.join(keys)!r}", path)


def _params(design: Any, path: Path) -> dict[str, Any]:
    params = _get(design, ("params",), path)
    if not isinstance(params, dict):
        raise LogParseError(path, "'params' must be an object")
    bad = [k for k, v in params.items() if not isinstance(v, (int, float, str, bool))]
    if bad:
        raise LogParseError(path, f"parameter {bad[0]!r} is not a number, string or boolean")
    return params


def _output(layer: Any, path: Path, *keys: str) -> float:
    """A number under the layer file's ``outputs`` (errors name the full field path)."""
    return _number(layer, ("outputs", *keys), path)


def _memory_names(layer: dict, path: Path) -> dict[str, list[str]]:
    """Layer operand (W, I, O) -> its memory names, innermost first."""
    links = _get(layer, ("inputs", "layer", "memory_operand_links"), path)
    levels = _get(layer, ("inputs", "accelerator", "mem_hierarchy_dict"), path)
    for field_name, value in (("inputs.layer.memory_operand_links", links),
                              ("inputs.accelerator.mem_hierarchy_dict", levels)):
        if not isinstance(value, dict):
            raise LogParseError(path, f"{field_name!r} must be an object, not {type(value).__name__}")
    names: dict[str, list[str]] = {}
    for layer_op, mem_op in links.items():
        mem_levels = levels.get(mem_op, [])
        if not isinstance(mem_levels, list):
            raise LogParseError(path, f"the memory levels of operand {mem_op!r} must be a list")
        found = [_INSTANCE.search(str(level)) for level in mem_levels]
        if not found or not all(found):
            raise LogParseError(path, f"cannot read the memory levels of operand {mem_op!r}")
        names[layer_op] = [m.group(1) for m in found]
    return names


def layer_metrics(paths: list[Path]) -> dict[str, float]:
    """Sum (or latency-weight, or take the max of) per-layer ZigZag metrics over the layers."""
    sums: dict[str, float] = {}
    peaks: dict[str, float] = {}
    weighted: dict[str, float] = {}
    total_latency = 0.0

    def add(name: str, value: float) -> None:
        sums[name] = sums.get(name, 0.0) + value

    for path in paths:
        layer = read_json(path)
        number = partial(_output, layer, path)
        add("energy_mac", number("energy", "operational_energy"))
        add("energy_memory", number("energy", "memory_energy"))
        latency = {part: number("latency", part)
                   for part in ("data_onloading", "computation", "data_offloading")}
        for part, value in latency.items():
            add(f"latency_{part.removeprefix('data_')}", value)
        layer_latency = sum(latency.values())
        total_latency += layer_latency
        for key, metric in UTILISATIONS.items():
            util = number("spatial", "mac_utilization", key)
            weighted[metric] = weighted.get(metric, 0.0) + util * layer_latency
        accesses = _get(layer, ("outputs", "memory", "word_accesses"), path)
        energies = _get(layer, ("outputs", "energy", "memory_energy_breakdown_per_level"), path)
        utils = _get(layer, ("outputs", "memory", "utilization"), path)
        for op, names in _memory_names(layer, path).items():
            for level, mem in enumerate(names):
                try:
                    acc, energy, util = accesses[op][level], energies[op][level], utils[op][level]
                except (KeyError, IndexError, TypeError):
                    raise LogParseError(path, f"no access/energy/utilisation entry for operand "
                                        f"{op} at memory level {level} ({mem})") from None
                count = {c: _number(acc, (c,), path) for c in
                         ("rd_out_to_low", "rd_out_to_high", "wr_in_by_low", "wr_in_by_high")}
                add(f"reads_{mem}_{op}", count["rd_out_to_low"] + count["rd_out_to_high"])
                add(f"writes_{mem}_{op}", count["wr_in_by_low"] + count["wr_in_by_high"])
                add(f"energy_{mem}_{op}", _finite(energy, f"energy of {mem} for {op}", path))
                key = f"capacity_util_{mem}_{op}"
                util = _finite(util, f"utilisation of {mem} for {op}", path)
                peaks[key] = max(peaks.get(key, 0.0), util)
    if total_latency <= 0:
        raise LogParseError(paths[0], "total latency over the layers is not positive")
    means = {k: v / total_latency for k, v in weighted.items()}
    return {**sums, **peaks, **means}
