"""A simulated data-processing pipeline: a Spark-like batch job of three stages on a cluster.

The job scans a large fact table, filters and projects it (stage ``scan``), joins it with a
small dimension table and pre-aggregates (stage ``join``; a sort-merge join after a shuffle, or
a map-side broadcast join when the dimension table fits under the broadcast threshold), then
shuffles the partial aggregates and writes the result (stage ``write``). A stage takes as long as
its slowest executor (tasks run in waves of ``cores`` per executor, one node of the cluster is a
straggler, the join has a hot key), plus the shuffle it reads and the driver's scheduling; memory
per task decides spills and garbage collection. About 20 parameters of mixed types, some of
which do nothing for this job (as in a real configuration file). The default is Spark's
(2 executors of 1 core and 1 GiB), far from the optimum, and the optimum is not at the centre.

Every stage time, per-node executor time per stage, spill, GC, shuffle volume and scheduling
time is logged as a metric; the objective is ``job_time`` (seconds, minimised). Noise is
multiplicative, seeded by the configuration, so a configuration always gives the same value.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from boanon.acquisition.optimize import config_key
from boanon.space import Space
from boanon.table import TrialRecord, Value

SPACE: dict[str, dict[str, Any]] = {
    "executor_instances": {"type": "int", "low": 2, "high": 96, "log": True, "default": 2},
    "executor_cores": {"type": "int", "low": 1, "high": 8, "default": 1},
    "executor_memory_gb": {"type": "float", "low": 1.0, "high": 64.0, "log": True, "default": 1.0},
    "memory_overhead_factor": {"type": "float", "low": 0.06, "high": 0.4, "default": 0.1},
    "memory_fraction": {"type": "float", "low": 0.3, "high": 0.9, "default": 0.6},
    "storage_fraction": {"type": "float", "low": 0.1, "high": 0.9, "default": 0.5},
    "shuffle_partitions": {"type": "int", "low": 8, "high": 4000, "log": True, "default": 200},
    "max_partition_mb": {"type": "int", "low": 16, "high": 1024, "log": True, "default": 128},
    "serializer": {"type": "categorical", "choices": ["java", "kryo"], "default": "java"},
    "compression_codec": {"type": "categorical", "choices": ["lz4", "snappy", "zstd"], "default": "lz4"},
    "shuffle_compress": {"type": "bool", "default": True},
    "broadcast_threshold_mb": {"type": "float", "low": 1.0, "high": 2048.0, "log": True, "default": 10.0},
    "adaptive_execution": {"type": "bool", "default": False},
    "speculation": {"type": "bool", "default": False},
    "gc": {"type": "categorical", "choices": ["parallel", "g1", "zgc"], "default": "parallel"},
    "locality_wait_s": {"type": "float", "low": 0.0, "high": 10.0, "default": 3.0},
    "shuffle_buffer_kb": {"type": "int", "low": 8, "high": 1024, "log": True, "default": 32},
    # inert for this job: no cached tables, no UI in batch mode, no off-heap allocation by the job
    "off_heap": {"type": "bool", "default": False},
    "network_timeout_s": {"type": "int", "low": 60, "high": 600, "default": 120},
    "ui_enabled": {"type": "bool", "default": True},
    "event_log_compress": {"type": "bool", "default": False},
}

NODES, NODE_CORES, NODE_MEMORY_GB = 16, 16, 120.0
"""The cluster: a YARN-like manager grants executors only as far as they fit on its nodes."""
INPUT_GB, SCAN_SELECTIVITY, DIM_GB, AGG_GB = 400.0, 0.3, 0.6, 6.0
"""The fact table, the share the scan keeps, the dimension table, the partial aggregates."""
HOT_KEY_GB = 2.5
"""The join's hottest key: one partition holds at least this much unless adaptive execution splits it."""
STRAGGLER = 1.7
"""The slowdown of the cluster's slow node (node 0); speculation re-runs its tasks elsewhere."""
DISK_GBPS, NET_GBPS = 0.25, 1.1
CODECS = {"lz4": (0.50, 0.9), "snappy": (0.55, 0.8), "zstd": (0.33, 2.6)}
"""codec -> (compressed size ratio, CPU seconds per GB compressed or decompressed)."""
SERIALIZED = {"java": (2.6, 1.6), "kryo": (1.4, 0.9)}
"""serializer -> (in-memory expansion of a GB on disk, CPU seconds per GB (de)serialised)."""
GC_COST = {"parallel": (0.02, 0.018), "g1": (0.05, 0.004), "zgc": (0.09, 0.001)}
"""collector -> (overhead at any heap, extra per GB of heap): pauses grow with heap under parallel."""
STAGES = ("scan", "join", "write")
NOISE = 0.04


