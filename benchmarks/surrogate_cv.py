"""How well the structured (DAG) surrogate predicts a real system, against the plain GP, and where it loses.

For one dataset directory (ingested with :func:`boanon.adapters.ingest.ingest`), the graph is learned
with the default learner (and optional annotations), then both surrogates are scored by k-fold
cross-validation of the objective (:func:`boanon.acquisition.selection.cross_validate`: log predictive
density of the standardised held-out values, Spearman rank correlation). Per modelled node it prints
the number of parents, the held-out score of the node's own model given its parents' *observed*
values ("local"), and the score of the node predicted from configurations through the whole chain
("chain"): a node whose local score is good but chain score poor inherits errors from its parents.

    nice -n 10 .venv/bin/python -m benchmarks.surrogate_cv datasets/rocksdb-readrandom \\
        --objective readrandom_ops_per_sec:maximize
    nice -n 10 .venv/bin/python -m benchmarks.surrogate_cv --all -o benchmarks/results/surrogate_cv.csv
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boanon.acquisition.selection import cross_validate
from boanon.adapters.ingest import ingest
from boanon.annotations import Knowledge
from boanon.learners import learn
from boanon.models.dag import DAGSurrogate
from boanon.models.plain import PlainGPSurrogate
from boanon.objectives import Objective
from boanon.space import Space
from boanon.table import column, with_objectives

# (dataset directory, objective, annotations file or None): the real datasets of the README table
CASES: list[tuple[str, str, str | None]] = [
    ("datasets/rocksdb-readrandom", "readrandom_ops_per_sec:maximize", None),
    ("datasets/sgd-googlenet", "iteration_time:minimize", None),
    ("datasets/sgd-alexnet", "iteration_time:minimize", None),
    ("datasets/zigzag-resnet18", "energy:minimize", None),
    ("datasets/zigzag-resnet18", "latency:minimize", None),
    ("datasets/zigzag-resnet18", "edp:minimize", None),
]


def parse_objective(text: str) -> Objective:
    name, _, direction = text.partition(":")
    return Objective(name, direction or "minimize")


def evaluate(dataset: str | Path, objective: Objective, annotations: str | Path | None = None,
             n_folds: int = 5, seed: int = 0, nodes: bool = True) -> dict[str, Any]:
    """CV of both surrogates on ``dataset`` (its ``dataset.yaml`` holds the space), and per node."""
    dataset = Path(dataset)
    space = Space.from_yaml(dataset / "dataset.yaml")
    table = with_objectives(ingest(dataset).table, [objective.name])  # as a run towards it sees it
    knowledge = Knowledge.from_yaml(annotations) if annotations else None
    start = time.perf_counter()
    graph = learn(table, knowledge, seed=seed).graph
    learn_s = time.perf_counter() - start
    out: dict[str, Any] = {"dataset": dataset.name, "objective": objective.name, "n_trials": len(table),
                           "learn_s": round(learn_s, 1)}
    dag = DAGSurrogate(space, graph, [objective], random_state=seed).fit(table)
    gp = PlainGPSurrogate(space, [objective]).fit(table)
    for s in (dag, gp):
        cv = cross_validate(s, table, np.random.default_rng(seed), n_folds)
        out[f"{s.name}_rank"] = round(cv["rank_correlation"], 3)
        out[f"{s.name}_lpd"] = round(cv["log_predictive_density"], 3)
    out["n_nodes"] = len(dag.order_)
    out["objective_parents"] = len(dag.models_[objective.name].parents)
    if nodes:
        out["nodes"] = node_table(dag, table, n_folds, seed)
    return out


def node_table(dag: DAGSurrogate, table: pd.DataFrame, n_folds: int, seed: int) -> pd.DataFrame:
    """Per node: parents, local CV (observed parents) and chain CV (sampled through the DAG)."""
    rows = []
    for node, sc in dag.node_scores(np.random.default_rng(seed), n_folds).items():
        # the node posed as the objective, so that selection's CV scores it through the chain
        posed = table.assign(**{column("objective", node): table[dag.node_column(node)]})
        chain = DAGSurrogate(dag.space, dag.graph, [Objective(node)], random_state=seed).fit(posed)
        cv = cross_validate(chain, posed, np.random.default_rng(seed), n_folds)
        rows.append({"node": node, "kind": sc["kind"], "params": sc["param_parents"],
                     "metrics": sc["metric_parents"], "n": sc["n"],
                     "local_rank": round(sc["rank_correlation"], 2),
                     "local_lpd": round(sc["log_predictive_density"], 2),
                     "chain_rank": round(cv["rank_correlation"], 2),
                     "chain_lpd": round(cv["log_predictive_density"], 2)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", help="dataset directory (with dataset.yaml)")
    parser.add_argument("--objective", help="NAME[:minimize|maximize]")
    parser.add_argument("--annotations", help="annotations YAML for learning")
    parser.add_argument("--all", action="store_true", help="run the README cases")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-nodes", action="store_true", help="skip the per-node table")
    parser.add_argument("-o", "--output", help="CSV of the summary rows")
    args = parser.parse_args(argv)
    if args.all:
        cases = CASES
    elif args.dataset and args.objective:
        cases = [(args.dataset, args.objective, args.annotations)]
    else:
        parser.error("give DATASET and --objective, or --all")
    summary = []
    for dataset, objective, knowledge in cases:
        res = evaluate(dataset, parse_objective(objective), knowledge, args.folds, args.seed,
                       nodes=not args.no_nodes)
        nodes = res.pop("nodes", None)
        summary.append(res)
        print(pd.Series(res).to_string(), flush=True)
        if nodes is not None:
            with pd.option_context("display.width", 200, "display.max_rows", 500):
                print(nodes.to_string(index=False), "\n", flush=True)
    if args.output:
        pd.DataFrame(summary).to_csv(args.output, index=False)


if __name__ == "__main__":
    main()
