"""One benchmark run, step by step: which surrogate proposed each trial, why, and what it found.

The harness (:mod:`benchmarks.run`) keeps only the best so far; finding out why two tuners part
needs each proposal's model choice (the cross-validation scores in its reason), the graph when it
changes, the acquisition's value and incumbent, and the configuration. This replays the same run as
``benchmarks.run`` (same tuner wrapper, seed and budget, the default first) and prints them,
with the parameters each model proposal kept at the incumbent's value (the best trial before it)
and, at the end, how often each parameter was kept: a model fitted to fewer trials than the
space has parameters is nearly flat in most of them, and a search that starts from the best
trials then carries the incumbent's settings along, good or poor (RocksDB's cold runs).

    python -m benchmarks.step_through fn-epidemic --tuners boanon boanon-gp --seeds 0 --budget 50
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from benchmarks.problems import Problem, make_problem
from benchmarks.tuners import BenchTuner, BoAnon, make_tuner, with_fixed_hash_seed


def _short(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def fresh_run(problem_name: str, tuner_name: str, seed: int, budget: int) -> tuple[Problem, BenchTuner]:
    """The problem and a fresh tuner set up as :mod:`benchmarks.run` sets it up (same wrapper,
    seed and budget, the default first), ready to be asked."""
    problem = make_problem(problem_name)
    return problem, make_tuner(tuner_name, problem.space, problem.objective, seed=seed, budget=budget,
                               start=problem.space.default(), knowledge=problem.knowledge)


def replay(problem_name: str, tuner_name: str, seed: int, budget: int) -> tuple[Problem, BoAnon]:
    """:func:`fresh_run` for a BoAnon tuner, whose model and reasons the replay reads."""
    problem, tuner = fresh_run(problem_name, tuner_name, seed, budget)
    if not isinstance(tuner, BoAnon):
        raise SystemExit(f"{tuner_name} is not a BoAnon tuner: it records no model or reasons")
    return problem, tuner


def step_through(problem_name: str, tuner_name: str, seed: int, budget: int, print_=print) -> list[dict]:
    """Run ``tuner_name`` on ``problem_name`` and print (and return) one record per trial."""
    problem, tuner = replay(problem_name, tuner_name, seed, budget)
    print_(f"=== {problem_name} {tuner_name} seed={seed} budget={budget}")
    best, best_config, edges_before, records = None, None, None, []
    for step in range(1, budget + 1):
        config = tuner.ask()
        kept = _kept(config, best_config)
        record = problem.evaluate(config)
        tuner.tell(record)
        value = tuner.value(record)
        if value is not None and (best is None or problem.objective.better(value, best)):
            best, best_config = value, dict(config)
        trial, graph = tuner.last_trial, tuner.graph
        edges = sorted(f"{e.source}->{e.target}" for e in graph.edges) if graph is not None else None
        acquisition = trial.info.get("acquisition", {})
        chosen_cv = (trial.info.get("cv") or {}).get(trial.surrogate, {})
        row = {"step": step, "surrogate": trial.surrogate, "value": value, "best": best,
               "rank_correlation": chosen_cv.get("rank_correlation"),  # None: the choice needed no CV
               "acquisition": {k: _short(acquisition[k])
                               for k in ("kind", "value", "incumbent", "trust_region") if k in acquisition},
               "config": {k: _short(v) for k, v in config.items()}, "reason": trial.reason,
               "kept": kept if trial.surrogate != "init" else None}
        print_(f"{step:3d} {trial.surrogate:12s} value={value} best={best} acquisition={row['acquisition']}")
        print_(f"    config: {json.dumps(row['config'])}")
        print_(f"    reason: {trial.reason}")
        if row["kept"] is not None:
            print_(f"    kept from the incumbent: {len(kept)} of {len(config)}: {', '.join(kept)}")
        if trial.surrogate == "structured":
            print_(f"    structure: {json.dumps(trial.info.get('structure'), default=str)}")
        if edges != edges_before:
            print_(f"    graph now: {edges}")
            edges_before = edges
        records.append(row)
    proposals = [r["kept"] for r in records if r["kept"] is not None]
    if proposals:
        counts = {name: sum(name in kept for kept in proposals) for name in problem.space.names}
        print_(f"    kept at the incumbent's value, of {len(proposals)} model proposals: "
               + ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    return records


def _kept(config: dict[str, Any], incumbent: dict[str, Any] | None) -> list[str]:
    """The parameters ``config`` holds at the incumbent's value (none before there is one)."""
    return [] if incumbent is None else [k for k, v in config.items() if incumbent.get(k) == v]


def replay_each(replay_one: Callable[[str, str, int, int], object], description: str,
                argv: list[str] | None = None) -> None:
    """The command line of a replay tool: ``replay_one(problem, tuner, seed, budget)`` for every
    seed and tuner asked for."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("problem")
    parser.add_argument("--tuners", nargs="+", default=["boanon"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="the seeds themselves, not a count")
    parser.add_argument("--budget", type=int, default=15)
    args = parser.parse_args(argv)
    for seed in args.seeds:
        for tuner_name in args.tuners:
            replay_one(args.problem, tuner_name, seed, args.budget)


def main(argv: list[str] | None = None) -> None:
    replay_each(step_through, __doc__, argv)


if __name__ == "__main__":
    with_fixed_hash_seed()  # replays a SMAC run as the harness ran it
    main()
