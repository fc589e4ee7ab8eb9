"""``boanon learn`` end to end, and the graph's JSON, DOT and image outputs."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.cli import main
from boanon.graph import CausalGraph
from boanon.graph_render import render, to_dot
from boanon.synthetic import SyntheticSystem
from boanon.table import write_table


@pytest.fixture(scope="module")
def table_csv(tmp_path_factory):
    system = SyntheticSystem(n_params=6, n_groups=2, chain_length=2, n_distractors=8, n_duplicates=1,
                             n_inert=1, noise=0.3, seed=3)
    path = tmp_path_factory.mktemp("learn") / "table.csv"
    write_table(system.sample_table(60, seed=3), str(path))
    return path


def test_learn_writes_the_graph_json_and_prints_a_summary(table_csv, tmp_path):
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(main, ["learn", str(table_csv), "-o", str(out), "--bootstrap", "3"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    roles = {n["id"]: n["role"] for n in data["nodes"]}
    assert {"x0", "x5", "cost"} <= set(roles) and roles["cost"] == "objective"
    assert not any(n.startswith(("param:", "metric:")) for n in roles)
    assert all({"source", "target", "weight", "stability"} <= set(e) for e in data["edges"])
    graph = CausalGraph.load(out)
    strongest = max((e for e in graph.edges if e.target == "cost"), key=lambda e: e.weight)
    assert f"cost <- {strongest.source} (w={strongest.weight:.2f}" in result.output
    assert "no directed path to an objective" in result.output  # distractors, with the reason
    assert "x5" in result.output.split("connected to the objectives:")[1]  # the inert parameter
    assert "time:" in result.output and f"wrote {out}" in result.output
    assert data["metadata"]["dropped"]["d0"] == "no directed path to an objective"
    assert ", 1 objective, " in result.output  # not "1 objectives"


def test_learn_says_which_parts_it_kept_below_a_total(tmp_path):
    from test_learn_postprocess import _running_total_table

    path = tmp_path / "chain.csv"
    write_table(_running_total_table(), str(path))
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(main, ["learn", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "parts kept as parents of the total they were below: stage1 -> stage2" in result.output
    assert json.loads(out.read_text())["metadata"]["reversed"] == ["stage2 -> stage1"]


def test_learn_with_annotations_and_another_learner(table_csv, tmp_path):
    ann = tmp_path / "ann.yaml"
    ann.write_text("forbid: [g1_m1 -> cost]\nrequire: [x0 -> d1]\n")
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(main, ["learn", str(table_csv), "--annotations", str(ann), "--learner", "pc",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    graph = CausalGraph.load(out)
    assert graph.metadata["learner"] == "pc"
    assert not graph.has_edge("g1_m1", "cost") and graph.has_edge("x0", "d1")


def test_bad_annotations_fail_with_file_and_field(table_csv, tmp_path):
    ann = tmp_path / "ann.yaml"
    ann.write_text("require: [x0 -> no_such_metric]\n")
    result = CliRunner().invoke(main, ["learn", str(table_csv), "--annotations", str(ann), "-o",
                                       str(tmp_path / "g.json")])
    assert result.exit_code != 0
    assert f"{ann}: require: edge x0 -> no_such_metric: unknown node" in result.output


def _graph() -> CausalGraph:
    return CausalGraph.from_dict({
        "nodes": [{"id": "cache_size", "role": "param"}, {"id": "block_cache_miss", "role": "metric"},
                  {"id": "ops \"per\" sec", "role": "objective"}],
        "edges": [{"source": "cache_size", "target": "block_cache_miss", "weight": 0.9, "stability": 0.8},
                  {"source": "block_cache_miss", "target": "ops \"per\" sec"}],
        "metadata": {"params_connected": []}})


def test_a_graph_prints_as_one_short_line():
    assert repr(_graph()) == "<CausalGraph: 3 nodes (1 param, 1 metric, 1 objective), 2 edges>"
    assert str(_graph()) == repr(_graph())


def test_dot_has_one_shape_and_colour_per_role_and_escapes_names():
    dot = to_dot(_graph())
    assert '"cache_size" [shape=box' in dot
    assert '"block_cache_miss" [shape=ellipse' in dot
    assert '"ops \\"per\\" sec" [shape=doubleoctagon' in dot
    assert 'label="0.90 s=0.80"' in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
@pytest.mark.parametrize("suffix,magic", [(".svg", b"<?xml"), (".png", b"\x89PNG")])
def test_render_to_images(tmp_path, suffix, magic):
    path = render(_graph(), tmp_path / f"graph{suffix}")
    assert path.read_bytes().startswith(magic)


def test_the_key_names_only_what_the_graph_draws(tmp_path):
    """The key said "purple border: has a formula (below)", "dotted = fallback" and "edge width =
    weight" under a graph with no formula, no fallback edge and no weight (a large one: labels
    off); each is in the key exactly when the picture holds it."""
    def key(data: dict) -> str:
        dot = render(CausalGraph.from_dict(data), tmp_path / "graph.dot").read_text()
        return dot[dot.index("label=<"):]

    plain = SyntheticSystem(n_params=12, n_groups=4, seed=0).true_graph().to_dict()
    assert len(plain["edges"]) > 30 and not plain["node_models"] and not plain["metadata"]
    said = key(plain)
    assert "parameter" in said and "objective" in said
    for entry in ("purple border", "dotted", "thick = strong", "edge width = weight"):
        assert entry not in said, said
    first = plain["edges"][0]
    marked = {**plain, "node_models": {"g0_m1": {"formula": "a * g0_load", "free": {"a": {"init": 1.0}}}},
              "metadata": {"params_connected": [f"{first['source']} -> {first['target']}"]},
              "edges": [{**e, "weight": 0.5} for e in plain["edges"]]}
    said = key(marked)
    for entry in ("purple border: has a formula", "g0_m1 ~ a * g0_load", "dotted = fallback",
                  "thick = strong", "edge width = weight"):
        assert entry in said, said
    metrics_only = {"nodes": [{"id": "x", "role": "param"}, {"id": "y", "role": "objective"}],
                    "edges": [{"source": "x", "target": "y", "weight": 0.4}]}
    assert "metric" not in key(metrics_only)  # no metric drawn: no metric in the key


def test_render_rejects_unknown_formats(tmp_path):
    with pytest.raises(ValueError, match="use .svg, .png or .dot"):
        render(_graph(), tmp_path / "graph.pdf")


def test_all_metrics_keeps_the_metrics_without_a_path(table_csv, tmp_path):
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(main, ["learn", str(table_csv), "--all-metrics", "-o", str(out)])
    assert result.exit_code == 0, result.output
    graph = CausalGraph.load(out)
    assert graph.metadata["prune"] is False
    assert any(n.startswith("d") and n[1:].isdigit() for n in graph.nodes("metric"))  # distractors stay
    assert "no directed path to an objective" not in result.output


def test_learn_towards_one_of_several_results(tmp_path):
    """With --objective, the dataset's other results are metrics: EDP learned from its factors."""
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    out = tmp_path / "g.json"
    result = CliRunner().invoke(main, ["learn", str(root / "datasets" / "zigzag-resnet18"), "--objective",
                                       "edp", "--annotations",
                                       str(root / "examples" / "zigzag-edp-annotations.yaml"),
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    graph = CausalGraph.load(out)
    assert graph.nodes("objective") == ["edp"] and graph.roles["energy"] == "metric"
    assert {"energy", "latency"} <= set(graph.parents("edp"))
    bad = CliRunner().invoke(main, ["learn", str(root / "datasets" / "zigzag-resnet18"), "--objective",
                                    "speed", "-o", str(tmp_path / "x.json")])
    assert bad.exit_code != 0 and "--objective: speed: not a result of" in bad.output


def test_relations_are_printed_and_the_learner_options_reach_the_graph(tmp_path):
    dataset = str(Path(__file__).resolve().parent.parent / "datasets" / "zigzag-resnet18")
    out = tmp_path / "g.json"
    shown = CliRunner().invoke(main, ["learn", dataset, "--objective", "edp", "-o", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "edp = latency * energy" in shown.output
    assert CausalGraph.load(out).metadata["relations"]
    off = CliRunner().invoke(main, ["learn", dataset, "--objective", "edp", "--no-relations",
                                    "--interventions", "-o", str(out)])
    assert off.exit_code == 0, off.output
    graph = CausalGraph.load(out)
    assert graph.metadata["relations"] == [] and graph.metadata["interventions"] is True
    assert "relations found" not in off.output


def test_a_render_format_it_cannot_draw_is_refused_before_learning(table_csv, tmp_path):
    out, picture = tmp_path / "graph.json", tmp_path / "graph.pdf"  # it learned first, then failed
    result = CliRunner().invoke(main, ["learn", str(table_csv), "-o", str(out), "--render", str(picture)])
    assert result.exit_code == 2, result.output
    assert result.output.endswith(f"Invalid value for '--render': {picture}: cannot render .pdf; use .svg, "
                                  ".png or .dot\n")
    assert not out.exists()


def test_a_table_whose_only_objective_is_constant_is_an_error_not_an_empty_graph(tmp_path):
    table = tmp_path / "t.csv"  # it wrote a graph of 0 objectives and ended well
    table.write_text("trial,param:x,metric:m,objective:y\n" +
                     "".join(f"t{i},{i},{(i * 7) % 5},5\n" for i in range(12)))
    out = tmp_path / "graph.json"
    result = CliRunner().invoke(main, ["learn", str(table), "-o", str(out)])
    assert result.exit_code == 1
    assert result.output == (f"Error: {table}: every objective was left out of the graph (y: constant): "
                             "there is nothing to learn it towards\n")
    assert not out.exists()


def test_a_misspelt_objective_names_the_closest_result(tmp_path):
    dataset = Path(__file__).resolve().parent.parent / "datasets" / "zigzag-resnet18"
    result = CliRunner().invoke(main, ["learn", str(dataset), "--objective", "edpx",
                                       "-o", str(tmp_path / "g.json")])
    assert result.exit_code == 1
    assert result.output == f"Error: --objective: edpx: not a result of {dataset} (did you mean 'edp'?)\n"


def test_a_table_too_small_to_learn_from_is_named(tmp_path):
    table = tmp_path / "t.csv"  # the error said what was wrong, not with which file
    table.write_text("trial,param:x,objective:y\nt0,1,2\nt1,2,3\n")
    result = CliRunner().invoke(main, ["learn", str(table), "-o", str(tmp_path / "g.json")])
    assert result.exit_code == 1
    assert result.output == (f"Error: {table}: only 2 trials with all objectives measured; structure "
                             "learning needs at least 5\n")


def test_a_failed_trial_among_a_runs_trials_names_skip_bad(tmp_path):
    """A run's trial folders hold its failed trials too (no ``result.json``): ``boanon learn`` on
    them stopped at the first one with the missing file alone, where ``ingest`` says that
    ``--skip-bad`` goes on with the others; with it, the graph is learned from the rest."""
    table = SyntheticSystem(n_params=3, n_groups=1, seed=0).sample_table(12, seed=0)
    for _, row in table.iterrows():
        folder = tmp_path / "run.trials" / row["trial"]
        folder.mkdir(parents=True)
        roles = {"params": "param:", "metrics": "metric:", "objectives": "objective:"}
        result = {role: {k.removeprefix(p): float(v) for k, v in row.items() if k.startswith(p)}
                  for role, p in roles.items()}
        (folder / "result.json").write_text(json.dumps(result))
    failed = tmp_path / "run.trials" / "t0099"
    failed.mkdir()
    (failed / "stderr.txt").write_text("bench: timed out\n")
    out = tmp_path / "graph.json"
    stopped = CliRunner().invoke(main, ["learn", str(tmp_path / "run.trials"), "-o", str(out)])
    assert stopped.exit_code == 1 and "t0099/result.json: file not found" in stopped.output
    assert "(use --skip-bad to learn from the other trials)" in stopped.output
    skipped = CliRunner().invoke(main, ["learn", str(tmp_path / "run.trials"), "--skip-bad", "-o", str(out)])
    assert skipped.exit_code == 0, skipped.output
    assert "cost" in {n["id"] for n in json.loads(out.read_text())["nodes"]}
