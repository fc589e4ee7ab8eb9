"""Can a GP fitted to a cold run's first trials pick RocksDB configurations better than chance?

Offline, on the shipped RocksDB datasets (40 random configurations each, one measurement each):
a "run" of 10 evaluations draws its trials from the dataset's pool instead of running db_bench.
It starts with 3 random trials (the loop's initial design at a budget of 10 in 14 dimensions)
and then picks 7 more by a policy:

- ``random``: an unseen trial at random (random search);
- ``mean-K`` / ``ei-K``: BoAnon's plain GP (:class:`~boanon.models.PlainGPSurrogate`, fitted to
  the trials so far) ranks K unseen trials drawn at random (``all``: every unseen one) by its
  predicted mean, or by BoAnon's (Monte-Carlo) expected improvement, and the best is run;
- ``loop``: BoAnon's own proposal (:func:`boanon.acquisition.propose`, plain-GP strategy: its
  trust region, local search and ascent over the whole space), answered by the unseen trial
  nearest to it (unit-scaled encoding): where the live loop's search would go, on this pool.

The score is the rank in the pool of the run's best trial (0: the pool's best) and how often it
is among the pool's best three. It separates the two halves of a proposal: whether the model
ranks configurations (``mean``/``ei`` against ``random``) and whether the loop's candidates
are where good configurations are (``loop``). Written here because no library replays a pool.

    python -m benchmarks.pool_picks --reps 200 --loop-reps 40
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.provenance import provenance
from boanon.acquisition import propose
from boanon.acquisition.ei import expected_improvement
from boanon.adapters.ingest import ingest
from boanon.models.base import param_configs
from boanon.models.plain import PlainGPSurrogate
from boanon.objectives import Objective
from boanon.space import Space
from boanon.table import with_objectives

ROOT = Path(__file__).resolve().parent.parent
DATASETS = {"rocksdb-readrandomwriterandom": "cpu_micros_per_op",
            "rocksdb-mixgraph": "mixgraph_micros_per_op",
            "rocksdb-readrandom": "readrandom_micros_per_op"}
BUDGET, DESIGN = 10, 3
POLICIES = ("random", "mean-8", "ei-8", "mean-all", "ei-all", "loop")
OUT = ROOT / "benchmarks" / "results" / "pool_picks"


class Pool:
    """One dataset's trials: the table, their configurations, encodings and objective values."""

    def __init__(self, name: str, objective: str):
        folder = ROOT / "datasets" / name
        self.space = Space.from_yaml(folder / "dataset.yaml")
        self.objective = Objective(objective, "minimize")
        self.table = with_objectives(ingest(folder).table, [objective]).reset_index(drop=True)
        self.configs = param_configs(self.space, self.table)
        self.X = self.space.encode(self.configs)
        self.y = self.table[f"objective:{objective}"].to_numpy(dtype=float)
        self.rank = np.argsort(np.argsort(self.y))  # 0: the pool's best

    def pick(self, policy: str, seen: list[int], rng: np.random.Generator, seed: int) -> int:
        rest = np.setdiff1d(np.arange(len(self.y)), seen)
        if policy == "random":
            return int(rng.choice(rest))
        if policy == "loop":
            proposal = propose(self.space, self.table.iloc[seen], [self.objective], proposer="gp",
                               rng=np.random.default_rng([seed, len(seen)]))
            x = self.space.encode([proposal.config])[0]
            return int(rest[np.argmin(((self.X[rest] - x) ** 2).sum(axis=1))])
        kind, _, k = policy.partition("-")
        candidates = rest if k == "all" else rng.choice(rest, size=min(int(k), len(rest)), replace=False)
        model = PlainGPSurrogate(self.space, [self.objective]).fit(self.table.iloc[seen])
        samples = model.sample([self.configs[i] for i in candidates], 256, rng)[self.objective.name]
        if kind == "mean":
            return int(candidates[np.argmin(samples.mean(axis=0))])
        return int(candidates[np.argmax(expected_improvement(samples, self.y[seen].min()))])

    def run(self, policy: str, seed: int) -> int:
        """The pool rank of the best of one simulated run."""
        rng = np.random.default_rng(seed)
        seen = [int(i) for i in rng.permutation(len(self.y))[:DESIGN]]
        while len(seen) < BUDGET:
            seen.append(self.pick(policy, seen, rng, seed))
        return int(self.rank[seen].min())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="simulated runs per policy")
    parser.add_argument("--loop-reps", type=int, default=40, help="runs of the (slower) loop policy")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES,
                        help="re-run these only: the other policies' rows already in --out are kept")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = []
    for name, objective in DATASETS.items():
        pool = Pool(name, objective)
        for policy in args.policies:
            reps = args.loop_reps if policy == "loop" else args.reps
            ranks = np.array([pool.run(policy, seed) for seed in range(reps)])
            rows.append({"dataset": name, "objective": objective, "policy": policy, "runs": reps,
                         "mean_rank_of_best": round(float(ranks.mean()), 2),
                         "share_in_top3": round(float((ranks < 3).mean()), 2),
                         "share_at_pool_best": round(float((ranks == 0).mean()), 2)})
            print(rows[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    previous = args.out / "pool_picks.csv"
    if previous.exists() and set(args.policies) != set(POLICIES):
        kept = pd.read_csv(previous)
        table = pd.concat([kept[~kept.policy.isin(args.policies)], table], ignore_index=True)
        order = {p: i for i, p in enumerate(POLICIES)}
        table = table.sort_values(["dataset", "policy"], key=lambda c: c.map(order) if c.name == "policy"
                                  else c.map(list(DATASETS).index), kind="stable")
    table.to_csv(previous, index=False)
    (args.out / "provenance.json").write_text(json.dumps({**provenance(), "reps": args.reps,
                                                          "loop_reps": args.loop_reps}, indent=2) + "\n")


if __name__ == "__main__":
    main()
