"""What the dashboard shows, as plain dicts and lists (JSON-able), computed from a run's store.

Kept apart from the web layer (:mod:`boanon.dashboard.app`) so each view can be checked without a
server, and from the model fits (:mod:`boanon.dashboard.analysis`), which are too slow for a
request. Every function reads values the store already holds; none writes.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from boanon import units
from boanon.graph import CausalGraph
from boanon.graph_render import neighbourhood
from boanon.models.dag import model_graph, node_label, node_parents
from boanon.multiobjective import OutputConstraint
from boanon.multiobjective.summary import hypervolume_trace, pareto_flags
from boanon.multitask.tasks import TASK as TASK_NODE
from boanon.nodespec import NodeSpec
from boanon.objectives import Objective
from boanon.report import default_trial, history_reference_point
from boanon.results import best_trial, broken, is_feasible, origin
from boanon.space import Bool, Categorical, Space
from boanon.store import MEASURED, StoredTrial, TrialState
from boanon.table import natural_key, records_to_table, with_objectives

GROUP_PREFIX = re.compile(r"([A-Za-z0-9]+)[_.:/-]")  # m3_busy_s, rocksdb.block.cache.miss
MIN_GROUP = 2  # a name prefix shared by fewer nodes is no group


def seconds(start: str, end: str | None) -> float | None:
    """Seconds between two of the store's ISO timestamps (None while a trial runs)."""
    if end is None:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


# --- the run ---------------------------------------------------------------------------------------
STATUSES = tuple(s.value for s in (TrialState.DONE, TrialState.STOPPED, TrialState.FAILED,
                                   TrialState.INTERRUPTED, TrialState.RUNNING))
"""Every trial state, in the order the page counts, filters and draws them."""


def run_summary(path: str, study: Mapping[str, Any] | None, trials: Sequence[StoredTrial],
                objectives: Sequence[Objective], constraints: Sequence[OutputConstraint]) -> dict[str, Any]:
    """The header: strategy, counts by status, time span, and the best trial per objective."""
    if study is None:
        return {"store": path, "recorded": False}
    counts = Counter(t.status for t in trials)
    done = [t for t in trials if t.status == "done"]
    last = max((t.finished for t in trials if t.finished), default=None)
    bests = {}
    for o in objectives:
        b = best_trial(done, o, constraints)
        bests[o.name] = None if b is None else {"trial": b.name, "value": b.objectives[o.name],
                                                "config": b.config, "surrogate": b.surrogate,
                                                "origin": origin(b.surrogate)}
    return {
        "store": path, "recorded": True, "strategy": study.get("strategy"), "seed": study.get("seed"),
        "n_params": len(study.get("space", {})), "warm_start": study.get("warm_start"),
        "objectives": [o.to_dict() for o in objectives],
        "constraints": [c.to_dict() for c in constraints],
        "counts": {s: counts.get(s, 0) for s in STATUSES},
        "started": trials[0].started if trials else None, "last_finished": last,
        "elapsed_s": seconds(trials[0].started, last) if trials and last else None,
        "best": bests,
        "units": run_units(study, trials),
        "choices": categories(study),
    }


def categories(study: Mapping[str, Any]) -> dict[str, list[Any]]:
    """``{name: choices}`` for the run's categorical and boolean parameters: the page places a
    value at its index on an axis (parallel coordinates, slices) and labels it with its name,
    since a text value has no position of its own (``codec: zstd`` left every trial's line
    undrawn) and a switch is ``false`` or ``true``, never ``-0.5`` when every trial had it off."""
    space = Space.from_dict(study.get("space") or {}, study.get("constraints") or ())
    return {p.name: list(p.choices) if isinstance(p, Categorical) else [False, True]
            for p in space.params.values() if isinstance(p, (Categorical, Bool))}


