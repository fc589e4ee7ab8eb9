"""The ``table`` adapter: trials that are already numbers, with declared roles.

Two layouts are read:

* a trial directory holding ``result.json``: ``{"params": {...}, "metrics": {...},
  "objectives": {...}}`` (what BoAnon's Python-callable runner writes);
* a single CSV or JSONL file, one trial per row, whose columns are either role-prefixed
  (``param:x``) or declared in a sidecar ``<file>.roles.yaml`` with the keys ``params``,
  ``metrics`` and ``objectives`` (lists of column names). A ``trial`` column names the rows;
  the ``pareto`` column of a table ``boanon export`` wrote is derived, and left out. Every
  other column has a role, or the file is refused: a misspelt key or an undeclared column
  never drops values unseen.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from boanon.adapters.base import Adapter, register_adapter
from boanon.adapters.files import find_file, json_lines, read_json_object, read_text
from boanon.errors import LogParseError, unknown_key
from boanon.table import (
    PARETO,
    ROLES,
    TRIAL,
    TrialRecord,
    measurement_problem,
    split_column,
    value_problem,
)
from boanon.yamlfile import load_yaml

RESULT_FILE = "result.json"
_SECTION_OF_ROLE = {"param": "params", "metric": "metrics", "objective": "objectives"}
_SECTIONS = tuple(_SECTION_OF_ROLE.values())
TABLE_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
"""A table file's format by the suffix of its name, which may end in ``.gz`` too."""
IGNORE = "ignore"
"""The sidecar's list of columns left out on purpose (a timestamp, a note): said, not guessed."""


@register_adapter
class TableAdapter(Adapter):
    name = "table"

    def detect(self, trial_dir: Path) -> bool:
        return find_file(trial_dir, RESULT_FILE) is not None

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        path = find_file(trial_dir, RESULT_FILE)
        if path is None:
            raise LogParseError(trial_dir / RESULT_FILE, "file not found")
        data = read_json_object(path, "with params/metrics/objectives")
        _check_sections(data, path)
        record = TrialRecord(trial=trial_dir.name)
        for role in ROLES:
            section = data.get(_SECTION_OF_ROLE[role], {})
            if not isinstance(section, dict):
                raise LogParseError(path, f"{_SECTION_OF_ROLE[role]!r} must be an object")
            for key, value in section.items():
                _store(record, role, key, value, path, None)
        return record


def _store(record: TrialRecord, role: str, name: str, value: Any, path: Path, line: int | None) -> None:
    """Put one value in the record, checking its type for its role. A missing value (null, an
    empty CSV cell) is left out; a present one that breaks :func:`measurement_problem` is an
    error naming the file and field."""
    if value is None:
        return
    if role == "param":
        if isinstance(value, float) and math.isnan(value):
            return
        if not isinstance(value, (int, float, str, bool)):
            raise LogParseError(path, f"parameter {name!r} has unsupported value {value!r}", line)
        problem = value_problem(value)  # `inf` or 1e400 in a table: learn lost the parameter's edges
        if problem:
            raise LogParseError(path, f"parameter {name!r} {problem}", line)
        record.params[name] = value
        return
    problem = measurement_problem(value)
    if problem:
        raise LogParseError(path, f"{role} {name!r} {problem}", line)
    (record.metrics if role == "metric" else record.objectives)[name] = float(value)


def _check_sections(data: dict[Any, Any], path: Path, sections: tuple[str, ...] = _SECTIONS) -> None:
    """Refuse a key that is none of ``sections``: the values under a misspelt ``objectivs`` would
    otherwise vanish from the table unseen."""
    for key in data:
        if key not in sections:
            raise LogParseError(path, f"{key}: {unknown_key(str(key), sections)}")


def _declared(sidecar: Path, path: Path,
              columns: Collection[str]) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """The columns the sidecar roles file declares, as ``(role, name)``, and those it says to
    leave out (:data:`IGNORE`); each must be in ``path``."""
    spec = load_yaml(sidecar) or {}
    if not isinstance(spec, dict):
        raise LogParseError(sidecar, "expected a mapping with params, metrics and objectives")
    _check_sections(spec, sidecar, (*_SECTIONS, IGNORE))

    def listed(section: str) -> list[str]:
        names = spec.get(section) or []
        if not isinstance(names, list):
            raise LogParseError(sidecar, f"{section}: expected a list of column names, got {names!r}")
        for col in names:
            if not isinstance(col, str):
                raise LogParseError(sidecar, f"{section}: entry {col!r} is not a column name: list "
                                    "each name as text, quoted where YAML reads it otherwise ('1', 'yes')")
            if col not in columns:
                raise LogParseError(sidecar, f"{section}: column {col!r} is not in {path.name}")
        return names

    sections = {section: listed(section) for section in (*_SECTIONS, IGNORE)}
    _one_section_each(sidecar, sections)
    declared = {col: (role, col) for role in ROLES for col in sections[_SECTION_OF_ROLE[role]]}
    return declared, set(sections[IGNORE])


def _one_section_each(sidecar: Path, sections: Mapping[str, list[str]]) -> None:
    """Refuse a column listed in two sections: it has one role, and which one it got would
    depend on the order the sections are read in (the last won, unsaid)."""
    seen: dict[str, str] = {}
    for section, names in sections.items():
        for col in names:
            first = seen.setdefault(col, section)
            if first != section:
                raise LogParseError(sidecar, f"column {col!r} is listed under both {first} and "
                                    f"{section}: a column has one role")


