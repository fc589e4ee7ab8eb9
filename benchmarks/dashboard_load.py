"""The dashboard under many clients: latency of ``/api/run`` with 200 concurrent requests.

    python -m benchmarks.dashboard_load [--trials 459] [--clients 200] [--repeats 3]
                                        [--out benchmarks/results/dashboard_load]

Builds a real run of ``--trials`` trials (random strategy on examples/synthetic.yaml's system,
once, kept in scratch/), serves it with ``boanon dashboard`` in its own process, and
sends ``--clients`` requests to ``/api/run`` at once (threads released by one barrier), after one
request alone. Reports the lone request's time and the p50/p99 latency under load, per repeat
and their medians. Writes ``dashboard_load.json`` with the commit and library versions; run it
on two checkouts (``PYTHONPATH=<checkout>``) to compare.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import yaml

from benchmarks.provenance import ROOT, provenance

BOANON = str(Path(sys.executable).parent / "boanon")


def build_run(folder: Path, trials: int) -> Path:
    """A store of ``trials`` trials (made once)."""
    store = folder / f"run-{trials}.db"
    if store.exists():
        return store
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(strategy="random", budget=trials)
    config = folder / "run.yaml"
    config.write_text(yaml.safe_dump(data))
    subprocess.run([BOANON, "tune", str(config), "--store", str(store)], cwd=ROOT, check=True,
                   capture_output=True)
    return store


def timed_get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        r.read()
    return time.perf_counter() - start


def load(url: str, clients: int) -> list[float]:
    """Latencies of ``clients`` requests sent at once."""
    barrier = threading.Barrier(clients)
    latencies: list[float] = []

    def client() -> None:
        barrier.wait()
        latencies.append(timed_get(url))
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(latencies)


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=459)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "dashboard_load")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    work = ROOT / "scratch" / "dashboard_load"  # git-ignored: the run served is rebuilt on demand
    work.mkdir(parents=True, exist_ok=True)
    store = build_run(work, args.trials)
    rows = []
    for _ in range(args.repeats):
        server = subprocess.Popen([BOANON, "dashboard", str(store), "--port", "0"], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline()).group(0) + "api/run"
            alone = timed_get(url)
            latencies = load(url, args.clients)
        finally:
            server.terminate()
            server.wait()
        rows.append({"alone_s": alone, "p50_s": percentile(latencies, 0.5),
                     "p99_s": percentile(latencies, 0.99)})
        print(f"alone {alone:.3f} s; {args.clients} clients: p50 {rows[-1]['p50_s']:.2f} s, "
              f"p99 {rows[-1]['p99_s']:.2f} s", flush=True)
    summary = {k: statistics.median(r[k] for r in rows) for k in ("alone_s", "p50_s", "p99_s")}
    name = f"dashboard_load{'-' + args.label if args.label else ''}.json"
    (args.out / name).write_text(json.dumps({"trials": args.trials, "clients": args.clients,
                                             "repeats": rows, "median": summary, **provenance()},
                                            indent=2) + "\n")


if __name__ == "__main__":
    main()
