"""Multi-objective and warm-start benchmarks on synthetic systems with a known Pareto front.

1. Hypervolume against budget on the two-objective synthetic system (its Pareto set is known,
   see ``SyntheticSystem.pareto_configs``): EHVI from joint samples (``ehvi``), EI of a weighted
   sum normalised by the observed front (``scalarized``), a single-objective run on the fixed
   sum ``cost + cost2`` (``single-sum``), and random search; same initial design.
2. Warm against cold start: the same system whose optima moved (``target_shift``), tuned with
   the trials of the original system as a related task, or from scratch.

``--surrogate structured`` (or ``gp``) runs the real loop, :class:`boanon.tuner.Tuner` with that
strategy (the structure is learned from the trials); ``multitask-gp`` runs the same acquisition
(:func:`boanon.acquisition.score_candidates` maximised by
:func:`boanon.acquisition.optimize.maximize`) around the coregionalised GP of
:mod:`boanon.multitask`.

    python -m benchmarks.multiobjective [--quick] [--seeds N] [--budget N]

Writes ``benchmarks/results/multiobjective-<surrogate>-*.{csv,json,png}``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from boanon.acquisition import score_candidates
from boanon.acquisition.optimize import SearchSettings, maximize
from boanon.learners import learn
from boanon.models.base import param_configs
from boanon.multiobjective import (
    Scalarization,
    hypervolume,
    hypervolume_trace,
    pareto_mask,
)
from boanon.multiobjective.plot import plot_pareto, plot_traces
from boanon.multitask import MultiTaskGPSurrogate, RelatedTask, TaskColumn
from boanon.objectives import Objective
from boanon.synthetic import SyntheticSystem
from boanon.table import records_to_table
from boanon.tuner import Tuner

OUT = Path(__file__).parent / "results"
METHODS = ("ehvi", "scalarized", "single-sum", "random")
SETTINGS = SearchSettings(n_sobol=128, n_local=24, local_rounds=2, top=4, group_rounds=0,
                          screen_samples=16, final_samples=64, n_final=4)


def mo_system(seed: int) -> SyntheticSystem:
    return SyntheticSystem(n_params=8, n_groups=2, n_distractors=2, n_duplicates=0, n_objectives=2, seed=seed)


def true_front(system: SyntheticSystem, objectives: list[Objective],
               n: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """The known front's hypervolume reference: dense samples of the Pareto set, noise-free."""
    configs = system.pareto_configs(n, np.random.default_rng(0))
    pts = np.array([[system.evaluate(c, noise=False)[o.name] for o in objectives] for c in configs])
    spread = pts.max(axis=0) - pts.min(axis=0)
    return pts, pts.max(axis=0) + 0.5 * spread


def tuner_run(system: SyntheticSystem, objectives: list[Objective], strategy: str, budget: int,
              n_init: int, seed: int, evaluate: Callable[[dict], dict] | None = None,
              **options: Any) -> pd.DataFrame:
    """A whole run of the real loop (:class:`Tuner`, in memory); ``options`` go to the Tuner."""
    evaluate = evaluate or system.evaluate
    tuner = Tuner(system.space, objectives, strategy=strategy, seed=seed, n_init=n_init,
                  propose_options={"settings": SETTINGS, **options.pop("propose_options", {})}, **options)
    while tuner.n_trials() < budget:
        trial = tuner.ask()
        tuner.tell(trial.id, evaluate(trial.config))
    return tuner.table()


def with_total(values: dict[str, float]) -> dict[str, float]:
    """The two objectives summed into one: what a user without multi-objective support tunes."""
    return {**values, "total": values["cost"] + values["cost2"]}


