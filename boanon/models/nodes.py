"""Per-node probabilistic models: each predicts one node from its parents in the graph.

Four kinds, all with the same small interface (``fit``, ``refit``, ``predict``, ``sample``):

- :class:`GPNode`: a guarded Gaussian process over the parents (the default);
- :class:`FormulaNode`: BOAT's semi-parametric model, a user formula whose free parameters are
  fitted by least squares (MAP where a prior is given) plus a GP on the residual;
- :class:`FunctionNode`: a deterministic function of the parents (``edp = energy * latency``);
- :class:`MarginalNode`: a node with no parents, drawn from its observed distribution.

``predict`` returns a mean and variance per (sample, configuration); ``sample`` draws from that
Gaussian with :func:`shared_normals`. Sampled parents enter as inputs, so a child's spread
includes its parents' spread.

Each class is its kind's one entry in :data:`boanon.nodespec.NODE_KINDS`: the model, what an
annotation of it holds (:class:`boanon.nodespec.NodeKind`) and how an annotation builds it
(:meth:`NodeModel.from_annotation`). A new kind is a subclass in a module of its own, decorated
with :func:`boanon.nodespec.register_node_kind`.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import norm, skew

from boanon.errors import ConfigError
from boanon.expressions import Expression
from boanon.models.base import heldout_scores
from boanon.models.gp import GP
from boanon.models.inputs import InputEncoder, NodeInputs
from boanon.nodespec import NODE_KINDS, FreeParameter, NodeSpec, register_node_kind

RESIDUALS = ("gp", "none")
"""What a formula's residual is modelled by: a GP over the parents, or Gaussian noise."""


def shared_normals(rng: np.random.Generator, n_samples: int) -> np.ndarray:
    """Standard normal draws of shape (n_samples, 1): one per sample, shared by every configuration.

    Common random numbers: every candidate configuration is sampled with the same draws, so an
    acquisition compares configurations and not Monte-Carlo noise (BoTorch fixes its base samples
    for the same reason); each configuration's samples keep their own distribution. Stratified (one
    draw in each 1/n quantile band, in random order), so that the few samples of a screening pass
    cover the distribution. With independent draws, 8 screening samples ranked candidates mostly
    by noise (benchmarks/README.md has the measured effect on the first 15 evaluations).
    """
    bands = (rng.permutation(n_samples) + rng.random(n_samples)) / n_samples
    return norm.ppf(bands)[:, None]


