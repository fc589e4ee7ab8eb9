"""The dashboard's model views: each node model's held-out fit and the parameters' effects.

Both need the run's surrogate fitted on its trials (seconds on a large graph), so they are
computed in a background thread, at most once per new graph or batch of trials and no more often
than every ``min_interval_s``; a request gets the last result at once, marked ``stale`` while a
newer one is being computed. The surrogate is the one the run uses: the DAG surrogate over the
run's last graph (structured runs), else the plain GP (objectives only, no per-node models).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon import units
from boanon.graph import CausalGraph
from boanon.models import DAGSurrogate, Surrogate
from boanon.models.base import heldout_scores
from boanon.models.dag import node_label, node_parents
from boanon.multiobjective import OutputConstraint
from boanon.objectives import Objective
from boanon.report import fit_run_model, grid
from boanon.space import Space
from boanon.table import TRIAL, Value

GRID = 11  # values per numeric parameter in an effect curve
EFFECT_SAMPLES = 64
MAX_METRICS = 6  # metrics shown per parameter: those it moves most


class Background:
    """One result computed off the request path, recomputed when its key changes."""

    def __init__(self, min_interval_s: float = 10.0):
        self.min_interval_s = min_interval_s
        self._lock = threading.Lock()
        self._key: Hashable | None = None
        self._result: dict[str, Any] | None = None
        self._running = False
        self._last_start = -float("inf")
        self._thread: threading.Thread | None = None

    def get(self, key: Hashable, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The result for ``key`` if there is one; else start computing it (when none is under way
        and the last started long enough ago) and return the previous result as ``stale``."""
        with self._lock:
            fresh = self._key == key and self._result is not None
            if not fresh and not self._running and time.monotonic() - self._last_start >= self.min_interval_s:
                self._running, self._last_start = True, time.monotonic()
                self._thread = threading.Thread(target=self._run, args=(key, compute), daemon=True,
                                                name="boanon-dashboard-models")
                self._thread.start()
            if self._result is None:
                return {"status": "computing"}
            return {**self._result, "status": "ready" if fresh else "stale"}

    def wait(self, timeout: float | None = None) -> None:
        """Until the computation under way (if any) ends: a process that exits while a daemon
        thread is inside numpy or writes a warning can abort in the interpreter's finalisation."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self, key: Hashable, compute: Callable[[], dict[str, Any]]) -> None:
        started = time.perf_counter()
        try:
            result = compute()
        except Exception as exc:  # shown on the page; the dashboard keeps serving
            result = {"error": f"{type(exc).__name__}: {exc}"}
        result["seconds"] = round(time.perf_counter() - started, 3)
        with self._lock:
            self._key, self._result, self._running = key, result, False


def node_fits(model: DAGSurrogate, table: pd.DataFrame, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per node model: its kind, label (:func:`node_label`, as ``boanon status`` prints it) and
    parents, each trial's observed value against the value predicted without that trial
    (observed parents), and the held-out scores."""
    recorded = model.structure_record()["nodes"]
    out = {}
    for node, fit in model.node_fits(np.random.default_rng(seed)).items():
        m = model.models_[node]
        y, mu, sd = fit["observed"], fit["predicted"], fit["sd"]
        scores = heldout_scores(y[:, None], mu[:, None], sd[:, None]) if len(y) > 1 else {}
        out[node] = {"kind": m.kind, "label": node_label(recorded[node]), "source": recorded[node]["source"],
                     "parents": sum(node_parents(recorded[node], model.space), []), "n": len(y),
                     "trials": table[TRIAL].to_numpy()[fit["rows"]].tolist(),
                     "observed": y.tolist(), "predicted": mu.tolist(), "sd": sd.tolist(), **scores}
    return out


def downstream(model: Surrogate, name: str) -> list[str]:
    """The modelled nodes a parameter reaches (through metrics) in the DAG surrogate."""
    if not isinstance(model, DAGSurrogate):
        return []
    reached = {name}
    for node in model.order_:  # topological: a node's parents come first
        if reached & set(model.models_[node].parents):
            reached.add(node)
    return [n for n in model.order_ if n in reached]


def effects(model: Surrogate, space: Space, base: Mapping[str, Value], objectives: Sequence[Objective],
            table: pd.DataFrame, seed: int = 0) -> list[dict[str, Any]]:
    """What the model says each parameter does, the others held at ``base``: the objectives'
    predicted mean and its ± 1 sd band (as ``boanon plot --kind effects``) along the parameter's
    values and, for the DAG surrogate, the metrics on its way to them (those it moves most
    relative to their spread across the trials), each as its change from its value at ``base``
    in units of that spread, so metrics compare on one axis without being stretched to it.
    ``ranges`` gives how far each objective's mean moves; sorted by the first objective's."""
    rng = np.random.default_rng(seed)
    sweeps = {n: [v for v in grid(space, n, GRID, base[n]) if space.is_feasible({**base, n: v})]
              for n in space.names}
    configs = [{**base, n: v} for n in space.names for v in sweeps[n]]
    samples = model.sample(configs, EFFECT_SAMPLES, rng)
    out, start = [], 0
    for name in space.names:
        k = len(sweeps[name])
        part = {node: s[:, start:start + k] for node, s in samples.items()}
        start += k
        curves = {}
        for o in objectives:
            mean, sd = part[o.name].mean(axis=0), part[o.name].std(axis=0)
            curves[o.name] = {"mean": mean.tolist(), "low": (mean - sd).tolist(),
                              "high": (mean + sd).tolist()}
        at = sweeps[name].index(base[name]) if base[name] in sweeps[name] else 0
        metrics = []
        for node in downstream(model, name):
            if node == name or node in curves or node not in part:
                continue
            mean = part[node].mean(axis=0)
            col = model.node_column(node)
            spread = float(np.nanstd(table[col].to_numpy(dtype=float))) if col in table.columns else 0.0
            moved = float(np.ptp(mean)) / spread if spread > 0 else 0.0
            change = (mean - mean[at]) / spread if spread > 0 else np.zeros_like(mean)
            metrics.append({"name": node, "mean": mean.tolist(), "change_sd": change.tolist(),
                            "moved_sd": moved})
        metrics.sort(key=lambda m: -m["moved_sd"])
        first = np.asarray(curves[objectives[0].name]["mean"])
        ranges = {o: float(np.ptp(c["mean"])) if len(c["mean"]) else 0.0 for o, c in curves.items()}
        out.append({"param": name, "values": sweeps[name], "base": base[name], "objectives": curves,
                    "range": float(np.ptp(first)) if len(first) else 0.0, "ranges": ranges,
                    "metrics": metrics[:MAX_METRICS],
                    "n_metrics": len(metrics)})
    out.sort(key=lambda e: -e["range"])
    return out


def analyse(space: Space, table: pd.DataFrame, objectives: Sequence[Objective],
            constraints: Sequence[OutputConstraint], graph: CausalGraph | None,
            base: Mapping[str, Value], structure: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The model views of one state of the run (plain data for the page): the ``structure`` a
    proposal recorded, refitted on ``table``."""
    if len(table) < 2:
        return {"error": f"{units.count(len(table), 'measured trial')}: too few to fit a model"}
    model = fit_run_model(space, table, objectives, constraints, graph,
                          None if structure is None else dict(structure))
    dag = isinstance(model, DAGSurrogate)
    return {
        "surrogate": model.name, "n_trials": len(table), "base": dict(base),
        "nodes": node_fits(model, table) if dag else {},
        "unused": list(model.structure_record().get("unused", [])) if dag else [],
        "effects": effects(model, space, base, objectives, table),
    }
