"""The tidy trial table: one row per trial, columns named by role.

Every stage of the pipeline reads and writes this shape, so the naming rules live here and
nowhere else: a ``trial`` column, then ``param:<name>``, ``metric:<name>`` and
``objective:<name>`` columns.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import IO, Any, Literal

import pandas as pd

Role = Literal["param", "metric", "objective"]
ROLES: tuple[Role, ...] = ("param", "metric", "objective")
TRIAL = "trial"
PARETO = "pareto"
"""The column ``boanon export`` adds: whether the trial is on its run's Pareto front. It is
derived from the objectives, not measured, so a reader of an exported table leaves it out."""

Value = float | int | str | bool

LIMIT = 2.0 ** 64
"""No logged number reaches this magnitude (a 64-bit counter's range): beyond it a value is garbage."""


def value_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a parameter or measurement read from a log, or None when it can:
    NaN and infinities (also spelt out as text) and numbers beyond 64 bits are refused."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    if isinstance(value, (int, float)) and abs(value) >= LIMIT:
        return "is out of range (beyond what 64 bits hold)"
    if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return "is not a finite number"
    return None


def number_problem(value: Any) -> str | None:
    """Why ``value`` is not a real number, or None when it is: a boolean or a number written as
    text is not one. The type half of :func:`measurement_problem`, which ``Tuner.tell`` refuses
    outright (the caller can tell again) while a NaN fails the trial as it does from a log."""
    if isinstance(value, bool):
        return f"is not a number (a boolean, {value!r})"
    if isinstance(value, str):
        return f"is not a number (text, {value[:40]!r})"
    if not isinstance(value, numbers.Real):
        return f"is not a number (a {type(value).__name__})"
    return None


def measurement_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a metric or objective value, or None when it can: the one rule
    every runner, adapter and ``Tuner.tell`` applies. It must be a real number
    (:func:`number_problem`), finite (NaN and infinities are "not finite", not missing) and
    within 64 bits."""
    problem = number_problem(value)
    if problem:
        return problem
    number = float(value) if not isinstance(value, int) or abs(value) < LIMIT else math.inf
    if math.isnan(number):
        return "is not finite (NaN)"
    if math.isinf(number) and not (isinstance(value, int)):
        return f"is not finite ({number})"
    if abs(number) >= LIMIT:
        return "is out of range (beyond what 64 bits hold)"
    return None


def record_problem(record: TrialRecord) -> str | None:
    """The first value of ``record`` that cannot enter the table, named with its role, or
    None: a parameter must pass :func:`value_problem`, a metric or objective
    :func:`measurement_problem`."""
    for name, value in record.params.items():
        problem = value_problem(value) if isinstance(value, (int, float, str)) else \
            f"is not a number, text or boolean (a {type(value).__name__})"
        if problem:
            return f"parameter {name!r} {problem}"
    for role, values in (("metric", record.metrics), ("objective", record.objectives)):
        for name, value in values.items():
            problem = measurement_problem(value)
            if problem:
                return f"{role} {name!r} {problem}"
    return None


def column(role: Role, name: str) -> str:
    """The table column holding ``name`` in ``role``."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return f"{role}:{name}"


def split_column(col: str) -> tuple[Role, str]:
    """Inverse of :func:`column`; raises ValueError for a column without a role prefix."""
    role, sep, name = col.partition(":")
    if not sep or role not in ROLES or not name:
        raise ValueError(f"column {col!r} is not of the form <role>:<name> with role in {ROLES}")
    return role, name  # type: ignore[return-value]


def columns_of(table: pd.DataFrame, role: Role) -> list[str]:
    """Columns of ``table`` in ``role``, in table order."""
    prefix = f"{role}:"
    return [c for c in table.columns if c.startswith(prefix)]


def names_of(table: pd.DataFrame, role: Role) -> list[str]:
    """Names (without the role prefix) of the columns in ``role``."""
    return [split_column(c)[1] for c in columns_of(table, role)]


@dataclass
class TrialRecord:
    """What one trial produced, as plain dicts: the unit an adapter returns."""

    trial: str
    params: dict[str, Value] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The trial as one table row."""
        row: dict[str, Any] = {TRIAL: self.trial}
        for role, values in (("param", self.params), ("metric", self.metrics),
                             ("objective", self.objectives)):
            row.update({column(role, k): v for k, v in values.items()})
        return row


def two_roles(params: Iterable[str], results: Iterable[str]) -> str | None:
    """The first name (sorted) that is both a parameter and a result (metric or objective), or
    None: the graph has one node of a name, and learning lost the parameter to the result."""
    clash = sorted(set(params) & set(results))
    return clash[0] if clash else None


def natural_key(name: str) -> list[Any]:
    """Sort key that orders numbers inside names by value: ``x2`` before ``x10``, ``m9`` before ``m10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def records_to_table(records: Iterable[TrialRecord]) -> pd.DataFrame:
    """Assemble records into a table, columns ordered by role then name."""
    rows = [r.row() for r in records]
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=[TRIAL])
    ordered = [TRIAL] + [c for role in ROLES for c in sorted(columns_of(table, role), key=natural_key)]
    return table[ordered].reset_index(drop=True)


