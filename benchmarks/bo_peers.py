"""The strongest peers, built from BoTorch: its default single-task BO, and BOFN given the network.

Both need torch and BoTorch (the ``bench-gp`` extra; never part of ``make test``), imported only
when a tuner is built. Both start as every tuner does (the default configuration), add Sobol
points up to :data:`N_INIT` (Ax's default start), then propose by optimising an acquisition
with ``optimize_acqf`` on the unit cube.

The space reaches the unit cube the way Ax's default transforms take it there: floats and ints
on [0, 1] (log-scaled where the parameter is), a categorical one-hot, a boolean 0/1; a candidate
is rounded back (an int to the nearest integer, a one-hot block to its largest entry) and the
rounded configuration is what the model is told.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.function_networks import FunctionNetwork
from boanon.objectives import Objective
from boanon.space import Bool, Categorical, Float, Int, Space
from boanon.table import TrialRecord, Value

N_INIT = 5
"""Evaluations before the first model-based proposal (the default plus Sobol points)."""
NUM_RESTARTS, RAW_SAMPLES = 10, 512
"""``optimize_acqf``'s restarts and raw samples: BoTorch's tutorials' settings."""
MC_SAMPLES, NETWORK_RAW_SAMPLES = 32, 256
"""BOFN: Monte-Carlo paths through the network per acquisition value, and raw samples (fewer than
the single GP's: every acquisition value costs a GP posterior per node and path)."""


class UnitEncoding:
    """A space to and from [0, 1]^D (categoricals one-hot, booleans 0/1, log where declared)."""

    def __init__(self, space: Space):
        self.space = space
        self.columns: dict[str, slice] = {}
        start = 0
        for name, p in space.params.items():
            width = len(p.choices) if isinstance(p, Categorical) else 1
            self.columns[name] = slice(start, start + width)
            start += width
        self.dim = start

    def encode(self, config: dict[str, Value]) -> np.ndarray:
        u = np.zeros(self.dim)
        for name, p in self.space.params.items():
            cols, v = self.columns[name], config[name]
            if isinstance(p, Categorical):
                u[cols.start + p.choices.index(v)] = 1.0
            elif isinstance(p, Bool):
                u[cols] = float(bool(v))
            else:
                u[cols] = float(np.clip(Float.to_unit(p, v), 0.0, 1.0))
        return u

    def decode(self, u: np.ndarray) -> dict[str, Value]:
        config: dict[str, Value] = {}
        for name, p in self.space.params.items():
            block = u[self.columns[name]]
            if isinstance(p, Categorical):
                config[name] = p.choices[int(np.argmax(block))]
            elif isinstance(p, Bool):
                config[name] = bool(block[0] >= 0.5)
            elif isinstance(p, Int):
                config[name] = int(min(p.high, max(p.low, round(Float.from_unit(p, float(block[0]))))))
            else:
                config[name] = float(min(p.high, max(p.low, p.from_unit(float(block[0])))))
        return config


class TorchBO:
    """The loop both peers share: default, Sobol to :data:`N_INIT`, then ``propose``."""

    def __init__(self, space: Space, objective: Objective, seed: int, start: dict[str, Value] | None):
        import torch

        torch.set_num_threads(1)  # as Optuna's GP here: do not starve the shared machine
        self.torch = torch
        self.space, self.objective, self.seed = space, objective, seed
        self.encoding = UnitEncoding(space)
        self.pending = [start] if start is not None else []
        self._sobol = torch.quasirandom.SobolEngine(self.encoding.dim, scramble=True, seed=seed)
        self.X: list[np.ndarray] = []
        self.records: list[TrialRecord] = []
        self._asked: dict[str, Value] | None = None
        self._told = 0

    def ask(self) -> dict[str, Value]:
        if self.pending:
            config = self.pending.pop(0)
        elif self._told < N_INIT or not self.records:
            config = self.encoding.decode(self._sobol.draw(1).double().numpy()[0])
        else:
            torch = self.torch
            torch.manual_seed(self.seed * 100_003 + self._told)
            config = self.encoding.decode(self.propose())
        self._asked = config
        return config

    def tell(self, record: TrialRecord | None, value: float | None) -> None:
        """A failed configuration is left out of the data, as Ax leaves out failed trials."""
        self._told += 1
        if record is not None and value is not None:
            self.X.append(self.encoding.encode(self._asked))
            self.records.append(record)

    def bounds(self) -> Any:
        torch = self.torch
        return torch.stack([torch.zeros(self.encoding.dim), torch.ones(self.encoding.dim)]).double()

    def sign(self) -> float:
        """BoTorch maximises: a minimised objective is negated."""
        return 1.0 if self.objective.direction == "maximize" else -1.0

    def propose(self) -> np.ndarray:
        raise NotImplementedError

    def optimize(self, acquisition: Any, raw_samples: int | None = None) -> np.ndarray:
        from botorch.optim import optimize_acqf

        raw_samples = RAW_SAMPLES if raw_samples is None else raw_samples
        candidate, _ = optimize_acqf(acquisition, bounds=self.bounds(), q=1, num_restarts=NUM_RESTARTS,
                                     raw_samples=raw_samples)
        return candidate.detach().numpy()[0]


