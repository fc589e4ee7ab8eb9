"""Warm start: trials of a related task (another workload or machine) for a new tuning run.

The source is a trial store of an earlier run (SQLite), or whatever ``boanon ingest`` reads, read
by it (one reader, one set of errors): a dataset directory of trial logs (a ``graph.json`` beside
the trials is the learned graph) or a CSV/JSONL table. Its trials become a separate task (see
:mod:`boanon.multitask.tasks`), never the new run's own; the graph it learned becomes the new
run's starting structure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from boanon.errors import ConfigError, LogParseError, did_you_mean, from_cwd
from boanon.graph import CausalGraph
from boanon.multitask.tasks import TARGET, TASK, combine_tasks, with_task, with_task_node
from boanon.space import Space
from boanon.table import TRIAL, column, names_of, with_objectives
from boanon.units import count

SQLITE_MAGIC = b"SQLite format 3\x00"
GRAPH_FILE = "graph.json"


@dataclass
class RelatedTask:
    """A related task's finished trials, and the graph learned on them if there is one."""

    label: str
    source: str
    table: pd.DataFrame
    graph: CausalGraph | None = None
    dropped: list[str] = field(default_factory=list)  # trials left out, with why
    unmapped: list[str] = field(default_factory=list)
    """Parameters the trials logged and varied that the search space does not have: what they
    did is not seen as a cause (an option under a name no adapter maps to the space's)."""
    derived: dict[str, str] = field(default_factory=dict)
    """Parameters the space does not have that varied only with one it has (each with that
    one): the system derives them (RocksDB's ``arena_block_size`` from ``write_buffer_size``),
    so the space's parameter already stands for what they did."""


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _from_store(path: Path) -> tuple[pd.DataFrame, CausalGraph | None]:
    from boanon.store import Store

    with Store(path, read_only=True) as store:
        graph_ids = [t.graph_id for t in store.trials() if t.graph_id is not None]
        return store.to_table(), store.graph(max(graph_ids)) if graph_ids else None


def _from_logs(path: Path) -> tuple[pd.DataFrame, CausalGraph | None, list[str]]:
    """Trials as ``boanon ingest`` reads them, so a warm start takes what ingest takes and its
    errors name the file and line; a dataset directory's ``graph.json`` is its graph. The trials
    it could not read are returned with why (left out, and said so, never dropped unseen)."""
    from boanon.adapters.ingest import FolderOfDatasets, ingest

    graph = CausalGraph.load(path / GRAPH_FILE) if (path / GRAPH_FILE).is_file() else None
    try:
        result = ingest(path, skip_bad=True)
    except FolderOfDatasets as exc:  # not `boanon ingest` of the first one: a warm start names one
        listed = ", ".join(f"{d} ({adapter})" for d, adapter in exc.datasets.items())
        at = f"at {next(iter(exc.datasets))}" if len(exc.datasets) == 1 \
            else "at one of them, a related task's"
        raise ConfigError(path, "warm_start", f"holds {count(len(exc.datasets), 'dataset')} (with the "
                          f"adapter reading each), not the trials of one: {listed}; point warm_start "
                          f"(or --warm-start) {at}") from None
    except LogParseError as exc:
        if exc.path != path or exc.line is not None:  # a file's line in it: that names the place
            raise
        raise ConfigError(path, "warm_start", exc.reason) from None  # the folder or file given is wrong
    return result.table, graph, [f"{path}: trial {trial}: {reason}" for trial, reason in result.skipped]


def load_related(source: str | Path, label: str | None = None) -> RelatedTask:
    """Read a related task's trials from a store, a dataset directory or a CSV/JSONL table."""
    path = Path(source)
    if not path.exists():
        raise ConfigError(source, "warm_start", f"no such store, dataset directory or table{from_cwd(path)}")
    if path.is_file() and _is_sqlite(path):
        (table, graph), unread = _from_store(path), []
    else:
        table, graph, unread = _from_logs(path)
    if table.empty:
        raise ConfigError(source, "warm_start", "holds no finished trial"
                          + (f" it could read ({len(unread)} could not: {unread[0]})" if unread else ""))
    return RelatedTask(label or path.stem, str(path), table, graph, unread)


