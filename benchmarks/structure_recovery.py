"""How much of a system's structure BoAnon learns from its logs, at 10 to 40 trials.

Three measurements, each against a known truth:

* **Real tuning runs** on the synthetic families (``synthetic``, ``synthetic-40`` of
  :mod:`benchmarks.problems`: known DAG): a cold BoAnon run (structured strategy, no knowledge)
  of 40 trials per seed (its table kept in ``results/structure_recovery/``); the graph is
  learned from the run's first k trials, as the run itself learns it (and with
  ``interventions=True``), and scored: parameter -> own-subsystem-metric recall (each
  parameter with an edge into its subsystem's metrics) and precision (learned parameter ->
  metric edges, fallbacks excluded, whose metric truly depends on the parameter).
* **The shipped datasets** with the experts' annotation files as truth (``sgd-googlenet`` with
  ``examples/sgd-annotations.yaml``, ``zigzag-resnet18`` tuned for EDP with
  ``examples/zigzag-edp-annotations.yaml``, ``rocksdb-mixgraph`` (40 random db_bench runs) with
  ``examples/rocksdb-annotations.yaml``), each restricted to its ``dataset.yaml`` space's
  parameters (a tuning run's table has no others) and learned without the annotations from the
  first k trials: the share of parameters with a learned path through metrics, the relation
  recall (expert node models whose node got a learned relation over (mostly) the same inputs),
  the expert's parameter -> metric edges found as learned paths, and how strongly those pairs
  go together over all the dataset's trials (median |Spearman rho|): a pair that barely
  correlates over 40 trials cannot be found in 10.
* **Learning time** at 250 variables x 100 trials (relation search included; aim 10 s).

    .venv/bin/python -m benchmarks.structure_recovery               # ~15 min on 2 shared cores
    .venv/bin/python -m benchmarks.structure_recovery --seeds 2 --no-runs

Writes ``benchmarks/results/structure_recovery.csv`` and prints the markdown tables of
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from benchmarks.learn_time import space_table
from benchmarks.problems import make_problem
from benchmarks.summary import markdown_table
from boanon.annotations import Knowledge
from boanon.graph import CausalGraph
from boanon.learners import learn
from boanon.nodespec import NodeSpec
from boanon.synthetic import SyntheticSystem
from boanon.table import read_table, records_to_table, write_table
from boanon.tuner import Tuner

RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 15, 20, 30, 40)
SYSTEMS = {"synthetic": dict(n_params=12, n_groups=4, seed=0),
           "synthetic-40": dict(n_params=40, n_groups=8, n_inert=10, n_distractors=20, seed=1)}
DATASET_SIZES = (5, *SIZES)
"""The datasets also at 5 trials: where a cold run of 10 first learns its graph."""
DATASETS = {"sgd": ("datasets/sgd-googlenet", "iteration_time", "examples/sgd-annotations.yaml"),
            "zigzag-edp": ("datasets/zigzag-resnet18", "edp", "examples/zigzag-edp-annotations.yaml"),
            "rocksdb-mixgraph": ("datasets/rocksdb-mixgraph", "mixgraph_micros_per_op",
                                 "examples/rocksdb-annotations.yaml")}


def own_subsystem_scores(system: SyntheticSystem, graph: CausalGraph) -> dict[str, float]:
    """Parameter -> own-subsystem-metric recall and precision (see the module docstring)."""
    chain_of = {p: set(g.chain) for g in system.groups for p in g.params}
    true = system.true_graph().to_networkx()
    fallback = {tuple(s.split(" -> ")) for s in graph.metadata.get("params_connected", [])}
    learned = [(e.source, e.target) for e in graph.edges
               if graph.roles.get(e.source) == "param" and graph.roles.get(e.target) == "metric"
               and (e.source, e.target) not in fallback]
    merged = {m: r for r, members in graph.metadata.get("merged", {}).items() for m in members}
    hits = sum(any(t in chain_of[p] or merged.get(t) in chain_of[p] or
                   any(merged.get(c) == t for c in chain_of[p]) for s, t in learned if s == p)
               for p in chain_of)
    correct = sum(1 for s, t in learned
                  if t in true and s in true and (nx.has_path(true, s, t) or
                                                   any(nx.has_path(true, s, m) for m, r in merged.items()
                                                       if r == t and m in true)))
    return {"recall": hits / max(1, len(chain_of)), "precision": correct / max(1, len(learned)),
            "n_param_metric_edges": len(learned)}


def run_tables(name: str, seed: int, budget: int) -> pd.DataFrame:
    """The table of a cold BoAnon run of ``budget`` trials on problem ``name``."""
    problem = make_problem(name)
    tuner = Tuner(problem.space, [problem.objective], seed=seed)
    records = []
    for _ in range(budget):
        trial = tuner.ask()
        record = problem.evaluate(dict(trial.config))
        tuner.tell(trial.id, record)
        records.append(record)
    return records_to_table(records)


def synthetic_rows(seeds: int, tables: Path) -> list[dict[str, Any]]:
    """Scores per system, seed, size and learner variant; a run's table is reused when saved."""
    rows = []
    tables.mkdir(parents=True, exist_ok=True)
    for name, kwargs in SYSTEMS.items():
        system = SyntheticSystem(**kwargs)
        for seed in range(seeds):
            path = tables / f"{name}-seed{seed}.csv"
            if path.is_file():
                table = read_table(path)
            else:
                table = run_tables(name, seed, max(SIZES))
                write_table(table, path)
            for k in SIZES:
                for interventions in (False, True):
                    graph = learn(table.iloc[:k].reset_index(drop=True), seed=seed,
                                  interventions=interventions).graph
                    rows.append({"case": name, "source": "tuning run", "seed": seed, "trials": k,
                                 "interventions": interventions, **own_subsystem_scores(system, graph)})
            print(f"{name} seed {seed}: " + ", ".join(
                f"{r['trials']}{'i' if r['interventions'] else ''}: {r['recall']:.2f}/{r['precision']:.2f}"
                for r in rows[-2 * len(SIZES):]), flush=True)
    return rows


