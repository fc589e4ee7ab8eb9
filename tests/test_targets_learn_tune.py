"""Each real target, end to end as docs/targets.md tells a user: learn the graph from the target's
dataset, then tune with it (``boanon tune examples/<target>.yaml``, which starts warm from the
dataset). Short budgets and small system sizes; the evaluations are real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boanon.annotations import Knowledge
from boanon.cli import main
from boanon.graph import CausalGraph
from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _tune(config: Path, store: Path, budget: int, unmappable_ok: bool = False) -> list:
    """Run ``boanon tune`` from the repository root (the examples' paths are relative to it);
    ``unmappable_ok``: a design ZigZag cannot map is stored as failed, as any system failure."""
    _invoke("tune", str(config), "--budget", str(budget), "--store", str(store))
    with Store(store) as s:
        trials = s.trials()
        graphs = {t.graph_id: s.graph(t.graph_id) for t in trials if t.graph_id is not None}
    assert all(t.status == "done" or unmappable_ok and "NoValidLoopOrdering" in (t.error or "")
               for t in trials), [t.error for t in trials]
    return [(t, graphs.get(t.graph_id)) for t in trials]


def _learned_from_dataset(graph: CausalGraph | None, n_dataset: int) -> bool:
    return graph is not None and graph.metadata.get("learned_from_trials", 0) >= n_dataset


def _test_yaml(tmp_path: Path, example: str, **changes) -> Path:
    """examples/<example>.yaml with some keys (or runner options) changed: small system sizes."""
    data = yaml.safe_load((ROOT / "examples" / f"{example}.yaml").read_text())
    data["runner"]["options"].update(changes.pop("options", {}))
    data.update(changes)
    path = tmp_path / f"{example}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.slow
def test_sgd_learns_the_expert_graph_from_its_dataset_and_tunes_with_it(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "g.json"
    _invoke("learn", "datasets/sgd-googlenet", "--annotations", "examples/sgd-annotations.yaml",
            "-o", str(out))
    graph = CausalGraph.load(out)
    # BOAT's structure survives learning: the exact identity, the slowest worker kept (not merged
    # away as a near-duplicate of the objective), per-device compute over its own samples
    assert set(graph.parents("iteration_time")) == {"worker_busy_max_s", "ps_update_max_s"}
    assert graph.node_models["iteration_time"] == {"function": "worker_busy_max_s + ps_update_max_s"}
    assert "m5_gpu_samples" in graph.parents("m5_gpu_compute_s")
    assert {f"m{i}_busy_s" for i in range(10)} <= set(graph.parents("worker_busy_max_s"))

    # examples/sgd.yaml: warm from the dataset, three trials of its own, then the structured model,
    # which in the run's early phase moves a few parameters at a time from the best trials
    # (docs/models.md). The simulator's noise is seeded so the test is repeatable.
    config = _test_yaml(tmp_path, "sgd", options={"noise_seed": 1, "pace": 0})
    trials = _tune(config, tmp_path / "sgd.db", budget=7)
    last, last_graph = trials[-1]
    assert last.surrogate == "structured", last.reason
    assert _learned_from_dataset(last_graph, 40)
    expert = Knowledge.from_yaml(ROOT / "examples" / "sgd-annotations.yaml").node_models
    assert {n: last_graph.node_models[n] for n in expert} == expert  # the expert's models win
    # how far its proposals get is an outcome (it turns on the machine's floating-point rounding):
    # benchmarks/ measures it


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench (rocksdb-tools) not installed")
def test_rocksdb_learns_from_its_dataset_then_tunes_a_small_db(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "g.json"
    _invoke("learn", "datasets/rocksdb-readrandom", "-o", str(out))
    assert "readrandom_ops_per_sec" in CausalGraph.load(out).roles
    # 20K keys instead of 1M: the dataset becomes a related task of another size, as it would
    # for a user whose database differs from the dataset's
    config = _test_yaml(tmp_path, "rocksdb", options={"num": 20_000, "reads": 5_000, "timeout": 60})
    trials = _tune(config, tmp_path / "rocksdb.db", budget=4)
    last, last_graph = trials[-1]
    assert last.surrogate not in ("init", "random"), last.reason
    assert _learned_from_dataset(last_graph, 40), last.reason
    assert all(t.objectives["readrandom_ops_per_sec"] > 0 for t, _ in trials)


@pytest.mark.slow
def test_zigzag_learns_from_its_dataset_then_tunes_the_pareto_front(tmp_path, monkeypatch):
    pytest.importorskip("zigzag")
    monkeypatch.chdir(ROOT)
    out = tmp_path / "g.json"
    _invoke("learn", "datasets/zigzag-resnet18", "-o", str(out))
    assert {"energy", "latency"} <= set(CausalGraph.load(out).roles)
    # one of the dataset's two layers and a narrow mapping search (a few CPU-s a trial): the 40
    # dataset designs are a related task; the graph learned on them proposes the fourth trial
    config = _test_yaml(tmp_path, "zigzag", options={"layers": [12], "lpf_limit": 2})
    trials = _tune(config, tmp_path / "zigzag.db", budget=4, unmappable_ok=True)
    last, last_graph = trials[-1]
    assert last.surrogate not in ("init", "random"), last.reason
    assert _learned_from_dataset(last_graph, 40), last.reason
    assert all(t.objectives["energy"] > 0 and t.objectives["latency"] > 0 for t, _ in trials
               if t.status == "done")
