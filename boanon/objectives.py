"""What is being optimised: objective names (as in the table) and their directions.

Models and acquisition functions always minimise; :meth:`Objective.to_minimize` and
:meth:`Objective.from_minimize` are the only places where a direction flips a sign.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from boanon.errors import ConfigError, refuse_unknown_keys
from boanon.units import check as check_unit

Direction = Literal["minimize", "maximize"]
DIRECTIONS: tuple[Direction, ...] = ("minimize", "maximize")
_ALIASES = {"min": "minimize", "minimise": "minimize", "max": "maximize", "maximise": "maximize"}


@dataclass(frozen=True)
class Objective:
    """An objective column ``objective:<name>`` and whether to minimise or maximise it."""

    name: str
    direction: Direction = "minimize"
    unit: str | None = None
    """What the value measures in (``s``, ``ops/s``); None: read off the name (:mod:`boanon.units`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"an objective needs a non-empty name, got {self.name!r}")
        direction = _ALIASES.get(str(self.direction).lower(), str(self.direction).lower())
        if direction not in DIRECTIONS:
            raise ValueError(f"objective {self.name!r}: direction must be one of {DIRECTIONS}, "
                             f"got {self.direction!r}")
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "unit", check_unit(self.unit, f"objective {self.name!r}"))

    @property
    def sign(self) -> float:
        """+1 for minimise, -1 for maximise: ``sign * value`` is always to be minimised."""
        return 1.0 if self.direction == "minimize" else -1.0

    def to_minimize(self, values: Any) -> Any:
        """Values in the minimisation convention used by models and acquisition functions."""
        return self.sign * np.asarray(values, dtype=float) if not np.isscalar(values) \
            else self.sign * float(values)

    def from_minimize(self, values: Any) -> Any:
        """Inverse of :meth:`to_minimize` (the sign flip is its own inverse)."""
        return self.to_minimize(values)

    def better(self, a: float, b: float) -> bool:
        """Whether ``a`` is strictly better than ``b``."""
        return self.sign * a < self.sign * b

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "direction": self.direction, **({"unit": self.unit} if self.unit else {})}

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | str, source: str = "objectives",
                  field_name: str = "objectives") -> Objective:
        """``{name, direction}`` (or a bare name, minimised) from a config file."""
        if isinstance(spec, str):
            spec = {"name": spec}
        if not isinstance(spec, Mapping) or "name" not in spec:
            raise ConfigError(source, field_name, "needs a mapping with a 'name' (and a 'direction')")
        known = {"name", "direction", "unit"}
        refuse_unknown_keys(spec, known, source, field_name)
        try:
            return cls(str(spec["name"]), spec.get("direction", "minimize"), spec.get("unit"))
        except ValueError as exc:
            raise ConfigError(source, field_name, str(exc)) from None


ObjectiveSpec = Objective | Mapping[str, Any] | str
ObjectiveSpecs = ObjectiveSpec | Iterable[ObjectiveSpec]
"""One objective (an :class:`Objective`, its mapping or its name) or several."""


def parse_objectives(specs: ObjectiveSpecs, source: str = "objectives") -> list[Objective]:
    """A list of objectives from config entries; names must be unique and there must be one.
    A lone objective is a list of one: a bare name is not a sequence of one-letter names, nor a
    mapping one of objectives named by its keys."""
    if isinstance(specs, (str, Mapping, Objective)):
        specs = [specs]
    out = [s if isinstance(s, Objective) else Objective.from_dict(s, source, f"objectives[{i}]")
           for i, s in enumerate(specs)]
    if not out:
        raise ConfigError(source, "objectives", "at least one objective is needed")
    names = [o.name for o in out]
    if len(set(names)) != len(names):
        raise ConfigError(source, "objectives", f"duplicate objective names in {names}")
    return out
