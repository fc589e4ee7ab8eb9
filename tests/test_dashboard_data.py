"""The dashboard's data side without a browser: the read-only store, the views as plain data, the
background model views. Runs are real (the synthetic system through the Tuner)."""

from __future__ import annotations

import gc
import json
import os
import signal
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from boanon.cli import main
from boanon.dashboard import analysis, data
from boanon.dashboard.app import Dashboard, RunView
from boanon.errors import StoreError
from boanon.objectives import Objective
from boanon.report import fit_run_model, study_space
from boanon.runners.function import CallableRunner
from boanon.store import Store, StoredTrial
from boanon.synthetic import SyntheticSystem
from boanon.tuner import Tuner

SYSTEM = SyntheticSystem(n_params=4, n_groups=2, seed=3)
STUDY = {"space": SYSTEM.space.to_dict()}
"""A recorded study's record, as the header reads it (a space with parameters)."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("run") / "run.db"
    tuner = Tuner(SYSTEM.space, ["cost"], store=path, n_init=5, seed=0)  # learns at the 6th
    tuner.optimize(CallableRunner(SYSTEM.evaluate), 7)
    tuner.store.close()
    return path


def test_the_read_only_store_reads_and_never_writes(run: Path, tmp_path: Path) -> None:
    before = run.read_bytes()
    view = RunView(run)
    page = view.run()
    assert [r["name"] for r in page["trials"]] == [f"t{i:04d}" for i in range(7)]
    assert view.graph("ancestors")["graph"] is not None
    with pytest.raises(StoreError, match="read-only"):
        view.store.start_trial({"x0": 0.5})
    view.store.close()
    assert run.read_bytes() == before
    for bad, message in ((tmp_path / "missing.db", "no such file"),
                         (tmp_path / "t.csv", "not a BoAnon run store")):
        if bad.suffix == ".csv":
            bad.write_text("trial,param:x,objective:y\nt0,1,2\n")
        with pytest.raises(StoreError, match=message):
            Store(bad, read_only=True, follow=True)
    assert not (tmp_path / "missing.db").exists()


def test_reading_does_not_wait_for_a_writer(run: Path, tmp_path: Path) -> None:
    """While the run holds its write lock, the dashboard still reads (WAL), and the other way round."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(run.read_bytes())
    writer = sqlite3.connect(copy, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE trials SET reason = 'changing' WHERE id = 0")
    reader = Store(copy, read_only=True, follow=True, timeout=0.5, retries=0)
    started = time.perf_counter()
    assert reader.trial(0).reason != "changing"  # the last committed state, at once
    assert time.perf_counter() - started < 0.4
    writer.execute("COMMIT")
    assert reader.trial(0).reason == "changing"
    with reader._read():  # a reader mid-read does not stop the run's next write
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE trials SET reason = 'again' WHERE id = 0")
        writer.execute("COMMIT")
    assert reader.trial(0).reason == "again"
    reader.close()
    writer.close()


def trial(i: int, start: float, end: float | None, status: str = "done", cost: float = 1.0,
          config: dict | None = None, load: float = 0.0) -> StoredTrial:
    iso = "2026-01-01T00:00:{:06.3f}+00:00".format
    return StoredTrial(id=i, name=f"t{i:04d}", status=status, config=config or {"x": float(i)},
                       started=iso(start), finished=None if end is None else iso(end),
                       objectives={"cost": cost}, metrics={"load": load}, surrogate="init")


def test_timeline_packs_trials_into_as_many_lanes_as_ran_at_once() -> None:
    trials = [trial(0, 0, 4), trial(1, 0, 2), trial(2, 2, 5, "stopped"), trial(3, 4.5, None, "running"),
              trial(4, 6, 7), trial(5, 6.5, 8)]
    tl = data.timeline(trials)
    assert tl["lanes"] == 3  # at 6.5 s: t0003 (still running), t0004 and t0005
    assert [b["lane"] for b in tl["bars"]] == [0, 1, 1, 0, 1, 2]
    assert tl["bars"][2]["status"] == "stopped" and tl["bars"][3]["end"] is None


def test_convergence_counts_only_feasible_finished_trials_and_marks_the_default() -> None:
    from boanon.multiobjective import OutputConstraint
    from boanon.space import Float, Space

    space = Space([Float("x", 0.0, 10.0, default=1.0)])
    trials = [trial(0, 0, 1, cost=5.0, config={"x": 1.0}), trial(1, 1, 2, "stopped", cost=1.0),
              trial(2, 2, 3, cost=2.0, load=9.0), trial(3, 3, 4, cost=3.0), trial(4, 4, 5, "failed")]
    trials[4].objectives = {}
    (conv,) = data.convergence(trials, [Objective("cost")], [OutputConstraint("load", max=1.0)], space)
    assert [p["trial"] for p in conv["points"]] == ["t0000", "t0001", "t0002", "t0003"]
    assert [(s["x"], s["y"]) for s in conv["best"]] == [(0, 5.0), (1, 5.0), (2, 5.0), (3, 3.0)]
    assert conv["default"] == 5.0 and conv["default_trial"] == "t0000"
    assert [p["feasible"] for p in conv["points"]] == [True, True, False, True]


def test_a_trial_says_where_its_configuration_came_from() -> None:
    """Only a model's proposal is "proposed by" a surrogate: a design point, an enqueued or
    imported configuration, an ablation measurement and a random draw say what they are."""
    from boanon.results import ABLATION, ENQUEUED, INIT, RANDOM

    made = [trial(i, i, i + 1) for i in range(6)]
    for t, surrogate in zip(made, [INIT, ENQUEUED, ABLATION, RANDOM, "structured", None], strict=True):
        t.surrogate = surrogate
    assert [r["origin"] for r in data.trial_rows(made, None, ["cost"])] == [
        "from the initial design", "enqueued (by the user or an import)",
        "an ablation measurement (boanon explain --measure)", "drawn at random",
        "proposed by the structured surrogate", "of unrecorded origin"]
    summary = data.run_summary("run.db", STUDY, made[:1], [Objective("cost")], [])
    assert summary["best"]["cost"]["origin"] == "from the initial design"


def test_a_trial_lists_the_runs_objectives_and_logs_the_rest_with_its_metrics() -> None:
    """ZigZag reports energy, latency and area beside the EDP a run tunes: they are metrics of
    the run (the trial detail listed them as objectives, each predicted "-")."""
    t = trial(0, 0, 1)
    t.objectives = {"edp": 2.0, "energy": 4.0, "area_mm2": 1.5}
    t.metrics = {"load": 0.5}
    (row,) = data.trial_rows([t], None, ["edp", "area_mm2"])  # area_mm2: a constrained output
    assert row["objectives"] == {"edp": 2.0, "area_mm2": 1.5}
    assert row["metrics"] == {"load": 0.5, "energy": 4.0}


def test_only_numbers_get_a_unit_read_off_their_name() -> None:
    """A boolean or a category named ``..._bytes`` holds no bytes; an int and a float do."""
    from boanon.space import Bool, Categorical, Float, Int, Space

    space = Space([Bool("level_compaction_dynamic_level_bytes"), Categorical("cache_mb", ("a", "b")),
                   Int("write_buffer_bytes", 1, 64), Float("flush_s", 0.5, 2.0)])
    units = data.run_units({"space": space.to_dict(), "objectives": [{"name": "latency_us"}]},
                           [trial(0, 0, 1)])
    assert units == {"write_buffer_bytes": "B", "flush_s": "s", "latency_us": "µs"}


def test_name_groups_follow_prefixes_within_a_role() -> None:
    roles = {"m0_share": "param", "m0_worker": "param", "m0_busy_s": "metric", "m1_share": "param",
             "m1_busy_s": "metric", "m1_traffic": "metric", "__task__": "param", "cost": "objective"}
    assert data.name_groups(roles) == {"m0_share": "m0 params", "m0_worker": "m0 params",
                                       "m1_busy_s": "m1 metrics", "m1_traffic": "m1 metrics"}
    assert data.name_groups({"x_a": "param", "x_b": "param"}) == {}  # every node's prefix: no group


def test_graph_view_focuses_on_the_objectives_ancestors() -> None:
    from boanon.graph import CausalGraph, Edge
    from boanon.space import Float, Space

    graph = CausalGraph(roles={"a": "param", "b": "param", "m": "metric", "n": "metric", "cost": "objective"},
                        edges=[Edge("a", "m", 0.7, 0.9), Edge("m", "cost"), Edge("b", "n")],
                        node_models={"cost": {"function": "m + a"}},
                        metadata={"params_connected": []})
    space = Space([Float("a", 0, 1), Float("b", 0, 1)])
    view = data.graph_view(graph, space, ["cost"])
    assert {n["id"] for n in view["nodes"]} == {"a", "m", "cost"}
    edges = {(e["source"], e["target"]): e for e in view["edges"]}
    assert edges[("a", "m")]["weight"] == 0.7 and edges[("a", "m")]["stability"] == 0.9
    assert edges[("a", "cost")]["annotated"] and not edges[("m", "cost")]["annotated"]
    forms = {n["id"]: n["form"] for n in view["nodes"]}
    assert forms == {"a": None, "m": None,
                     "cost": {"kind": "function", "text": "m + a", "source": "annotated"}}
    whole = data.graph_view(graph, space, ["cost"], "all")
    assert {n["id"] for n in whole["nodes"]} == set(graph.roles)


def test_model_views_are_computed_off_the_request_and_cached(run: Path) -> None:
    view = RunView(run, min_model_interval_s=0.0)
    first = view.model_views()
    assert first == {"status": "computing"}  # answered at once, fitting in the background
    deadline = time.monotonic() + 30
    while (result := view.model_views())["status"] != "ready":
        assert time.monotonic() < deadline, result
        time.sleep(0.05)
    assert "error" not in result, result
    nodes = result["nodes"]
    assert "cost" in nodes and nodes["cost"]["n"] == 7
    fit = nodes["cost"]
    assert len(fit["observed"]) == len(fit["predicted"]) == len(fit["trials"]) == 7
    assert -1.0 <= fit["rank_correlation"] <= 1.0
    assert {e["param"] for e in result["effects"]} == set(SYSTEM.space.names)
    ranges = [e["range"] for e in result["effects"]]
    assert ranges == sorted(ranges, reverse=True) and ranges[0] > 0
    assert view.model_views() is not result and view.model_views()["seconds"] == result["seconds"]  # cached
    view.store.close()


def test_background_recomputes_on_a_new_key_and_reports_errors() -> None:
    bg = analysis.Background(min_interval_s=0.0)
    gate = threading.Event()

    def slow() -> dict:
        gate.wait(5)
        return {"value": 1}

    assert bg.get("a", slow) == {"status": "computing"}
    gate.set()
    while bg.get("a", slow)["status"] != "ready":
        time.sleep(0.01)
    assert bg.get("b", lambda: 1 / 0)["status"] == "stale"  # the old result while the new one runs
    while (out := bg.get("b", lambda: 1 / 0))["status"] != "ready":
        time.sleep(0.01)
    assert out["error"].startswith("ZeroDivisionError")


def test_node_fits_score_as_node_scores(run: Path) -> None:
    """The held-out predictions the page plots are the ones node_scores scores."""
    view = RunView(run)
    study = view.store.study()
    from boanon.table import records_to_table, with_objectives

    table = with_objectives(records_to_table(t.record() for t in view.store.trials("done")), ["cost"])
    model = fit_run_model(study_space(study), table, [Objective("cost")], [],
                                   view.store.graph(view.store.last_graph_id()))
    fits = analysis.node_fits(model, table, seed=4)
    scores = model.node_scores(np.random.default_rng(4))
    for node, s in scores.items():
        assert fits[node]["rank_correlation"] == pytest.approx(s["rank_correlation"])
        assert fits[node]["n"] == s["n"]
    view.store.close()


def test_metric_changes_are_measured_from_the_base_itself() -> None:
    """Each effect curve passes through the value the other parameters are held at, and a
    metric's change is zero there (it was zeroed at the grid's first point whenever the base
    fell between grid points: nearly always, for a float)."""
    import pandas as pd

    from boanon.graph import CausalGraph, Edge
    from boanon.report import grid
    from boanon.space import Float, Space

    space = Space([Float("a", 0.0, 1.0), Float("b", 0.0, 1.0)])
    graph = CausalGraph(roles={"a": "param", "b": "param", "m": "metric", "cost": "objective"},
                        edges=[Edge("a", "m"), Edge("m", "cost"), Edge("b", "cost")])
    x = np.random.default_rng(0).random((12, 2))
    table = pd.DataFrame({"param:a": x[:, 0], "param:b": x[:, 1], "metric:m": np.sin(3 * x[:, 0]),
                          "objective:cost": np.sin(3 * x[:, 0]) + x[:, 1]})
    model = fit_run_model(space, table, [Objective("cost")], [], graph)
    base = {"a": 0.4321, "b": 0.1234}  # between the grid's points
    out = {e["param"]: e for e in analysis.effects(model, space, base, [Objective("cost")], table)}
    assert base["a"] not in grid(space, "a", analysis.GRID)
    assert [m["name"] for m in out["a"]["metrics"]] == ["m"]
    at = out["a"]["values"].index(base["a"])
    assert out["a"]["metrics"][0]["change_sd"][at] == 0.0
    assert out["a"]["values"] == sorted(out["a"]["values"]) and len(out["a"]["values"]) == analysis.GRID + 1


def test_a_trial_a_dead_run_left_running_is_counted_and_has_no_made_up_duration(tmp_path: Path) -> None:
    """After a kill the store closes such a trial when the run resumes: its ``finished`` is the
    resume's time, so the page showed the downtime as its run time; and it was in no count."""
    from boanon.table import TrialRecord

    with Store(tmp_path / "run.db") as store:
        done = store.start_trial({"x": 0.1})
        store.finish_trial(done.id, TrialRecord(done.name, {"x": 0.1}, {}, {"cost": 1.0}))
        store.start_trial({"x": 0.2})  # the run is killed here
    time.sleep(0.3)
    with Store(tmp_path / "run.db") as store:
        (died,) = store.recover()
        store.start_trial({"x": 0.3})  # the resumed run's next trial
        trials = store.trials()
    summary = data.run_summary("run.db", STUDY, trials, [Objective("cost")], [])
    assert summary["counts"] == {"done": 1, "stopped": 0, "failed": 0, "interrupted": 1, "running": 1}
    rows = {r["name"]: r for r in data.trial_rows(trials, None, ["cost"])}
    assert rows[died.name]["duration_s"] is None and rows[done.name]["duration_s"] is not None
    bars = {b["trial"]: b for b in data.timeline(trials)["bars"]}
    assert bars[died.name]["end"] is None and bars[died.name]["status"] == "interrupted"
    assert data.timeline(trials)["lanes"] == 1  # the died trial runs no more: the resumed one takes its lane


def test_the_graph_api_says_scope_node_needs_a_node(run: Path) -> None:
    """``/api/graph?scope=node`` without ``node=`` answered "no node None in the run's graph"."""
    dashboard = Dashboard(RunView(run), port=0)
    url = dashboard.start()
    try:
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(url + "api/graph?scope=node", timeout=60)
        assert caught.value.code == 400
        assert json.loads(caught.value.read()) == {
            "error": "scope=node needs node=NAME (the node drawn with its ancestors and descendants)"}
        with urllib.request.urlopen(url + "api/graph?scope=node&node=cost", timeout=60) as answer:
            assert json.loads(answer.read())["graph"]["node"] == "cost"
    finally:
        dashboard.stop()


@pytest.mark.parametrize("stops", [1, 2])
def test_stopping_the_dashboard_never_closes_a_store_under_a_request_being_served(run: Path, tmp_path: Path,
                                                                                 stops: int) -> None:
    """``stop`` waited 5 s for the server, then closed the views' stores anyway: a request still
    being served (its read waiting for a writer's lock) failed with a server error. A second
    ``stop`` (a script's ``finally`` after the command's own) counted as one more reader done and
    closed them so too."""
    store = tmp_path / "run.db"
    store.write_bytes(run.read_bytes())
    with closing(sqlite3.connect(store)) as db:  # a rollback journal: a writer's lock holds readers
        db.execute("PRAGMA journal_mode = DELETE")
    view = RunView(store)
    dashboard = Dashboard(view, port=0)
    url = dashboard.start()
    writer = sqlite3.connect(store, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN EXCLUSIVE")
    answers: list[int] = []

    def client() -> None:
        with urllib.request.urlopen(url + "api/run", timeout=120) as answer:
            answers.append(answer.status)
    requests = threading.Thread(target=client)
    requests.start()
    deadline = time.monotonic() + 60
    while not dashboard.server.server_state.tasks:  # being served: its read waits for the lock
        assert time.monotonic() < deadline
        time.sleep(0.01)
    releasing = threading.Timer(1.0 + stops, writer.close)  # after stop gave up waiting for the server
    releasing.start()
    try:
        for _ in range(stops):
            dashboard.stop(server_timeout=0.5)
        assert dashboard.thread.is_alive() and not view.store.closed  # left to the server's thread
    finally:
        releasing.join()
        requests.join(timeout=120)
        dashboard.thread.join(timeout=120)
    assert answers == [200]
    assert view.store.closed  # by the server's thread, as it ended


def test_a_store_given_twice_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``boanon dashboard run.db run.db`` served two identical studies (the check comes before any
    store is opened: this file is not even one)."""
    (tmp_path / "run.db").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    for twice, also in ((["run.db", "run.db"], ""), (["run.db", f"../{tmp_path.name}/run.db"],
                                                     f" (as run.db and ../{tmp_path.name}/run.db)")):
        result = CliRunner().invoke(main, ["dashboard", *twice, "--port", "0"])
        assert result.exit_code == 2
        assert f"Error: {twice[1]}: the same store is given twice{also}; each store is one study\n" \
            in result.output


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_ctrl_c_while_the_dashboard_opens_its_stores_closes_those_opened(run: Path, tmp_path: Path,
                                                                          descriptors_held,
                                                                          ctrl_c_raises: None) -> None:
    """``boanon dashboard a.db b.db`` closed the views it had opened only when the next store was
    refused (a ConfigError): Ctrl-C (or any other error) while it opened ``b.db`` left ``a.db``
    open in a process that goes on (a script, a test calling the command in-process)."""
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    for store in (first, second):
        store.write_bytes(run.read_bytes())
    with closing(sqlite3.connect(second)) as db:  # a rollback journal: a writer's lock holds readers
        db.execute("PRAGMA journal_mode = DELETE")
    writer = sqlite3.connect(second, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN EXCLUSIVE")  # opening b.db waits for the lock
    before = descriptors_held(tmp_path)

    def ctrl_c_while_b_opens() -> None:
        deadline = time.monotonic() + 60
        while not any(name == second.name for _, name in descriptors_held(tmp_path) - before):
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)  # taken when the read returns, inside opening b.db
        time.sleep(0.2)
        writer.close()
        while not returned.wait(30):  # missed (the dashboard serves): stop it, so the test fails, not hangs
            os.kill(os.getpid(), signal.SIGINT)
    returned = threading.Event()
    interrupting = threading.Thread(target=ctrl_c_while_b_opens)
    gc.disable()  # only the command may close what it opened
    try:
        interrupting.start()
        try:
            result = CliRunner().invoke(main, ["dashboard", str(first), str(second), "--port", "0"])
        finally:
            returned.set()
        interrupting.join()
        left_open = descriptors_held(tmp_path) - before
    finally:
        gc.enable()
    assert result.exit_code == 1 and "Aborted" in result.output, result.output
    assert left_open == set()


def test_a_trial_file_gone_between_listing_and_size_is_left_out_not_a_server_error(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    # a running trial rotates or removes a log while the page lists its directory: the size
    # lookup raised FileNotFoundError, which the endpoint turned into a 500
    import os

    from boanon.dashboard import data

    for name in ("stdout.txt", "rotated.log"):
        (tmp_path / name).write_text("x")
    listing = os.scandir

    def then_one_goes(path):
        entries = list(listing(path))
        (tmp_path / "rotated.log").unlink()

        class Listed(list):
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False
        return Listed(entries)

    monkeypatch.setattr(data.os, "scandir", then_one_goes)
    assert data.trial_files(tmp_path) == {"files": [{"name": "stdout.txt", "bytes": 1, "served": True}],
                                          "more": 0}


def test_model_views_of_one_trial_say_it_in_words() -> None:
    """The error read "1 measured trial(s): too few to fit a model"."""
    table = SYSTEM.sample_table(1)
    out = analysis.analyse(SYSTEM.space, table, [Objective("cost")], [], None, SYSTEM.space.default())
    assert out == {"error": "1 measured trial: too few to fit a model"}
