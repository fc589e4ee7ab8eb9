"""Synthetic structured systems with a known causal graph and a known optimum.

They stand in for a real system wherever ground truth is needed: structure-learning accuracy
(edges are known), and optimiser regret (the optimum is known). Each system has groups of
parameters ("subsystems"); a group's parameters drive a load metric, which drives a chain of
metrics; the objective sums the last metric of every chain. Distractor metrics depend on
parameters but not the objective, near-duplicate metrics copy a chain metric (as bytes and
counts do in real logs), and some parameters are inert.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from boanon.graph import CausalGraph, Edge
from boanon.space import Float, Space
from boanon.table import TrialRecord, records_to_table


@dataclass
class _Group:
    params: list[str]
    targets: np.ndarray
    weights: np.ndarray
    alt_targets: np.ndarray
    chain: list[str]
    slopes: np.ndarray
    offsets: np.ndarray


@dataclass
class SyntheticSystem:
    """A seeded system: ``evaluate(config)`` returns its metrics and objectives.

    Objectives are minimised: ``cost`` (and ``cost2`` with two objectives, which pulls every
    group's parameters towards other targets, so the two conflict).
    """

    n_params: int = 12
    n_groups: int = 4
    chain_length: int = 3
    n_distractors: int = 8
    n_duplicates: int = 2
    n_inert: int = 0
    n_objectives: int = 1
    nonlinear: bool = True
    noise: float = 0.02
    seed: int = 0
    target_shift: float = 0.0  # a related task: the same system with every optimum moved this far
    space: Space = field(init=False)
    groups: list[_Group] = field(init=False)
    distractors: list[tuple[str, list[str], np.ndarray]] = field(init=False)
    duplicates: list[tuple[str, str, float]] = field(init=False)

    def __post_init__(self) -> None:
        if self.n_objectives not in (1, 2):
            raise ValueError("n_objectives must be 1 or 2")
        active = self.n_params - self.n_inert
        if active < self.n_groups:
            raise ValueError("need at least one active parameter per group")
        rng = np.random.default_rng(self.seed)
        names = [f"x{i}" for i in range(self.n_params)]
        self.space = Space([Float(n, 0.0, 1.0, default=0.5) for n in names])
        splits = np.array_split(np.arange(active), self.n_groups)
        self.groups = []
        for g, idx in enumerate(splits):
            k = len(idx)
            self.groups.append(_Group(
                params=[names[i] for i in idx],
                targets=rng.uniform(0.15, 0.85, k),
                weights=rng.uniform(0.5, 2.0, k),
                alt_targets=rng.uniform(0.15, 0.85, k),
                chain=[f"g{g}_load"] + [f"g{g}_m{i}" for i in range(1, self.chain_length)],
                slopes=rng.uniform(0.6, 1.6, self.chain_length),
                offsets=rng.uniform(-0.5, 0.5, self.chain_length),
            ))
        self.distractors = []
        for d in range(self.n_distractors):
            parents = list(rng.choice(names, size=min(2, self.n_params), replace=False))
            self.distractors.append((f"d{d}", parents, rng.uniform(-2.0, 2.0, len(parents))))
        chain_metrics = [m for grp in self.groups for m in grp.chain]
        self.duplicates = [(f"dup{i}", str(rng.choice(chain_metrics)), float(rng.uniform(2, 10)))
                           for i in range(self.n_duplicates)]
        if self.target_shift:  # its own stream: everything else stays as in the unshifted system
            shift = np.random.default_rng([self.seed, 1])
            for grp in self.groups:
                for attr in ("targets", "alt_targets"):
                    step = self.target_shift * shift.choice([-1.0, 1.0], len(grp.params))
                    moved = getattr(grp, attr) + step
                    setattr(grp, attr, np.clip(moved, 0.05, 0.95))

    # --- ground truth ---------------------------------------------------------------------
    @property
    def objectives(self) -> list[str]:
        return ["cost", "cost2"][: self.n_objectives]

    def true_graph(self) -> CausalGraph:
        """The graph that generated the data (duplicates hang off the metric they copy)."""
        g = CausalGraph()
        for n in self.space.names:
            g.roles[n] = "param"
        for grp in self.groups:
            for m in grp.chain + ([f"{grp.chain[0]}_alt"] if self.n_objectives == 2 else []):
                g.roles[m] = "metric"
            for p in grp.params:
                g.edges.append(Edge(p, grp.chain[0]))
                if self.n_objectives == 2:
                    g.edges.append(Edge(p, f"{grp.chain[0]}_alt"))
            g.edges += [Edge(a, b) for a, b in zip(grp.chain, grp.chain[1:], strict=False)]
        for name, parents, _ in self.distractors:
            g.roles[name] = "metric"
            g.edges += [Edge(p, name) for p in parents]
        for name, source, _ in self.duplicates:
            g.roles[name] = "metric"
            g.edges.append(Edge(source, name))
        for obj in self.objectives:
            g.roles[obj] = "objective"
        for grp in self.groups:
            g.edges.append(Edge(grp.chain[-1], "cost"))
            if self.n_objectives == 2:
                g.edges.append(Edge(f"{grp.chain[0]}_alt", "cost2"))
        return g

    def optimum(self) -> dict[str, float]:
        """Noise-free minimum of each objective taken alone (each group at its targets)."""
        best = {}
        for obj, attr in (("cost", "targets"), ("cost2", "alt_targets"))[: self.n_objectives]:
            config = self.space.default()
            for grp in self.groups:
                config.update(zip(grp.params, getattr(grp, attr), strict=True))
            best[obj] = self.evaluate(config, noise=False)[obj]
        return best

    def pareto_configs(self, n: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        """Configurations with every group's parameters on the segment between its two optima.

        With two objectives and quadratic loads (``nonlinear``) the Pareto set lies among them:
        noise-free, projecting any configuration's groups onto their segments (in the groups'
        weighted metric) lowers both objectives, so these configurations dominate the rest.
        """
        if self.n_objectives != 2 or not self.nonlinear:
            raise ValueError("the Pareto set is known for two objectives of a nonlinear system")
        out = []
        for _ in range(n):
            config = self.space.default()
            for grp in self.groups:
                t = rng.random()
                config.update(zip(grp.params, (1 - t) * grp.targets + t * grp.alt_targets, strict=True))
            out.append(config)
        return out

    # --- simulation ---------------------------------------------------------------------------
    def _link(self, x: float, slope: float, offset: float) -> float:
        if self.nonlinear:
            return float(slope * np.logaddexp(0.0, 2.0 * x) + offset)  # softplus: increasing
        return float(slope * x + offset)

    def evaluate(self, config: dict[str, Any], noise: bool = True,
                 rng: np.random.Generator | None = None) -> dict[str, float]:
        """Metrics and objectives for ``config`` (noise drawn from ``rng``, seeded if None)."""
        rng = rng or np.random.default_rng(zlib.crc32(json.dumps(config, sort_keys=True).encode()))
        sd = self.noise if noise else 0.0
        out: dict[str, float] = {}
        cost = cost2 = 0.0
        for grp in self.groups:
            x = np.array([float(config[p]) for p in grp.params])
            if self.nonlinear:
                load = float(np.sum(grp.weights * (x - grp.targets) ** 2)) * 4.0
            else:
                load = float(np.sum(grp.weights * np.abs(x - grp.targets))) * 2.0
            value = load + rng.normal(0, sd)
            out[grp.chain[0]] = value
            for name, slope, offset in zip(grp.chain[1:], grp.slopes[1:], grp.offsets[1:], strict=False):
                value = self._link(value, slope, offset) + rng.normal(0, sd)
                out[name] = value
            cost += value
            if self.n_objectives == 2:
                alt = float(np.sum(grp.weights * (x - grp.alt_targets) ** 2)) * 4.0 + rng.normal(0, sd)
                out[f"{grp.chain[0]}_alt"] = alt
                cost2 += alt
        for name, parents, coefs in self.distractors:
            xs = np.array([float(config[p]) for p in parents])
            z = float(coefs @ xs)
            out[name] = (np.tanh(z) if self.nonlinear else z) + rng.normal(0, sd)
        for name, source, scale in self.duplicates:
            out[name] = scale * out[source] + rng.normal(0, sd * 0.1)
        out["cost"] = cost + rng.normal(0, sd)
        if self.n_objectives == 2:
            out["cost2"] = cost2 + rng.normal(0, sd)
        return out

    def record(self, trial: str, config: dict[str, Any],
               rng: np.random.Generator | None = None) -> TrialRecord:
        """One evaluated trial in the table's terms."""
        values = self.evaluate(config, rng=rng)
        objectives = {k: values.pop(k) for k in self.objectives}
        return TrialRecord(trial=trial, params=dict(config), metrics=values, objectives=objectives)

    def sample_table(self, n: int, seed: int = 0) -> pd.DataFrame:
        """``n`` trials at uniformly random configurations, as the tidy table."""
        rng = np.random.default_rng(seed)
        configs = self.space.sample(n, rng, sobol=False)
        return records_to_table(self.record(f"t{i:04d}", c, rng) for i, c in enumerate(configs))
