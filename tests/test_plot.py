"""``boanon plot`` and ``status --plot`` on real runs, and the readable view of a dense learned graph."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from boanon.cli import main
from boanon.graph import CausalGraph
from boanon.graph_render import render, to_dot, view
from boanon.multiobjective import table_hypervolume
from boanon.report import effect_sizes, effects, fit_surrogate, history, hypervolume_history, read_run
from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def run_db(tmp_path_factory, synthetic_run) -> Path:
    """A real single-objective structured run of the synthetic system: default, Sobol, then models."""
    return synthetic_run(tmp_path_factory.mktemp("run"), budget=9)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:4] == PNG
    return struct.unpack(">II", data[16:24])


def test_status_plot_of_a_single_objective_run_draws_its_convergence(run_db, tmp_path):
    # status --plot used to end in "a Pareto plot needs at least two objectives"
    out = tmp_path / "status.png"
    assert f"wrote {out}" in _invoke("status", str(run_db), "--plot", str(out))
    assert _png_size(out)[0] > 0


def test_export_orders_numbered_names_by_their_number(run_db, tmp_path):
    """``boanon export`` writes x0, x1, x2 ... x10, x11 (it wrote x0, x1, x10, x11, x2)."""
    out = tmp_path / "trials.csv"
    _invoke("export", str(run_db), "-o", str(out))
    params = [c for c in out.read_text().splitlines()[0].split(",") if c.startswith("param:")]
    assert params == [f"param:x{i}" for i in range(12)]


def test_history_has_the_best_so_far_and_the_default(run_db):
    with Store(run_db) as store:
        run = read_run(store)
        h = history(run)
        default = run.default()
    assert list(h["trial"]) == [f"t{i:04d}" for i in range(9)]
    best = h["best_cost"].to_numpy()
    assert np.all(np.diff(best) <= 0) and best[-1] == h["cost"].min()
    assert default is not None and default.name == "t0000" and default.config == run.space.default()
    assert (h["duration_s"] >= 0).all()


@pytest.mark.parametrize("kind", ["convergence", "effects", "graph"])
def test_plot_kinds_write_images(run_db, tmp_path, kind):
    if kind == "graph" and shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed")
    out = tmp_path / f"{kind}.png"
    _invoke("plot", str(run_db), "--kind", kind, "-o", str(out))
    assert min(_png_size(out)) > 100


def test_plot_pareto_of_a_single_objective_run_is_a_clear_error(run_db, tmp_path):
    out = str(tmp_path / "p.png")
    result = CliRunner().invoke(main, ["plot", str(run_db), "--kind", "pareto", "-o", out])
    assert result.exit_code == 1  # it named the output file, as if the figure were to blame
    assert result.output == (f"Error: {run_db}: a Pareto plot needs two objectives or more; the run has "
                             "one (cost): --kind convergence draws it\n")


def test_effects_sweep_each_parameter_around_the_best(run_db):
    with Store(run_db) as store:
        run = read_run(store)
        best = run.best()
        surrogate = fit_surrogate(run)
    table = effects(surrogate, best.config, n_points=5)
    assert set(table["param"]) == set(run.space.names)
    for name, part in table.groupby("param"):  # 5 points and the best's own value, in order
        values = part["value"].tolist()
        assert best.config[name] in values and values == sorted(values) and len(values) in (5, 6)
    x3 = table[table["param"] == "x3"]
    row = x3[x3["value"] == 0.25].iloc[0]  # x3 = 0.25, the others at the best trial's values
    config = {**best.config, "x3": row["value"]}
    mean, sd = surrogate.predict([config], np.random.default_rng(1), 4096)["cost"]
    assert row["value"] == 0.25 and abs(row["mean"] - mean[0]) < 4 * sd[0] / np.sqrt(64)
    sizes = effect_sizes(table, run.graph)
    assert list(sizes["spread"]) == sorted(sizes["spread"], reverse=True)
    g = run.graph.to_networkx()
    for row in sizes.itertuples():  # the metrics between the parameter and the objective
        via = set(row.via.split(", ")) - {""}
        assert all(nx.has_path(g, row.param, m) and nx.has_path(g, m, "cost") for m in via)


def test_effect_sizes_name_the_metrics_on_each_parameters_paths():
    graph = CausalGraph.from_dict({
        "nodes": [{"id": n, "role": r} for n, r in (
            ("a", "param"), ("b", "param"), ("m1", "metric"), ("m2", "metric"), ("side", "metric"),
            ("cost", "objective"))],
        "edges": [{"source": s, "target": t} for s, t in (("a", "m1"), ("m1", "m2"), ("m2", "cost"),
                                                          ("a", "side"), ("b", "cost"))]})
    table = pd.DataFrame({"param": ["a", "a", "b", "b"], "value": [0, 1, 0, 1], "objective": "cost",
                          "mean": [1.0, 3.0, 1.0, 1.5], "sd": 0.1})
    sizes = effect_sizes(table, graph)
    assert list(sizes["param"]) == ["a", "b"] and list(sizes["spread"]) == [2.0, 0.5]
    assert list(sizes["via"]) == ["m1, m2", ""]  # not "side": it does not reach the objective


@pytest.fixture(scope="module")
def sgd_graph(tmp_path_factory) -> CausalGraph:
    out = tmp_path_factory.mktemp("sgd") / "graph.json"
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        _invoke("learn", "datasets/sgd-googlenet", "--annotations", "examples/sgd-annotations.yaml",
                "-o", str(out))
    finally:
        mp.undo()
    return CausalGraph.load(out)


def test_view_of_the_sgd_graph_is_focused_grouped_and_keeps_every_path(sgd_graph):
    v = view(sgd_graph, ["iteration_time"])
    g = v.graph.to_networkx()
    assert v.hidden_edges > 0 and len(v.graph.edges) + v.hidden_edges <= len(sgd_graph.edges)
    assert all(nx.has_path(g, n, "iteration_time") for n in g)  # no node drawn as a dead end
    weight = {(e.source, e.target): e.weight for e in sgd_graph.edges}
    for e in v.graph.edges:  # each kept edge is among its target's 3 heaviest or its source's heaviest
        into = sorted((w for (s, t), w in weight.items() if t == e.target), reverse=True)
        out = max(w for (s, t), w in weight.items() if s == e.source)
        assert e.weight >= into[min(2, len(into) - 1)] or e.weight == out
    assert {v.groups[f"m{i}_busy_s"] for i in range(10)} == {f"m{i}" for i in range(10)}
    assert "worker_busy_max_s" not in v.groups  # the cluster-wide metrics stay outside the boxes
    dot = to_dot(v)
    assert 'subgraph "cluster_m3"' in dot and "label=<<table" in dot  # the key under the picture
    assert f"{v.hidden_edges} weaker edges hidden" in dot
    assert not sgd_graph.metadata.get("params_connected") and "fallback" not in dot  # none drawn, none keyed


@needs_dot
def test_the_sgd_graph_renders_as_a_page_not_a_strip(sgd_graph, tmp_path):
    whole = _png_size(render(sgd_graph, tmp_path / "whole.png"))
    focused = _png_size(render(view(sgd_graph, ["iteration_time"]), tmp_path / "view.png"))
    ratio = max(focused) / min(focused)
    assert ratio < 3, focused  # the old rendering of the whole graph was 26:1
    assert max(whole) / min(whole) < 10, whole


PAGE_PX = 1600
"""A figure that fits a page or a screen without shrinking its text."""


def _svg_text_px(path: Path) -> tuple[list[float], float]:
    """The font sizes of an SVG's texts as a PNG of it draws them (px at Graphviz's 96 dpi), and
    its width in px."""
    import re

    text = path.read_text()
    width_pt = float(re.search(r'<svg width="([\d.]+)pt"', text)[1])
    scale = float(re.search(r'transform="scale\(([\d.]+)', text)[1])
    sizes = [float(s) * scale * 96 / 72 for s in re.findall(r'font-size="([\d.]+)"', text)]
    return sizes, width_pt * 96 / 72


@needs_dot
def test_the_static_sgd_graph_fits_a_page_with_readable_labels(sgd_graph, tmp_path):
    """``boanon plot --kind graph``'s default view of the SGD graph (105 nodes): the objective's
    strongest paths, at most 1600 px wide with no text under 11 px, saying what was left out and
    how to draw it all (it was 2846-3473 px wide: labelled legend edges doubled every rank and
    formulas widened them)."""
    v = view(sgd_graph, ["iteration_time"], max_nodes=30)
    assert 0 < len(v.graph.roles) <= 30 and v.hidden_nodes > 0
    width, _ = _png_size(render(v, tmp_path / "view.png"))
    assert width <= PAGE_PX, width
    sizes, svg_width = _svg_text_px(render(v, tmp_path / "view.svg"))
    assert abs(svg_width - width) < 8
    assert min(sizes) >= 11, min(sizes)
    dot = to_dot(v)
    assert f"{v.hidden_nodes} more distant or weaker ancestors left out (--max-nodes 0" in dot
    every = view(sgd_graph, ["iteration_time"], max_nodes=None)
    assert len(every.graph.roles) == len(v.graph.roles) + v.hidden_nodes


def test_a_multiobjective_convergence_has_the_hypervolume_over_trials(tmp_path):
    config = ROOT / "examples" / "synthetic-multiobjective.yaml"
    store = tmp_path / "mo.db"
    mp = pytest.MonkeyPatch()
    mp.chdir(ROOT)
    try:
        _invoke("tune", str(config), "--budget", "8", "--store", str(store))
    finally:
        mp.undo()
    with Store(store) as s:
        run = read_run(s)
        hv = hypervolume_history(run)
        table = s.to_table(("done",))
    assert list(hv["trial"]) == list(table["trial"])
    values = hv["hypervolume"].to_numpy()
    assert np.all(np.diff(values) >= 0) and values[-1] > 0
    ref = [hv.attrs["reference_point"][o.name] for o in run.objectives]
    assert values[-1] == pytest.approx(table_hypervolume(table, run.objectives, run.constraints, ref))
    out = tmp_path / "mo.png"
    _invoke("plot", str(store), "-o", str(out))
    width, height = _png_size(out)
    assert height > width  # three panels: two objectives and the hypervolume


def test_an_effects_panel_gives_a_unit_to_numbers_only(tmp_path: Path, monkeypatch) -> None:
    """A boolean parameter named ``..._bytes`` is titled without "(B)"; a size in bytes with it."""
    from boanon import plots
    from boanon.objectives import Objective

    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or Path(path))
    effects = pd.DataFrame({"param": ["dynamic_level_bytes"] * 2 + ["write_buffer_bytes"] * 2,
                            "objective": "latency", "value": [False, True, 1024, 4096],
                            "mean": [1.0, 2.0, 1.0, 3.0], "sd": 0.1})
    sizes = pd.DataFrame({"param": ["write_buffer_bytes", "dynamic_level_bytes"], "objective": "latency"})
    plots.plot_effects(effects, sizes, Objective("latency"), tmp_path / "effects.png")
    titles = [ax.get_title() for ax in figures[0].axes if ax.get_visible()]
    assert titles == ["write_buffer_bytes (B)", "dynamic_level_bytes"]


def test_a_group_that_is_no_regular_expression_is_a_usage_error(run_db, tmp_path):
    out = tmp_path / "g.svg"  # it was a traceback (re.error) from the drawing
    result = CliRunner().invoke(main, ["plot", str(run_db), "--kind", "graph", "--group", "(",
                                       "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output.endswith("Error: Invalid value for '--group': '(' is no regular expression: "
                                  "missing ), unterminated subpattern at position 0\n")
    assert not out.exists()


@pytest.mark.parametrize("args, error", [
    (["--kind", "effects", "--objective", "nosuch"], "unknown objective 'nosuch'; the run's: ['cost']"),
    (["--kind", "graph"], "the run has no graph (strategy gp or random, or none learned yet)"),
])
def test_a_figure_the_run_cannot_give_is_an_error_naming_the_store(tmp_path, synthetic_run, args, error):
    store = synthetic_run(tmp_path, budget=2, strategy="random")  # it named the output, as if to blame
    out = tmp_path / "f.png"
    result = CliRunner().invoke(main, ["plot", str(store), *args, "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == f"Error: {store}: {error}\n"


def test_a_default_that_breaks_an_output_constraint_is_drawn_as_infeasible(tmp_path, monkeypatch):
    """The synthetic two-objective run's default breaks g0_load <= 1.5: the dashboard claims no
    gain over it, but the figure's legend called it plain "default (9.429)", a baseline to beat."""
    from boanon import plots

    store = tmp_path / "mo.db"
    monkeypatch.chdir(ROOT)
    _invoke("tune", str(ROOT / "examples" / "synthetic-multiobjective.yaml"), "--budget", "2",
            "--store", str(store))
    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or Path(path))
    _invoke("plot", str(store), "-o", str(tmp_path / "mo.png"))
    labels = [t.get_text() for ax in figures[0].axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    defaults = [label for label in labels if label.startswith("default")]
    assert len(defaults) == 2 and all(label.endswith(", infeasible)") for label in defaults), labels


@needs_dot
def test_the_graph_draws_a_bounded_output_with_its_bound(tmp_path, synthetic_run):
    """``outputs: [{name: g0_load, max: 0.6}]``: the run models g0_load and steers it, but the
    graph left it out (the learner found no path into it, and only the objectives were drawn)."""
    store = synthetic_run(tmp_path, budget=9, outputs=[{"name": "g0_load", "max": 0.6}])
    dot = tmp_path / "g.dot"
    _invoke("plot", str(store), "--kind", "graph", "-o", str(dot))
    text = dot.read_text()
    node = next((line for line in text.splitlines() if line.strip().startswith('"g0_load" [')), None)
    assert node is not None and 'label="g0_load <= 0.6"' in node and 'color="#b3403d"' in node, text
    assert "red border: an output constraint (its bound)" in text
    with Store(store, read_only=True) as s:
        learned = s.graph(s.last_graph_id()).parents("g0_load")
    assert bool(learned) != ("no learned path into g0_load" in text)
    assert _png_size(Path(_invoke("plot", str(store), "--kind", "graph", "-o", str(tmp_path / "g.png"))
                          .split()[-1]))[0] > 0


def test_a_failed_trial_is_no_point_at_the_bottom_of_the_convergence(tmp_path, monkeypatch):
    """A failed trial has no value: it was a red cross at the panel's lowest value (there the
    best trial's), read as a measurement; it is a dotted line across the panel at its number."""
    from boanon import plots
    from boanon.runners.base import TrialFailed
    from boanon.runners.function import CallableRunner
    from boanon.space import Float, Space
    from boanon.tuner import Tuner

    def system(config: dict) -> dict:
        if config["x"] > 0.7:
            raise TrialFailed("crash above 0.7")
        return {"cost": (config["x"] - 0.3) ** 2}

    tuner = Tuner(Space([Float("x", 0.0, 1.0)]), ["cost"], store=tmp_path / "run.db", n_init=6, seed=0,
                  strategy="random")
    tuner.optimize(CallableRunner(system), 6)
    failed = [t.id for t in tuner.store.trials("failed")]
    tuner.store.close()
    assert failed, "no trial failed"
    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or Path(path))
    _invoke("plot", str(tmp_path / "run.db"), "-o", str(tmp_path / "run.png"))
    ax = figures[0].axes[0]
    drawn_at = {float(x) for c in ax.collections for x, _ in c.get_offsets()}
    assert not drawn_at & set(failed), "a failed trial was drawn as a point"
    lines = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [failed[0]] * 2]
    assert lines and list(lines[0].get_ydata()) == [0, 1]  # the panel's full height, in axes units
    assert "failed (no value)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_pareto_figure_draws_the_reference_point_status_prints(tmp_path, monkeypatch):
    """``status`` and the dashboard print the hypervolume's reference point; the Pareto figure
    did not draw it, so the front's hypervolume could not be read off the picture."""
    import re

    from boanon.multiobjective import plot as mo_plot

    store = tmp_path / "mo.db"
    monkeypatch.chdir(ROOT)
    _invoke("tune", str(ROOT / "examples" / "synthetic-multiobjective.yaml"), "--budget", "8",
            "--store", str(store))
    status = _invoke("status", str(store))
    printed = re.search(r"reference point cost=(\S+), cost2=(\S+): (.+)\)$", status, re.M)
    assert printed, "status printed no reference point"
    figures = []
    monkeypatch.setattr(mo_plot.plt, "close", figures.append)  # the figure, once written
    out = tmp_path / "front.png"
    _invoke("plot", str(store), "--kind", "pareto", "-o", str(out))
    assert _png_size(out)[0] > 0
    ax = figures[0].axes[0]
    ref = next(c for c in ax.collections if c.get_label().startswith("hypervolume reference point"))
    assert ref.get_offsets().tolist()[0] == pytest.approx([float(printed[1]), float(printed[2])], rel=1e-3)
    assert printed[3] in figures[0].get_suptitle().replace("\n", " ")


def test_a_pareto_plot_of_a_run_with_no_trial_done_says_so_naming_the_store(tmp_path):
    """It named the output, with a KeyError's quoted text: "the table has no column 'objective:cost'"."""
    data = yaml.safe_load((ROOT / "examples" / "synthetic-multiobjective.yaml").read_text())
    (tmp_path / "broken.py").write_text("def evaluate(config):\n    raise RuntimeError('broken')\n")
    data["runner"] = {"callable": f"{tmp_path / 'broken.py'}:evaluate"}  # every trial fails
    config, store, out = tmp_path / "mo.yaml", tmp_path / "mo.db", tmp_path / "front.png"
    config.write_text(yaml.safe_dump(data))
    tuned = CliRunner().invoke(main, ["tune", str(config), "--budget", "2", "--store", str(store)])
    assert tuned.exit_code == 1, tuned.output
    result = CliRunner().invoke(main, ["plot", str(store), "--kind", "pareto", "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == f"Error: {store}: no trial is done yet: no front to draw\n"
    assert not out.exists()
