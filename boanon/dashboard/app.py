"""The dashboard's web layer: a Starlette app serving the page, its JSON and the trials' logs.

The page (``static/``) polls ``/api/run`` every few seconds and redraws; the graph and the model
views have their own endpoints because they change only when the run learns a new graph or
finishes trials. The store is opened read-only (SQLite ``mode=ro``): the dashboard can watch a
run in progress, in another process or in the tuner's own (``boanon tune --dashboard``), and
never writes to it. Uvicorn serves the app, on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from boanon.dashboard import analysis, data
from boanon.multiobjective import OutputConstraint
from boanon.objectives import Objective
from boanon.report import model_trial, study_space
from boanon.results import best_trial, study_goals
from boanon.store import MEASURED, Store, StoredTrial, dump_json
from boanon.store import trials_dir as store_trials_dir
from boanon.strategies import models_graph
from boanon.study import Study
from boanon.table import records_to_table, with_objectives

T = TypeVar("T")
STATIC = Path(__file__).parent / "static"
HOST = "127.0.0.1"
PORT = 8765
LOGS = "/logs"
"""Where study ``i``'s trial files are served: ``/logs`` for the first, ``/logs-<i>`` for the others."""


class JSON(Response):
    """JSON with NaN and infinities as null (the store's convention), which browsers can parse."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dump_json(content).encode()


PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
               "form-action 'none'; frame-ancestors 'none'")
"""The page's Content-Security-Policy: its own scripts only (no inline script, no other origin)."""
FILE_POLICY = "default-src 'none'; sandbox"
"""The policy of a trial's file: a runner wrote it, so nothing in it may run, even as HTML."""


