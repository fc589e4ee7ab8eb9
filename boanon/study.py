"""The run's specification as one typed record: what makes two runs the same run.

The tuning loop writes it once (:meth:`boanon.store.Store.init_study`) and every view reads it
back whole (:meth:`boanon.store.Store.study`), so a view (status, report, dashboard, Optuna
export) needs neither the loop nor the CLI to know the run's space, objectives or strategy. It
is stored as the JSON object runs have always stored; reading is tolerant of the fields older
stores lack (``n_init``, ``relearn_every``, ``constraints``) and keeps fields it does not know,
so a store written by another version reads, resumes and compares as it was written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

REQUIRED = ("space", "objectives", "seed", "strategy")
"""What every recorded run has; a spec without one is a damaged store."""
NOT_SHOWN = frozenset({"space", "objectives"})
"""Fields a mismatch names without their values (a whole space would fill the message)."""


@dataclass(frozen=True)
class Study:
    """A run's spec: the search space (:meth:`boanon.space.Space.to_dict`) and its
    ``constraints``, the ``objectives`` (:meth:`boanon.objectives.Objective.to_dict`), the seed,
    the strategy's registered name, the initial design's size, the re-learn period, the output
    constraints (``outputs``), where related tasks came from (``warm_start``: one source as a
    string, several as a list, as runs always stored it) and the ``related_outputs``. ``extra``
    holds fields this version does not know (kept, compared, written back)."""

    space: dict[str, Any]
    objectives: list[dict[str, Any]]
    seed: int
    strategy: str
    n_init: int | None = None
    relearn_every: int | None = None
    constraints: list[str] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    warm_start: str | list[str] | None = None
    related_outputs: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object stored (optional fields only when set, as runs always wrote them)."""
        out: dict[str, Any] = {"space": self.space, "constraints": self.constraints,
                               "objectives": self.objectives, "seed": self.seed, "strategy": self.strategy}
        optional = {"n_init": self.n_init, "relearn_every": self.relearn_every, "outputs": self.outputs,
                    "warm_start": self.warm_start, "related_outputs": self.related_outputs}
        return {**out, **{k: v for k, v in optional.items() if v not in (None, [])}, **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Study:
        """The record of a stored spec; ValueError naming what a damaged one lacks."""
        if not isinstance(data, Mapping):
            raise ValueError(f"the run's spec is {type(data).__name__}, expected an object")
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise ValueError(f"the run's spec lacks {missing[0]!r}")
        if not isinstance(data["space"], dict):
            raise ValueError("the run's spec has no space")
        known = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in data.items() if k in known},
                   extra={k: v for k, v in data.items() if k not in known})

    def differs(self, other: Study) -> list[str]:
        """The fields (stored names) whose values differ between the two records, sorted. Units
        are how values are shown, not what is tuned: a store written before a YAML declared one
        (or by a version without units) resumes under it."""
        a, b = _without_units(self.to_dict()), _without_units(other.to_dict())
        return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))

    def contrast(self, given: Study, names: list[str]) -> str:
        """`` (seed: stored 0, given 1; ...)`` for the fields ``names`` (see :meth:`differs`):
        this record's values against ``given``'s, so a refused resume says what to pass. The
        space is told key by key (``space.level.high: stored 9, given 8``): "space differs" left
        a user to compare every parameter of the YAML with a store they cannot read."""
        stored, other = self.to_dict(), given.to_dict()
        shown = [f"{k}: stored {_shown(stored.get(k))}, given {_shown(other.get(k))}"
                 for k in names if k not in NOT_SHOWN]
        if "space" in names:
            shown += _space_changes(_without_units(stored)["space"], _without_units(other)["space"])
        return f" ({'; '.join(shown)})" if shown else ""


def _space_changes(stored: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """``space.<name>[.<key>]: stored ..., given ...`` for each parameter, or key of one, that
    differs; a parameter only one side has is shown whole (``none`` on the other)."""
    changes = []
    for name in [*stored, *(n for n in given if n not in stored)]:
        a, b = stored.get(name), given.get(name)
        if a is None or b is None:
            changes.append(f"space.{name}: stored {_shown(a)}, given {_shown(b)}")
            continue
        changes += [f"space.{name}.{k}: stored {_shown(a.get(k))}, given {_shown(b.get(k))}"
                    for k in [*a, *(k for k in b if k not in a)] if a.get(k) != b.get(k)]
    return changes


def _shown(value: Any) -> str:
    return "none" if value is None else json.dumps(value)


def _without_units(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the ``unit`` of every parameter and objective left out."""
    def drop(d: Any) -> Any:
        return {k: v for k, v in d.items() if k != "unit"} if isinstance(d, dict) else d

    return {**spec, "space": {n: drop(p) for n, p in spec["space"].items()},
            "objectives": [drop(o) for o in spec["objectives"]]}
