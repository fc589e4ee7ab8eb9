"""A node model as written in an annotations file or a graph's JSON, read once into one typed value.

An annotation names its node kind by a key holding the kind's expression: a deterministic
``function`` of the parents (``edp = energy * latency``) or a ``formula`` with ``free``
parameters to fit and a ``residual`` (``gp`` or ``none``)::

    {"function": "energy * latency"}
    {"formula": "a * reads / cache_hit + b", "free": {"a": {"init": 1.0, "low": 0.0}, "b": {}},
     "residual": "gp"}

Graphs and knowledge keep this plain mapping (it is their on-disk form and crosses module
boundaries as data); every reader goes through :meth:`NodeSpec.parse`, so the rules and the
errors (naming the source and the field, ``node_models.<node>[.<key>]``) are written once.
Which names are *parents* depends on the graph and is checked by the reader that knows it.

The kinds are the node model classes registered in :data:`NODE_KINDS` (by their ``kind``; the
built-ins are in :mod:`boanon.models.nodes` and :mod:`boanon.models.scaled`): each says what an
annotation of it may hold and reads its own keys (:class:`NodeKind`), so adding a kind is one
module with its class.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from boanon.errors import ConfigError, refuse_unknown_keys
from boanon.expressions import Expression
from boanon.registry import Registry

FREE_KEYS = ("init", "low", "high", "mean", "sd")


class NodeKind(Protocol):
    """What a node model class says about its kind (:class:`boanon.models.nodes.NodeModel`).

    ``annotation``: None when an annotation cannot write the kind (a GP, a marginal), else the
    keys it may hold beside ``kind`` (``free`` are fitted constants, read here for every kind);
    ``deterministic``: the node is its expression of its inputs (no noise, no other parents);
    ``description``: a few words for errors and views."""

    kind: ClassVar[str]
    description: ClassVar[str]
    annotation: ClassVar[tuple[str, ...] | None]
    deterministic: ClassVar[bool]

    @classmethod
    def read_annotation(cls, source: str, where: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """The kind's own options from the annotation ``spec`` (errors name ``source`` and ``where``)."""
        ...

    @classmethod
    def annotation_view(cls, spec: NodeSpec) -> dict[str, Any]:
        """``spec`` in short for the views: ``kind``, ``text`` and what else the kind shows."""
        ...


NODE_KINDS: Registry[Any] = Registry("node kind", "boanon.node_kinds",
                              builtins=("boanon.models.nodes", "boanon.models.scaled"))
"""Node model classes by ``kind``; a plug-in registers its own (:func:`register_node_kind`)."""


def register_node_kind(cls: Any) -> Any:
    """Class decorator: register a node model class under its ``kind``."""
    NODE_KINDS.register(cls.kind, cls)
    return cls


def annotated_kinds() -> list[Any]:
    """The registered kinds an annotation can write, by name."""
    return [k for k in (NODE_KINDS.get(n) for n in NODE_KINDS.names()) if k.annotation is not None]


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
    """One node's annotated model: ``kind``, its ``expression``, the ``free`` parameters to fit
    (their priors as written, in order) and the kind's own ``options`` (a formula's ``residual``)."""

    kind: str
    expression: Expression
    free: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def node_kind(self) -> Any:
        """The registered node model class of this kind (:data:`NODE_KINDS`)."""
        return NODE_KINDS.get(self.kind)

    @property
    def parents(self) -> frozenset[str]:
        """The names the expression reads that are not free parameters: the node's parents."""
        return self.expression.names - set(self.free)

    def free_parameters(self) -> list[FreeParameter]:
        return [FreeParameter.from_spec(name, prior) for name, prior in self.free.items()]

    def to_dict(self) -> dict[str, Any]:
        """The on-disk form (:meth:`parse` of it gives this spec back)."""
        out: dict[str, Any] = {self.kind: self.expression.text}
        if "free" in self.node_kind.annotation:
            out["free"] = {n: dict(p) for n, p in self.free.items()}
        return {**out, **self.options}

    @classmethod
    def parse(cls, node: str, spec: Any, source: str = "graph") -> NodeSpec:
        """Read ``spec`` (the mapping above, or a NodeSpec); errors name ``source`` and the field.

        Also accepted, as graphs have been written: ``free`` as a list of names, a prior as a
        bare start value, a ``kind`` key agreeing with the model, the residual in any case."""
        if isinstance(spec, NodeSpec):
            return spec
        where = f"node_models.{node}"
        kinds = annotated_kinds()
        if not isinstance(spec, Mapping):
            names = " or ".join(repr(k.kind) for k in kinds)
            raise ConfigError(source, where, f"expected a mapping with {names}")
        named = [k for k in kinds if k.kind in spec]
        if len(named) != 1:
            options = " or ".join(f"a {k.kind!r} ({k.description})" for k in kinds)
            raise ConfigError(source, where, f"needs {options}: give exactly one of them")
        node_kind = named[0]
        kind = node_kind.kind
        allowed = {kind, "kind", *node_kind.annotation}
        refuse_unknown_keys(spec, allowed, source, where)
        if spec.get("kind", kind) != kind:
            raise ConfigError(source, f"{where}.kind", f"{spec['kind']!r} contradicts the {kind!r} given")
        try:
            expr = Expression.parse(spec[kind])
        except ValueError as exc:
            raise ConfigError(source, f"{where}.{kind}", str(exc)) from None
        free = _free(source, f"{where}.free", spec.get("free") or {}, expr) if "free" in allowed else {}
        out = cls(kind, expr, free, node_kind.read_annotation(source, where, spec))
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
