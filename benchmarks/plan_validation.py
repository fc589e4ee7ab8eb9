"""Predicted against measured completion time and cost of planned runs on a local Dask cluster.

    .venv/bin/python -m benchmarks.plan_validation          # ~4 min, sleep-dominated (little CPU)

1. Profile: a planned run of ``--profile`` trials on 2 workers, exactly what ``boanon tune
   --plan`` runs; its store gives the trial durations and the loop's overhead per trial, and the
   time from the run's start to its first trial gives the local "instance"'s start-up latency.
2. For 1-4 workers, without early stopping and with ASHA (rungs at 2 and 4 of 8 steps, the
   better half goes on), the simulator predicts the completion time and cost of a one-stage plan
   of ``--budget`` trials; the plan is then run (a fresh local cluster, random proposals so that
   the loop's time per trial stays what was profiled) and timed.
3. The planner picks the cheapest plan for a deadline between the 1- and 4-worker predictions,
   and that plan is run too.

The system is :class:`benchmarks.sleepy.SleepyRunner`: steps of ``0.25 s x (0.5 + x0)``, three
times longer for a straggler, so trial durations vary with the configuration as a real system's
do. Writes ``benchmarks/results/plan_validation.csv``.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.sleepy import SPACE, SleepyRunner
from boanon.early_stopping import parse_stopper
from boanon.objectives import Objective
from boanon.planning.durations import from_store
from boanon.planning.instances import InstanceType
from boanon.planning.plan import Plan, PlanFile, even_stages
from boanon.planning.planner import Planner
from boanon.planning.run import PlannedRun, run_plan
from boanon.planning.simulator import Simulator
from boanon.space import Space
from boanon.store import Store
from boanon.tuner import Tuner

RESULTS = Path(__file__).resolve().parent / "results"
ASHA = "asha:min_resource=2,reduction_factor=2"
STEPS = 8


def planned_run(plan: PlanFile, seed: int, tmp: Path, name: str) -> tuple[PlannedRun, Store, float]:
    """``boanon tune --plan`` on the sleepy system, from Python; also the seconds from the run's
    start to its first trial's start."""
    store = Store(tmp / f"{name}.db")
    tuner = Tuner(Space.from_dict(SPACE), [Objective("loss", "minimize")], strategy="random",
                  seed=seed, store=store)
    stopper = parse_stopper(plan.plan.early_stopping) if plan.plan.early_stopping else None
    began = datetime.now(timezone.utc)
    run = run_plan(plan, tuner, SleepyRunner(steps=STEPS), stopper=stopper, trials_dir=tmp / name)
    first = min(datetime.fromisoformat(t.started) for t in store.trials())
    return run, store, (first - began).total_seconds()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--profile", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    args.out.mkdir(parents=True, exist_ok=True)
    probe = {"local": InstanceType("local", price_per_hour=3.6, billing=1.0, startup=0.0, max_count=4)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="boanon-plan-validation-") as tmp_name:
        tmp = Path(tmp_name)
        profile = PlanFile(Plan(even_stages(args.profile, 1, "local", 2), args.profile), probe)
        _, store, to_first = planned_run(profile, 100, tmp, "profile")
        store.close()
        measured = from_store(tmp / "profile.db", steps=STEPS)
        startup = max(0.0, to_first - measured.ask_overhead)  # the cluster's start, as runs pay it
        instances = {"local": InstanceType("local", price_per_hour=3.6, billing=1.0, startup=startup,
                                           max_count=max(args.workers))}
        print(measured.summary() + f"; cluster start-up {startup:.2f} s", flush=True)
        for early_stopping in (None, ASHA):
            sim = Simulator(instances, measured, args.budget, early_stopping, STEPS, args.replications)
            for workers in args.workers:
                plan = Plan(even_stages(args.budget, 1, "local", workers), args.budget, early_stopping, STEPS)
                rows.append(_measure(plan, instances, sim, tmp, seed=workers, label="fixed"))
        # the planner's choice for a deadline between the 1- and 4-worker predictions
        sim = Simulator(instances, measured, args.budget, None, STEPS, args.replications)
        slow, fast = (sim.predict(Plan(even_stages(args.budget, 1, "local", w), args.budget)).time_at(0.9)
                      for w in (min(args.workers), max(args.workers)))
        deadline = round((slow + fast) / 2, 1)
        planner = Planner(instances, deadline, 0.9, stages=2, replications=args.replications).fit(
            measured, args.budget)
        rows.append(_measure(planner.plan_, instances, planner.simulator_, tmp, seed=99,
                             label="planner's choice", deadline=deadline))
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "plan_validation.csv", index=False)
    print(table.to_string(index=False))


def _measure(plan: Plan, instances: dict, sim: Simulator, tmp: Path, seed: int, label: str,
             deadline: float | None = None) -> dict:
    """Predict ``plan``, run it, and set the two side by side, also after the cluster's start
    (which this shared machine pays unevenly: starting 4 worker processes takes longer than 1)."""
    predicted = sim.predict(plan)
    name = f"{label.split()[0]}-{plan.early_stopping is not None}-{plan.describe().split()[0]}-{seed}"
    run, store, to_first = planned_run(PlanFile(plan, instances, predicted.to_dict()), seed, tmp, name)
    stopped = store.counts()["stopped"]
    store.close()
    mean, startup = float(np.mean(predicted.times)), instances[plan.stages[0].instance].startup
    row = {"plan": label, "stages": plan.describe(), "early_stopping": plan.early_stopping or "none",
           "predicted_mean_s": round(mean, 2),
           "predicted_p10_s": round(float(np.quantile(predicted.times, 0.1)), 2),
           "predicted_p90_s": round(float(np.quantile(predicted.times, 0.9)), 2),
           "measured_s": round(run.time_s, 2),
           "error_pct": round(100 * (mean - run.time_s) / run.time_s, 1),
           "predicted_startup_s": round(startup, 2), "measured_startup_s": round(to_first, 2),
           "error_after_startup_pct": round(100 * ((mean - startup) - (run.time_s - to_first))
                                            / (run.time_s - to_first), 1),
           "predicted_cost": round(predicted.cost(), 4), "measured_cost": round(run.cost, 4),
           "stopped_trials": stopped,
           "deadline_s": deadline, "deadline_met": None if deadline is None else run.time_s <= deadline}
    print(row, flush=True)
    return row


if __name__ == "__main__":
    main()