def icm_run(system: SyntheticSystem, objectives: list[Objective], budget: int, n_init: int, seed: int,
            scalarization: Scalarization | None = None, related: pd.DataFrame | None = None) -> pd.DataFrame:
    """The same loop around the coregionalised GP (outputs and, with ``related``, tasks jointly)."""
    # the Tuner's initial design: the default configuration, then Sobol points from the seed
    design = [system.space.default()] + system.space.sample(n_init - 1, np.random.default_rng(seed))
    rng = np.random.default_rng([seed, 1])
    records = [system.record(f"t{i:04d}", c) for i, c in enumerate(design)]
    tasks = TaskColumn(() if related is None else (RelatedTask("related", "synthetic", related),))
    space = tasks.space(system.space)
    while len(records) < budget:
        own = records_to_table(records)
        table = tasks.table(own)
        surrogate = MultiTaskGPSurrogate(space, objectives).fit(table)
        done = param_configs(space, table)
        own_done = done[:len(own)]  # the run's own trials come first
        config, _, _ = maximize(space, _scorer(surrogate, own, objectives, rng, scalarization), rng,
                                starts=own_done[-4:], exclude=done, settings=SETTINGS)
        config = {n: config[n] for n in system.space.names}
        records.append(system.record(f"t{len(records):04d}", config))
    return records_to_table(records)


def _scorer(surrogate: MultiTaskGPSurrogate, table: pd.DataFrame, objectives: list[Objective],
            rng: np.random.Generator, scalarization: Scalarization | None):
    def score(configs: list[dict], n: int) -> np.ndarray:
        return score_candidates(surrogate.sample(configs, n, rng), table, objectives,
                                scalarization=scalarization)[0]
    return score


def run_mo(method: str, system: SyntheticSystem, budget: int, n_init: int, seed: int,
           surrogate: str) -> pd.DataFrame:
    objectives = [Objective(n) for n in system.objectives]
    if method == "single-sum":  # a single-objective run; the ICM comparison uses the plain GP here
        return tuner_run(system, [Objective("total")], "gp" if surrogate == "multitask-gp" else surrogate,
                         budget, n_init, seed, lambda c: with_total(system.evaluate(c)))
    scal = Scalarization("weighted_sum") if method == "scalarized" else None
    if surrogate == "multitask-gp" and method != "random":
        return icm_run(system, objectives, budget, n_init, seed, scal)
    strategy = "random" if method == "random" else surrogate
    return tuner_run(system, objectives, strategy, budget, n_init, seed,
                     propose_options={"scalarization": scal} if scal else {})


def warm_run(warm: bool, seed: int, budget: int, n_init: int, n_related: int, shift: float,
             surrogate: str) -> list[float]:
    """Best-so-far regret on the shifted system, with or without the original's trials."""
    target = SyntheticSystem(n_params=8, n_groups=2, n_distractors=2, n_duplicates=0, seed=seed,
                             target_shift=shift)
    source = SyntheticSystem(n_params=8, n_groups=2, n_distractors=2, n_duplicates=0, seed=seed)
    objectives = [Objective("cost")]
    related = source.sample_table(n_related, seed=seed + 100)
    if surrogate == "multitask-gp":
        table = icm_run(target, objectives, budget, n_init, seed, related=related if warm else None)
    else:
        task = RelatedTask("related", f"synthetic seed {seed}", related, learn(related, seed=seed).graph)
        table = tuner_run(target, objectives, surrogate, budget, n_init, seed,
                          warm_start=task if warm else None)
    best = target.optimum()["cost"]
    values = [target.evaluate(c, noise=False)["cost"] - best for c in param_configs(target.space, table)]
    return list(np.minimum.accumulate(values))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--n-init", type=int, default=6)
    ap.add_argument("--surrogate", choices=["structured", "gp", "multitask-gp"], default="structured",
                    help="structured / gp: the Tuner's strategy; multitask-gp: the coregionalised GP")
    ap.add_argument("--quick", action="store_true", help="2 seeds, budget 14: a smoke run")
    ap.add_argument("--part", choices=["all", "mo", "warm"], default="all")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.budget = 2, 14
    OUT.mkdir(parents=True, exist_ok=True)
    summary: dict = {"settings": vars(args)}
    warnings.simplefilter("ignore")  # sklearn reports every hyperparameter at a bound
    with threadpool_limits(limits=1, user_api="blas"):
        if args.part in ("all", "mo"):
            summary["multiobjective"] = mo_benchmark(args)
        if args.part in ("all", "warm"):
            summary["warm_start"] = warm_benchmark(args)
    path = _out(args, f"{args.part}.json")
    path.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