def expert_param_edges(knowledge: Knowledge, table: pd.DataFrame) -> list[tuple[str, str]]:
    """The expert's required parameter -> metric edges whose two ends the table holds."""
    return [(s, t) for s, t in knowledge.required_edges()
            if f"param:{s}" in table.columns and f"metric:{t}" in table.columns]


def rank_association(param: pd.Series, metric: pd.Series) -> float:
    """|Spearman rho| of a numeric parameter with a metric; NaN for a categorical parameter."""
    x = pd.to_numeric(param, errors="coerce")
    return abs(x.corr(metric.astype(float), method="spearman")) if x.notna().all() else float("nan")


def edges_found(graph: CausalGraph, edges: list[tuple[str, str]]) -> int:
    """Edges of ``edges`` the graph holds as a directed path (to the metric or to what it was
    merged into), fallback edges excluded."""
    fallback = {tuple(e.split(" -> ")) for e in graph.metadata.get("params_connected", [])}
    g = nx.DiGraph([(e.source, e.target) for e in graph.edges if (e.source, e.target) not in fallback])
    merged_into = {m: r for r, members in graph.metadata.get("merged", {}).items() for m in members}
    ends = [(s, merged_into.get(t, t)) for s, t in edges]
    return sum(1 for s, t in ends if s in g and t in g and nx.has_path(g, s, t))