class SecurityHeaders:
    """ASGI middleware: every response says ``nosniff`` and carries a Content-Security-Policy
    (:data:`FILE_POLICY` under ``/logs``, else :data:`PAGE_POLICY`), so a file a runner wrote
    can never run script with the dashboard's origin."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = FILE_POLICY if scope["path"].startswith(LOGS) else PAGE_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"content-security-policy", b"x-content-type-options")]
                headers += [(b"content-security-policy", policy.encode()),
                            (b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"no-referrer")]
                message = {**message, "headers": headers}
            await send(message)
        await self.app(scope, receive, send_with_headers)


def trial_file_response(path: Path, stat: os.stat_result) -> FileResponse:
    """A trial's file served as plain text (a ``.gz`` as a download): whatever a runner wrote
    (HTML, SVG, script) is shown, never rendered."""
    if path.name.endswith(".gz"):
        return FileResponse(path, stat_result=stat, media_type="application/octet-stream", filename=path.name)
    return FileResponse(path, stat_result=stat, media_type="text/plain; charset=utf-8")


class Snapshot(NamedTuple):
    """What the views read from the store, as of one version of it."""

    study: Study | None
    trials: list[StoredTrial]
    objectives: list[Objective]
    constraints: list[OutputConstraint]
    graph_id: int | None


class RunView:
    """Reads a run's store (read-only) into the page's JSON views."""

    def __init__(self, store_path: str | Path, trials_dir: str | Path | None = None,
                 poll_s: float = 2.0, min_model_interval_s: float = 10.0):
        self.store = Store(store_path, read_only=True, follow=True)
        try:
            self.trials_dir = store_trials_dir(self.store, trials_dir)
        except BaseException:
            self.store.close()
            raise
        self.poll_s = poll_s
        self.models = analysis.Background(min_model_interval_s)
        self.loads = 0
        """How many times the store was read for a view (the views share one read per change)."""
        self._cache_lock = threading.RLock()  # a view may build on the snapshot
        self._cache: tuple[tuple[int, int], dict[Any, Any]] | None = None

    def close(self) -> None:
        """Close the store: a dashboard served in-process (``boanon tune --dashboard``, a
        script) leaves no connection to the run's file once it stops."""
        self.store.close()

    def cached(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()``, once per change of the store: concurrent requests for the same view
        wait for one computation and share it, so many clients cost what one does."""
        with self._cache_lock:
            version = self.store.version()
            if self._cache is None or self._cache[0] != version:
                self._cache = (version, {})
            views = self._cache[1]
            if key not in views:
                views[key] = compute()
            return views[key]

    def snapshot(self) -> Snapshot:
        """The store's study, trials, goals and last graph, read once per change of the store."""
        def load() -> Snapshot:
            self.loads += 1
            objectives, constraints = study_goals(self.store)
            return Snapshot(self.store.study(), self.store.trials(), objectives, constraints,
                            self.store.last_graph_id())
        return self.cached("snapshot", load)

    def run(self) -> dict[str, Any]:
        """Everything cheap: the header, convergence, trials, Pareto front, timeline."""
        return self.cached("run", self._run)

    def encoded(self, key: Any, view: Callable[[], Any]) -> bytes:
        """``view()`` as JSON bytes, once per change of the store: encoding a few hundred trials
        per request, not the reading, is what many clients polling at once were waiting on."""
        return self.cached(("json", key), lambda: dump_json(view()).encode())

    def _run(self) -> dict[str, Any]:
        study, trials, objectives, constraints, graph_id = self.snapshot()
        summary = data.run_summary(str(self.store.path), _record(study), trials, objectives, constraints)
        summary["activity"] = self.store.activity()  # a note in the store: its version changes with it
        if study is None:
            return {"summary": summary, "poll_s": self.poll_s}
        return {
            "summary": summary, "poll_s": self.poll_s,
            "convergence": data.convergence(trials, objectives, constraints, study_space(study)),
            "trials": data.trial_rows(trials, self.trials_dir, [o.name for o in [*objectives, *constraints]],
                                      constraints),
            "pareto": data.pareto(trials, objectives, constraints),
            "timeline": data.timeline(trials),
            "graph_id": graph_id,
        }

    def trial_files(self, name: str) -> dict[str, Any]:
        """The files of trial ``name``'s directory the page lists (:func:`data.trial_files`)."""
        return data.trial_files(self.trial_dir(name))

    def trial_file(self, name: str, file: str) -> tuple[Path, os.stat_result]:
        """File ``file`` of trial ``name``'s directory, as ``/logs`` serves it
        (:func:`data.trial_file`: only one the listing shows)."""
        return data.trial_file(self.trial_dir(name), file)

    def trial_dir(self, name: str) -> Path:
        """Trial ``name``'s directory; a name that is no trial of the run (``../..``, a folder
        beside the trials') is a ValueError, never a path to read, and a directory that is a
        link (it may lead out of the run) a PermissionError."""
        if name not in {t.name for t in self.snapshot().trials}:
            raise ValueError(f"no trial {name!r} in the run")
        folder = self.trials_dir / name
        if folder.is_symlink():
            raise PermissionError(f"the directory of trial {name!r} is a link (it may lead out of the run): "
                                  "not served")
        return folder

    def graph(self, scope: str = "auto", node: str | None = None) -> dict[str, Any]:
        """The run's current graph (None before it has one), the part ``scope`` names
        (:data:`data.SCOPES`), with the node models of the last structured proposal."""
        return self.cached(("graph", scope, node), lambda: self._graph(scope, node))

    def _graph(self, scope: str, node: str | None) -> dict[str, Any]:
        study, trials, objectives, constraints, graph_id = self.snapshot()
        if study is None or graph_id is None:
            return {"graph": None}
        latest = model_trial(trials)
        view = data.graph_view(self.store.graph(graph_id), study_space(study),
                               [o.name for o in objectives], scope,
                               None if latest is None else latest.info["structure"], node,
                               {c.name: c.describe() for c in constraints})
        return {"graph": view, "graph_id": graph_id}

    def model_views(self) -> dict[str, Any]:
        """Node fits and parameter effects (:mod:`boanon.dashboard.analysis`), computed in the
        background for the measured trials with the model of the latest structured proposal
        (the node models it recorded, over its graph); before one, the structured surrogate
        fitted afresh on the run's current graph; else the plain GP."""
        study, trials, objectives, constraints, last_graph = self.snapshot()
        if study is None:
            return {"status": "ready", "error": "no run recorded yet"}
        measured = [t for t in trials if t.status in MEASURED]
        latest = model_trial(trials)
        graph_id = latest.graph_id if latest is not None else \
            last_graph if models_graph(study.strategy) else None
        structure = None if latest is None else latest.info["structure"]
        space = study_space(study)
        done = [t for t in trials if t.status == "done"]
        first = best_trial(done, objectives[0], constraints) if objectives else None
        base = first.config if first else space.default()
        # what the effects hold the other parameters at: one base for every objective's curves
        held = {"trial": first.name if first else None, "by": objectives[0].name if objectives else None}

        def compute() -> dict[str, Any]:
            table = with_objectives(records_to_table(t.record() for t in measured),
                                    [o.name for o in objectives], [c.name for c in constraints])
            graph = None if graph_id is None else self.store.graph(graph_id)
            return {**analysis.analyse(space, table, objectives, constraints, graph, base, structure),
                    "model_trial": None if latest is None else latest.name, "base": held}
        return self.models.get((None if latest is None else latest.id, graph_id, len(measured)), compute)


def _record(study: Study | None) -> dict[str, Any] | None:
    """The study as the plain record the page's header reads."""
    return None if study is None else study.to_dict()


def logs_path(index: int) -> str:
    """The URL path under which study ``index``'s trial files are served."""
    return LOGS if index == 0 else f"{LOGS}-{index}"


def studies(views: Sequence[RunView]) -> dict[str, Any]:
    """The studies served side by side: each one's name, strategy, counts, units, best values
    and best-so-far history per objective (from its cached run view), for the page's selector
    and its overlaid comparison."""
    names = [Path(v.store.path).name for v in views]
    if len(set(names)) < len(names):  # the same file name in two folders: the paths tell them apart
        names = [str(v.store.path) for v in views]
    out = []
    for i, (name, view) in enumerate(zip(names, views, strict=True)):
        run = view.run()
        summary = run["summary"]
        out.append({"index": i, "name": name, "store": summary["store"], "recorded": summary["recorded"],
                    "strategy": summary.get("strategy"), "counts": summary.get("counts"),
                    "objectives": summary.get("objectives", []), "units": summary.get("units", {}),
                    "best": {o: b and {"trial": b["trial"], "value": b["value"]}
                             for o, b in summary.get("best", {}).items()},
                    "history": [{"objective": c["objective"], "direction": c["direction"], "best": c["best"],
                                 "default": c["default"]} for c in run.get("convergence", [])]})
    return {"studies": out}


def create_app(views: RunView | Sequence[RunView]) -> Starlette:
    """The dashboard's routes over one run's view, or several studies' side by side (each view
    route takes ``?study=<index>``, default the first; all read-only)."""
    views = [views] if isinstance(views, RunView) else list(views)
    if not views:
        raise ValueError("the dashboard needs at least one store")

    def pick(request: Request) -> RunView:
        raw = request.query_params.get("study", "0")
        if not raw.isdigit() or int(raw) >= len(views):
            raise ValueError(f"unknown study {raw!r}: 0 to {len(views) - 1}")
        return views[int(raw)]

    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    def run(request: Request) -> Response:
        try:
            view = pick(request)
        except ValueError as exc:
            return JSON({"error": str(exc)}, status_code=400)
        return Response(view.encoded("run", view.run), media_type=JSON.media_type)

    def graph(request: Request) -> Response:
        try:
            view = pick(request)
            scope, node = request.query_params.get("scope", "auto"), request.query_params.get("node")
            # an unknown scope or node raises inside the computation: nothing is cached for it
            return Response(view.encoded(("graph", scope, node), lambda: view.graph(scope, node)),
                            media_type=JSON.media_type)
        except ValueError as exc:  # an unknown study, scope or node: the page says what
            return JSON({"error": str(exc)}, status_code=400)

    def trial_files(request: Request) -> JSON:
        try:
            return JSON(pick(request).trial_files(request.query_params.get("trial", "")))
        except ValueError as exc:  # an unknown study or trial
            return JSON({"error": str(exc)}, status_code=400)
        except PermissionError as exc:  # a trial directory that is a link
            return JSON({"error": str(exc)}, status_code=403)

    def logs(view: RunView) -> Callable[[Request], Response]:
        def serve(request: Request) -> Response:
            try:
                return trial_file_response(*view.trial_file(request.path_params["trial"],
                                                            request.path_params["file"]))
            except (ValueError, FileNotFoundError) as exc:  # no such trial, no such file
                return PlainTextResponse(str(exc), status_code=404)
            except PermissionError as exc:  # hidden, in a sub-folder, a link, too large
                return PlainTextResponse(str(exc), status_code=403)
        return serve

    def models(request: Request) -> JSON:
        try:
            return JSON(pick(request).model_views())
        except ValueError as exc:
            return JSON({"error": str(exc)}, status_code=400)

    def compare(request: Request) -> JSON:
        return JSON(studies(views))

    # sync handlers run in Starlette's thread pool: a slow read never stalls the event loop
    return Starlette(routes=[
        Route("/", index),
        Route("/api/run", run),
        Route("/api/graph", graph),
        Route("/api/models", models),
        Route("/api/trial-files", trial_files),
        Route("/api/studies", compare),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        *(Route(f"{logs_path(i)}/{{trial}}/{{file:path}}", logs(v), name=f"logs{i}")
          for i, v in enumerate(views)),
    ], middleware=[Middleware(SecurityHeaders)])


class Dashboard:
    """The dashboard of one run or several studies (:func:`create_app`), served by uvicorn in a
    background thread (``boanon tune --dashboard``, ``boanon dashboard``, tests)."""

    def __init__(self, view: RunView | Sequence[RunView], host: str = HOST, port: int = PORT):
        self.views = [view] if isinstance(view, RunView) else list(view)
        config = uvicorn.Config(create_app(view), host=host, port=port, log_level="warning",
                                access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._serve, daemon=True, name="boanon-dashboard")
        self._users = 1
        """Who still reads the views: :meth:`stop`, and the server's thread once started."""
        self._users_lock = threading.Lock()
        self._stopped = False
        """Whether :meth:`stop` is done with the views: a second call is not a second user."""

    def start(self, timeout: float = 10.0) -> str:
        """Start serving; return the page's URL (with the port chosen when ``port`` was 0)."""
        with self._users_lock:
            self._users += 1
        try:
            self.thread.start()
        except BaseException:
            self._done_with_views()
            raise
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

    def _serve(self) -> None:
        """The server's thread: serve until stopped; its requests read the views until it ends."""
        try:
            self.server.run()
        finally:
            self._done_with_views()

    def _done_with_views(self) -> None:
        """One reader of the views is done with them; the last closes their stores (one closed under
        a request still being served failed it)."""
        with self._users_lock:
            self._users -= 1
            last = self._users == 0
        if last:
            for view in self.views:
                view.close()

    def stop(self, models_timeout: float = 120.0, server_timeout: float = 5.0) -> None:
        """Stop serving (waiting up to ``server_timeout`` seconds for the server to end), then
        wait for the views' model computations to end (bounded), so the process never exits with
        a fit running in a daemon thread; then close the views' stores, or, when the server is
        still serving a request (a slow read), leave that to its thread as it ends."""
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout=server_timeout)
        for view in self.views:
            view.models.wait(models_timeout)
        with self._users_lock:
            stopped, self._stopped = self._stopped, True
        if not stopped:  # a second call counted again and closed the stores under a request
            self._done_with_views()