WarmStart = str | Path | RelatedTask | Sequence[str | Path | RelatedTask] | None
"""What a warm start may be given as: one related task or several, as tasks or as paths."""


def related_tasks(warm_start: WarmStart) -> list[RelatedTask]:
    """The related tasks ``warm_start`` names: one or several, each a :class:`RelatedTask` or a
    path for :func:`load_related`. A lone path is one task, not a sequence of characters."""
    sources = [] if warm_start is None else [warm_start] \
        if isinstance(warm_start, (str, Path, RelatedTask)) else list(warm_start)
    return [s if isinstance(s, RelatedTask) else load_related(s) for s in sources]


def _theirs(table: pd.DataFrame, name: str) -> str:
    """``; its objectives: a, b (did you mean 'a'?)``: what a related task measured instead, so
    that an objective named unlike the earlier run's (``steptime`` for ``step_time``) is fixed
    without opening the earlier run."""
    theirs = names_of(table, "objective")
    if not theirs:
        return "; it has no objective column"
    return f"; its objectives: {', '.join(theirs)}{did_you_mean(name, [*theirs, *names_of(table, 'metric')])}"


def align_to_space(task: RelatedTask, space: Space, objectives: Sequence[str] = (),
                   keep: Sequence[str] = (), related_outputs: Sequence[str] = ()) -> RelatedTask:
    """Keep the related trials the new search space can describe.

    Parameters the space does not have are dropped (those the trials varied are listed in
    ``unmapped``: an option logged under a name the space does not use, or logged by some
    trials only); a parameter the related run did not log is taken at the space's default (the
    related run presumably ran with it); a trial whose value falls outside the space (or breaks
    its constraints), or that lacks a parameter its task's other trials logged (it ran with a
    value not known here), is left out and listed in ``dropped``.
    A task that shares no parameter with the space, or measured none of ``objectives`` nor of
    the ``related_outputs`` modelled jointly with them, is refused: its trials would all sit at
    the default or teach the models nothing. With
    ``objectives``, the table and graph have exactly these (and the constrained outputs ``keep``)
    as objectives (:func:`with_objectives`), as the run's own trials do.
    """
    table = with_objectives(task.table, objectives, keep) if objectives else task.table
    graph = task.graph.with_objectives(objectives, keep) \
        if objectives and task.graph is not None else task.graph
    if not any(column("param", name) in table.columns for name in space.names):
        raise ConfigError(task.source, "warm_start", "its trials share no parameter with the search "
                          f"space ({', '.join(space.names)})")
    measured = [*objectives, *related_outputs]
    if objectives and not any(column(role, name) in table.columns
                              for name in measured for role in ("objective", "metric")):
        raise ConfigError(task.source, "warm_start", "its trials measured none of the objectives "
                          f"and related outputs ({', '.join(measured)}){_theirs(task.table, measured[0])}")
    defaults = space.default()
    logged = {name for name in space.names
              if column("param", name) in table.columns and table[column("param", name)].notna().any()}
    keep, dropped = [], list(task.dropped)
    for i, row in table.iterrows():
        config = {}
        source = f"{task.source}: trial {row[TRIAL]}"
        try:
            for name in space.names:
                col = column("param", name)
                value = row[col] if name in logged else np.nan
                if _missing(value) and name in logged:
                    raise ConfigError(source, name, _not_logged(table, row, col, space))
                config[name] = defaults[name] if _missing(value) else _native(value)
            keep.append((i, space.validate(config, source=source)))
        except ConfigError as exc:
            dropped.append(str(exc))
    rest = [c for c in table.columns if c != TRIAL and not c.startswith("param:")]
    params = pd.DataFrame([c for _, c in keep], index=[i for i, _ in keep]).add_prefix("param:")
    aligned = pd.concat([table.loc[params.index, [TRIAL]], params, table.loc[params.index, rest]],
                        axis=1).reset_index(drop=True)
    varied = [name for name in names_of(table, "param")  # logged by some trials only counts
              if name not in space.params and table[column("param", name)].nunique(dropna=False) > 1]
    derived = {name: source for name in varied
               if (source := _derived_from(table, name, space)) is not None}
    unmapped = [name for name in varied if name not in derived]
    return RelatedTask(task.label, task.source, aligned, graph, dropped, unmapped, derived)


