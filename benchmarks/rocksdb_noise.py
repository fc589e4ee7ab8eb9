"""Which RocksDB objective survives a shared machine: run-to-run variation of the default.

Runs the default configuration N times on the ``mixgraph`` workload (the FAST'20 social-graph
parameters), each run a trial of the ``rocksdb`` runner with the same configuration as its
interleaved reference (so every trial is two db_bench runs back to back), and reports each
candidate objective's coefficient of variation (CV = standard deviation / mean over the N
trials): throughput, CPU time per operation, the normalised score (trial / reference) of
both, a latency percentile, and the nearly deterministic counters (write amplification,
compaction bytes, stall time, block reads per get). The benchmark objective is the
performance objective with the smallest CV; the counters are reported beside it as the
mediators a model can lean on.

The default runs at 1/64 of RocksDB's LSM sizes (write buffer 1 MiB, target file 1 MiB,
level base 4 MiB; the rest RocksDB's defaults) so that a few hundred thousand keys, loaded and
queried in about 20-30 s here, build an LSM tree of several levels with dozens of flushes and
compactions; at the full sizes the same keys would fit one memtable.

    nice .venv/bin/python -m benchmarks.rocksdb_noise            # 10 trials, ~10-15 min here
    nice .venv/bin/python -m benchmarks.rocksdb_noise --runs 12 --num 300000

Writes ``benchmarks/results/rocksdb_noise.csv`` (one row per quantity) and
``rocksdb_noise_runs.csv`` (one row per trial); the trials stay in ``--trials`` so a stopped
run resumes, trials already complete being read back rather than run again.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

import pandas as pd

from benchmarks.problems import SCALED_SIZES
from benchmarks.summary import markdown_table
from boanon.adapters import get_adapter
from boanon.adapters.ingest import parse_trial_dir
from boanon.errors import LogParseError
from boanon.runners.base import exit_on_sigterm
from boanon.runners.trial import run_config
from boanon.table import TrialRecord
from boanon.targets.rocksdb import RocksDBRunner, default_config

SCALED_DEFAULT = {**default_config(), **SCALED_SIZES}
"""RocksDB's defaults with the LSM sizes at 1/64 (see the module docstring)."""

OBJECTIVES = {
    "mixgraph_ops_per_sec": "throughput of the measured benchmark",
    "cpu_micros_per_op": "db_bench CPU time (user+sys) per operation, load included",
    "mixgraph_ops_per_sec_rel": "throughput / the interleaved reference run's",
    "cpu_micros_per_op_rel": "CPU time per op / the interleaved reference run's",
}
"""Candidate objectives: what the tuner could be asked to optimise."""
OTHERS = {
    "reference_mixgraph_ops_per_sec": "throughput of the reference run (same configuration)",
    "mixgraph_micros_per_op": "mean latency of the measured benchmark",
    "db_get_micros_p99": "p99 Get latency (statistics histogram)",
    "fillrandom_ops_per_sec": "load throughput",
    "wall_seconds": "db_bench wall time",
    "cpu_seconds": "db_bench CPU time",
    "write_amplification": "bytes flushed and compacted / bytes flushed (LOG events)",
    "compaction_output_bytes": "bytes written by compactions",
    "compaction_input_bytes": "bytes read by compactions",
    "flush_count": "memtable flushes",
    "compaction_count": "compactions",
    "stall_micros": "write stall time (statistics ticker)",
    "stall_seconds": "cumulative stall (LOG)",
    "block_reads_per_get": "block cache misses per key read",
    "block_cache_miss": "block cache misses",
}
"""Quantities reported beside them: the reference, latencies and the counters."""


def run_trials(runs: int, num: int, reads: int, trials: Path, log=print) -> list[TrialRecord]:
    """N trials of the scaled default, each with itself as the interleaved reference; a trial
    directory that already parses is read back, not run again."""
    runner = RocksDBRunner(workload="mixgraph", num=num, reads=reads, timeout=600, reference=SCALED_DEFAULT)
    adapter = get_adapter("rocksdb")
    records = []
    for k in range(runs):
        trial = trials / f"run-{k:02d}"
        if trial.is_dir():
            try:
                records.append(parse_trial_dir(adapter, trial))
                log(f"run {k}: read back from {trial}")
                continue
            except LogParseError:
                shutil.rmtree(trial)  # cut short by a stop: run it again
        trial.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        run_config(runner, SCALED_DEFAULT, trial)
        records.append(parse_trial_dir(adapter, trial))
        m = records[-1]
        log(f"run {k}: {time.monotonic() - start:.0f} s (two db_bench runs), "
            f"{m.objectives['mixgraph_ops_per_sec']:.0f} ops/s, "
            f"{m.objectives.get('cpu_micros_per_op', float('nan')):.2f} CPU us/op, "
            f"{levels(m)} levels")
    return records


def levels(record: TrialRecord) -> int:
    """How many LSM levels hold files at the end of the run (the LOG's last per-level table)."""
    return sum(1 for name, value in record.metrics.items()
               if name.startswith("level") and name.endswith("_files") and value > 0)


def per_run_table(records: list[TrialRecord]) -> pd.DataFrame:
    rows = []
    for k, r in enumerate(records):
        values = {**r.metrics, **r.objectives}
        rows.append({"run": k, "levels": levels(r),
                     **{name: values.get(name) for name in (*OBJECTIVES, *OTHERS)}})
    return pd.DataFrame(rows)


def variation(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per quantity: mean, standard deviation, CV, min and max over the runs."""
    rows = []
    for name, meaning in {**OBJECTIVES, **OTHERS}.items():
        values = [float(v) for v in runs[name] if pd.notna(v)]
        if len(values) < 2:
            continue
        mean = statistics.fmean(values)
        sd = statistics.stdev(values)
        rows.append({"quantity": name, "role": "objective" if name in OBJECTIVES else "reported",
                     "meaning": meaning, "n": len(values), "mean": mean, "std": sd,
                     "cv_percent": 100 * sd / abs(mean) if mean else 0.0,
                     "min": min(values), "max": max(values)})
    table = pd.DataFrame(rows)
    candidates = table[table["role"] == "objective"]
    best = candidates.loc[candidates["cv_percent"].idxmin(), "quantity"]
    table["chosen"] = table["quantity"] == best
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--num", type=int, default=250_000, help="keys loaded")
    parser.add_argument("--reads", type=int, default=120_000, help="mixgraph operations")
    parser.add_argument("--trials", type=Path, default=Path("runs/rocksdb_noise"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "rocksdb_noise.csv")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs must be at least 2 to measure a variation")
    start = time.monotonic()
    runs = per_run_table(run_trials(args.runs, args.num, args.reads, args.trials))
    table = variation(runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.6g")
    runs.to_csv(args.out.with_name(args.out.stem + "_runs.csv"), index=False, float_format="%.6g")
    shown = table[["quantity", "role", "n", "mean", "cv_percent", "min", "max", "chosen"]].copy()
    for column in ("mean", "min", "max"):
        shown[column] = shown[column].map(lambda v: f"{v:.4g}")
    shown["cv_percent"] = shown["cv_percent"].map(lambda v: f"{v:.1f}")
    print(markdown_table(shown))
    print(f"{args.runs} trials of {args.num} keys + {args.reads} mixgraph ops in "
          f"{time.monotonic() - start:.0f} s; levels per run: {sorted(set(runs['levels']))}; "
          f"chosen objective: {table.loc[table['chosen'], 'quantity'].iloc[0]}")


if __name__ == "__main__":
    exit_on_sigterm()  # the process's own: a killed run kills db_bench and removes its DB
    main()
