"""Function networks from the BOFN paper (Astudillo & Frazier, NeurIPS 2021), re-implemented.

A function network is a DAG of nodes; each node's output is a function of its parents' outputs
and of some of the parameters, and every node's output is observed. That is exactly the
information BoAnon's structured strategy exists to use, on systems it was not developed on.
Every node's output is logged as a metric; the objective is the final node (or, for the
calibration problems, the squared distance of all node outputs from the observed history).

Parameters live on [0, 1] as in BOFN. Problems whose optimum sits at the centre of the space
(Ackley, DropWave) are shifted: the default of a space without one is its centre, and every
tuner's first trial is the default, so an unshifted problem would be solved by the first trial.

The true structure (:class:`FunctionNetwork`) travels with the problem as knowledge
(``network``), for the BOFN tuner that is given it (the ceiling structure learning aims at) and
for BoAnon given it as a fixed graph (:meth:`FunctionNetwork.graph`), which separates what
learning the structure costs from what BoAnon's node models and acquisition cost.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from boanon.graph import CausalGraph, Edge
from boanon.space import Float, Space
from boanon.table import Role, TrialRecord, Value

NodeFn = Callable[[np.ndarray, np.ndarray], float]
"""(the node's parameters on [0, 1], its parents' outputs) -> the node's output."""


@dataclass(frozen=True)
class Node:
    """One node: which nodes and parameters feed it, and how."""

    name: str
    parents: tuple[str, ...]
    inputs: tuple[str, ...]
    fn: NodeFn


@dataclass(frozen=True)
class FunctionNetwork:
    """A DAG of nodes over parameters on [0, 1], with its objective and known optimum.

    With ``target`` the objective (``objective_name``) is the sum of squared deviations of the
    node outputs from it (a calibration); without, it is the last node's output.
    """

    name: str
    params: tuple[str, ...]
    nodes: tuple[Node, ...]
    direction: str
    optimum: float
    description: str
    target: tuple[float, ...] | None = None
    objective_name: str | None = None

    @property
    def objective(self) -> str:
        return self.objective_name or self.nodes[-1].name

    @property
    def metrics(self) -> tuple[str, ...]:
        """The node outputs logged as metrics (every node except one that is the objective)."""
        return tuple(n.name for n in self.nodes if n.name != self.objective)

    def space(self, default: dict[str, float] | None = None) -> Space:
        default = default or {}
        return Space([Float(p, 0.0, 1.0, default=default.get(p)) for p in self.params])

    def outputs(self, config: dict[str, Value]) -> dict[str, float]:
        """Every node's output for ``config``, in topological order."""
        values: dict[str, float] = {}
        for node in self.nodes:
            x = np.array([float(config[p]) for p in node.inputs])
            parents = np.array([values[p] for p in node.parents])
            values[node.name] = float(node.fn(x, parents))
        return values

    def objective_of(self, outputs: Any) -> Any:
        """The objective from node outputs stacked on the last axis (numpy or torch)."""
        if self.target is None:
            return outputs[..., -1]
        target = np.asarray(self.target)
        if not isinstance(outputs, np.ndarray):  # a torch tensor
            target = outputs.new_tensor(target)
        return ((outputs - target) ** 2).sum(-1)

    def record(self, trial: str, config: dict[str, Value]) -> TrialRecord:
        values = self.outputs(config)
        objective = float(self.objective_of(np.array([values[n.name] for n in self.nodes])))
        metrics = {k: v for k, v in values.items() if k != self.objective}
        return TrialRecord(trial, dict(config), metrics, {self.objective: objective})

    def graph(self) -> CausalGraph:
        """The true causal graph in BoAnon's terms: each node's parameters and parent nodes feed
        it; a calibration's objective is fed by every node (it is computed from their outputs)."""
        roles: dict[str, Role] = {p: "param" for p in self.params}
        edges = []
        for node in self.nodes:
            roles[node.name] = "objective" if node.name == self.objective else "metric"
            edges += [Edge(source, node.name) for source in (*node.inputs, *node.parents)]
        if self.target is not None:
            roles[self.objective] = "objective"
            edges += [Edge(node.name, self.objective) for node in self.nodes]
        return CausalGraph(roles=roles, edges=edges, metadata={"learner": f"the {self.name} network"})

    def spec(self) -> dict[str, Any]:
        """The structure as plain data (for ``problems.json``)."""
        return {n.name: {"parents": list(n.parents), "inputs": list(n.inputs)} for n in self.nodes}


