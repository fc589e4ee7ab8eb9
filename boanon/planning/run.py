"""``boanon tune --plan``: run a plan on a Dask cluster, scaled stage by stage, and compare.

The tuning loop is :func:`boanon.parallel.optimize_parallel` unchanged; this module only follows
it. After each ended trial it sets how many trials the loop keeps in flight (the stage's
workers) and scales the cluster through Dask's own API: ``cluster.scale(n)`` to grow; to shrink,
the workers running nothing are retired through the scheduler (checked idle there, in the same
step), then handed to ``cluster.scale_down``, so no trial loses its worker.
Once every trial has started, idle workers go at once (as the simulator assumes). Any cluster
object with ``scale``/``scale_down`` and a ``worker_spec`` works (``LocalCluster`` here;
dask-jobqueue, dask-cloudprovider and other ``SpecCluster`` deployments elsewhere).

Every worker's rented time runs from the scale call that asked for it to its retirement; billed
with the plan's instance types, that is the actual cost set against the prediction.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boanon.early_stopping import EarlyStopper
from boanon.errors import ConfigError
from boanon.executors import DaskExecutor, local_cluster
from boanon.parallel import optimize_parallel
from boanon.planning.plan import LOCAL, PlanFile
from boanon.runners.base import Runner
from boanon.store import StoredTrial

if TYPE_CHECKING:
    from boanon.tuner import Tuner


@dataclass
class PlannedRun:
    """What a planned run did: its wall-clock time, the machines it rented and their bill;
    ``local``: on a local cluster, whose workers have none of the instance types' start-up."""

    plan: PlanFile
    time_s: float = 0.0
    machines: list[dict[str, Any]] = field(default_factory=list)  # {name, instance, asked, released}
    local: bool = False
    ended_before: int = 0
    """Trials of the job that had ended when this session started (a resumed run)."""

    @property
    def cost(self) -> float:
        return sum(self.plan.instances[m["instance"]].cost(m["released"] - m["asked"])
                   for m in self.machines)

    def report(self) -> str:
        """Planned against actual time and cost; a local run against the plan without start-up
        (the plan's 90 s of start-up per machine set against a local run's actual 6 s said
        nothing of how the plan fared)."""
        predicted = self.plan.predicted
        lines = ["planned vs actual:"]
        if self.local and LOCAL in predicted:
            predicted = predicted[LOCAL]
            lines[0] = "planned (machines that start at once, as local workers do) vs actual:"
        if self.ended_before:  # the plan is the whole job's; this session ran only its rest
            lines.append(f"  resumed with {self.ended_before} of {self.plan.plan.budget} trials ended: "
                         "the actual time and cost are this session's, the planned ones the whole job's")
        if "time_s" in predicted:
            t, c = predicted["time_s"], predicted["cost"]
            lines.append(f"  time  planned {t['mean']:.1f} s (p10 {t['p10']:.1f}, p90 {t['p90']:.1f})"
                         f"  actual {self.time_s:.1f} s")
            lines.append(f"  cost  planned {c['mean']:.4g} (p10 {c['p10']:.4g}, p90 {c['p90']:.4g})"
                         f"  actual {self.cost:.4g}")
        else:
            lines.append(f"  time actual {self.time_s:.1f} s, cost actual {self.cost:.4g} (no prediction)")
        lines.append(f"  machines rented: {len(self.machines)}")
        return "\n".join(lines)


