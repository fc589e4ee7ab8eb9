"""A stored run as plain data for people: its history, best so far, default, model and effects.

``boanon plot``, ``boanon explain`` and the dashboard all show the same few things about a run;
they read them here, as DataFrames and dicts, so every view agrees and none re-derives them.
Everything is computed from the store alone (the study's recorded space and objectives, its
trials and graphs): no tuning YAML is needed to look at a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from boanon import units
from boanon.graph import CausalGraph
from boanon.graph_render import ENTITY
from boanon.models import DAGSurrogate, PlainGPSurrogate, Surrogate
from boanon.models.threads import single_blas_thread
from boanon.multiobjective import (
    OutputConstraint,
    hypervolume_trace,
    parse_output_constraints,
)
from boanon.objectives import Objective, parse_objectives
from boanon.results import INIT, best_trial, is_feasible
from boanon.space import Categorical, Float, Space
from boanon.store import Store, StoredTrial
from boanon.study import Study
from boanon.table import TRIAL, Value, with_objectives

DEFAULT_REASON = "initial design: the default configuration"
"""The reason the tuner records with the trial of the default configuration."""


@dataclass
class RunView:
    """What a store says about its run, read once: the search space, goals, trials and last graph."""

    store: Store
    space: Space
    objectives: list[Objective]
    constraints: list[OutputConstraint]
    trials: list[StoredTrial]
    graph: CausalGraph | None

    @property
    def model_trial(self) -> StoredTrial | None:
        """The latest trial a structured model proposed (its recorded structure is the run's model)."""
        return model_trial(self.trials)

    @property
    def done(self) -> list[StoredTrial]:
        return [t for t in self.trials if t.status == "done"]

    def best(self, objective: Objective | None = None) -> StoredTrial | None:
        """The feasible finished trial with the best value of ``objective`` (default: the first)."""
        return best_trial(self.done, objective or self.objectives[0], self.constraints)

    def default(self) -> StoredTrial | None:
        """The finished trial of the default configuration, if the run has one."""
        return default_trial(self.trials, self.space)

    def table(self) -> pd.DataFrame:
        """The measured trials as the run's models read them (objectives as the run names them)."""
        return with_objectives(self.store.to_table(), [o.name for o in self.objectives],
                               [c.name for c in self.constraints])

    def trial(self, name_or_id: str | int) -> StoredTrial:
        """A trial by name (``t0007``) or id (``7``, ``0007``). None such is a ValueError saying
        which trials there are, not naming the store: every command that looks one up names it
        already (a KeyError's message would print as its repr, quoted)."""
        wanted = str(name_or_id).strip()
        for t in self.trials:
            if wanted in (t.name, str(t.id)) or wanted.isdigit() and int(wanted) == t.id:
                return t  # 0012, as the name t0012 writes the id, is trial 12
        known = f"{self.trials[0].name} to {self.trials[-1].name}" if self.trials else "none yet"
        raise ValueError(f"no trial {name_or_id!r} (the run's trials: {known})")


def model_trial(trials: list[StoredTrial] | tuple[StoredTrial, ...]) -> StoredTrial | None:
    """The latest trial proposed by the structured surrogate with its structure recorded
    (:meth:`boanon.models.DAGSurrogate.structure_record`): the model every view of the run shows."""
    return next((t for t in reversed(trials)
                 if t.graph_id is not None and "nodes" in t.info.get("structure", {})), None)


def study_space(study: Study, source: str = "store") -> Space:
    """The run's search space as its store recorded it."""
    return Space.from_dict(study.space, study.constraints, source=source)


def read_run(store: Store) -> RunView:
    """The run recorded in ``store``; ValueError when no run was recorded yet (not naming the
    store: the commands that read one name it already)."""
    study = store.study()
    if study is None:
        raise ValueError("no run recorded yet")
    source = str(store.path)
    space = study_space(study, source)
    trials = store.trials()
    graph_ids = [t.graph_id for t in trials if t.graph_id is not None]
    objectives = parse_objectives(study.objectives, source=source)
    constraints = parse_output_constraints(study.outputs, source=source)
    graph = store.graph(graph_ids[-1]).with_objectives([o.name for o in objectives],
                                                       [c.name for c in constraints]) \
        if graph_ids else None
    return RunView(store, space, objectives, constraints, trials, graph)


def history(run: RunView) -> pd.DataFrame:
    """One row per trial in id order: ``trial, status, surrogate, reason, started, duration_s``,
    each objective's value and ``best_<objective>`` (best so far among the feasible finished
    trials, NaN before the first), and ``feasible``. Failed trials keep their row (NaN values)."""
    rows: list[dict[str, Any]] = []
    best: dict[str, float] = {}
    for t in run.trials:
        feasible = t.status == "done" and is_feasible(t, run.constraints)
        row: dict[str, Any] = {TRIAL: t.name, "id": t.id, "status": t.status, "surrogate": t.surrogate,
                               "reason": t.reason, "started": t.started, "duration_s": duration_s(t),
                               "feasible": feasible, "error": t.error}
        for o in run.objectives:
            value = t.objectives.get(o.name)
            row[o.name] = np.nan if value is None else float(value)
            if feasible and value is not None and (o.name not in best or o.better(value, best[o.name])):
                best[o.name] = float(value)
            row[f"best_{o.name}"] = best.get(o.name, np.nan)
        rows.append(row)
    columns = [TRIAL, "id", "status", "surrogate", "reason", "started", "duration_s", "feasible", "error"]
    columns += [c for o in run.objectives for c in (o.name, f"best_{o.name}")]
    return pd.DataFrame(rows, columns=columns)


def hypervolume_history(run: RunView) -> pd.DataFrame:
    """``trial, hypervolume``: the hypervolume of the feasible finished trials after each of
    them (trials that ran to the end, as the front is read), against one reference point fixed
    from what the run knew early (:func:`history_reference_point`) so the values compare over
    time and the first trials already count; it is in ``attrs["reference_point"]`` (the
    objectives' units) and what it is in ``attrs["reference"]``."""
    table = with_objectives(run.store.to_table(("done",)), [o.name for o in run.objectives],
                            [c.name for c in run.constraints])
    out = pd.DataFrame({TRIAL: table[TRIAL] if len(table) else [], "hypervolume": np.zeros(len(table))})
    ref, how = history_reference_point(run.trials, run.objectives, run.constraints)
    if ref is None:
        return out
    out["hypervolume"] = hypervolume_trace(table, run.objectives, ref, run.constraints)
    out.attrs["reference_point"] = dict(zip([o.name for o in run.objectives], ref, strict=True))
    out.attrs["reference"] = how
    return out


def history_reference_point(trials: list[StoredTrial] | tuple[StoredTrial, ...],
                            objectives: list[Objective], constraints: list[OutputConstraint],
                            n_first: int = 5) -> tuple[list[float] | None, str]:
    """A hypervolume reference point for a run's history (objectives' units) and what it is.

    Fixed from what the run knew at its start, never from its final front (a point inferred
    from the end's front leaves every early trial at zero): the worst values of the initial
    design's feasible trials (the default among them; the first ``n_first`` feasible finished
    ones when the initial design has fewer than two), pushed out by a tenth of their range so
    that those trials count. None before any feasible trial has every objective."""
    def values(t: StoredTrial) -> list[float] | None:
        v = [t.objectives.get(o.name) for o in objectives]
        ok = t.status == "done" and is_feasible(t, constraints) \
            and all(x is not None and np.isfinite(x) for x in v)
        return [float(x) for x in v] if ok else None

    usable = [t for t in trials if values(t) is not None]
    first = [t for t in usable if t.surrogate == INIT]
    if len(first) < 2:  # one point makes a poor nadir: the first few feasible trials instead
        first = usable[:n_first]
    if not first:
        return None, "no feasible finished trial yet"
    points = np.array([[o.to_minimize(x) for o, x in zip(objectives, values(t), strict=True)] for t in first])
    worst, spread = points.max(axis=0), np.ptp(points, axis=0)
    spread = np.where(spread > 0, spread, np.where(worst != 0, np.abs(worst), 1.0))
    ref = [float(o.from_minimize(v)) for o, v in zip(objectives, worst + 0.1 * spread, strict=True)]
    trials = units.count(len(first), "feasible trial")
    what = f"the initial design's {trials}" if all(t.surrogate == INIT for t in first) \
        else f"the first {trials}"
    return ref, f"the worst values of {what}, pushed out by a tenth of their range"


def duration_s(trial: StoredTrial) -> float:
    """Seconds from the trial's start to its end (NaN while it runs, or where the end is not
    known: :attr:`~boanon.store.StoredTrial.ran_until`)."""
    if not trial.ran_until:
        return float("nan")
    return (datetime.fromisoformat(trial.ran_until) - datetime.fromisoformat(trial.started)).total_seconds()


def default_trial(trials: list[StoredTrial] | tuple[StoredTrial, ...], space: Space) -> StoredTrial | None:
    """The finished trial of the space's default configuration (the baseline): the initial
    design's default trial first, else any finished trial that ran it."""
    default = space.default()
    done = [t for t in trials if t.status == "done"]
    for t in done:
        if t.reason == DEFAULT_REASON or (t.surrogate == INIT and t.config == default):
            return t
    return next((t for t in done if t.config == default), None)


def fit_surrogate(run: RunView) -> Surrogate:
    """The run's model refitted on its measured trials (see :func:`fit_run_model`): the structure
    of the latest structured proposal when the store recorded one."""
    latest = run.model_trial
    if latest is None:
        return fit_run_model(run.space, run.table(), run.objectives, run.constraints, run.graph)
    return fit_run_model(run.space, run.table(), run.objectives, run.constraints,
                         run.store.graph(latest.graph_id), latest.info["structure"])


@single_blas_thread
def fit_run_model(space: Space, table: pd.DataFrame, objectives: list[Objective] | tuple[Objective, ...],
                  constraints: list[OutputConstraint] | tuple[OutputConstraint, ...],
                  graph: CausalGraph | None, structure: dict[str, Any] | None = None) -> Surrogate:
    """A run's kind of model fitted on ``table``: the structured surrogate over ``graph`` when
    there is one (with ``structure``, the node models a proposal recorded, refitted as they were
    chosen), else the plain GP (also when the trials cannot feed the graph, e.g. a metric no
    trial logged: the run's own safety net)."""
    outputs = [c.name for c in constraints]
    if graph is not None:
        graph = graph.with_objectives([o.name for o in objectives], outputs)
        try:
            # random_state: one fixed fold split for the safety net (each proposal drew its own)
            return DAGSurrogate(space, graph, objectives, outputs, random_state=0,
                                structure=structure).fit(table)
        except ValueError:
            pass
    return PlainGPSurrogate(space, objectives, outputs).fit(table)


def grid(space: Space, name: str, n_points: int = 21, through: Value | None = None) -> list[Value]:
    """Values of parameter ``name`` to sweep: every choice, or ``n_points`` evenly spread over its
    range (on its own scale: a log range sweeps logarithmically; an integer range its integers),
    with ``through`` (the value the others are held at) among them in order, so that a curve
    read "from the base" starts from the base itself, not from the nearest grid point."""
    p = space.params[name]
    if isinstance(p, Categorical):
        return list(p.choices)
    values = [p.from_unit(u) for u in np.linspace(0.0, 1.0, n_points)]
    if through is not None and isinstance(p, Float) and p.low <= through <= p.high:
        values = sorted([*values, through])
    return list(dict.fromkeys(values))  # integers and booleans repeat: keep each once


@single_blas_thread
def effects(surrogate: Surrogate, at: dict[str, Value], n_points: int = 21, n_samples: int = 64,
            seed: int = 0) -> pd.DataFrame:
    """What the model says each parameter does to each objective: one parameter swept over its
    range while the others stay at ``at`` (an individual conditional expectation around, say, the
    best configuration). Rows ``param, value, objective, mean, sd``; configurations that break the
    space's constraints are left out."""
    space = surrogate.space
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for name in space.names:
        configs = [c for c in ({**at, name: v} for v in grid(space, name, n_points, at.get(name)))
                   if space.is_feasible(c)]
        if not configs:
            continue
        for objective, (mean, sd) in surrogate.predict(configs, rng, n_samples).items():
            rows += [{"param": name, "value": c[name], "objective": objective, "mean": float(m),
                      "sd": float(s)} for c, m, s in zip(configs, mean, sd, strict=True)]
    return pd.DataFrame(rows, columns=["param", "value", "objective", "mean", "sd"])


def effect_sizes(table: pd.DataFrame, graph: CausalGraph | None = None) -> pd.DataFrame:
    """Per parameter and objective, how far the model's mean moves across the sweep of
    :func:`effects` (``spread`` = max - min of the mean), largest first; with the run's
    ``graph``, ``via``: the metrics on the parameter's paths to the objective (comma-separated,
    nearest the parameter first)."""
    grouped = table.groupby(["objective", "param"], sort=False)["mean"]
    out = grouped.agg(low="min", high="max").reset_index()
    out["spread"] = out["high"] - out["low"]
    if graph is not None:
        g = graph.to_networkx()
        pairs = zip(out["param"], out["objective"], strict=True)
        out["via"] = [", ".join(_between(g, p, o)) for p, o in pairs]
    return out.sort_values(["objective", "spread"], ascending=[True, False], ignore_index=True)


def _between(g: nx.DiGraph, source: str, target: str) -> list[str]:
    """The nodes on directed paths from ``source`` to ``target`` (neither end included), nearest
    ``source`` first, and at the same distance those of its own entity (``m3_worker``: ``m3_*``)."""
    if source not in g or target not in g:
        return []
    hops = nx.shortest_path_length(g, source)
    entity = re.match(ENTITY, source)
    own = entity[1] if entity else None
    return sorted(nx.descendants(g, source) & nx.ancestors(g, target),
                  key=lambda n: (hops[n], not (own and n.startswith(own)), n))
