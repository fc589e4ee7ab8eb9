"""Output constraints (``area <= X``, ``p99_latency <= Y``): bounds on a metric or objective.

A constraint is judged on what a trial produced, not on its configuration (those are the search
space's constraints). Observed trials are feasible only if every constrained output was
measured and within bounds; candidates are judged from a model's samples by
:mod:`boanon.acquisition.feasibility`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from boanon import units
from boanon.errors import ConfigError, refuse_unknown_keys
from boanon.space import config_number
from boanon.table import column


@dataclass(frozen=True)
class OutputConstraint:
    """``min <= output <= max`` for the metric or objective named ``name`` (either bound optional)."""

    name: str
    max: float | None = None
    min: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"an output constraint needs a non-empty name, got {self.name!r}")
        if self.max is None and self.min is None:
            raise ValueError(f"output constraint {self.name!r} needs a 'max' or a 'min'")
        if self.max is not None and self.min is not None and self.min > self.max:
            raise ValueError(f"output constraint {self.name!r}: min {self.min} is above max {self.max}")

    def holds(self, values: Any) -> np.ndarray:
        """Elementwise: within bounds (NaN, i.e. not measured, never holds)."""
        v = np.asarray(values, dtype=float)
        ok = np.isfinite(v)
        if self.max is not None:
            ok &= v <= self.max
        if self.min is not None:
            ok &= v >= self.min
        return ok

    def describe(self) -> str:
        """The bound as a person reads it (``area <= 2``, ``0.1 <= ratio <= 0.9``), for the text
        and pictures that show it (``boanon status``, the graph views)."""
        low = f"{units.exact(self.min)} <= " if self.min is not None else ""
        high = f" <= {units.exact(self.max)}" if self.max is not None else ""
        return f"{low}{self.name}{high}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        out.update({k: getattr(self, k) for k in ("min", "max") if getattr(self, k) is not None})
        return out

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], source: str = "outputs",
                  field_name: str = "outputs") -> OutputConstraint:
        """``{name: area, max: 2.0e6}`` from a config file."""
        if not isinstance(spec, Mapping) or "name" not in spec:
            raise ConfigError(source, field_name, "needs a mapping with a 'name' and a 'max' and/or 'min'")
        known = {"name", "max", "min"}
        refuse_unknown_keys(spec, known, source, field_name)
        bounds = {k: _bound(spec, k, source, field_name) for k in ("max", "min")}
        try:
            return cls(str(spec["name"]), **bounds)
        except (TypeError, ValueError) as exc:
            raise ConfigError(source, field_name, str(exc)) from None


def _bound(spec: Mapping[str, Any], key: str, source: str, field_name: str) -> float | None:
    """``spec[key]`` (absent: None) as :func:`finite_number` reads it."""
    value = spec.get(key)
    return None if value is None else finite_number(value, source, f"{field_name}.{key}")


def finite_number(value: Any, source: str, field_name: str) -> float:
    """``value`` as :func:`~boanon.space.config_number` reads the space's bounds, or a
    ConfigError naming ``source`` and ``field_name``."""
    try:
        return config_number(value)
    except ValueError as exc:
        raise ConfigError(source, field_name, str(exc)) from None


def parse_output_constraints(specs: Iterable[Mapping[str, Any] | OutputConstraint] | None,
                             source: str = "outputs", field_name: str = "outputs") -> list[OutputConstraint]:
    """Output constraints from config entries or constraints (a missing section means none);
    bounds that contradict each other are refused (:func:`_refuse_contradictions`)."""
    constraints = [s if isinstance(s, OutputConstraint)
                   else OutputConstraint.from_dict(s, source, f"{field_name}[{i}]")
                   for i, s in enumerate(specs or [])]
    _refuse_contradictions(constraints, source, field_name)
    return constraints


def _refuse_contradictions(constraints: Sequence[OutputConstraint], source: str, field_name: str) -> None:
    """Refuse two entries bounding one output so that no value meets both (``a <= 1`` and
    ``a >= 2``), naming both: no trial could be feasible, which was found only when the first
    proposal looked for a feasible one, or never. (One entry's own ``min > max`` is refused by
    :class:`OutputConstraint`.)"""
    for name in dict.fromkeys(c.name for c in constraints):
        entries = [(i, c) for i, c in enumerate(constraints) if c.name == name]
        lows = [(i, c.min) for i, c in entries if c.min is not None]
        highs = [(i, c.max) for i, c in entries if c.max is not None]
        if lows and highs:
            (i, low), (j, high) = max(lows, key=lambda e: e[1]), min(highs, key=lambda e: e[1])
            if low > high:
                raise ConfigError(source, f"{field_name}[{max(i, j)}]",
                                  f"{name} >= {low} ({field_name}[{i}]) contradicts {name} <= {high} "
                                  f"({field_name}[{j}]): no trial can meet both")


def output_values(table: pd.DataFrame, name: str) -> np.ndarray:
    """The observed values of output ``name``, a metric or an objective column; NaN (not
    measured) where the table has no such column: no trial reported it, so none is feasible.
    (It was a KeyError, and ``boanon status`` and ``export`` of such a run a traceback.)"""
    for role in ("objective", "metric"):
        col = column(role, name)
        if col in table.columns:
            return pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
    return np.full(len(table), np.nan)


def observed_feasible(table: pd.DataFrame, constraints: Sequence[OutputConstraint]) -> np.ndarray:
    """Per trial: all constraints hold. A constrained output that was not measured (NaN, e.g. a
    failed run, or a column the table does not have) makes the trial infeasible."""
    ok = np.ones(len(table), dtype=bool)
    for c in constraints if len(table) else ():
        ok &= c.holds(output_values(table, c.name))
    return ok
