"""The sgd adapter on real (short) runs of the sgd runner, and on broken copies of them."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from boanon.adapters import get_adapter, ingest
from boanon.adapters.sgd import read_log
from boanon.errors import LogParseError

FIXTURES = Path(__file__).parent / "fixtures" / "sgd"
DEFAULT = FIXTURES / "uniform-default"
GPU_HEAVY = FIXTURES / "gpu-heavy"


@pytest.fixture
def adapter():
    return get_adapter("sgd")


def lines_of(trial_dir: Path) -> list[dict]:
    plain = trial_dir / "workers.jsonl"
    text = plain.read_text() if plain.exists() else gzip.open(f"{plain}.gz", "rt").read()
    return [json.loads(line) for line in text.splitlines()]


def broken_copy(tmp_path: Path, edit) -> Path:
    """A copy of the default fixture whose list of log lines went through ``edit``."""
    trial = tmp_path / "trial"
    shutil.copytree(DEFAULT, trial)
    lines = (trial / "workers.jsonl").read_text().splitlines()
    (trial / "workers.jsonl").write_text("\n".join(edit(lines)) + "\n")
    return trial


def test_uniform_default_known_values(adapter):
    record = adapter.parse_trial(DEFAULT)
    m = record.metrics
    # iterations 2-5 (after the 2 warm-up iterations); m4 straggles in 3, m2 in 4
    assert record.objectives == {
        "iteration_time": pytest.approx((15.815871 + 23.622475 + 26.126259 + 13.641992) / 4)}
    assert m["warmup_iteration_time_s"] == pytest.approx((36.97657 + 23.127629) / 2)
    assert (m["workers"], m["parameter_servers"]) == (10, 1)
    assert m["m0_cpu_samples"] == 52 and m["m5_gpu_samples"] == 51 and m["m5_cpu_samples"] == 0
    assert m["m2_cpu_compute_s"] == pytest.approx((14.3432 + 14.28076 + 25.380938 + 12.874088) / 4)
    assert m["m0_traffic_mb"] == pytest.approx(9 * 27.2)  # the only server hears from 9 others
    assert m["ps_traffic_max_mb"] == m["m0_traffic_mb"]
    assert (m["m2_stragglers"], m["m4_stragglers"], m["m1_stragglers"], m["stragglers"]) == (1, 1, 0, 2)
    assert m["worker_busy_max_s"] <= record.objectives["iteration_time"]
    assert m["worker_compute_max_s"] >= max(m["m2_cpu_compute_s"], m["m4_cpu_compute_s"])
    assert len(m) == 15 * 3 + 10 * 5 + 14


def test_gpu_heavy_gzipped_known_values(adapter):
    record = adapter.parse_trial(GPU_HEAVY)
    m = record.metrics
    assert record.objectives["iteration_time"] == pytest.approx(
        (3.304169 + 2.823812 + 2.862271 + 4.628977) / 4)
    assert (m["workers"], m["parameter_servers"]) == (7, 2)
    assert m["m2_busy_s"] == 0 and m["m2_traffic_mb"] == 0
    assert m["m5_gpu_samples"] == 86
    # m0 and m1 straggled in warm-up iteration 0 (not counted), m6 in iteration 5 (both devices: once)
    assert m["m0_stragglers"] == 0 and m["m6_stragglers"] == 1 and m["stragglers"] == 1
    assert m["ps_traffic_max_mb"] == pytest.approx(95.2)


@pytest.mark.parametrize("trial_dir", [DEFAULT, GPU_HEAVY])
def test_objective_is_the_mean_iteration_time_after_warmup(adapter, trial_dir):
    per_iteration = {r["iteration"]: r["iteration_s"] for r in lines_of(trial_dir) if not r["warmup"]}
    expected = sum(per_iteration.values()) / len(per_iteration)
    assert adapter.parse_trial(trial_dir).objectives["iteration_time"] == pytest.approx(expected)


@pytest.mark.parametrize("trial_dir", [DEFAULT, GPU_HEAVY])
def test_iteration_time_is_slowest_worker_plus_slowest_update(adapter, trial_dir):
    record = adapter.parse_trial(trial_dir)
    parts = record.metrics["worker_busy_max_s"] + record.metrics["ps_update_max_s"]
    assert record.objectives["iteration_time"] == pytest.approx(parts, abs=1e-5)


def test_machine_busy_time_is_slowest_device_plus_aggregation_plus_communication(adapter):
    rows = [r for r in lines_of(GPU_HEAVY) if r["machine"] == "m5" and not r["warmup"]]
    busy = []
    for it in sorted({r["iteration"] for r in rows}):
        mine = [r for r in rows if r["iteration"] == it]
        busy.append(max(r["compute_s"] for r in mine) + sum(r["aggregation_s"] for r in mine)
                    + mine[0]["communication_s"])
    assert adapter.parse_trial(GPU_HEAVY).metrics["m5_busy_s"] == pytest.approx(sum(busy) / len(busy))


def test_detects_its_logs_only(adapter, tmp_path):
    assert adapter.detect(DEFAULT) and adapter.detect(GPU_HEAVY)
    (tmp_path / "workers.jsonl").write_text('{"op": "put", "latency_us": 12}\n')
    assert not adapter.detect(tmp_path)
    assert not adapter.detect(tmp_path / "missing")


def test_ingest_detects_the_adapter_and_takes_params_from_config(tmp_path):
    for case in (DEFAULT, GPU_HEAVY):
        shutil.copytree(case, tmp_path / case.name)
    result = ingest(tmp_path)
    table = result.table.set_index("trial")
    assert result.adapter == "sgd" and not result.skipped and not result.partially_missing
    assert len([c for c in table.columns if c.startswith("param:")]) == 35
    assert table.loc["gpu-heavy", "param:m2_worker"] == False  # noqa: E712  (numpy bool)
    assert table.loc["uniform-default", "param:m5_gpu_share"] == 1.0
    assert table.loc["gpu-heavy", "objective:iteration_time"] < table.loc[
        "uniform-default", "objective:iteration_time"] / 2


@pytest.mark.parametrize("edit, line, message", [
    (lambda ls: ls[:4] + ["{not json"] + ls[5:], 5, "invalid JSON"),
    (lambda ls: ls[:6] + ["[1, 2]"] + ls[7:], 7, "JSON object"),
    (lambda ls: [ls[0].replace('"compute_s"', '"compute"')] + ls[1:], 1, "missing field.*compute_s"),
    (lambda ls: ls[:2] + [ls[2].replace('"compute_s": ', '"compute_s": -')] + ls[3:], 3, "compute_s"),
    (lambda ls: ls[:3] + [ls[3].replace('"device": "cpu"', '"device": "tpu"')] + ls[4:], 4,
     "unknown device"),
    (lambda ls: ls[:3] + [ls[3].replace('"role": "worker"', '"role": "boss"')] + ls[4:], 4,
     "unknown role"),
    (lambda ls: ls[:9] + [ls[9].replace('"warmup": true', '"warmup": "yes"')] + ls[10:], 10,
     "warmup"),
    (lambda ls: ls[:20] + [ls[19]] + ls[20:], 21, "second line for iteration 1"),
])
def test_bad_lines_name_the_file_and_line(adapter, tmp_path, edit, line, message):
    trial = broken_copy(tmp_path, edit)
    with pytest.raises(LogParseError, match=message) as info:
        adapter.parse_trial(trial)
    assert info.value.path == trial / "workers.jsonl" and info.value.line == line


@pytest.mark.parametrize("edit, message", [
    (lambda ls: [ln for ln in ls if '"warmup": true' in ln], "no iterations after the warm-up"),
    (lambda ls: [], "empty log"),
    (lambda ls: [ln.replace('"role": "both"', '"role": "worker"') for ln in ls], "no parameter server"),
])
def test_unusable_logs_are_refused(adapter, tmp_path, edit, message):
    with pytest.raises(LogParseError, match=message):
        adapter.parse_trial(broken_copy(tmp_path, edit))


def test_missing_and_truncated_logs(adapter, tmp_path):
    with pytest.raises(LogParseError, match="file not found"):
        adapter.parse_trial(tmp_path)
    data = (GPU_HEAVY / "workers.jsonl.gz").read_bytes()
    (tmp_path / "workers.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(LogParseError, match="cannot read") as info:
        read_log(tmp_path / "workers.jsonl.gz")
    assert info.value.path.name == "workers.jsonl.gz"