def space() -> Space:
    return Space.from_dict(SPACE, source="benchmarks.pipeline.SPACE")


def _rng(config: dict[str, Value]) -> np.random.Generator:
    digest = hashlib.sha256(config_key(config).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def executors(c: dict[str, Value]) -> tuple[int, list[int]]:
    """How many executors the cluster grants, and on which node each runs (round-robin)."""
    container = float(c["executor_memory_gb"]) * (1 + float(c["memory_overhead_factor"]))
    per_node = min(NODE_CORES // int(c["executor_cores"]), int(NODE_MEMORY_GB // container))
    granted = max(1, min(int(c["executor_instances"]), NODES * per_node))
    return granted, [e % NODES for e in range(granted)]


def simulate(c: dict[str, Value], rng: np.random.Generator | None = None) -> dict[str, float]:
    """Every logged quantity of one run of the job with configuration ``c`` (seconds, GB)."""
    rng = rng if rng is not None else _rng(c)
    n_exec, node_of = executors(c)
    cores = int(c["executor_cores"])
    mem = float(c["executor_memory_gb"])
    ratio, codec_cpu = CODECS[str(c["compression_codec"])] if c["shuffle_compress"] else (1.0, 0.0)
    expand, ser_cpu = SERIALIZED[str(c["serializer"])]
    # Execution memory per running task; the storage share is only borrowed when free, so it
    # still costs a little (a cached broadcast sits in it).
    exec_mem = mem * float(c["memory_fraction"]) * (1 - 0.3 * float(c["storage_fraction"]))
    task_mem = exec_mem / cores
    # Too little overhead memory: containers get killed on the off-heap buffers of a shuffle.
    kill_rate = max(0.0, 0.12 - float(c["memory_overhead_factor"])) * 4 * (1 if mem >= 4 else 0.3)
    gc_base, gc_heap = GC_COST[str(c["gc"])]
    # speculation re-launches the slow node's late tasks elsewhere: no straggler, some duplicate work
    speed = np.full(NODES, 1.05 if c["speculation"] else 1.0)
    speed[0] = 1.05 if c["speculation"] else STRAGGLER
    locality = float(c["locality_wait_s"])
    buffer_penalty = 1 + 0.6 / math.sqrt(int(c["shuffle_buffer_kb"]) / 8)
    out: dict[str, float] = {}

    def run_stage(stage: str, n_tasks: int, task_gb: np.ndarray, cpu_per_gb: float,
                  mem_per_gb: float) -> float:
        """Waves of tasks on every executor; returns the slowest executor's time."""
        # tasks in the order the scheduler hands them out (round-robin over executors)
        per_exec = [task_gb[e::n_exec] for e in range(n_exec)]
        spill_total = gc_total = 0.0
        times = np.zeros(n_exec)
        for e, sizes in enumerate(per_exec):
            if not len(sizes):
                continue
            need = sizes * mem_per_gb
            spill = np.maximum(need - task_mem, 0.0) / max(mem_per_gb, 1e-9)
            work = sizes * cpu_per_gb + spill * (2 / DISK_GBPS) * buffer_penalty * ratio
            occupancy = np.minimum(need / max(task_mem, 1e-9), 1.0)
            gc = work * (gc_base + gc_heap * mem) * (1 + 3 * occupancy ** 2)
            waves = np.array_split(work + gc, math.ceil(len(sizes) / cores))
            t = sum(float(w.max()) for w in waves) * speed[node_of[e]]
            t *= math.exp(NOISE * rng.standard_normal())
            times[e] = t
            spill_total += float(spill.sum())
            gc_total += float(gc.sum())
        for node in range(NODES):
            on = [times[e] for e in range(n_exec) if node_of[e] == node]
            out[f"{stage}_node{node:02d}_time"] = max(on) if on else 0.0
        out[f"{stage}_spill_gb"] = spill_total
        out[f"{stage}_gc_time"] = gc_total / max(n_exec * cores, 1)
        out[f"{stage}_tasks"] = float(n_tasks)
        # a killed container loses its tasks: the stage re-runs a share of its work
        retries = 1 + kill_rate * min(1.0, mem_per_gb * float(task_gb.max()) / max(task_mem, 1e-9))
        return float(times.max()) * retries

    def scheduling(n_tasks: int) -> float:
        # driver cost per task, plus waiting for a local slot on every wave
        waves = math.ceil(n_tasks / max(n_exec * cores, 1))
        return 0.004 * n_tasks + min(locality, 4.0) * 0.15 * waves + 0.4

    def shuffle(gb: float, maps: int, reduces: int) -> float:
        blocks = maps * reduces
        nodes_used = min(n_exec, NODES)
        return gb * ratio / (NET_GBPS * nodes_used) + 2e-6 * blocks + gb * codec_cpu / max(n_exec * cores, 1)

    # stage 1: scan the input in splits, filter, project, write map output
    split_gb = int(c["max_partition_mb"]) / 1024
    n_scan = math.ceil(INPUT_GB / split_gb)
    scan_gb = np.full(n_scan, INPUT_GB / n_scan)
    scan_cpu = 1.2 + SCAN_SELECTIVITY * (ser_cpu + codec_cpu)
    t_scan = run_stage("scan", n_scan, scan_gb, scan_cpu, 0.6)
    out["scan_time"] = t_scan + scheduling(n_scan)

    # stage 2: the join; broadcast when the dimension table is under the threshold
    joined_gb = INPUT_GB * SCAN_SELECTIVITY
    broadcast = float(c["broadcast_threshold_mb"]) >= DIM_GB * 1024
    parts = int(c["shuffle_partitions"])
    if c["adaptive_execution"]:
        parts = max(min(parts, math.ceil(joined_gb / 0.064)), 1)  # coalesce to ~64 MB partitions
    if broadcast:
        # map-side join on the scan's partitions: no shuffle of the fact table, but every
        # executor holds the table in memory and the driver ships it to each of them
        n_join = n_scan
        join_gb = np.full(n_join, joined_gb / n_join)
        hot = HOT_KEY_GB / n_join * 4
        join_gb[0] += hot
        task_mem -= DIM_GB * expand / cores
        task_mem = max(task_mem, 0.05)
        out["shuffle_join_gb"] = 0.0
        t_shuffle = DIM_GB * n_exec / (NET_GBPS * 2)
    else:
        n_join = parts
        join_gb = np.full(n_join, joined_gb / n_join)
        join_gb[0] = max(join_gb[0], HOT_KEY_GB)
        if c["adaptive_execution"]:  # skew join: the hot partition is split like the others
            join_gb[0] = joined_gb / n_join * 1.5
        out["shuffle_join_gb"] = (joined_gb + DIM_GB) * ratio
        t_shuffle = shuffle(joined_gb + DIM_GB, n_scan, n_join)
    t_join = run_stage("join", n_join, join_gb, 0.9 + ser_cpu + codec_cpu, expand)
    out["join_shuffle_time"] = t_shuffle
    out["join_time"] = t_join + t_shuffle + scheduling(n_join)
    task_mem = exec_mem / cores

    # stage 3: shuffle the partial aggregates, aggregate and write
    n_write = max(min(int(c["shuffle_partitions"]), math.ceil(AGG_GB / 0.064)), 1) \
        if c["adaptive_execution"] else int(c["shuffle_partitions"])
    write_gb = np.full(n_write, AGG_GB / n_write)
    t_agg_shuffle = shuffle(AGG_GB, n_join, n_write)
    # each output file costs a commit on the store: many tiny files are slow
    commit = 0.02 * n_write / max(n_exec * cores, 1)
    t_write = run_stage("write", n_write, write_gb, 2.0 + ser_cpu + codec_cpu, expand)
    out["write_shuffle_time"] = t_agg_shuffle
    out["write_time"] = t_write + t_agg_shuffle + commit + scheduling(n_write)

    out["executors_granted"] = float(n_exec)
    out["startup_time"] = 3.0 + 0.08 * n_exec
    out["job_time"] = out["startup_time"] + sum(out[f"{s}_time"] for s in STAGES)
    return out


def record(trial: str, config: dict[str, Value]) -> TrialRecord:
    values = simulate(config)
    return TrialRecord(trial, dict(config), {k: v for k, v in values.items() if k != "job_time"},
                       {"job_time": values["job_time"]})


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.pipeline [N]``: the default's job time and the best of N random points."""
    import sys

    n = int((argv if argv is not None else sys.argv[1:] or ["1500"])[0])
    s = space()
    times = [simulate(c)["job_time"] for c in s.sample(n, np.random.default_rng(0), sobol=False)]
    print(f"default {simulate(s.default())['job_time']:.1f} s; best of {n} random points {min(times):.1f} s; "
          f"median {float(np.median(times)):.1f} s")


if __name__ == "__main__":
    main()