def run_units(study: Mapping[str, Any], trials: Sequence[StoredTrial]) -> dict[str, str]:
    """``{name: unit}`` for the run's parameters, objectives and logged metrics that have one
    (declared in the space or objective, else read off the name: :mod:`boanon.units`). A switch
    or a category has no unit to read: ``level_compaction_dynamic_level_bytes`` is a boolean."""
    names = set(Space.from_dict(study.get("space") or {}, study.get("constraints") or ()).numeric_names)
    names.update(o["name"] for o in study.get("objectives") or [])
    names.update(*(t.metrics for t in trials))
    return units.units(sorted(names), units.declared(study))


def convergence(trials: Sequence[StoredTrial], objectives: Sequence[Objective],
                constraints: Sequence[OutputConstraint], space: Space) -> list[dict[str, Any]]:
    """Per objective: every measured trial's value, the best feasible finished value so far (in
    trial order), and the default configuration's value (None when the run did not measure it)."""
    baseline = default_trial(trials, space)
    out = []
    for o in objectives:
        points, steps, best = [], [], None
        for t in trials:
            value = t.objectives.get(o.name)
            if t.status not in MEASURED or value is None:
                continue
            feasible = is_feasible(t, constraints)
            points.append({"x": t.id, "y": value, "trial": t.name, "status": t.status,
                           "feasible": feasible, "surrogate": t.surrogate})
            if t.status == "done" and feasible and (best is None or o.better(value, best)):
                best = value
            if best is not None:
                steps.append({"x": t.id, "y": best})
        out.append({"objective": o.name, "direction": o.direction, "points": points, "best": steps,
                    "default": None if baseline is None else baseline.objectives.get(o.name),
                    "default_feasible": baseline is not None and is_feasible(baseline, constraints),
                    "default_trial": None if baseline is None else baseline.name})
    return out


def trial_rows(trials: Sequence[StoredTrial], trials_dir: Path | None, outputs: Sequence[str],
               constraints: Sequence[OutputConstraint] = ()) -> list[dict[str, Any]]:
    """The trials table: one plain row per trial, newest last, with what proposed it and why,
    what the model predicted for it, and where its logs are (the files in that directory are
    :func:`trial_files`, asked for one trial at a time: listing every trial's at every poll sent
    each name of each directory, hundreds per trial where a system logs a file per step, and
    links that lead out of the run). Its objectives are the run's
    ``outputs`` (objectives and constrained outputs); whatever else the adapter reported as an
    objective (ZigZag's energy beside the EDP a run tunes) is listed with the metrics, as the
    run's table and models read it (:func:`boanon.table.with_objectives`). A measured trial's
    ``breaks`` are the output ``constraints`` it breaks, as text: an infeasible trial (or default)
    is said to be one wherever it is shown, not only as a cross on the chart."""
    kept = set(outputs)
    rows = []
    for t in trials:
        folder = None if trials_dir is None else trials_dir / t.name
        rows.append({
            "id": t.id, "name": t.name, "status": t.status, "started": t.started, "finished": t.finished,
            "duration_s": seconds(t.started, t.ran_until), "surrogate": t.surrogate,
            "origin": origin(t.surrogate), "reason": t.reason,
            "objectives": {k: v for k, v in t.objectives.items() if k in kept},
            "metrics": {**t.metrics, **{k: v for k, v in t.objectives.items() if k not in kept}},
            "config": t.config, "error": t.error,
            "retry_of": t.retry_of,
            "predicted": t.info.get("predicted", {}), "cv": t.info.get("cv", {}),
            "timings_s": t.info.get("timings_s", {}), "graph_id": t.graph_id,
            "logs": None if folder is None else str(folder),
            "breaks": [c.describe() for c in broken(t, constraints)] if t.status in MEASURED else [],
        })
    return rows


NUMBER = re.compile(r"(\d+)")
MAX_TRIAL_FILES = 50
"""The most files of one trial's directory the page lists (the rest are counted)."""
MAX_SERVED_BYTES = 64 * 2**20
"""The largest trial file served under ``/logs``: a bigger one (a core dump, a checkpoint) is
listed with its size but never sent to a browser tab."""


