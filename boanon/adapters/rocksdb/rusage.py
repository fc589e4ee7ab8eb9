"""The db_bench process's resource usage (``rusage.json``, written by the ``rocksdb`` runner).

On a shared machine, throughput moves with whatever else runs (measured: ops/sec CV 6-18 %),
while the CPU time the process itself spent per operation moves much less: waiting for a core
costs wall time, not CPU time. The runner reaps db_bench with ``os.wait4`` and writes its user
and system CPU seconds (all its threads: foreground, flushes, compactions), peak RSS and wall
time; this module turns them into ``cpu_micros_per_op``: CPU time over the operations of all
its benchmarks (the load and the measured one: the process's CPU cannot be split by benchmark).
"""

from __future__ import annotations

import math
from pathlib import Path

from boanon.adapters.files import read_json_object
from boanon.errors import LogParseError

RUSAGE_FILE = "rusage.json"
FIELDS = ("user_seconds", "system_seconds", "wall_seconds", "max_rss_kb")


def cpu_objectives(path: Path, operations: float) -> tuple[dict[str, float], dict[str, float]]:
    """Metrics (``cpu_user_seconds``... ``max_rss_kb``) and the ``cpu_micros_per_op`` objective
    of a ``rusage.json`` for a run of ``operations`` operations in all."""
    data = read_json_object(path, "of resource usage")
    values = {}
    for name in FIELDS:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value < 0:
            raise LogParseError(path, f"{name!r}: expected a non-negative number, got {value!r}")
        values[name] = float(value)
    cpu = values["user_seconds"] + values["system_seconds"]
    metrics = {"cpu_user_seconds": values["user_seconds"], "cpu_system_seconds": values["system_seconds"],
               "cpu_seconds": cpu, "wall_seconds": values["wall_seconds"], "max_rss_kb": values["max_rss_kb"]}
    if values["wall_seconds"] > 0:
        metrics["cpu_utilisation"] = cpu / values["wall_seconds"]
    objectives = {"cpu_micros_per_op": cpu * 1e6 / operations} if operations > 0 else {}
    return metrics, objectives