class NodeModel(ABC):
    """One node's conditional distribution given its parents.

    The class attributes describe the kind (:class:`boanon.nodespec.NodeKind`): ``annotation``
    None means an annotation cannot write it (the default models of a graph's nodes)."""

    kind: ClassVar[str] = ""
    description: ClassVar[str] = ""
    annotation: ClassVar[tuple[str, ...] | None] = None
    deterministic: ClassVar[bool] = False

    def __init__(self, param_parents: list[str], metric_parents: list[str]):
        self.param_parents = list(param_parents)
        self.metric_parents = list(metric_parents)

    @property
    def parents(self) -> list[str]:
        return self.param_parents + self.metric_parents

    @property
    def expression(self) -> Expression | None:
        """The expression of the parents this model computes (None: it has none)."""
        return None

    @classmethod
    def read_annotation(cls, source: str, where: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    @classmethod
    def annotation_view(cls, spec: NodeSpec) -> dict[str, Any]:
        return {"kind": cls.kind, "text": spec.expression.text}

    @classmethod
    def from_annotation(cls, spec: NodeSpec, parents: list[str], param_names: set[str]) -> NodeModel:
        """The unfitted model an annotation ``spec`` of this kind describes, for a node with the
        graph's ``parents`` (``param_names``: which names are parameters)."""
        raise TypeError(f"a {cls.kind!r} node model is not written in annotations")

    @abstractmethod
    def fit(self, inputs: NodeInputs, y: np.ndarray) -> NodeModel:
        """Learn from training rows (``inputs`` with one sample, ``y`` of shape (n,))."""

    def refit(self, inputs: NodeInputs, y: np.ndarray) -> NodeModel:
        """A copy conditioned on new data with the hyperparameters kept (cheap: no optimisation)."""
        return copy.copy(self).fit(inputs, y)

    @abstractmethod
    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance, each broadcastable to (S, C); ``noise`` adds observation noise."""

    def sample(self, inputs: NodeInputs, rng: np.random.Generator, noise: bool = True) -> np.ndarray:
        mean, var = self.predict(inputs, noise)
        shape = (inputs.n_samples, inputs.n_configs)
        z = shared_normals(rng, inputs.n_samples)
        return np.broadcast_to(mean, shape) + np.sqrt(np.maximum(var, 0.0)) * z

    def describe(self) -> dict[str, Any]:
        """Plain data about the fitted model, for reports."""
        return {"kind": self.kind, "parents": self.parents}

    def spec(self) -> dict[str, Any]:
        """What builds this model again, unfitted (:func:`node_model_from_spec`): plain data a
        proposal records, so that every view of the model rebuilds the one the proposal used."""
        return {"kind": self.kind, "param_parents": self.param_parents, "metric_parents": self.metric_parents}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> NodeModel:
        return cls(list(spec["param_parents"]), list(spec["metric_parents"]))


class ParentsGP:
    """A GP over encoded parents: the part :class:`GPNode`, a formula's residual and
    :class:`~boanon.models.scaled.ScaledNode` share."""

    gp_: GP  # set by fit

    def __init__(self, param_parents: list[str], metric_parents: list[str]):
        self.encoder = InputEncoder(param_parents, metric_parents)

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> None:
        self.gp_ = GP.fit(self.encoder.fit(inputs).transform(inputs), y)

    def refitted(self, inputs: NodeInputs, y: np.ndarray) -> ParentsGP:
        """A copy with the input scaling and hyperparameters kept, conditioned on new data."""
        other = copy.copy(self)
        other.gp_ = self.gp_.refit(self.encoder.transform(inputs), y)
        return other

    def predict(self, inputs: NodeInputs, noise: bool) -> tuple[np.ndarray, np.ndarray]:
        s = inputs.n_samples if self.encoder.varies_by_sample else 1
        mean, var = self.gp_.predict(self.encoder.transform(inputs), noise)
        return mean.reshape(s, -1), var.reshape(s, -1)

    def describe(self) -> dict[str, Any]:
        return {"inputs": self.encoder.param_parents + self.encoder.metric_parents,
                "lengthscales": self.gp_.lengthscales.round(4).tolist(),
                "noise_var": self.gp_.noise_variance,
                "log_marginal_likelihood": self.gp_.log_marginal_likelihood}


def heavy_tailed(values: np.ndarray) -> bool:
    """Whether positive values are right-skewed (skewness > 1) and a log makes them at least twice
    as symmetric: throughputs, latencies and byte counts spanning orders of magnitude."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 5 or v.min() <= 0 or np.ptp(v) == 0:
        return False
    raw, logged = skew(v), skew(np.log(v))
    return bool(raw > 1.0 and abs(logged) < raw / 2)


@register_node_kind
class GPNode(NodeModel):
    """A GP (Matern-5/2, one lengthscale per input, plus noise) over the node's parents.

    With ``log_target`` a positive target is modelled on a log scale and sampled back
    (log-normal): for heavy-tailed nodes (:func:`heavy_tailed`) a few large values then neither
    dominate the fit nor give negative samples. The DAG surrogate's safety net decides per node.
    """

    kind = "gp"
    description = "a Gaussian process over the parents"

    def __init__(self, param_parents: list[str], metric_parents: list[str], log_target: bool = False):
        super().__init__(param_parents, metric_parents)
        self._gp = ParentsGP(param_parents, metric_parents)
        self.log_target = log_target

    def _target(self, y: np.ndarray) -> np.ndarray:
        """y on the modelled scale (a non-positive value in later data is clipped to a floor)."""
        return np.log(np.maximum(y, self.floor_)) if self.log_target else y

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> GPNode:
        if self.log_target and np.min(y) <= 0:
            raise ValueError("a log-scale GP needs positive values")
        self.floor_ = float(np.min(y)) / 2 if self.log_target else 0.0
        self._gp.fit(inputs, self._target(y))
        return self

    def refit(self, inputs: NodeInputs, y: np.ndarray) -> GPNode:
        other = copy.copy(self)
        other._gp = self._gp.refitted(inputs, self._target(y))
        return other

    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        mean, var = self._gp.predict(inputs, noise)
        if not self.log_target:
            return mean, var
        return np.exp(mean + var / 2), np.expm1(var) * np.exp(2 * mean + var)  # log-normal moments

    def sample(self, inputs: NodeInputs, rng: np.random.Generator, noise: bool = True) -> np.ndarray:
        if not self.log_target:
            return super().sample(inputs, rng, noise)
        mean, var = self._gp.predict(inputs, noise)
        shape = (inputs.n_samples, inputs.n_configs)
        z = shared_normals(rng, inputs.n_samples)
        return np.exp(np.broadcast_to(mean, shape) + np.sqrt(np.maximum(var, 0.0)) * z)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self._gp.describe(), "log_target": self.log_target}

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "log_target": self.log_target}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> GPNode:
        return cls(list(spec["param_parents"]), list(spec["metric_parents"]), bool(spec.get("log_target")))