def unlisted(entry: os.DirEntry[str]) -> str | None:
    """Why a trial directory's entry is neither listed nor served under ``/logs``, or None: a
    hidden one (a lock, an editor's swap file), a link (one may lead out of the run), a folder."""
    if entry.name.startswith("."):
        return "it is hidden"
    if not entry.is_file(follow_symlinks=False):
        return "it is not a plain file (a link or a folder)"
    return None


def trial_files(folder: Path, limit: int = MAX_TRIAL_FILES) -> dict[str, Any]:
    """The files of a trial's directory that the page lists (:func:`unlisted`), the first
    ``limit`` with their sizes (a core dump is not opened unawares) and whether ``/logs`` serves
    them (:data:`MAX_SERVED_BYTES`), and how many more there are. Files of their own name come
    first, then numbered series (``iter-7.log``), in number order: a series of hundreds left the
    trial's ``result.json`` and ``stdout.txt`` past the limit."""
    found: list[os.DirEntry[str]] = []
    if folder.is_dir():
        with os.scandir(folder) as entries:
            found = [e for e in entries if unlisted(e) is None]
    series = Counter(NUMBER.sub("#", e.name) for e in found)
    found.sort(key=lambda e: (series[NUMBER.sub("#", e.name)] > 1, natural_key(e.name)))
    listed = []
    for e in found[:limit]:
        with contextlib.suppress(FileNotFoundError):  # a running trial's file gone since the listing
            size = e.stat(follow_symlinks=False).st_size
            listed.append({"name": e.name, "bytes": size, "served": size <= MAX_SERVED_BYTES})
    return {"files": listed, "more": max(0, len(found) - limit)}


def trial_file(folder: Path, name: str) -> tuple[Path, os.stat_result]:
    """The file ``name`` of trial directory ``folder`` as ``/logs`` serves it, with its status:
    only one :func:`trial_files` lists (of the directory itself, not of a sub-folder) and at most
    :data:`MAX_SERVED_BYTES`. FileNotFoundError when there is none of that name, PermissionError
    saying why one is not served."""
    if "/" in name:
        raise PermissionError(f"{name!r} is not served: only the files of the trial's own directory are, "
                              "not those of its sub-folders")
    entry = None
    if folder.is_dir():
        with os.scandir(folder) as entries:
            entry = next((e for e in entries if e.name == name), None)
    if entry is None:
        raise FileNotFoundError(f"no file {name!r} in the trial's directory")
    why = unlisted(entry)
    if why is not None:
        raise PermissionError(f"{name!r} is not served: {why}")
    stat = entry.stat(follow_symlinks=False)
    if stat.st_size > MAX_SERVED_BYTES:
        raise PermissionError(f"{name!r} is not served: it is {stat.st_size} bytes, over the "
                              f"{MAX_SERVED_BYTES // 2**20} MiB served here; open it in {folder}")
    return Path(entry.path), stat


# --- Pareto front and workers ----------------------------------------------------------------------
def pareto(trials: Sequence[StoredTrial], objectives: Sequence[Objective],
           constraints: Sequence[OutputConstraint]) -> dict[str, Any] | None:
    """For several objectives: each finished trial's values with its front and feasibility flags,
    and the hypervolume after each trial against the reference point ``boanon plot`` uses
    (:func:`boanon.report.history_reference_point`), with what that point is."""
    if len(objectives) < 2:
        return None
    done = [t for t in trials if t.status == "done"]
    names = [o.name for o in objectives]
    ref, how = history_reference_point(list(trials), list(objectives), list(constraints))
    if not done:
        return {"objectives": names, "points": [], "hypervolume": [], "ref": None, "ref_how": how}
    table = with_objectives(records_to_table(t.record() for t in done), names, [c.name for c in constraints])
    flags = pareto_flags(table, objectives, constraints).to_numpy()
    ok = np.array([is_feasible(t, constraints) for t in done])
    trace = [] if ref is None else hypervolume_trace(table, objectives, ref, constraints).tolist()
    return {
        "objectives": names,
        "points": [{"trial": t.name, "id": t.id, "values": [t.objectives.get(o.name) for o in objectives],
                    "front": bool(f), "feasible": bool(k)} for t, f, k in zip(done, flags, ok, strict=True)],
        "hypervolume": [{"x": t.id, "y": v} for t, v in zip(done, trace, strict=False)],
        "ref": ref, "ref_how": how,
    }


