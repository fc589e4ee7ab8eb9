"""The cheapest plan that meets a deadline with a stated probability (RubberBand's greedy search).

Start from the fastest plan (every stage on the most machines of the type that finishes first).
If even it misses the deadline, there is no plan: say so, with its time. Otherwise improve it
greedily: each round proposes, for every stage, one machine fewer, half the machines, and each
other instance type at the same throughput; a proposal qualifies if it still ends by the deadline
with the stated probability and costs less; the one taken has the best cost-marginal benefit
``(cost now - cost proposed) / (time proposed - time now)`` (dollars saved per second given up;
a proposal that is both cheaper and faster wins outright). The search stops when no proposal
qualifies. Every plan looked at and not taken is kept with the reason. The plan taken is
trimmed (:meth:`~boanon.planning.plan.Plan.trimmed`): machines that cost nothing because they
are never rented tie with fewer, and the search kept them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from boanon.planning.durations import TrialTimes
from boanon.planning.instances import InstanceType
from boanon.planning.plan import Plan, Stage, even_stages
from boanon.planning.simulator import Simulator


@dataclass(frozen=True)
class Alternative:
    """A plan looked at and not taken, and why."""

    plan: Plan
    time: float
    cost: float
    reason: str

    def to_dict(self) -> dict:
        return {"plan": self.plan.describe(), "time_s": self.time, "cost": self.cost,
                "reason": self.reason}


class Planner:
    """Finds the cheapest plan for ``budget`` trials of ``times`` ending by ``deadline`` seconds
    with ``probability``, on ``instances`` (see the module docstring).

    Learned: ``plan_`` and ``prediction_`` (the plan chosen, or the fastest one when none is
    feasible), ``feasible_``, ``fastest_`` (the fastest plan and its prediction), ``rejected_``
    (alternatives, the last round's first) and ``simulator_``.
    """

    def __init__(self, instances: dict[str, InstanceType], deadline: float, probability: float = 0.9,
                 stages: int = 3, early_stopping: str | None = None, steps: int | None = None,
                 replications: int = 200, seed: int = 0):
        self.instances, self.deadline, self.probability = instances, deadline, probability
        self.stages, self.early_stopping, self.steps = stages, early_stopping, steps
        self.replications, self.seed = replications, seed

    def fit(self, times: TrialTimes, budget: int) -> Planner:
        if not 0 < self.probability < 1:
            raise ValueError(f"probability must be in (0, 1), got {self.probability}")
        self.simulator_ = Simulator(self.instances, times, budget, self.early_stopping, self.steps,
                                    self.replications, self.seed)
        starts = [self._plan(even_stages(budget, self.stages, t.name, min(t.max_count, budget)))
                  for t in self.instances.values()]
        starts.sort(key=lambda p: (self._time(p), self._cost(p)))
        self.fastest_ = (starts[0].trimmed(), self.simulator_.predict(starts[0].trimmed()))
        self.rejected_: list[Alternative] = [self._alternative(p, "slower than the fastest plan")
                                             for p in starts[1:]]
        current = starts[0]
        self.feasible_ = self._time(current) <= self.deadline
        if self.feasible_:
            current = self._improve(current)
        current = current.trimmed()  # what the plan rents: no sooner or dearer (Plan.trimmed)
        self.plan_, self.prediction_ = current, self.simulator_.predict(current)
        seen = {current.key()}  # each alternative once: the last round's verdict, else its first
        self.rejected_ = [a for a in self.rejected_ if not (a.plan.key() in seen or seen.add(a.plan.key()))]
        return self

    def _improve(self, current: Plan) -> Plan:
        while True:
            best, best_rank, last_round = None, (-math.inf, 0.0), []
            for proposal in self._neighbours(current):
                reason, benefit = self._judge(current, proposal)
                rank = (benefit, -self._cost(proposal))  # among equal benefits, the cheaper
                if reason is None and rank > best_rank:
                    if best is not None:
                        last_round.append(self._alternative(best, self._lower(best_rank[0], benefit)))
                    best, best_rank = proposal, rank
                elif reason is None:
                    last_round.append(self._alternative(proposal, self._lower(benefit, best_rank[0])))
                else:
                    last_round.append(self._alternative(proposal, reason))
            if best is None:
                self.rejected_ = last_round + self.rejected_
                return current
            self.rejected_ += last_round
            current = best

    def _judge(self, current: Plan, proposal: Plan) -> tuple[str | None, float]:
        """Why ``proposal`` cannot replace ``current`` (None if it can), and its benefit."""
        time, cost = self._time(proposal), self._cost(proposal)
        if time > self.deadline:
            return (f"misses the deadline: {time:.0f} s at probability {self.probability:g} > "
                    f"{self.deadline:.0f} s"), 0.0
        saved = self._cost(current) - cost
        if saved <= 1e-9:
            return f"costs no less ({cost:.4g} vs {self._cost(current):.4g})", 0.0
        slower = time - self._time(current)
        return None, math.inf if slower <= 0 else saved / slower

    @staticmethod
    def _lower(benefit: float, than: float) -> str:
        if benefit == than:  # a tie, broken by cost (inf: both cheaper and no slower)
            return "as good a trade, but the plan taken is cheaper"
        return f"saves less per second of delay ({benefit:.3g} vs {than:.3g} per s)"

    def _neighbours(self, plan: Plan) -> list[Plan]:
        """Each move on one stage, and on every stage at once (with billing by the hour, a
        machine fewer in one stage only saves nothing if the next stage rents it again)."""
        out: dict[tuple, Plan] = {}
        everywhere = [range(len(plan.stages))] if len(plan.stages) > 1 else []
        for indices in [*([i] for i in range(len(plan.stages))), *everywhere]:
            for move in self._moves(plan.stages[indices[0]]):
                proposal = plan
                for i in indices:
                    proposal = proposal.with_stage(i, **move(plan.stages[i]))
                out.setdefault(proposal.key(), proposal)
        out.pop(plan.key(), None)
        return list(out.values())

    def _moves(self, stage: Stage) -> list:
        """Changes to a stage: a machine fewer, half the machines, another type at the same
        throughput (each a function of the stage it is applied to)."""
        moves = [lambda s: {"workers": max(1, s.workers - 1)}, lambda s: {"workers": max(1, s.workers // 2)}]
        for other in self.instances.values():
            moves.append(lambda s, o=other: {"instance": o.name, "workers": min(o.max_count, max(
                1, math.ceil(s.workers * self.instances[s.instance].speed / o.speed)))})
        return moves

    def _plan(self, stages: tuple) -> Plan:
        return Plan(stages, self.simulator_.budget, self.early_stopping, self.simulator_.steps)

    def _time(self, plan: Plan) -> float:
        return self.simulator_.predict(plan).time_at(self.probability)

    def _cost(self, plan: Plan) -> float:
        return self.simulator_.predict(plan).cost()

    def _alternative(self, plan: Plan, reason: str) -> Alternative:
        return Alternative(plan, self._time(plan), self._cost(plan), reason)
