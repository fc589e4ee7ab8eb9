"""The ``sgd`` adapter: per-device timing logs of parameter-server SGD -> one trial row.

Reads ``workers.jsonl`` (or ``.gz``): one JSON object per (iteration, machine, device) with
the fields in :data:`FIELDS` (written by the ``sgd`` runner; docs/sgd.md). Machine-level
fields (communication, PS update, traffic) repeat on each device line of the machine.
Everything is averaged over the iterations after the warm-up (lines with ``"warmup": true``):

* per device ``<m>_<dev>_compute_s``, ``_aggregation_s``, ``_samples``;
* per machine ``<m>_busy_s`` (slowest device + aggregation + communication),
  ``_communication_s``, ``_ps_update_s``, ``_traffic_mb`` and ``_stragglers`` (a count);
* over the cluster: worker/server counts, max and mean over workers of busy, compute and
  communication time, the largest aggregation and PS update time, the busiest server's
  traffic, the straggler count, the iteration-time spread and the warm-up iteration time.

The objective ``iteration_time`` is the mean iteration time after the warm-up. Parameters
come from ``config.json`` through ingest, never from this log.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from boanon.adapters.base import Adapter, register_adapter
from boanon.adapters.files import find_file, head, json_lines, require_file
from boanon.errors import LogParseError
from boanon.table import LIMIT, TrialRecord, value_problem

LOG = "workers.jsonl"
DEVICES = ("cpu", "gpu")
ROLES = ("worker", "ps", "both", "idle")
NUMBERS = ("batch_share", "passes", "compute_s", "aggregation_s", "communication_s",
           "ps_update_s", "traffic_mb", "iteration_s")
FIELDS = {"iteration": int, "warmup": bool, "machine": str, "device": str, "instance_type": str,
          "role": str, "straggler": bool, **{f: float for f in NUMBERS}}
"""Every line's fields and their types."""


@register_adapter
class SgdAdapter(Adapter):
    name = "sgd"

    def detect(self, trial_dir: Path) -> bool:
        path = find_file(trial_dir, LOG)
        return path is not None and '"compute_s"' in head(path, 1024)

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        path = require_file(trial_dir, LOG)
        log = read_log(path)
        measured = log[~log["warmup"]]
        if measured.empty:
            raise LogParseError(path, "no iterations after the warm-up")
        for roles, what in ((("worker", "both"), "worker"), (("ps", "both"), "parameter server")):
            if not measured["role"].isin(roles).any():
                raise LogParseError(path, f"no {what} in the log (role field)")
        metrics = {**_device_metrics(measured), **_machine_metrics(measured),
                   **_cluster_metrics(log, measured)}
        iteration_s = measured.groupby("iteration")["iteration_s"].first()
        return TrialRecord(trial=trial_dir.name, metrics=metrics,
                           objectives={"iteration_time": float(iteration_s.mean())})


def read_log(path: Path) -> pd.DataFrame:
    """The log as a DataFrame, every line checked; errors name the file and line. Every
    iteration must have a line for every (machine, device) of the log: one that lacks some was
    cut short (the runner writes an iteration's lines together)."""
    rows, seen = [], set()
    devices: dict[int, set[tuple[str, str]]] = {}
    last_line: dict[int, int] = {}
    for lineno, obj in json_lines(path):
        row = _check_line(path, lineno, obj)
        key = (row["iteration"], row["machine"], row["device"])
        if key in seen:
            raise LogParseError(path, f"second line for iteration {key[0]}, {key[1]}/{key[2]}",
                                lineno)
        seen.add(key)
        devices.setdefault(key[0], set()).add(key[1:])
        last_line[key[0]] = lineno
        rows.append(row)
    if not rows:
        raise LogParseError(path, "empty log: no iteration lines")
    every = set().union(*devices.values())
    for iteration, present in devices.items():
        if present != every:
            lacking = sorted(every - present)[0]
            raise LogParseError(path, f"iteration {iteration} has {len(present)} of the {len(every)} "
                                f"machine/device lines (none for {lacking[0]}/{lacking[1]}): the log "
                                "was cut short", last_line[iteration])
    return pd.DataFrame(rows)


