"""A node model as written in an annotations file or a graph's JSON, read once into one typed value.

A node model is either a deterministic ``function`` of its parents (``edp = energy * latency``)
or a ``formula`` with ``free`` parameters to fit and a ``residual`` (``gp`` or ``none``)::

    {"function": "energy * latency"}
    {"formula": "a * reads / cache_hit + b", "free": {"a": {"init": 1.0, "low": 0.0}, "b": {}},
     "residual": "gp"}

Graphs and knowledge keep this plain mapping (it is their on-disk form and crosses module
boundaries as data); every reader goes through :meth:`NodeSpec.parse`, so the rules and the
errors (naming the source and the field, ``node_models.<node>[.<key>]``) are written once.
Which names are *parents* depends on the graph and is checked by the reader that knows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from boanon.errors import ConfigError
from boanon.expressions import Expression

Kind = Literal["function", "formula"]
RESIDUALS = ("gp", "none")
FREE_KEYS = ("init", "low", "high", "mean", "sd")


@dataclass(frozen=True)
class FreeParameter:
    """A formula constant to fit: start value, bounds, optional Gaussian prior (MAP)."""

    name: str
    init: float = 1.0
    low: float = -np.inf
    high: float = np.inf
    mean: float | None = None
    sd: float | None = None

    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, Any]) -> FreeParameter:
        low, high = float(spec.get("low", -np.inf)), float(spec.get("high", np.inf))
        init = float(spec.get("init", spec.get("mean", np.clip(1.0, low, high))))
        if not low <= init <= high:
            raise ValueError(f"free parameter {name!r}: init {init} outside [{low}, {high}]")
        sd = spec.get("sd")
        if sd is not None and float(sd) <= 0:
            raise ValueError(f"free parameter {name!r}: sd must be positive")
        mean = spec.get("mean")
        if (mean is None) != (sd is None):
            raise ValueError(f"free parameter {name!r}: a prior needs both 'mean' and 'sd'")
        return cls(name, init, low, high, None if mean is None else float(mean),
                   None if sd is None else float(sd))


@dataclass(frozen=True)
class NodeSpec:
    """One node's annotated model: ``kind``, its ``expression``, the ``free`` parameters of a
    formula (their priors as written, in order) and the formula's ``residual``."""

    kind: Kind
    expression: Expression
    free: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    residual: str = "gp"

    @property
    def parents(self) -> frozenset[str]:
        """The names the expression reads that are not free parameters: the node's parents."""
        return self.expression.names - set(self.free)

    def free_parameters(self) -> list[FreeParameter]:
        return [FreeParameter.from_spec(name, prior) for name, prior in self.free.items()]

    def to_dict(self) -> dict[str, Any]:
        """The on-disk form (:meth:`parse` of it gives this spec back)."""
        if self.kind == "function":
            return {"function": self.expression.text}
        return {"formula": self.expression.text, "free": {n: dict(p) for n, p in self.free.items()},
                "residual": self.residual}

    @classmethod
    def parse(cls, node: str, spec: Any, source: str = "graph") -> NodeSpec:
        """Read ``spec`` (the mapping above, or a NodeSpec); errors name ``source`` and the field.

        Also accepted, as graphs have been written: ``free`` as a list of names, a prior as a
        bare start value, a ``kind`` key agreeing with the model, the residual in any case."""
        if isinstance(spec, NodeSpec):
            return spec
        where = f"node_models.{node}"
        if not isinstance(spec, Mapping):
            raise ConfigError(source, where, "expected a mapping with 'formula' or 'function'")
        if ("formula" in spec) == ("function" in spec):
            raise ConfigError(source, where, "needs a 'formula' (with free parameters) or a 'function' "
                              "(deterministic): give exactly one of them")
        kind: Kind = "function" if "function" in spec else "formula"
        allowed = {"function", "kind"} if kind == "function" else {"formula", "free", "residual", "kind"}
        extra = set(spec) - allowed
        if extra:
            raise ConfigError(source, f"{where}.{sorted(extra)[0]}",
                              f"unknown key; expected {sorted(allowed)}")
        if spec.get("kind", kind) != kind:
            raise ConfigError(source, f"{where}.kind", f"{spec['kind']!r} contradicts the {kind!r} given")
        try:
            expr = Expression.parse(spec[kind])
        except ValueError as exc:
            raise ConfigError(source, f"{where}.{kind}", str(exc)) from None
        free: dict[str, dict[str, float]] = {}
        residual = "gp"
        if kind == "formula":
            free = _free(source, f"{where}.free", spec.get("free") or {}, expr)
            residual = str(spec.get("residual", "gp")).lower()
            if residual not in RESIDUALS:
                raise ConfigError(source, f"{where}.residual",
                                  f"residual must be 'gp' or 'none', got {spec['residual']!r}")
        out = cls(kind, expr, free, residual)
        if not out.parents:
            raise ConfigError(source, where, f"{expr.text!r} reads no parent node")
        return out


def _free(source: str, where: str, free: Any, expr: Expression) -> dict[str, dict[str, float]]:
    """The free parameters as ``{name: prior}``, each prior checked (bounds, a complete prior)."""
    if isinstance(free, list):
        free = dict.fromkeys(free)
    if not isinstance(free, Mapping):
        raise ConfigError(source, where, "expected a mapping name -> {init, low, high, mean, sd}")
    out: dict[str, dict[str, float]] = {}
    for name, prior in free.items():
        prior = {"init": prior} if isinstance(prior, (int, float)) else prior or {}
        if not isinstance(prior, Mapping) or set(prior) - set(FREE_KEYS):
            raise ConfigError(source, f"{where}.{name}", f"expected a mapping with keys {sorted(FREE_KEYS)}")
        if name not in expr.names:
            raise ConfigError(source, f"{where}.{name}", f"not used in the formula {expr.text!r}")
        try:
            FreeParameter.from_spec(str(name), prior)
        except (TypeError, ValueError) as exc:
            raise ConfigError(source, f"{where}.{name}", str(exc)) from None
        out[str(name)] = dict(prior)
    return out