def mo_benchmark(args: argparse.Namespace) -> dict:
    traces: dict[str, list[np.ndarray]] = {m: [] for m in METHODS}
    timing: dict[str, float] = {}
    for seed in range(args.seeds):
        system = mo_system(seed)
        objectives = [Objective(n) for n in system.objectives]
        front, ref = true_front(system, objectives)
        best_hv = hypervolume(front, ref)
        for method in traces:
            start = time.monotonic()
            table = run_mo(method, system, args.budget, args.n_init, seed, args.surrogate)
            timing[method] = timing.get(method, 0.0) + time.monotonic() - start
            noise_free = _noise_free(table, system)
            traces[method].append(hypervolume_trace(noise_free, objectives, list(ref)) / best_hv)
            if seed == 0:
                plot_pareto(noise_free, objectives, _out(args, f"front-{method}.png"),
                            title=f"{method}: seed 0, {args.budget} trials",
                            known_front=front[pareto_mask(front)])
            print(f"seed {seed} {method}: HV fraction {traces[method][-1][-1]:.3f}", flush=True)
    plot_traces(traces, _out(args, "hypervolume.png"), ylabel="fraction of the true front's HV",
                title=f"2 objectives, {args.surrogate} surrogate")
    rows = [{"method": m, "seed": s, "trial": i + 1, "hv_fraction": v}
            for m, runs in traces.items() for s, run in enumerate(runs) for i, v in enumerate(run)]
    pd.DataFrame(rows).to_csv(_out(args, "hypervolume.csv"), index=False)
    return {m: {"final_hv_fraction_mean": float(np.mean([r[-1] for r in runs])),
                "final_hv_fraction_per_seed": [round(float(r[-1]), 4) for r in runs],
                "seconds": round(timing[m], 1)} for m, runs in traces.items()}


def warm_benchmark(args: argparse.Namespace) -> dict:
    traces: dict[str, list[list[float]]] = {"warm": [], "cold": []}
    for seed in range(args.seeds):
        for mode in traces:
            regret = warm_run(mode == "warm", seed, max(args.budget // 2, 8), 3, 40, 0.1, args.surrogate)
            traces[mode].append(regret)
            print(f"seed {seed} {mode}: final regret {regret[-1]:.4f}", flush=True)
    plot_traces({k: np.array(v) for k, v in traces.items()}, _out(args, "warmstart.png"),
                ylabel="best-so-far regret", title="related task (optima shifted by 0.1)")
    rows = [{"mode": m, "seed": s, "trial": i + 1, "regret": v}
            for m, runs in traces.items() for s, run in enumerate(runs) for i, v in enumerate(run)]
    pd.DataFrame(rows).to_csv(_out(args, "warmstart.csv"), index=False)
    return {m: {"final_regret_mean": float(np.mean([r[-1] for r in runs])),
                "final_regret_per_seed": [round(r[-1], 4) for r in runs],
                "regret_after_init_plus_3_mean": float(np.mean([r[min(5, len(r) - 1)] for r in runs]))}
            for m, runs in traces.items()}


def _out(args: argparse.Namespace, name: str) -> Path:
    return OUT / f"multiobjective-{args.surrogate}-{name}"


def _noise_free(table: pd.DataFrame, system: SyntheticSystem) -> pd.DataFrame:
    """The table with objectives replaced by their noise-free values (what the run really found)."""
    out = table.copy()
    configs = param_configs(system.space, table)
    for name in system.objectives:
        out[f"objective:{name}"] = [system.evaluate(c, noise=False)[name] for c in configs]
    return out


if __name__ == "__main__":
    main()
