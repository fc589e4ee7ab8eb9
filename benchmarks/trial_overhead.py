"""Per-trial overhead of each executor: what a trial costs beyond its own work.

    python -m benchmarks.trial_overhead [--trials 8] [--repeats 3] [--out benchmarks/results/trial_overhead]

Runs ``boanon tune`` (the real CLI, as a user does) on a system whose function does nothing,
with the random strategy (proposals cost nothing), once per executor: serial (in the loop's
process), ``--workers 2`` (a process per trial, forked from the fork server) and ``--dask local``.
A trial's overhead is its time in the store (start to finish) minus its work (none); the
median over the run's trials is reported per repeat, then the median and spread over repeats.
Writes ``trial_overhead[-LABEL].json`` with the commit and library versions; run it on two
checkouts (``PYTHONPATH=<checkout>``) to compare.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from benchmarks.provenance import ROOT, provenance

EXECUTORS = {"serial": [], "workers-2": ["--workers", "2"],
             "dask-local": ["--dask", "local", "--workers", "2"]}
SYSTEM = "def evaluate(config):\n    return {'cost': config['x']}\n"
CONFIG = ("space: {{x: {{type: float, low: 0, high: 1, default: 0.5}}}}\n"
          "objectives: [{{name: cost, direction: minimize}}]\n"
          "runner: {{callable: '{system}:evaluate'}}\nstrategy: random\nn_init: 2\n")


def overheads(executor: list[str], trials: int, workdir: Path) -> list[float]:
    """Seconds from start to finish of each trial of one run."""
    from boanon.store import Store

    system = workdir / "null_system.py"
    system.write_text(SYSTEM)
    config = workdir / "tune.yaml"
    config.write_text(CONFIG.format(system=system))
    store = workdir / "run.db"
    subprocess.run([str(Path(sys.executable).parent / "boanon"), "tune", str(config), "--budget",
                    str(trials), "--store", str(store), *executor], cwd=workdir, check=True,
                   capture_output=True, timeout=900)
    with Store(store, read_only=True) as s:
        return [(datetime.fromisoformat(t.finished) - datetime.fromisoformat(t.started))
                .total_seconds() for t in s.trials() if t.finished]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--executors", nargs="+", default=list(EXECUTORS), choices=list(EXECUTORS))
    parser.add_argument("--label", default="", help="suffix of the result file (e.g. the code measured)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "trial_overhead")
    args = parser.parse_args(argv)
    results = {}
    for name in args.executors:
        medians = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                medians.append(statistics.median(overheads(EXECUTORS[name], args.trials, Path(tmp))))
        results[name] = {"median_s": statistics.median(medians), "min_s": min(medians),
                         "max_s": max(medians), "per_repeat_s": medians}
        print(f"{name:12s} per-trial overhead: median {results[name]['median_s']:.3f} s "
              f"(repeats {min(medians):.3f}-{max(medians):.3f} s)", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"trials": args.trials, "repeats": args.repeats, "results": results, **provenance()}
    name = f"trial_overhead{'-' + args.label if args.label else ''}.json"
    (args.out / name).write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