def timeline(trials: Sequence[StoredTrial]) -> dict[str, Any]:
    """Trials as bars in time (seconds since ``origin``, when the first started; a running trial,
    or one a dead run left running, has no end), packed into lanes: a trial takes the first lane
    free when it starts. The store does not record which worker ran a trial, so the lanes are
    the fewest that fit the overlaps: as many as trials ran at once."""
    if not trials:
        return {"lanes": 0, "bars": [], "origin": None}
    origin = trials[0].started
    ends: list[float] = []  # per lane, when its last trial ended
    bars = []
    for t in sorted(trials, key=lambda t: t.started):
        start = seconds(origin, t.started) or 0.0
        end = seconds(origin, t.ran_until)  # None: still running, or its end is not known
        lane = next((i for i, e in enumerate(ends) if e <= start), len(ends))
        if lane == len(ends):
            ends.append(0.0)
        ends[lane] = end if end is not None else start if t.finished else float("inf")
        bars.append({"trial": t.name, "lane": lane, "start": start, "end": end, "status": t.status,
                     "error": t.error})
    return {"lanes": len(ends), "bars": bars, "origin": origin}


# --- the graph ---------------------------------------------------------------------------------
HIDDEN = frozenset({TASK_NODE})
"""Internal nodes not drawn: the task indicator of a warm-started run is no parameter a person set."""


def node_model_view(spec: Mapping[str, Any] | None, space: Space,
                    unused: bool = False) -> dict[str, Any] | None:
    """A node's recorded model for the node panel: its label and parents (as ``boanon status``)."""
    if unused:
        return {"label": "not sampled (no chosen model reads it)", "parents": []}
    if spec is None:
        return None
    return {"label": node_label(spec), "kind": spec["kind"], "source": spec.get("source"),
            "parents": sum(node_parents(spec, space), [])}


def name_groups(roles: Mapping[str, str]) -> dict[str, str]:
    """Node -> group: the nodes of one role sharing a name prefix (``m3_busy_s`` and ``m3_traffic_mb``
    -> ``m3 metrics``), when at least :data:`MIN_GROUP` do and the prefix is not every node's (then
    it tells nothing). Roles stay apart so that folded groups keep the graph's direction:
    parameters feed metrics, never the other way."""
    matches = {n: GROUP_PREFIX.match(n) for n in roles}
    prefix = {n: m.group(1) for n, m in matches.items() if m}
    everyone = Counter(prefix.values())
    key = {n: f"{p} {roles[n]}s" for n, p in prefix.items() if everyone[p] < len(roles)}
    sizes = Counter(key.values())
    return {n: k for n, k in key.items() if sizes[k] >= MIN_GROUP}


def node_form(node: str, spec: Mapping[str, Any] | None, learned: bool = False) -> dict[str, Any] | None:
    """A node's expression in short, as its kind shows it (a deterministic function, a formula
    with a residual), ``learned`` from the logs (a relation the learner found) or an expert's
    annotation."""
    if not spec:
        return None
    parsed = NodeSpec.parse(node, spec)
    return {**parsed.node_kind.annotation_view(parsed),
            "source": "learned from the logs" if learned else "annotated"}


def bound_view(node: str, bounds: Mapping[str, str], g: nx.DiGraph) -> dict[str, Any] | None:
    """A bounded output's bound as text, and whether the graph has a learned path into it."""
    return {"text": bounds[node], "learned": g.in_degree(node) > 0} if node in bounds else None


