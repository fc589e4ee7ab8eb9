"""Monte-Carlo simulation of a tuning job under a plan: when it ends and what it costs.

One replication plays the job as ``boanon tune --workers/--dask`` runs it: the loop asks for one
trial at a time (each ask costs the measured loop overhead, serialised on the loop) whenever
fewer trials are in flight than the stage's workers; a trial runs on an idle machine once that
machine has started up; its duration is drawn from the measured sample (so stragglers come
with the sample) and divided by the instance's speed. With asynchronous successive halving, a
trial reaches rung ``k`` after ``rung_step(k) / steps`` of its duration and goes on only if
:meth:`~boanon.early_stopping.SuccessiveHalving.promotable` says so among the trials that reached
that rung before it (its own rule, so the simulation stops what the run would); a stopped trial
ends one step later. A trial's intermediate value is a random rank, constant along its curve:
which trials are good is not known in advance, and the simulation does not pretend to.

Machines: a stage's machines are asked for when it starts (billed from then, working after the
type's start-up latency); a shrinking stage releases idle machines at once and busy ones when
their trial ends; once every trial has started, a machine is released as soon as it is idle. Each
machine's bill is its rented time rounded up to the type's billing granularity.

Replications share their random draws across plans (common random numbers), so two plans are
compared on the same trials and the planner's choices are not noise. Written by hand: the job
is BoAnon's own loop, and a discrete-event library would add a dependency for ~100 lines.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, replace

import numpy as np

from boanon.early_stopping import SuccessiveHalving, parse_stopper
from boanon.planning.durations import TrialTimes
from boanon.planning.instances import InstanceType
from boanon.planning.plan import Plan

QUANTILES = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class Prediction:
    """Completion times (s), costs and stage start times (s; one column per stage) of the
    replications of one plan."""

    times: np.ndarray
    costs: np.ndarray
    stage_starts: np.ndarray

    def time_at(self, probability: float) -> float:
        """The time the job ends by with ``probability``."""
        return float(np.quantile(self.times, probability))

    def cost(self) -> float:
        return float(np.mean(self.costs))

    def p_deadline(self, deadline: float) -> float:
        return float(np.mean(self.times <= deadline))

    def to_dict(self, deadline: float | None = None, probability: float | None = None) -> dict:
        """Mean and quantiles of time and cost (JSON-ready)."""
        out: dict = {}
        for name, values in (("time_s", self.times), ("cost", self.costs)):
            out[name] = {"mean": float(np.mean(values)),
                         **{f"p{round(q * 100)}": float(np.quantile(values, q)) for q in QUANTILES}}
        out["stage_start_s"] = [float(np.median(c)) for c in self.stage_starts.T]  # median
        if deadline is not None:
            out["p_deadline"] = self.p_deadline(deadline)
        if probability is not None:
            out["time_s"][f"at_probability_{probability:g}"] = self.time_at(probability)
        return out


@dataclass
class _Machine:
    kind: InstanceType
    asked: float
    ready: float
    busy: bool = False
    retiring: bool = False
    released: float | None = None


@dataclass
class _Job:
    """The state of one replication."""

    plan: Plan
    instances: dict[str, InstanceType]
    machines: list[_Machine] = field(default_factory=list)
    pool: list[_Machine] = field(default_factory=list)  # the stage's machines (not retiring)

    def provision(self, instance: str, n: int, now: float) -> None:
        kind = self.instances[instance]
        for _ in range(n):
            machine = _Machine(kind, now, now + kind.startup)
            self.machines.append(machine)
            self.pool.append(machine)

    def retire(self, machine: _Machine, now: float) -> None:
        machine.retiring = True
        if machine in self.pool:
            self.pool.remove(machine)
        if not machine.busy:
            machine.released = now

    def enter_stage(self, index: int, now: float) -> None:
        stage = self.plan.stages[index]
        if self.pool and self.pool[0].kind.name != stage.instance:
            for machine in list(self.pool):
                self.retire(machine, now)
        excess = len(self.pool) - stage.workers
        if excess > 0:  # idle ones first, the latest to be ready first (as Dask drops unlaunched)
            for machine in sorted(self.pool, key=lambda m: (m.busy, -m.ready))[:excess]:
                self.retire(machine, now)
        self.provision(stage.instance, stage.workers - len(self.pool), now)

    def cost(self, end: float) -> float:
        return sum(m.kind.cost((end if m.released is None else m.released) - m.asked)
                   for m in self.machines)


def _looked_in(times: TrialTimes) -> str:
    """`` (no progress.jsonl of a done trial in DIR)``: where the steps were looked for, so a
    mistyped ``--trials-dir`` (or a run moved from its trial folders) is seen as the cause."""
    return f" (no progress.jsonl of a done trial in {times.steps_from})" if times.steps_from else ""


def asha_rule(spec: str) -> SuccessiveHalving:
    """The job's early-stopping rule from its spec: ``asha`` only, whose decisions happen at
    rungs (the median rule judges every step of every trial)."""
    rule = parse_stopper(spec)
    if not isinstance(rule, SuccessiveHalving):
        raise ValueError(f"early stopping {spec!r}: plans simulate 'asha' only")
    return rule


class Simulator:
    """Predicts completion time and cost of plans for one job (``budget`` trials whose
    durations come from ``times``), ``replications`` Monte-Carlo runs each.

    ``early_stopping`` is the job's rule as ``boanon tune --early-stopping`` takes it (``asha``
    only: its decisions happen at rungs; the median rule judges every step of every trial).
    """

    def __init__(self, instances: dict[str, InstanceType], times: TrialTimes, budget: int,
                 early_stopping: str | None = None, steps: int | None = None,
                 replications: int = 200, seed: int = 0):
        self.instances, self.times, self.budget = instances, times, int(budget)
        self.early_stopping, self.replications, self.seed = early_stopping, int(replications), seed
        self.steps = steps or times.steps
        self.rule: SuccessiveHalving | None = None
        if early_stopping is not None:
            rule = asha_rule(early_stopping)
            if not self.steps:
                raise ValueError("early stopping needs the progress steps of a complete trial: none "
                                 f"were recorded with the durations{_looked_in(times)}; give them (--steps)"
                                 + (" or the run's trial folders (--trials-dir)" if times.steps_from else ""))
            self.rule = rule
        rng = np.random.default_rng(seed)
        self._durations = rng.choice(times.durations, size=(self.replications, self.budget))
        self._ranks = rng.random((self.replications, self.budget))
        self._cache: dict[tuple, Prediction] = {}

    def without_startup(self) -> Simulator:
        """This simulator (the same draws) with machines that work as soon as they are asked
        for: what a local run of the plan, whose workers are processes of this machine, is."""
        instances = {n: replace(t, startup=0.0) for n, t in self.instances.items()}
        return Simulator(instances, self.times, self.budget, self.early_stopping, self.steps,
                         self.replications, self.seed)

    def rungs(self) -> list[int]:
        """The steps where the rule judges trials, before a trial's last step."""
        if self.rule is None:
            return []
        out, k = [], 0
        while (step := max(self.rule.rung_step(k), self.rule.min_steps)) < self.steps:
            out.append(step)
            k += 1
        return out

    def predict(self, plan: Plan) -> Prediction:
        """Completion time and cost over the replications (cached per plan)."""
        if plan.budget != self.budget:
            raise ValueError(f"the plan has {plan.budget} trials, the simulator {self.budget}")
        key = plan.key()
        if key not in self._cache:
            rungs = self.rungs()
            runs = [self._replicate(plan, r, rungs) for r in range(self.replications)]
            self._cache[key] = Prediction(*(np.array([run[i] for run in runs]) for i in range(3)))
        return self._cache[key]

    def _replicate(self, plan: Plan, r: int, rungs: list[int]) -> tuple[float, float, list[float]]:
        """(completion time, cost, each stage's start) of replication ``r``."""
        job = _Job(plan, self.instances)
        job.enter_stage(0, 0.0)
        starts = [0.0] + [np.nan] * (len(plan.stages) - 1)
        durations, ranks = self._durations[r], self._ranks[r]
        reached: list[list[float]] = [[] for _ in rungs]
        events: list[tuple[float, int, int]] = []  # (time, trial, rung reached or -1: its end)
        on: dict[int, _Machine] = {}
        began: dict[int, tuple[float, float]] = {}  # trial -> (start, duration on its machine)
        stage = started = ended = 0
        loop_free = now = 0.0
        while True:
            while len(on) < plan.stages[stage].workers and started < self.budget:
                loop_free = max(loop_free, now) + self.times.ask_overhead
                machine = min((m for m in job.pool if not m.busy), key=lambda m: m.ready)
                machine.busy = True
                start = max(loop_free, machine.ready)
                duration = durations[started] / machine.kind.speed
                on[started], began[started] = machine, (start, duration)
                heapq.heappush(events, self._next(started, -1, start, duration, rungs))
                started += 1
            now, trial, rung = heapq.heappop(events)
            if rung >= 0:  # the trial reports at a rung
                rank = ranks[trial]
                goes_on = self.rule.promotable(rank, [rank, *reached[rung]])  # type: ignore[union-attr]
                reached[rung].append(rank)
                start, duration = began[trial]
                heapq.heappush(events, self._next(trial, rung, start, duration, rungs) if goes_on
                               else (now + duration / self.steps, trial, -1))
                continue
            machine = on.pop(trial)
            machine.busy = False
            ended += 1
            if ended == self.budget:
                return now, job.cost(now), starts
            if machine.retiring:
                machine.released = now
            if plan.stage_of(ended) != stage:
                stage = plan.stage_of(ended)
                job.enter_stage(stage, now)
                starts[stage] = now
            if started == self.budget:  # nothing left to start: idle machines go
                for idle in [m for m in job.pool if not m.busy]:
                    job.retire(idle, now)

    def _next(self, trial: int, rung: int, start: float, duration: float,
              rungs: list[int]) -> tuple[float, int, int]:
        """The trial's next event after ``rung`` (-1: none yet): its next rung, or its end."""
        nxt = rung + 1
        if nxt < len(rungs):
            return (start + duration * rungs[nxt] / self.steps, trial, nxt)
        return (start + duration, trial, -1)