@register_node_kind
class FormulaNode(NodeModel):
    """BOAT's semi-parametric node: ``formula(parents; free) + GP residual`` (or Gaussian noise).

    A node never observed at or below zero (a time, a count, a size) gets no negative value from
    its formula: a linear form fitted to a dozen trials otherwise extrapolates through zero, and
    expected improvement chases the impossible values (a 40-parameter synthetic run's first
    proposal was predicted at -77 for a positive cost; over 20 seeds the floor moved cold
    ``synthetic`` after 15 evaluations from 8.56 to 7.67, ``synthetic-40`` from 37.7 to 38.1).
    """

    kind = "formula"
    description = "with free parameters"
    annotation = ("free", "residual")

    def __init__(self, formula: Expression, free: list[FreeParameter], residual_gp: bool,
                 param_parents: list[str], metric_parents: list[str], learned: bool = False):
        super().__init__(param_parents, metric_parents)
        self.formula = formula
        self.free = free
        self.residual_gp = residual_gp
        self.learned = learned  # chosen from the trials (a form, a relation), not an expert's

    @property
    def expression(self) -> Expression:
        return self.formula

    @classmethod
    def read_annotation(cls, source: str, where: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        residual = str(spec.get("residual", "gp")).lower()
        if residual not in RESIDUALS:
            raise ConfigError(source, f"{where}.residual",
                              f"residual must be 'gp' or 'none', got {spec['residual']!r}")
        return {"residual": residual}

    @classmethod
    def annotation_view(cls, spec: NodeSpec) -> dict[str, Any]:
        return {**super().annotation_view(spec), "residual": spec.options["residual"],
                "free": sorted(spec.free)}

    @classmethod
    def from_annotation(cls, spec: NodeSpec, parents: list[str], param_names: set[str]) -> FormulaNode:
        return cls(spec.expression, spec.free_parameters(), spec.options["residual"] == "gp",
                   *split_parents(parents, param_names))

    def _mean(self, raw: Mapping[str, np.ndarray], theta: np.ndarray) -> np.ndarray:
        env = dict(raw)
        env.update({f.name: t for f, t in zip(self.free, theta, strict=True)})
        return self.formula.evaluate(env)

    def _fit_theta(self, inputs: NodeInputs, y: np.ndarray) -> np.ndarray:
        """The free parameters' fit (MAP under their priors), from their initial values."""
        raw = {p: np.ravel(inputs.raw[p]) for p in self.formula.names - {f.name for f in self.free}}
        priors = [(i, f) for i, f in enumerate(self.free) if f.sd is not None]
        low = np.array([f.low for f in self.free])
        high = np.array([f.high for f in self.free])

        def residuals(theta: np.ndarray, sigma: float | None) -> np.ndarray:
            r = np.broadcast_to(self._mean(raw, theta), y.shape) - y
            r = np.where(np.isfinite(r), r, 1e6 * (np.std(y) + 1.0))
            if sigma is None or not priors:
                return r
            return np.concatenate([r / sigma, [(theta[i] - f.mean) / f.sd for i, f in priors]])

        theta = np.array([f.init for f in self.free])
        if self.free:
            fit = least_squares(residuals, theta, args=(None,), bounds=(low, high), method="trf")
            theta = fit.x
            if priors:  # MAP: weigh the prior against the data at the fitted residual scale
                sigma = max(float(np.sqrt(np.mean(fit.fun**2))), 1e-6 * (np.std(y) + 1e-12))
                theta = least_squares(residuals, theta, args=(sigma,), bounds=(low, high),
                                      method="trf").x
        return theta

    def _floored_mean(self, raw: Mapping[str, np.ndarray]) -> np.ndarray:
        return np.maximum(self._mean(raw, self.theta_), self.floor_)

    def _residuals(self, inputs: NodeInputs, y: np.ndarray) -> np.ndarray:
        return y - np.ravel(np.broadcast_to(self._floored_mean(inputs.raw), (1, len(y))))

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> FormulaNode:
        self.floor_ = 0.0 if len(y) and np.min(y) > 0 else -np.inf
        self.theta_ = self._fit_theta(inputs, y)
        r = self._residuals(inputs, y)
        self.residual_ = ParentsGP(self.param_parents, self.metric_parents) \
            if self.residual_gp and len(y) >= 3 else None  # a GP needs a few residuals
        if self.residual_ is not None:
            self.residual_.fit(inputs, r)
            self.noise_var_ = 0.0  # the residual GP's noise instead
        else:
            self.noise_var_ = float(np.mean(r**2)) if len(r) else 0.0
        return self

    def refit(self, inputs: NodeInputs, y: np.ndarray) -> FormulaNode:
        """A copy conditioned on new data, the residual's hyperparameters kept. A learned form's
        constants are fitted again (a least-squares fit: cheap): the form was chosen among a dozen
        by its fit to all the trials, so with its constants kept it "predicted" a cross-validation's
        held-out trials in-sample (a hinge of 4 constants from 7 trials beat the plain GP by far).
        An expert's formula keeps its constants: it was not chosen from the trials, and its
        residual's noise, fitted around those constants, would call it overconfident."""
        other = copy.copy(self)
        if self.learned:
            other.theta_ = self._fit_theta(inputs, y)
        if self.residual_ is not None:
            other.residual_ = self.residual_.refitted(inputs, other._residuals(inputs, y))
        return other

    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        mean = self._floored_mean(inputs.raw)
        if self.residual_ is None:
            return mean, np.full_like(mean, self.noise_var_ if noise else 0.0, dtype=float)
        r_mean, r_var = self.residual_.predict(inputs, noise)
        return mean + r_mean, r_var

    @property
    def constants(self) -> dict[str, float]:
        """The fitted free parameters."""
        return {f.name: float(t) for f, t in zip(self.free, self.theta_, strict=True)}

    def describe(self) -> dict[str, Any]:
        out = {**super().describe(), "formula": self.formula.text, "constants": self.constants}
        if self.residual_ is not None:
            out["residual"] = self.residual_.describe()
        return out

    def spec(self) -> dict[str, Any]:
        free = [{"name": f.name, **{k: v for k, v in vars(f).items()
                                    if k != "name" and v is not None and np.isfinite(v)}}
                for f in self.free]  # infinite bounds are the defaults (and no JSON)
        return {**super().spec(), "formula": self.formula.text, "free": free, "residual_gp": self.residual_gp,
                "learned": self.learned}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> FormulaNode:
        free = [FreeParameter(**f) for f in spec["free"]]
        return cls(Expression.parse(spec["formula"]), free, bool(spec["residual_gp"]),
                   list(spec["param_parents"]), list(spec["metric_parents"]),
                   bool(spec.get("learned", False)))


@register_node_kind
class FunctionNode(NodeModel):
    """A deterministic function of the parents: nothing to fit, no noise."""

    kind = "function"
    description = "deterministic"
    annotation = ()
    deterministic = True

    def __init__(self, function: Expression, param_parents: list[str], metric_parents: list[str]):
        super().__init__(param_parents, metric_parents)
        self.function = function

    @property
    def expression(self) -> Expression:
        return self.function

    @classmethod
    def from_annotation(cls, spec: NodeSpec, parents: list[str], param_names: set[str]) -> FunctionNode:
        """Its parents are the names it reads (checked to be the graph's)."""
        return cls(spec.expression, *split_parents(sorted(spec.expression.names), param_names))

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> FunctionNode:
        return self

    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        mean = self.function.evaluate(inputs.raw)
        return mean, np.zeros_like(mean, dtype=float)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "function": self.function.text}

    def spec(self) -> dict[str, Any]:
        return {**super().spec(), "function": self.function.text}

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> FunctionNode:
        return cls(Expression.parse(spec["function"]), list(spec["param_parents"]),
                   list(spec["metric_parents"]))