class _Scaler:
    """Keeps the cluster and the loop's concurrency at the plan's stage (called after each trial).

    Growing (``cluster.scale``) returns at once. Shrinking retires the idle workers through the
    scheduler at once, on the loop's thread (so the next trial cannot be given them), and closes
    them on a thread of its own: closing waits for the workers to go, and Dask's cluster lock
    for workers still starting too, and a worker the scheduler found busy is retried there until
    idle. The loop must not stop telling trials while machines come and go.
    """

    def __init__(self, plan: PlanFile, cluster: Any, executor: DaskExecutor, tuner: Tuner,
                 record: PlannedRun, start: float):
        self.plan, self.cluster, self.executor, self.tuner = plan.plan, cluster, executor, tuner
        self.record, self.start = record, start
        self.open: dict[str, dict[str, Any]] = {}  # worker name -> its machine record
        self.retiring: set[str] = set()  # asked to go, maybe still in the cluster's spec
        self._retirer = ThreadPoolExecutor(1, thread_name_prefix="boanon-retire")
        self._retirements: list[Future] = []
        self._stopping = threading.Event()  # the run ended: close retired workers, idle or not

    def _now(self) -> float:
        return time.monotonic() - self.start

    def _names(self) -> list[str]:
        """The cluster's workers, started or starting, that are not being retired."""
        return [str(n) for n in self.cluster.worker_spec if str(n) not in self.retiring]

    def adjust(self) -> None:
        ended = _ended(self.tuner)
        stage = self.plan.stages[self.plan.stage_of(ended)]
        self.executor.max_workers = stage.workers
        target = stage.workers
        if self.tuner.n_trials() >= self.plan.budget:  # all asked for: keep one worker per trial left
            target = min(target, self.tuner.n_trials() - ended)
        names = self._names()
        if target > len(names):
            self.cluster.scale(len(self.cluster.worker_spec) + target - len(names))
        elif target < len(names):
            self._retire_idle(names, target)
        self.note(stage.instance)

    def _retire_idle(self, names: list[str], target: int) -> None:
        """Shrink towards ``target`` workers, retiring only workers that run nothing: those not
        yet started first, and never so many that a trial waiting for a worker has none."""
        client = self.executor.client
        launched = {str(w["name"]): a for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
        busy = {a for a, keys in client.processing().items() if keys}
        idle = [n for n in names if n in launched and launched[n] not in busy] + \
               [n for n in names if n not in launched]
        keep = max(0, target - sum(1 for n in names if n in launched and launched[n] in busy))
        chosen = idle[keep:]
        if not chosen:
            return
        now = self._now()
        for name in chosen:
            self.retiring.add(name)
            if name in self.open:
                self.open.pop(name)["released"] = now
        spec_names = [k for k in self.cluster.worker_spec if str(k) in chosen]
        self._retire(chosen)  # before the loop submits another trial, so that none is given them
        self._retirements.append(self._retirer.submit(self._close_retired, chosen, spec_names))

    def _retire(self, names: list[str]) -> list[str]:
        """Retire through the scheduler those of ``names`` that run nothing; return those retired
        or not in the cluster."""
        return self.executor.client.run_on_scheduler(_retire_if_idle, names=names)

    def _close_retired(self, names: list[str], spec_names: list[Any]) -> None:
        """Close retired workers (on the retirer thread). ``cluster.scale_down`` alone closed a
        worker under any trial the scheduler had given it meanwhile, and the trial failed
        (KilledWorker: no retries); run again elsewhere, it would fail too (its directory not
        empty). So a worker goes only once the scheduler has retired it, idle: one still starting
        once started (a ``SpecCluster`` finishes a start, under its lock, before it closes the
        worker), one given a trial meanwhile once the trial has ended, or when the run ends."""
        self.cluster.sync(self.cluster.scale_down, [])  # removes none: waits for the starts
        while names and not self._stopping.is_set():
            retired = self._retire(names)
            names = [n for n in names if n not in retired]
            if names:
                self._stopping.wait(0.1)
        self.cluster.sync(self.cluster.scale_down, spec_names)

    def note(self, instance: str, at: float | None = None) -> None:
        """Open a record for every new worker (asked for ``at``, default now); close those of
        workers gone without being retired (lost)."""
        now = self._now()
        names = set(self._names())
        for name in names - set(self.open):
            self.open[name] = {"name": name, "instance": instance, "asked": now if at is None else at,
                               "released": None}
            self.record.machines.append(self.open[name])
        for name in set(self.open) - names:
            self.open.pop(name)["released"] = now

    def close(self) -> None:
        self._stopping.set()
        self._retirer.shutdown(wait=True)
        for failed in filter(None, (f.exception() for f in self._retirements)):
            warnings.warn(f"a worker could not be retired: {failed}", RuntimeWarning, stacklevel=2)
        now = self._now()
        for machine in self.open.values():
            machine["released"] = now
        self.open.clear()


async def _retire_if_idle(names: list[str], dask_scheduler: Any) -> list[str]:
    """On the scheduler: retire (``retire_workers``) those of the workers ``names`` that run
    nothing, and return the names retired or not in the cluster. The look and the retirement are
    one step of the scheduler's event loop, so no trial is given such a worker in between (asked
    from the client, a trial could be given it after the look, then run again elsewhere)."""
    workers = {str(ws.name): ws for ws in dask_scheduler.workers.values()}
    idle = [workers[n].address for n in names if n in workers and not workers[n].processing]
    retired = await dask_scheduler.retire_workers(workers=idle, close_workers=True, remove=True) \
        if idle else {}
    return [n for n in names if n not in workers or workers[n].address in retired]


def run_plan(plan: PlanFile, tuner: Tuner, runner: Runner, cluster: Any = None,
             stopper: EarlyStopper | None = None, trial_timeout: float | None = None,
             trials_dir: str | Path | None = None, adapter: str | None = None,
             callback: Callable[[StoredTrial], None] | None = None) -> PlannedRun:
    """Run ``plan`` (its budget) with ``tuner`` and ``runner`` on ``cluster`` (None: a local
    Dask cluster, closed at the end) and return what it did. A resumed run enters the plan at
    the stage its ended trials reach."""
    own = cluster is None
    record, start = PlannedRun(plan, local=own, ended_before=_ended(tuner)), time.monotonic()
    first_stage = plan.plan.stages[plan.plan.stage_of(record.ended_before)]
    first = first_stage.workers
    cluster = local_cluster(first) if own else cluster
    try:
        with DaskExecutor(cluster, n_workers=first) as executor:
            scaler = _Scaler(plan, cluster, executor, tuner, record, start)
            scaler.note(first_stage.instance, at=0.0)  # asked for when the run started
            scaler.adjust()

            def after(trial: StoredTrial) -> None:
                scaler.adjust()
                if callback is not None:
                    callback(trial)

            try:
                optimize_parallel(tuner, runner, plan.plan.budget, executor, trials_dir=trials_dir,
                                  adapter=adapter, stopper=stopper, trial_timeout=trial_timeout,
                                  callback=after)
            finally:
                record.time_s = time.monotonic() - start
                scaler.close()
    finally:
        if own:
            cluster.close()
    return record


def load_plan(path: str | Path, config_file: str | Path, budget: int | None = None,
              workers: int | None = None, dask: str | None = None,
              early_stopping: str | None = None) -> PlanFile:
    """The plan file for ``boanon tune CONFIG --plan``, refusing a CONFIG whose settings are not
    the ones it was made for (:class:`~boanon.planning.plan.MadeFor`) and options that
    contradict it."""
    plan = PlanFile.load(path)
    if plan.made_for is not None:
        plan.made_for.check(config_file, path)
    if budget is not None and budget != plan.plan.budget:
        raise ConfigError(path, "budget", f"the plan is for {plan.plan.budget} trials, not --budget "
                          f"{budget}: plan again for another budget")
    if early_stopping is not None and early_stopping != plan.plan.early_stopping:
        made_for = f"for {plan.plan.early_stopping!r}" if plan.plan.early_stopping \
            else "without early stopping"
        raise ConfigError(path, "early_stopping", f"the plan was made {made_for}, not --early-stopping "
                          f"{early_stopping!r}")
    if workers is not None:
        raise ConfigError(path, "stages", "the plan sets the workers of each stage: drop --workers")
    if dask not in (None, "local"):
        raise ConfigError(path, "stages", "boanon tune --plan scales a local Dask cluster; for a "
                          "cluster elsewhere call boanon.planning.run.run_plan with its cluster object")
    return plan


def _ended(tuner: Tuner) -> int:
    """Trials of the run that ended (and are not to be run again)."""
    counts = tuner.store.counts()
    return counts["done"] + counts["stopped"] + counts["failed"]