def _shifted(u: np.ndarray, centre: np.ndarray, width: float) -> np.ndarray:
    """``u`` on [0, 1] to BOFN's scaled domain, moved so that its origin sits at ``centre``."""
    return width * (u - centre)


ACKLEY_OPTIMUM = np.array([0.27, 0.71, 0.62, 0.33, 0.80, 0.41])
"""Where the shifted Ackley's optimum lies on [0, 1] (BOFN's is the centre)."""


def ackley() -> FunctionNetwork:
    """Ackley-6D as 3 nodes: the mean square and the mean cosine of the inputs, then Ackley's
    combination of the two (minimised; 0 at the optimum). BOFN's domain [-2, 2] per input,
    shifted so the optimum is at :data:`ACKLEY_OPTIMUM`."""
    params = tuple(f"x{i + 1}" for i in range(6))

    def mean_square(x: np.ndarray, _: np.ndarray) -> float:
        return float(np.mean(_shifted(x, ACKLEY_OPTIMUM, 4.0) ** 2))

    def mean_cosine(x: np.ndarray, _: np.ndarray) -> float:
        return float(np.mean(np.cos(2 * math.pi * _shifted(x, ACKLEY_OPTIMUM, 4.0))))

    def combine(_: np.ndarray, p: np.ndarray) -> float:
        return float(-20.0 * math.exp(-0.2 * math.sqrt(max(p[0], 0.0))) - math.exp(p[1]) + 20.0 + math.e)

    nodes = (Node("mean_square", (), params, mean_square), Node("mean_cosine", (), params, mean_cosine),
             Node("ackley", ("mean_square", "mean_cosine"), (), combine))
    return FunctionNetwork("ackley", params, nodes, "minimize", 0.0,
                           "Ackley-6D as a 3-node network (BOFN), optimum shifted off the centre")


ALPINE_PEAK = 7.917055
"""argmax of sqrt(x) sin(x) on [0, 10]; its value to the sixth power is the optimum."""


def alpine2(n: int = 6) -> FunctionNetwork:
    """Alpine2 as a chain: node k multiplies node k-1 by sqrt(x_k) sin(x_k), x_k = 10 u_k
    (maximised; optimum 2.808^6 = 490.35 at u = 0.7917 everywhere, the centre gives 97)."""
    params = tuple(f"x{i + 1}" for i in range(n))
    peak = math.sqrt(ALPINE_PEAK) * math.sin(ALPINE_PEAK)

    def first(x: np.ndarray, _: np.ndarray) -> float:
        return float(math.sqrt(10 * x[0]) * math.sin(10 * x[0]))

    def link(x: np.ndarray, p: np.ndarray) -> float:
        return float(math.sqrt(10 * x[0]) * math.sin(10 * x[0]) * p[0])

    nodes = [Node("alpine_1", (), (params[0],), first)]
    nodes += [Node(f"alpine_{k + 1}", (f"alpine_{k}",), (params[k],), link) for k in range(1, n)]
    return FunctionNetwork("alpine2", params, tuple(nodes), "maximize", peak ** n,
                           f"Alpine2 as a {n}-node chain (BOFN)")


def rosenbrock(d: int = 5) -> FunctionNetwork:
    """Rosenbrock as a chain of d-1 nodes, each adding one term to its parent's sum (BOFN's
    domain [-2, 2]; minimised: 0 at x = 1, i.e. u = 0.75, away from the centre)."""
    params = tuple(f"x{i + 1}" for i in range(d))

    def term(x: np.ndarray, p: np.ndarray) -> float:
        a, b = 4 * x - 2
        return float(100.0 * (b - a * a) ** 2 + (a - 1.0) ** 2 + (p[0] if len(p) else 0.0))

    nodes = [Node("rosen_1", (), params[0:2], term)]
    nodes += [Node(f"rosen_{k + 1}", (f"rosen_{k}",), params[k:k + 2], term) for k in range(1, d - 1)]
    return FunctionNetwork("rosenbrock", params, tuple(nodes), "minimize", 0.0,
                           f"Rosenbrock-{d}D as a chain of {d - 1} nodes (BOFN)")


