"""Seeded proposals, configuration by configuration: a refactoring must leave them identical.

    PYTHONPATH=<tree> python benchmarks/identical_proposals.py OUT.jsonl [SCENARIO ...]
    python benchmarks/identical_proposals.py --compare BEFORE.jsonl AFTER.jsonl

Run it on two trees (main's code and a branch's) and compare: every proposed configuration, the
surrogate that chose it, the acquisition's record and the DAG surrogate's recorded structure must
be equal. Scenarios on the synthetic system: the tuning loop (ask/tell, 10 trials, seed 3) with
one objective (structured and gp strategies), an output constraint (feasible, and never
feasible: probability of feasibility), two objectives (EHVI, constrained or not; a Chebyshev
scalarisation) and formula annotations; and, as the short loops' cross-validation keeps choosing
the plain GP, the DAG surrogate's own proposals on seeded tables of 8, 11 and 14 trials (the true
graph, formula annotations, a graph learned with relations, a constraint, EHVI, a scalarisation),
so learned forms, annotated formulas and relations from the logs are exercised. Issue 28's
acquisition and node-kind refactoring: benchmarks/results/identical_proposals.md.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from boanon.acquisition import SearchSettings, build_acquisition, parameter_groups
from boanon.acquisition.propose import maximize_acquisition
from boanon.annotations import Knowledge
from boanon.learners import learn
from boanon.models import DAGSurrogate
from boanon.models.base import param_configs
from boanon.multiobjective import OutputConstraint, Scalarization
from boanon.objectives import parse_objectives
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

N_TRIALS = 10
N_INIT = 4


def run(system: SyntheticSystem, **kwargs) -> list[dict]:
    """The tuning loop's trials: each configuration, its surrogate and its acquisition record."""
    tuner = Tuner(system.space, system.objectives, seed=3, n_init=N_INIT, relearn_every=3, **kwargs)
    out = []
    for _ in range(N_TRIALS):
        trial = tuner.ask()
        acq = trial.info.get("acquisition", {}) if trial.info else {}
        out.append({"config": trial.config, "surrogate": trial.surrogate, "acquisition": acq})
        tuner.tell(trial.id, system.evaluate(trial.config))
    return out


def annotated(system: SyntheticSystem) -> Knowledge:
    """Formula annotations on the first two groups' chains (a line with a GP residual, and one
    without) and the true graph's edges required."""
    k = Knowledge(source="identical_proposals")
    for e in system.true_graph().edges:
        k.require(e.source, e.target)
    g0, g1 = system.groups[0].chain, system.groups[1].chain
    k.node_model(g0[1], formula=f"a * {g0[0]} + b", free={"a": {"init": 1.0}, "b": {}})
    k.node_model(g1[1], formula=f"c * {g1[0]} + d", free={"c": {}, "d": {}}, residual="none")
    return k


def dag_run(system: SyntheticSystem, knowledge: Knowledge | None = None, learned: bool = False,
            constraints=(), scalarization=None) -> list[dict]:
    """The structured path the short tuner runs never reach (the plain GP wins their CV): the DAG
    surrogate fitted on seeded tables, its acquisition built and maximised as propose() does.
    The graph is the true one under ``knowledge``, or ``learned`` from the table (relations on)."""
    objectives = parse_objectives(system.objectives)
    out = []
    for n in (8, 11, 14):
        table = system.sample_table(n, seed=n)
        if learned:
            graph = learn(table, knowledge, seed=n).graph
        else:
            graph = system.true_graph() if knowledge is None else knowledge.apply(system.true_graph())
        model = DAGSurrogate(system.space, graph, objectives, random_state=n).fit(table)
        rng = np.random.default_rng(n)
        built = build_acquisition(model, table, objectives, list(constraints), rng, None, scalarization)
        score, info = built if isinstance(built, tuple) else (built, None)  # main's was (closure, info)
        groups = parameter_groups(system.space, graph, [o.name for o in objectives])
        config, value, search = maximize_acquisition(system.space, score, table, objectives, rng, groups,
                                                     param_configs(system.space, table), SearchSettings(),
                                                     early=True)
        out.append({"config": config, "surrogate": "structured",
                    "acquisition": {**(score.describe() if info is None else info), "value": value, **search},
                    "structure": model.structure_record()})
    return out


def main(path: str, only: list[str]) -> None:
    single = SyntheticSystem(n_params=8, n_groups=2, seed=0)
    two = SyntheticSystem(n_params=8, n_groups=2, n_distractors=2, n_duplicates=0, n_objectives=2, seed=0)
    scenarios = {
        "single_structured": lambda: run(single, strategy="structured"),
        "single_gp": lambda: run(single, strategy="gp"),
        "single_constrained": lambda: run(single, strategy="gp",
                                          output_constraints=[OutputConstraint("g0_load", max=2.0)]),
        "single_infeasible_start": lambda: run(single, strategy="gp",
                                               output_constraints=[OutputConstraint("g0_load", max=-5.0)]),
        "two_ehvi_constrained": lambda: run(two, strategy="structured",
                                            output_constraints=[OutputConstraint("g0_load", max=1.5)]),
        "two_ehvi_gp": lambda: run(two, strategy="gp"),
        "two_scalarized": lambda: run(two, strategy="gp",
                                      propose_options={"scalarization": Scalarization("chebyshev")}),
        "annotated_formulas": lambda: run(single, strategy="structured", knowledge=annotated(single)),
        "dag_true_graph": lambda: dag_run(single),
        "dag_annotated_formulas": lambda: dag_run(single, annotated(single)),
        "dag_learned_relations": lambda: dag_run(single, learned=True),
        "dag_constrained": lambda: dag_run(single, constraints=[OutputConstraint("g0_load", max=2.0)]),
        "dag_two_ehvi": lambda: dag_run(two, constraints=[OutputConstraint("g0_load", max=1.5)]),
        "dag_two_scalarized": lambda: dag_run(two, scalarization=Scalarization("chebyshev")),
    }
    with open(path, "w") as f:
        for name, scenario in scenarios.items():
            if only and name not in only:
                continue
            f.write(json.dumps({"scenario": name, "trials": scenario()}, default=str) + "\n")
            f.flush()
            print(name, "done", flush=True)


def compare(before: str, after: str) -> bool:
    """Print, per scenario, how many proposals are identical; True when all are."""
    a = {d["scenario"]: d["trials"] for d in map(json.loads, open(before))}
    b = {d["scenario"]: d["trials"] for d in map(json.loads, open(after))}
    ok = True
    for name, ta in a.items():
        tb = b.get(name)
        if tb is None or len(tb) != len(ta):
            print(f"{name}: missing or of another length in {after}")
            ok = False
            continue
        same = [x["config"] == y["config"] and x["surrogate"] == y["surrogate"]
                and x.get("structure") == y.get("structure") for x, y in zip(ta, tb, strict=True)]
        acquisitions = all(x["acquisition"] == y["acquisition"] for x, y in zip(ta, tb, strict=True))
        kinds = sorted({x["acquisition"].get("kind", "-") for x in ta})
        print(f"{name}: {sum(same)}/{len(same)} configurations identical; acquisition records identical: "
              f"{acquisitions}; surrogates {sorted({x['surrogate'] for x in ta})}; acquisitions {kinds}")
        ok &= all(same) and acquisitions
    print("ALL IDENTICAL" if ok else "SOME DIFFER")
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(0 if compare(sys.argv[2], sys.argv[3]) else 1)
    main(sys.argv[1], sys.argv[2:])
