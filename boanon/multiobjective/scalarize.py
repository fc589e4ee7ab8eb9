"""Scalarisations: several objectives folded into one, the alternative to EHVI.

Weighted sums and the augmented Chebyshev scalarisation (ParEGO) act on objectives normalised
by the observed ideal and nadir, so weights mean the same whatever the units. A product (the
energy-delay product, or ED^2P with weights (1, 2)) acts on raw positive values; where such a
product is the real goal, it can instead be a deterministic node of the graph
(``edp: {function: "energy * latency"}``) and be optimised as a single objective.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from boanon.errors import ConfigError, did_you_mean, refuse_unknown_keys
from boanon.objectives import Objective

Kind = Literal["weighted_sum", "chebyshev", "product"]
KINDS: tuple[Kind, ...] = ("weighted_sum", "chebyshev", "product")
PRODUCT_FOLDS = "a product scalarisation multiplies positive values (weighted_sum and chebyshev fold any)"


@dataclass(frozen=True)
class Scalarization:
    """How to fold (..., d) minimised objective values into (...) values to minimise.

    ``weights`` default to equal (for a product they are exponents, default 1); :meth:`random`
    draws them uniformly from the simplex, as ParEGO does afresh at every iteration so that the
    runs cover the whole front.
    """

    kind: Kind = "chebyshev"
    weights: tuple[float, ...] | None = None
    rho: float = 0.05  # the augmentation of the Chebyshev form, which breaks ties on the front's edges

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"scalarisation must be one of {KINDS}, got {self.kind!r}")
        if self.weights is not None and (len(self.weights) == 0 or min(self.weights) < 0):
            raise ValueError(f"scalarisation weights must be non-negative, got {self.weights}")

    @classmethod
    def from_spec(cls, spec: str | Mapping[str, Any], objectives: Sequence[Objective], source: str = "config",
                  field_name: str = "scalarization") -> Scalarization:
        """``weighted_sum`` or ``{kind: product, weights: [1, 2]}`` from a config file, for
        ``objectives`` (a product's must all be minimised: refused here, not at the run's first
        proposal)."""
        n_objectives = len(objectives)
        kind_field = field_name if isinstance(spec, str) else f"{field_name}.kind"
        if isinstance(spec, str):
            spec = {"kind": spec}
        if not isinstance(spec, Mapping):
            raise ConfigError(source, field_name, f"expected one of {KINDS} or a mapping with 'kind' and "
                              "optional 'weights'")
        refuse_unknown_keys(spec, ("kind", "weights"), source, field_name)
        kind = spec.get("kind", "chebyshev")
        if kind not in KINDS:  # named with the fix, as a misspelt key is
            raise ConfigError(source, kind_field, f"unknown kind {kind!r}{did_you_mean(str(kind), KINDS)}; "
                              f"expected one of {list(KINDS)}")
        weights = spec.get("weights")
        if weights is not None and (not isinstance(weights, Sequence) or len(weights) != n_objectives):
            raise ConfigError(source, f"{field_name}.weights", f"expected {n_objectives} numbers")
        try:
            scalarization = cls(kind, None if weights is None else tuple(float(w) for w in weights))
        except (TypeError, ValueError) as exc:
            raise ConfigError(source, f"{field_name}.weights", str(exc)) from None
        maximised = [o.name for o in objectives if o.sign < 0]
        if scalarization.kind == "product" and maximised:
            raise ConfigError(source, field_name, f"a product needs objectives that are all minimised; "
                              f"{', '.join(maximised)} is maximised (a weighted_sum or chebyshev folds both)")
        return scalarization

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **({"weights": list(self.weights)} if self.weights else {})}

    @classmethod
    def random(cls, n_objectives: int, rng: np.random.Generator, kind: Kind = "chebyshev") -> Scalarization:
        return cls(kind, tuple(float(w) for w in rng.dirichlet(np.ones(n_objectives))))

    def _weights(self, d: int) -> np.ndarray:
        if self.weights is None:  # a product's weights are exponents: the plain product by default
            return np.ones(d) if self.kind == "product" else np.ones(d) / d
        w = np.asarray(self.weights, dtype=float)
        if len(w) != d:
            raise ValueError(f"{len(w)} scalarisation weights for {d} objectives")
        return w

    def unfoldable(self, values: np.ndarray) -> np.ndarray:
        """Where (elementwise) ``values`` cannot be folded: the one rule of what a fold refuses,
        for measured values (:meth:`measured_problem`) and arrays (:meth:`__call__`) alike. A
        product multiplies positive values, so one at or below 0; NaN (not measured) is not
        judged. The other kinds fold any value."""
        values = np.asarray(values, dtype=float)
        if self.kind != "product":
            return np.zeros(values.shape, dtype=bool)
        return values <= 0

    def measured_problem(self, values: Mapping[str, float]) -> str | None:
        """Why a trial's measured objective ``values`` (minimised) cannot be folded
        (:meth:`unfoldable`), naming the first such objective, or None. A measurement at or below
        0 is no model's tail (:meth:`of_draws` folds those) but an objective a product does not fit."""
        names = list(values)
        refused = np.flatnonzero(self.unfoldable(np.array([values[n] for n in names], dtype=float)))
        if not refused.size:
            return None
        name = names[refused[0]]
        return f"objective {name!r} is {values[name]!r}: {PRODUCT_FOLDS}"

    def of_draws(self, values: np.ndarray, ideal: np.ndarray, nadir: np.ndarray,
                 signs: Sequence[float] | None = None) -> np.ndarray:
        """Scalarised draws of a model, to be minimised. A model's draw of a positive objective
        may fall to 0 or below (a GP's tail); for a product it is the best value there is, and
        folds as the smallest positive one (the run stopped there: :meth:`unfoldable` is for
        measured values only)."""
        if self.kind == "product":
            values = np.maximum(values, np.finfo(float).tiny)  # NaN stays NaN
        return self(values, ideal, nadir, signs)

    def __call__(self, values: np.ndarray, ideal: np.ndarray, nadir: np.ndarray,
                 signs: Sequence[float] | None = None) -> np.ndarray:
        """Scalarised values, to be minimised. ``signs`` (+1 minimise, -1 maximise) are needed
        for a product only, which multiplies the raw (un-flipped) values."""
        values = np.asarray(values, dtype=float)
        w = self._weights(values.shape[-1])
        if self.kind == "product":
            if signs is not None and any(s < 0 for s in signs):
                raise ValueError("a product scalarisation needs objectives that are all minimised")
            refused = values[self.unfoldable(values)]
            if refused.size:
                raise ValueError(f"an objective is {float(refused[0])!r}: {PRODUCT_FOLDS}")
            return np.exp(np.sum(w * np.log(values), axis=-1))
        scale = np.where(nadir > ideal, nadir - ideal, 1.0)
        z = (values - ideal) / scale
        if self.kind == "weighted_sum":
            return np.sum(w * z, axis=-1)
        return np.max(w * z, axis=-1) + self.rho * np.sum(w * z, axis=-1)