DROPWAVE_OPTIMUM = np.array([0.31, 0.68])


def dropwave() -> FunctionNetwork:
    """DropWave as 2 nodes: the distance from the optimum, then the wave of that distance
    (maximised; 1 at :data:`DROPWAVE_OPTIMUM`, BOFN's at the centre; domain [-5.12, 5.12])."""
    params = ("x1", "x2")

    def radius(x: np.ndarray, _: np.ndarray) -> float:
        return float(np.linalg.norm(_shifted(x, DROPWAVE_OPTIMUM, 10.24)))

    def wave(_: np.ndarray, p: np.ndarray) -> float:
        return float((1.0 + math.cos(12.0 * p[0])) / (2.0 + 0.5 * p[0] ** 2))

    nodes = (Node("radius", (), params, radius), Node("dropwave", ("radius",), (), wave))
    return FunctionNetwork("dropwave", params, nodes, "maximize", 1.0,
                           "DropWave as a 2-node network (BOFN), optimum shifted off the centre")


EPIDEMIC_BETA = np.array([[[0.30, 0.05], [0.10, 0.7]],
                          [[0.60, 0.05], [0.10, 0.8]],
                          [[0.20, 0.05], [0.10, 0.2]]])
EPIDEMIC_GAMMA = 0.5
EPIDEMIC_START = (0.01, 0.01)
"""BOFN's epidemic calibration: the true contact rates per period, recovery rate, initial state."""


def _infected(x: np.ndarray, p: np.ndarray, group: int) -> float:
    """One group's infected share (%) after a period of the two-group SI model: it keeps
    (1 - gamma) of its infected and infects its susceptibles at the contact rates ``beta``."""
    beta, gamma = x[:2], x[2]
    state = np.asarray(EPIDEMIC_START) if len(p) == 0 else p / 100.0
    return float(100.0 * (state[group] * (1 - gamma) + (1 - state[group]) * beta @ state))


def epidemic() -> FunctionNetwork:
    """Calibrate a two-group SI epidemic over 3 periods to its observed history (13 parameters:
    a 2x2 contact-rate matrix per period and one recovery rate; 6 nodes, the infected share of
    each group after each period). Minimised: squared error, 0 at the true rates. Each node is
    given exactly the parameters it reads (its group's row of the period's matrix, the recovery
    rate)."""
    params = tuple(f"beta{t + 1}_{i + 1}{j + 1}" for t in range(3) for i in range(2) for j in range(2)) \
        + ("gamma",)
    nodes = []
    for t in range(3):
        parents = () if t == 0 else (f"infected{t}_g1", f"infected{t}_g2")
        for g in range(2):
            inputs = (f"beta{t + 1}_{g + 1}1", f"beta{t + 1}_{g + 1}2", "gamma")
            nodes.append(Node(f"infected{t + 1}_g{g + 1}", parents, inputs,
                              lambda x, p, g=g: _infected(x, p, g)))
    truth = {**{f"beta{t + 1}_{i + 1}{j + 1}": float(EPIDEMIC_BETA[t, i, j])
                for t in range(3) for i in range(2) for j in range(2)}, "gamma": EPIDEMIC_GAMMA}
    network = FunctionNetwork("epidemic", params, tuple(nodes), "minimize", 0.0,
                              "two-group SI epidemic calibration, 3 periods (BOFN)",
                              objective_name="calibration_error")
    target = tuple(network.outputs(truth).values())
    return FunctionNetwork(network.name, params, network.nodes, "minimize", 0.0, network.description,
                           target=target, objective_name="calibration_error")


NETWORKS: dict[str, Callable[[], FunctionNetwork]] = {
    "fn-ackley": ackley, "fn-alpine2": alpine2, "fn-rosenbrock": rosenbrock,
    "fn-dropwave": dropwave, "fn-epidemic": epidemic}
"""Problem name -> function network (the benchmark's ``fn-*`` problems)."""
