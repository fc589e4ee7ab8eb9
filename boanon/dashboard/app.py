"""The dashboard's web layer: a Starlette app serving the page, its JSON and the trials' logs.

The page (``static/``) polls ``/api/run`` every few seconds and redraws; the graph and the model
views have their own endpoints because they change only when the run learns a new graph or
finishes trials. The store is opened read-only (SQLite ``mode=ro``): the dashboard can watch a
run in progress, in another process or in the tuner's own (``boanon tune --dashboard``), and
never writes to it. Uvicorn serves the app, on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from boanon.dashboard import analysis, data
from boanon.report import model_trial, study_space
from boanon.results import study_goals
from boanon.store import MEASURED, Store, dump_json
from boanon.store import trials_dir as store_trials_dir
from boanon.table import records_to_table, with_objectives

STATIC = Path(__file__).parent / "static"
HOST = "127.0.0.1"
PORT = 8765


class JSON(Response):
    """JSON with NaN and infinities as null (the store's convention), which browsers can parse."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dump_json(content).encode()


class RunView:
    """Reads a run's store (read-only) into the page's JSON views."""

    def __init__(self, store_path: str | Path, trials_dir: str | Path | None = None,
                 poll_s: float = 2.0, min_model_interval_s: float = 10.0):
        self.store = Store(store_path, read_only=True, follow=True)
        self.trials_dir = store_trials_dir(self.store, trials_dir)
        self.poll_s = poll_s
        self.models = analysis.Background(min_model_interval_s)

    def run(self) -> dict[str, Any]:
        """Everything cheap: the header, convergence, trials, Pareto front, timeline."""
        study = self.store.study()
        trials = self.store.trials()
        objectives, constraints = study_goals(self.store)
        summary = data.run_summary(str(self.store.path), study, trials, objectives, constraints)
        summary["activity"] = self.store.activity()
        if study is None:
            return {"summary": summary, "poll_s": self.poll_s}
        space = study_space(study)
        return {
            "summary": summary, "poll_s": self.poll_s,
            "convergence": data.convergence(trials, objectives, constraints, space),
            "trials": data.trial_rows(trials, self.trials_dir),
            "pareto": data.pareto(trials, objectives, constraints),
            "timeline": data.timeline(trials),
            "graph_id": self.store.last_graph_id(),
        }

    def graph(self, scope: str = "ancestors", node: str | None = None) -> dict[str, Any]:
        """The run's current graph (None before it has one), the part ``scope`` names
        (:data:`data.SCOPES`), with the node models of the last structured proposal."""
        study = self.store.study()
        graph_id = self.store.last_graph_id()
        if study is None or graph_id is None:
            return {"graph": None}
        objectives, _ = study_goals(self.store)
        latest = model_trial(self.store.trials())
        view = data.graph_view(self.store.graph(graph_id), study_space(study),
                               [o.name for o in objectives], scope,
                               None if latest is None else latest.info["structure"], node)
        return {"graph": view, "graph_id": graph_id}

    def model_views(self) -> dict[str, Any]:
        """Node fits and parameter effects (:mod:`boanon.dashboard.analysis`), computed in the
        background for the measured trials with the model of the latest structured proposal
        (the node models it recorded, over its graph); before one, the structured surrogate
        fitted afresh on the run's current graph; else the plain GP."""
        study = self.store.study()
        if study is None:
            return {"status": "ready", "error": "no run recorded yet"}
        trials = self.store.trials()
        measured = [t for t in trials if t.status in MEASURED]
        objectives, constraints = study_goals(self.store)
        latest = model_trial(trials)
        # before any structured proposal, the structured surrogate fitted afresh on the current graph
        graph_id = latest.graph_id if latest is not None else \
            self.store.last_graph_id() if study.get("strategy") == "structured" else None
        structure = None if latest is None else latest.info["structure"]
        space = study_space(study)
        best = data.run_summary(str(self.store.path), study, trials, objectives, constraints)["best"]
        first = best.get(objectives[0].name) if objectives else None
        base = first["config"] if first else space.default()

        def compute() -> dict[str, Any]:
            table = with_objectives(records_to_table(t.record() for t in measured),
                                    [o.name for o in objectives], [c.name for c in constraints])
            graph = None if graph_id is None else self.store.graph(graph_id)
            return {**analysis.analyse(space, table, objectives, constraints, graph, base, structure),
                    "model_trial": None if latest is None else latest.name}
        return self.models.get((None if latest is None else latest.id, graph_id, len(measured)), compute)


def create_app(view: RunView) -> Starlette:
    """The dashboard's routes over ``view``."""
    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    def run(request: Request) -> JSON:
        return JSON(view.run())

    def graph(request: Request) -> JSON:
        try:
            params = request.query_params
            return JSON(view.graph(params.get("scope", "auto"), params.get("node")))
        except ValueError as exc:  # an unknown scope or node: the page says what
            return JSON({"error": str(exc)}, status_code=400)

    def models(request: Request) -> JSON:
        return JSON(view.model_views())

    # sync handlers run in Starlette's thread pool: a slow read never stalls the event loop
    return Starlette(routes=[
        Route("/", index),
        Route("/api/run", run),
        Route("/api/graph", graph),
        Route("/api/models", models),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Mount("/logs", StaticFiles(directory=view.trials_dir, check_dir=False), name="logs"),
    ])


class Dashboard:
    """The dashboard served by uvicorn in a background thread (``boanon tune --dashboard``, tests)."""

    def __init__(self, view: RunView, host: str = HOST, port: int = PORT):
        config = uvicorn.Config(create_app(view), host=host, port=port, log_level="warning",
                                access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="boanon-dashboard")

    def start(self, timeout: float = 10.0) -> str:
        """Start serving; return the page's URL (with the port chosen when ``port`` was 0)."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started and self.thread.is_alive():
            if time.monotonic() > deadline:
                raise RuntimeError("the dashboard's server did not start")
            time.sleep(0.02)
        if not self.server.started:
            raise RuntimeError(f"the dashboard could not listen on {self.server.config.host}:"
                               f"{self.server.config.port} (port taken?)")
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)