def _roles(path: Path, columns: Mapping[str, int]) -> dict[str, tuple[str, str]]:
    """Map each column to ``(role, name)`` from the sidecar roles file or prefixes. A column with
    neither is an error, sidecar or not: its values would be lost (``trial`` names the row,
    :data:`~boanon.table.PARETO` is recomputed from the objectives). ``columns`` holds the line
    that first names each column, the one such an error names."""
    sidecar = roles_file(path)
    declared, ignored = _declared(sidecar, path, columns) if sidecar.is_file() else ({}, set())
    for col in sorted(columns):
        if col in (TRIAL, PARETO) or col in declared or col in ignored:
            continue
        try:
            declared[col] = split_column(col)
        except ValueError:
            raise LogParseError(path, f"column {col!r} has no role: prefix it with "
                                f"param:/metric:/objective:, or declare it (or list it under "
                                f"{IGNORE}:) in {sidecar.name}",
                                columns[col]) from None
    return declared


def roles_file(path: Path) -> Path:
    """The sidecar that declares the columns' roles of the table file ``path``."""
    return path.with_name(path.name + ".roles.yaml")


def table_format(path: Path) -> str | None:
    """``csv`` or ``jsonl`` as ``path``'s name says (:data:`TABLE_FORMATS`, gzipped or not), or
    None: a log is no table, and read as a CSV it gave a baffling error."""
    return TABLE_FORMATS.get(Path(path.name.lower().removesuffix(".gz")).suffix)


def read_table_file(path: Path) -> list[TrialRecord]:
    """Read a CSV or JSONL file of trials into records (see the module docstring); a file
    :func:`table_format` does not know is read as a CSV."""
    if table_format(path) == "jsonl":
        rows = list(json_lines(path))
        columns = _first_lines(rows)
    else:
        reader = csv.DictReader(io.StringIO(read_text(path)))
        if reader.fieldnames is None:
            raise LogParseError(path, "empty file: no header line", 1)
        reader.fieldnames = [name.strip() for name in reader.fieldnames]  # "trial, param:x" by hand
        _header_once(path, reader.fieldnames)
        raw = list(enumerate(reader, start=2))
        for lineno, row in raw:
            if None in row:
                raise LogParseError(path, "more fields than the header", lineno)
            if None in row.values():  # csv fills the fields a short line lacks with None
                raise LogParseError(path, "fewer fields than the header: truncated line?", lineno)
        rows = [(lineno, {k: v.strip() if k == TRIAL else _number_or_text(v) for k, v in r.items()})
                for lineno, r in raw]  # a trial id is a name: "007" stays "007"
        columns = dict.fromkeys(reader.fieldnames, 1)  # the header names every column
    if not rows:
        raise LogParseError(path, "no trials (no data rows)")
    roles = _roles(path, columns)
    _one_column_each(path, roles, columns)
    records = []
    for i, (lineno, row) in enumerate(rows):
        name = row.get(TRIAL)
        record = TrialRecord(trial=f"row-{i:04d}" if name is None or name == "" else str(name))
        for col, value in row.items():
            if col in roles:
                role, name = roles[col]
                _store(record, role, name, value, path, lineno)
        records.append(record)
    return records


def _header_once(path: Path, fieldnames: Collection[str]) -> None:
    """Refuse a column named twice in a CSV header (each row kept the last of its values, unsaid)
    and one without a name (a spreadsheet's trailing comma: "column '' has no role")."""
    seen: set[str] = set()
    for i, col in enumerate(fieldnames, start=1):
        if not col:
            raise LogParseError(path, f"column {i} has no name in the header (a trailing comma?)", 1)
        if col in seen:
            raise LogParseError(path, f"column {col!r} appears twice in the header: which is meant?", 1)
        seen.add(col)


def _one_column_each(path: Path, roles: Mapping[str, tuple[str, str]], columns: Mapping[str, int]) -> None:
    """Refuse two columns for one quantity (``x`` declared a parameter beside a ``param:x``
    column: the row kept the later value) and a parameter that is also a result (``param:x``
    with ``metric:x``: a graph has one node ``x``, and ``learn`` lost the parameter). A metric
    and an objective of one name are one quantity told two ways, which a run's reader merges."""
    seen: dict[tuple[str, str], str] = {}
    params = {name: col for col, (role, name) in roles.items() if role == "param"}
    for col, (role, name) in roles.items():
        other = seen.setdefault((role, name), col)
        if other == col and role != "param":
            other = params.get(name, col)
        if other != col:
            raise LogParseError(path, f"columns {other!r} and {col!r} both hold {name!r}: a "
                                "quantity has one column and one role", columns.get(col))


def _first_lines(rows: list[tuple[int, dict[str, Any]]]) -> dict[str, int]:
    """Each key of a JSONL file's ``rows`` and the line of the first row holding it (not line 1:
    that is a row, which may not hold it)."""
    lines: dict[str, int] = {}
    for lineno, row in rows:
        for key in row:
            lines.setdefault(key, lineno)
    return lines


def _number_or_text(value: str | None) -> Any:
    """A CSV cell as a number, a boolean, text, or None when empty; the spaces around it are no
    part of it (``fast `` is ``fast``: a hand-written table split one level in two)."""
    value = None if value is None else value.strip()
    if value is None or value == "":
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)