SCOPES = ("auto", "neighbourhood", "ancestors", "all", "node")
"""What part of the graph the page draws: the objectives' strongest paths
(:func:`boanon.graph_render.neighbourhood`, as ``boanon plot --kind graph``), the objectives and
all their ancestors, everything, or one ``node`` with its ancestors and descendants; ``auto``:
the ancestors, or the strongest paths when there are more than :data:`NEIGHBOURHOOD_NODES`."""
NEIGHBOURHOOD_NODES = 30


def graph_view(graph: CausalGraph, space: Space, objectives: Sequence[str], scope: str = "ancestors",
               structure: Mapping[str, Any] | None = None, node: str | None = None,
               bounds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The graph for drawing, the part ``scope`` names (:data:`SCOPES`); nodes with role, name
    group, expression (annotated or learned), the model the last structured proposal recorded
    (``structure``: its label and parents, as ``boanon status`` prints them) and, for an output
    an output constraint bounds, its bound (``bounds``: output -> its bound as text; a target as
    the objectives are, drawn even where the learner found no path into it); edges with weight,
    stability, whether they are fallbacks (a parameter connected straight to an objective for
    want of a learned path) and whether only a node's expression implies them. ``names`` lists
    every drawable node, for the page's search."""
    if scope not in SCOPES:
        raise ValueError(f"unknown graph scope {scope!r}; one of {SCOPES}")
    if scope == "node" and node is None:  # else: "no node None in the run's graph"
        raise ValueError("scope=node needs node=NAME (the node drawn with its ancestors and descendants)")
    try:
        g = model_graph(graph, space)  # the names a node's expression reads are its parents
    except ValueError:  # drawn as stored; the model would have refused it
        g = graph.to_networkx()
    g.remove_nodes_from(HIDDEN)
    bounds = dict(bounds or {})
    g.add_nodes_from(bounds)  # one the learner left out is still steered: drawn, alone
    targets = [o for o in [*objectives, *bounds] if o in g]
    ancestry = set(targets).union(*(nx.ancestors(g, o) for o in targets)) if targets else set(g)
    if scope == "auto":
        scope = "neighbourhood" if len(ancestry) > NEIGHBOURHOOD_NODES else "ancestors"
    if scope == "node":
        if node not in g:
            raise ValueError(f"no node {node!r} in the run's graph")
        keep = {node} | nx.ancestors(g, node) | nx.descendants(g, node)
    elif scope == "neighbourhood":
        keep = set(neighbourhood(g.subgraph(ancestry), targets, NEIGHBOURHOOD_NODES))
    else:
        keep = ancestry if scope == "ancestors" else set(g)
    stored = {(e.source, e.target) for e in graph.edges}
    fallback = {tuple(s.split(" -> ")) for s in graph.metadata.get("params_connected", [])}
    roles = {n: graph.roles.get(n, "metric" if n in bounds else "param") for n in g if n in keep}
    groups = name_groups(roles) if scope != "neighbourhood" else {}
    models = (structure or {}).get("nodes", {})
    unused = set((structure or {}).get("unused", []))
    relations = {r.get("target") for r in graph.metadata.get("relations", [])}
    return {
        "nodes": [{"id": n, "role": role, "group": groups.get(n),
                   "form": node_form(n, graph.node_models.get(n), n in relations),
                   "bound": bound_view(n, bounds, g),
                   "model": node_model_view(models.get(n), space, n in unused),
                   "parents": sum(1 for p in g.predecessors(n) if p in roles)} for n, role in roles.items()],
        "edges": [{"source": s, "target": t, "weight": d.get("weight"), "stability": d.get("stability"),
                   "fallback": (s, t) in fallback, "annotated": (s, t) not in stored}
                  for s, t, d in g.edges(data=True) if s in roles and t in roles],
        "groups": sorted(set(groups.values())),
        "objectives": targets, "scope": scope, "node": node, "total_nodes": g.number_of_nodes(),
        "ancestry_nodes": len(ancestry), "names": sorted(g.nodes),
        "total_edges": len(graph.edges), "learned_from_trials": graph.metadata.get("learned_from_trials"),
    }
