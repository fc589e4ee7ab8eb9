"""Merge finished runs from ``--out`` folders into ``benchmarks/results/``.

Long benchmark parts run side by side in their own folders (``python -m benchmarks.run ...
--out DIR``); this copies each folder's finished (problem, tuner, seed) runs into the results
folder, replacing the rows of the same runs there (their per-evaluation rows and their line in
``runs.csv``), and adds the problems' descriptions to ``problems.json`` and the library versions
to ``versions.json``.

    python -m benchmarks.merge scratch/part-a scratch/part-b [--into benchmarks/results]
        [--tuners random tpe ...] [--problems fn-ackley ...]

``--tuners`` and ``--problems`` copy only those runs: a verdict folder gathers the generic tuners'
runs from earlier rounds' folders without the BoAnon runs of older code measured beside them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from benchmarks.run import RESULTS

KEY = ["problem", "tuner", "seed"]


def merge(source: Path, into: Path, tuners: Collection[str] | None = None,
          problems: Collection[str] | None = None) -> list[tuple[str, str, int]]:
    """Copy ``source``'s finished runs (of ``tuners`` and ``problems`` where given) into ``into``
    (made if missing); return the runs copied."""
    runs = pd.read_csv(source / "runs.csv")
    into.mkdir(parents=True, exist_ok=True)
    runs = runs[(runs["status"] == "ok") & runs["tuner"].isin(tuners or runs["tuner"])
                & runs["problem"].isin(problems or runs["problem"])]
    copied: list[tuple[str, str, int]] = []
    for problem, finished in runs.groupby("problem"):
        keys = {(t, int(s)) for t, s in zip(finished["tuner"], finished["seed"], strict=True)}
        rows = pd.read_csv(source / f"{problem}.csv")
        rows = rows[[(t, int(s)) in keys for t, s in zip(rows["tuner"], rows["seed"], strict=True)]]
        target = into / f"{problem}.csv"
        if target.is_file():
            old = pd.read_csv(target)
            old = old[[(t, int(s)) not in keys for t, s in zip(old["tuner"], old["seed"], strict=True)]]
            rows = pd.concat([old, rows], ignore_index=True)
        rows.to_csv(target, index=False)
        copied += [(str(problem), t, s) for t, s in sorted(keys)]
    all_runs = into / "runs.csv"
    old_runs = pd.read_csv(all_runs) if all_runs.is_file() else runs.iloc[:0]
    new = {tuple(k) for k in runs[KEY].astype({"seed": int}).itertuples(index=False)}
    old_keys = old_runs[KEY].astype({"seed": int}).itertuples(index=False)
    kept = old_runs[[tuple(k) not in new for k in old_keys]]
    pd.concat([kept, runs], ignore_index=True).to_csv(all_runs, index=False)
    for name in ("problems.json", "versions.json"):  # descriptions; libraries per commit measured
        if (source / name).is_file():
            path = into / name
            known = json.loads(path.read_text()) if path.is_file() else {}
            known.update(json.loads((source / name).read_text()))
            path.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--into", type=Path, default=RESULTS)
    parser.add_argument("--tuners", nargs="+", help="copy only these tuners' runs")
    parser.add_argument("--problems", nargs="+", help="copy only these problems' runs")
    args = parser.parse_args()
    for source in args.sources:
        copied = merge(source, args.into, args.tuners, args.problems)
        print(f"{source}: {len(copied)} runs merged into {args.into}")


if __name__ == "__main__":
    main()