class SingleTaskBO(TorchBO):
    """BoTorch's default: SingleTaskGP (its dimension-scaled priors, standardised outcomes),
    qLogNoisyExpectedImprovement over the observed points, ``optimize_acqf``."""

    def propose(self) -> np.ndarray:
        from botorch.acquisition.logei import qLogNoisyExpectedImprovement

        y = [self.sign() * r.objectives[self.objective.name] for r in self.records]
        model = single_task_gp(np.array(self.X), np.array(y))
        return self.optimize(qLogNoisyExpectedImprovement(model, X_baseline=model.train_inputs[0]))


def single_task_gp(X: np.ndarray, y: np.ndarray) -> Any:
    """BoTorch's default ``SingleTaskGP`` fitted by maximum a posteriori to unit-cube inputs
    ``X`` (n, D) and outcomes ``y`` (n,) to maximise."""
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    model = SingleTaskGP(torch.tensor(X, dtype=torch.double),
                         torch.tensor(y, dtype=torch.double).unsqueeze(-1))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model


class NetworkBO(TorchBO):
    """BOFN (Astudillo & Frazier 2021) told the true network: one GP per node on its parents'
    outputs and its own parameters; expected improvement of the objective computed by sampling
    paths through the nodes' posteriors (fixed base samples, so the acquisition is smooth)."""

    def __init__(self, space: Space, objective: Objective, seed: int, start: dict[str, Value] | None,
                 network: FunctionNetwork):
        super().__init__(space, objective, seed, start)
        self.network = network
        self.index = {name: self.encoding.columns[name].start for name in space.names}

    def _fit_nodes(self) -> list[Any]:
        torch = self.torch
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms.input import Normalize
        from gpytorch.mlls import ExactMarginalLogLikelihood

        X = torch.tensor(np.array(self.X), dtype=torch.double)
        outputs = {n.name: torch.tensor([_node_value(r, n.name) for r in self.records], dtype=torch.double)
                   for n in self.network.nodes}
        models = []
        for node in self.network.nodes:
            Z = torch.cat([torch.stack([outputs[p] for p in node.parents], -1) if node.parents
                           else X[:, :0], X[:, [self.index[i] for i in node.inputs]]], -1)
            # parents' outputs have their own scales: normalise them on what was observed
            transform = (Normalize(Z.shape[-1], indices=list(range(len(node.parents))))
                         if node.parents else None)
            model = SingleTaskGP(Z, outputs[node.name].unsqueeze(-1), input_transform=transform)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            models.append(model)
        return models

    def propose(self) -> np.ndarray:
        torch = self.torch
        values = [self.sign() * r.objectives[self.objective.name] for r in self.records]
        inputs = [[self.index[i] for i in n.inputs] for n in self.network.nodes]
        acquisition = _network_ei(self._fit_nodes(), self.network, inputs, best=max(values),
                                  sign=self.sign(), torch=torch)
        return self.optimize(acquisition, NETWORK_RAW_SAMPLES)


def _node_value(record: TrialRecord, node: str) -> float:
    """A node's output as logged: a metric, or the objective when the node is the objective."""
    return record.metrics[node] if node in record.metrics else record.objectives[node]


def _network_ei(models: list[Any], network: FunctionNetwork, inputs: list[list[int]], best: float,
                sign: float, torch: Any) -> Any:
    """Expected improvement of ``sign * objective`` over ``best``, by Monte Carlo through the network."""
    from botorch.acquisition import AcquisitionFunction

    names = [n.name for n in network.nodes]
    parents = [[names.index(p) for p in n.parents] for n in network.nodes]
    base = torch.randn(len(models), MC_SAMPLES, 1, 1, 1, dtype=torch.double)

    class NetworkEI(AcquisitionFunction):
        def forward(self, X: Any) -> Any:  # X: batch x 1 x d
            samples: list[Any] = []
            for k, model in enumerate(models):
                x = X[..., inputs[k]].expand(MC_SAMPLES, *X.shape[:-1], len(inputs[k]))
                z = torch.cat([torch.cat([samples[p] for p in parents[k]], -1), x], -1) if parents[k] else x
                posterior = model.posterior(z)
                samples.append(posterior.mean + posterior.variance.clamp_min(1e-12).sqrt() * base[k])
            Y = torch.cat(samples, -1)[..., 0, :]  # MC x batch x nodes
            value = sign * network.objective_of(Y)
            return (value - best).clamp_min(0.0).mean(0)

    return NetworkEI(models[-1])