def _check_line(path: Path, lineno: int, row: dict) -> dict:
    missing = [f for f in FIELDS if f not in row]
    if missing:
        raise LogParseError(path, f"missing field(s): {', '.join(missing)}", lineno)
    for name, kind in FIELDS.items():
        value = row[name]
        if kind is float:  # finite, >= 0 and within 64 bits (2^64 MB of traffic is garbage)
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and value_problem(value) is None and value >= 0)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < LIMIT
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise LogParseError(path, f"field {name!r} has invalid value {value!r}", lineno)
    if row["device"] not in DEVICES:
        raise LogParseError(path, f"unknown device {row['device']!r}; expected cpu or gpu", lineno)
    if row["role"] not in ROLES:
        raise LogParseError(path, f"unknown role {row['role']!r}; expected {', '.join(ROLES)}",
                            lineno)
    return {name: row[name] for name in FIELDS}


def _device_metrics(log: pd.DataFrame) -> dict[str, float]:
    means = log.groupby(["machine", "device"])[["compute_s", "aggregation_s", "batch_share"]].mean()
    out = {}
    for (machine, device), row in means.iterrows():
        out[f"{machine}_{device}_compute_s"] = float(row["compute_s"])
        out[f"{machine}_{device}_aggregation_s"] = float(row["aggregation_s"])
        out[f"{machine}_{device}_samples"] = float(row["batch_share"])
    return out


def _per_machine(log: pd.DataFrame) -> pd.DataFrame:
    """One row per (iteration, machine): slowest device, summed aggregation, machine fields."""
    per = log.groupby(["iteration", "machine"]).agg(
        compute_s=("compute_s", "max"), aggregation_s=("aggregation_s", "sum"),
        communication_s=("communication_s", "first"), ps_update_s=("ps_update_s", "first"),
        traffic_mb=("traffic_mb", "first"), straggler=("straggler", "any"), role=("role", "first"))
    per["busy_s"] = per["compute_s"] + per["aggregation_s"] + per["communication_s"]
    return per.reset_index()


def _machine_metrics(log: pd.DataFrame) -> dict[str, float]:
    per = _per_machine(log).groupby("machine")
    means = per[["busy_s", "communication_s", "ps_update_s", "traffic_mb"]].mean()
    stragglers = per["straggler"].sum()
    out = {}
    for machine, row in means.iterrows():
        for name, value in row.items():
            out[f"{machine}_{name}"] = float(value)
        out[f"{machine}_stragglers"] = float(stragglers[machine])
    return out


def _cluster_metrics(log: pd.DataFrame, measured: pd.DataFrame) -> dict[str, float]:
    per = _per_machine(measured)
    workers = per[per["role"].isin(["worker", "both"])].groupby("iteration")
    servers = per[per["role"].isin(["ps", "both"])]
    iteration_s = measured.groupby("iteration")["iteration_s"].first()
    warmup_s = log[log["warmup"]].groupby("iteration")["iteration_s"].first()
    last = per[per["iteration"] == per["iteration"].max()]
    out = {
        "workers": float(last["role"].isin(["worker", "both"]).sum()),
        "parameter_servers": float(last["role"].isin(["ps", "both"]).sum()),
        "ps_update_max_s": float(servers.groupby("iteration")["ps_update_s"].max().mean()),
        "ps_traffic_max_mb": float(servers["traffic_mb"].max()),
        "aggregation_max_s": float(workers["aggregation_s"].max().mean()),
        "stragglers": float(per["straggler"].sum()),
        "iteration_time_std_s": float(iteration_s.std(ddof=0)),
    }
    for name in ("busy_s", "compute_s", "communication_s"):
        stem = name.removesuffix("_s")
        out[f"worker_{stem}_max_s"] = float(workers[name].max().mean())
        out[f"worker_{stem}_mean_s"] = float(workers[name].mean().mean())
    if not warmup_s.empty:
        out["warmup_iteration_time_s"] = float(warmup_s.mean())
    return out