def run_role(name: str, logged: Role, objectives: Collection[str], keep: Collection[str] = ()) -> Role:
    """The role a run towards ``objectives`` gives a quantity logged in role ``logged``: the one
    rule every reader of a run's results follows (the table, the graph, a told result, a
    surrogate's columns). The run's objectives are objectives; names in ``keep`` (outputs the run
    constrains) keep their role; any other result is a metric; parameters stay parameters."""
    if logged == "param" or (name in keep and name not in objectives):
        return logged
    return "objective" if name in objectives else "metric"


def with_objectives(table: pd.DataFrame, objectives: Iterable[str], keep: Iterable[str] = ()) -> pd.DataFrame:
    """The table as a run towards ``objectives`` sees it: exactly these in the objective role.

    An adapter calls everything a system reports as a result an objective (ZigZag's energy,
    latency and area; db_bench's throughput of every benchmark it ran); a run that tunes one of
    them reads the others as metrics, intermediate measurements its models may condition on
    (EDP is energy times latency), rather than as the dead ends objectives are in a graph. A
    metric named in ``objectives`` becomes an objective; names in ``keep`` (outputs the run
    constrains) keep their role (:func:`run_role`). A quantity found in both roles (trials told
    as adapter records and as plain dicts) becomes one column. Columns keep their order by role.
    """
    wanted, kept = set(objectives), set(keep)
    renamed: dict[str, str] = {}
    for col in table.columns:
        if col == TRIAL:
            continue
        role, name = split_column(col)
        new = run_role(name, role, wanted, kept)
        if new != role:
            renamed[col] = column(new, name)
    out = table.drop(columns=list(renamed))
    moved = pd.DataFrame({new: table[col] for col, new in renamed.items()}, index=table.index)
    for new in moved.columns.intersection(out.columns):
        out[new] = out[new].combine_first(moved.pop(new))
    out = pd.concat([out, moved], axis=1)  # at once: a column per insert fragments wide tables
    first = [TRIAL] if TRIAL in out.columns else []
    return out[first + [c for role in ROLES for c in columns_of(out, role)]]


def validate_table(table: pd.DataFrame, source: str = "table") -> pd.DataFrame:
    """Check the table's shape and return it; errors name the offending column."""
    if TRIAL not in table.columns:
        raise ValueError(f"{source}: missing the {TRIAL!r} column")
    for col in table.columns:
        if col == TRIAL:
            continue
        try:
            role, _ = split_column(col)
        except ValueError as err:
            raise ValueError(f"{source}: {err}") from None
        if role != "param" and not pd.api.types.is_numeric_dtype(table[col]):
            bad = table[col][pd.to_numeric(table[col], errors="coerce").isna() & table[col].notna()]
            if not bad.empty:
                raise ValueError(
                    f"{source}: column {col!r} must be numeric; row {bad.index[0]} holds {bad.iloc[0]!r}")
    if table[TRIAL].duplicated().any():
        dup = table[TRIAL][table[TRIAL].duplicated()].iloc[0]
        raise ValueError(f"{source}: trial {dup!r} appears more than once")
    return table


def read_table(path: str | IO[str], source: str | None = None) -> pd.DataFrame:
    """Read a table written by :func:`write_table` (CSV) and validate it.

    Numbers parse as numbers; a metric cell that does not ("12ms") is an error naming ``source``
    (default: ``path``), the column and the row, never a silent NaN. Trial ids stay text: "007"
    is not trial 7.
    """
    return validate_table(pd.read_csv(path, dtype={TRIAL: str}),
                          source=str(path) if source is None else source)


def write_table(table: pd.DataFrame, path: str) -> None:
    """Write the table as CSV."""
    table.to_csv(path, index=False)