def dataset_rows() -> list[dict[str, Any]]:
    rows = []
    for case, (path, objective, expert_file) in DATASETS.items():
        table = space_table(ROOT / path, objective)
        knowledge = Knowledge.from_yaml(ROOT / expert_file)
        expert = {n: NodeSpec.parse(n, s, knowledge.source) for n, s in knowledge.node_models.items()}
        pairs = expert_param_edges(knowledge, table)
        rho = pd.Series([rank_association(table[f"param:{s}"], table[f"metric:{t}"]) for s, t in pairs])
        if len(pairs) <= 30:
            print(f"{case}, |rho| over all {len(table)} trials: " + ", ".join(
                f"{s} -> {t} {r:.2f}" for (s, t), r in zip(pairs, rho, strict=True) if r == r), flush=True)
        for k in DATASET_SIZES:
            result = learn(table.iloc[:k].reset_index(drop=True))
            params = result.graph.nodes("param")
            fallback = {e.split(" -> ")[0] for e in result.report["params_connected"]}
            found = {r["target"]: set(r["inputs"]) for r in result.report["relations"]}
            matched = [n for n, spec in expert.items() if n in found and
                       len(found[n] & spec.parents) >= 0.5 * len(spec.parents)]
            functions = [n for n, spec in expert.items() if spec.kind == "function"]
            rows.append({"case": case, "source": "dataset", "trials": k,
                         "params_through_metrics": (len(params) - len(fallback)) / max(1, len(params)),
                         "relations_found": len(result.report["relations"]),
                         "expert_models_matched": len(matched), "expert_models": len(expert),
                         "expert_functions_matched": len(set(matched) & set(functions)),
                         "expert_functions": len(functions),
                         "expert_edges_found": edges_found(result.graph, pairs), "expert_edges": len(pairs),
                         "expert_edges_rho": float(rho.median()) if len(rho) else float("nan"),
                         "matched": " ".join(sorted(matched))})
            print(f"{case} {k} trials: {rows[-1]['params_through_metrics']:.2f} of parameters through "
                  f"metrics, {len(matched)}/{len(expert)} expert models matched "
                  f"({rows[-1]['expert_functions_matched']}/{len(functions)} functions), "
                  f"{rows[-1]['expert_edges_found']}/{len(pairs)} expert parameter edges", flush=True)
    return rows


def timing_rows(repeats: int = 3) -> list[dict[str, Any]]:
    """Learning time at about 250 variables x 100 trials (relations included)."""
    system = SyntheticSystem(n_params=60, n_groups=12, chain_length=4, n_distractors=120, n_duplicates=10,
                             seed=0)
    table = system.sample_table(100, seed=0)
    n_vars = table.shape[1] - 1
    rows = []
    for r in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        result = learn(table)
        rows.append({"case": f"{n_vars} variables x 100 trials", "source": "timing", "seed": r,
                     "wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
                     "relations_s": result.report["timings"]["relations_s"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-runs", action="store_true", help="skip the synthetic tuning runs")
    parser.add_argument("--out", type=Path, default=RESULTS / "structure_recovery.csv")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = dataset_rows() + timing_rows() + \
        ([] if args.no_runs else synthetic_rows(args.seeds, args.out.with_suffix("")))
    frame = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    print(report(frame))


def report(frame: pd.DataFrame) -> str:
    """The README tables: medians over seeds per case and number of trials."""
    out = []
    runs = frame[frame.source == "tuning run"]
    if len(runs):
        by = ["case", "interventions", "trials"]
        agg = runs.groupby(by)[["recall", "precision"]].median().reset_index()
        out.append(markdown_table(agg.round(2)))
    data = frame[frame.source == "dataset"]
    if len(data):
        out.append(markdown_table(data[["case", "trials", "params_through_metrics", "relations_found",
                                        "expert_functions_matched", "expert_functions",
                                        "expert_models_matched", "expert_models", "expert_edges_found",
                                        "expert_edges", "expert_edges_rho"]].round(2)))
    timing = frame[frame.source == "timing"]
    if len(timing):
        out.append(markdown_table(timing.groupby("case")[["wall_s", "cpu_s", "relations_s"]].median()
                                  .reset_index().round(2)))
    return "\n\n".join(out)


if __name__ == "__main__":
    main()