def _not_logged(table: pd.DataFrame, row: pd.Series, col: str, space: Space) -> str:
    """Why a trial that lacks a parameter its task's other trials logged cannot be taken at the
    space's default: it ran with some value, unknown here (a RocksDB Ribbon filter is no
    ``bloom_bits``, no block cache no ``cache_size``); naming what it logged that the trials
    with the parameter did not says which option stood in for it."""
    has = table[col].notna()
    instead = [c for c in table.columns if c.startswith("param:") and not _missing(row[c])
               and c.removeprefix("param:") not in space.params and not table.loc[has, c].notna().any()]
    told = "; it logged " + ", ".join(f"{c.removeprefix('param:')}={_native(row[c])!r}" for c in instead) \
        + " instead, which the search space has no name for" if instead else ""
    return ("not in this trial's logs (the task's other trials have it), so the value it ran with "
            f"is unknown{told}")


DERIVED_OVER = 6
"""Distinct values of a space parameter over which another must follow it to count as derived."""


def _derived_from(table: pd.DataFrame, name: str, space: Space) -> str | None:
    """The space's parameter that ``name`` follows in ``table``'s trials (a monotone function
    of it: logged wherever ``name`` is, equal where it is equal, ordered as it is and not
    constant, over at least :data:`DERIVED_OVER` of its values), if any. Two options drawn
    independently line up so with a chance of 2/6! (0.3 %);
    a system that derives one option from another always does."""
    logged = table[column("param", name)].notna()
    for source in space.names:
        if column("param", source) not in table.columns:
            continue
        both = table.loc[logged, [column("param", source), column("param", name)]]
        if both.iloc[:, 0].isna().any():  # logged where the source is not: no function of it
            continue
        by_source = both.groupby(both.columns[0])[both.columns[1]]
        if both.iloc[:, 0].nunique() < DERIVED_OVER or (by_source.nunique() > 1).any():
            continue
        try:
            follows = by_source.first()
            if follows.nunique() > 1 and (follows.is_monotonic_increasing or follows.is_monotonic_decreasing):
                return source
        except TypeError:  # text values: no order to follow
            continue
    return None


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _native(value: object) -> object:
    """numpy scalars as Python ones (the space checks types); integral floats from CSV as ints."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def distinct_labels(tasks: Sequence[RelatedTask]) -> None:
    """Refuse two related tasks under one label (their trials would be taken for one workload's)
    and a related task named like the run's own (``target``), before the run starts."""
    seen: dict[str, str] = {TARGET: "the run's own trials"}
    for task in tasks:
        if task.label in seen:
            raise ConfigError(task.source, "warm_start", f"is called {task.label!r} like {seen[task.label]}; "
                              "related tasks need distinct names (rename a directory or file)")
        seen[task.label] = task.source


@dataclass(frozen=True)
class TaskColumn:
    """The task indicator (:mod:`boanon.multitask.tasks`) wherever a run's data meets it: the
    table gains the related tasks' trials, the space the indicator pinned to the target, the
    graph the indicator's node, and pending configurations are the target's. Without a related
    task every method gives back what it is given, so the tuner asks the same questions with or
    without a warm start (the readers of the column are :func:`~boanon.multitask.tasks.task_of`,
    :func:`~boanon.multitask.tasks.task_labels` and :func:`~boanon.multitask.tasks.target_trials`)."""

    related: tuple[RelatedTask, ...] = ()

    def table(self, own: pd.DataFrame) -> pd.DataFrame:
        """The run's trials plus each related task's (:func:`~boanon.multitask.tasks.combine_tasks`)."""
        for task in self.related:
            own = combine_tasks(own, task.table, task.label)
        return own

    def space(self, space: Space) -> Space:
        """``space`` with the indicator, pinned to the target (:func:`~boanon.multitask.tasks.with_task`)."""
        return with_task(space, [t.label for t in self.related]) if self.related else space

    def graph(self, graph: CausalGraph | None) -> CausalGraph | None:
        """``graph`` with the indicator as a parent of every mechanism
        (:func:`~boanon.multitask.tasks.with_task_node`)."""
        return with_task_node(graph) if self.related and graph is not None else graph

    def own(self, configs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The run's own configurations (running or failed ones), as the target task's."""
        return [{**c, TASK: TARGET} if self.related else dict(c) for c in configs]