@register_node_kind
class MarginalNode(NodeModel):
    """A node without parents: its observed mean and variance, the same for every configuration."""

    kind = "marginal"
    description = "no parents: the observed distribution"

    def __init__(self) -> None:
        super().__init__([], [])

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> MarginalNode:
        return cls()

    def fit(self, inputs: NodeInputs, y: np.ndarray) -> MarginalNode:
        self.mean_ = float(np.mean(y))
        self.var_ = float(np.var(y, ddof=1)) if len(y) > 1 else max(abs(self.mean_), 1.0) ** 2
        return self

    def predict(self, inputs: NodeInputs, noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        return np.full((1, inputs.n_configs), self.mean_), np.full((1, inputs.n_configs), self.var_)


def node_model_from_spec(spec: Mapping[str, Any]) -> NodeModel:
    """The unfitted node model a :meth:`NodeModel.spec` describes."""
    model: NodeModel = NODE_KINDS.get(str(spec.get("kind"))).from_spec(spec)
    return model


def split_parents(names: list[str], param_names: set[str]) -> tuple[list[str], list[str]]:
    """``names`` as (parameter parents, metric parents), each in the given order."""
    return [p for p in names if p in param_names], [p for p in names if p not in param_names]


def cross_validate_node(model: NodeModel, inputs: NodeInputs, y: np.ndarray, rng: np.random.Generator,
                        n_folds: int = 5) -> dict[str, float]:
    """Held-out scores of a fitted node model given its parents' *observed* values.

    Hyperparameters are kept (one refit per fold), as in the surrogate's cross-validation; unlike
    it, errors of the parents' own models do not enter, so comparing the two shows where a chain
    of models loses information.
    """
    mu, sd = heldout_predictions(model, inputs, y, rng, n_folds)
    return heldout_scores(y[:, None], mu[:, None], sd[:, None])


def heldout_predictions(model: NodeModel, inputs: NodeInputs, y: np.ndarray, rng: np.random.Generator,
                        n_folds: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Each trial's predicted mean and sd from the model refitted without its fold (the numbers
    :func:`cross_validate_node` scores, and the dashboard plots against the observed values)."""
    folds = np.array_split(rng.permutation(len(y)), min(n_folds, len(y)))
    mu, sd = np.empty(len(y)), np.empty(len(y))
    for fold in folds:
        train = np.setdiff1d(np.arange(len(y)), fold)
        mean, var = model.refit(inputs.rows(train), y[train]).predict(inputs.rows(fold), noise=True)
        mu[fold] = np.ravel(np.broadcast_to(mean, (1, len(fold))))
        sd[fold] = np.sqrt(np.maximum(np.ravel(np.broadcast_to(var, (1, len(fold)))), 0.0))
    return mu, sd


def build_node_model(node: str, spec: NodeSpec | Mapping[str, Any] | None, parents: list[str],
                     param_names: set[str], source: str = "graph") -> NodeModel:
    """The model of ``node`` from its annotation ``spec`` (None: a GP, or the marginal without parents).

    Names in a formula or function that are not free parameters must be parents of the node.
    """
    if not spec:
        return GPNode(*split_parents(parents, param_names)) if parents else MarginalNode()
    spec = NodeSpec.parse(node, spec, source)
    try:
        _check_names(spec.parents, parents)
    except ValueError as exc:
        raise ConfigError(source, f"node_models.{node}", str(exc)) from None
    model: NodeModel = spec.node_kind.from_annotation(spec, parents, param_names)
    return model


def _check_names(names: set[str] | frozenset[str], parents: list[str]) -> None:
    unknown = set(names) - set(parents)
    if unknown:
        raise ValueError(f"names {sorted(unknown)} are neither free parameters nor parents "
                         f"(parents: {sorted(parents)})")
