"""The zigzag adapter on real ZigZag dump folders (tests/fixtures/zigzag) and broken copies."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from boanon.adapters import get_adapter, ingest
from boanon.errors import LogParseError

FIXTURES = Path(__file__).parent / "fixtures" / "zigzag"
ONE = FIXTURES / "os-8x8-one-layer"
THREE = FIXTURES / "ws-three-layers"
THREE_LAYER_FILES = ["_layer1_layer1.0_conv1_Conv_complete.json",
                     "_layer2_layer2.0_conv2_Conv_complete.json",
                     "_layer3_layer3.0_conv2_Conv_complete.json"]


@pytest.fixture
def adapter():
    return get_adapter("zigzag")


def copy_of(case: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(case, tmp_path / case.name))


def test_one_layer_known_values(adapter):
    rec = adapter.parse_trial(ONE)
    assert rec.trial == "os-8x8-one-layer"
    assert rec.objectives["energy"] == pytest.approx(203402450.625968)
    assert rec.objectives["latency"] == 2067144
    assert rec.objectives["edp"] == pytest.approx(203402450.625968 * 2067144)
    assert rec.objectives["area"] == pytest.approx(1.64026091)
    m = rec.metrics
    # word accesses: reads to the level below + reads to the level above
    assert m["reads_rf_w_W"] == 57802752
    assert m["reads_gb_O"] == 784
    assert m["writes_dram_O"] == 6272
    assert m["energy_dram_W"] == pytest.approx(58982400.0)
    assert m["capacity_util_rf_i_I"] == pytest.approx(0.75)
    assert m["util_spatial"] == pytest.approx(0.875)
    assert m["latency_computation"] == 2064830
    assert m["pe_count"] == 64
    assert m["area_gb"] + m["area_rf"] + m["area_mac_array"] == pytest.approx(1.64026091)
    # ZigZag's total is MAC energy plus the memory energy broken down per level
    assert m["energy_mac"] + m["energy_memory"] == pytest.approx(rec.objectives["energy"])
    per_level = sum(v for k, v in m.items() if k.startswith("energy_") and k.count("_") >= 2)
    assert per_level == pytest.approx(m["energy_memory"])
    assert rec.params["dataflow"] == "output_stationary"
    assert rec.params["pe_rows"] == 8


def test_three_layers_sum_to_zigzag_totals(adapter):
    rec = adapter.parse_trial(THREE)
    m = rec.metrics
    assert rec.objectives["energy"] == pytest.approx(479356835.04354894)
    assert rec.objectives["latency"] == 715451
    # per-layer files and overall_simple.json agree after summing the layers
    assert m["energy_mac"] + m["energy_memory"] == pytest.approx(rec.objectives["energy"])
    assert m["latency_onloading"] + m["latency_computation"] + m["latency_offloading"] == 715451
    assert m["latency_onloading"] == 60 + 63 + 320
    # latency-weighted spatial utilisation of the three layers (values from their JSON files)
    expected = (0.5714285714285714 * 301116 + 0.7619047619047619 * 225855
                + 0.9142857142857143 * 188480) / 715451
    assert m["util_spatial"] == pytest.approx(expected)
    assert 0 < m["util"] < m["util_spatial"]
    assert rec.objectives["area"] == pytest.approx(7.08393692)
    assert rec.params == json.loads((THREE / "config.json").read_text())


def test_detect(adapter, tmp_path):
    assert adapter.detect(ONE) and adapter.detect(THREE)
    assert not adapter.detect(tmp_path)
    (tmp_path / "overall_simple.json").write_text('{"energy": 1, "latency": 2}')
    assert not adapter.detect(tmp_path)  # no per-layer result: not a ZigZag dump
    assert not adapter.detect(FIXTURES.parent / "sgd")


def test_ingest_detects_zigzag_and_builds_table():
    result = ingest(FIXTURES)
    assert result.adapter == "zigzag"
    table = result.table.set_index("trial")
    assert list(table.index) == ["os-8x8-one-layer", "ws-three-layers"]
    assert table.loc["ws-three-layers", "param:gb_kib"] == 1567
    assert table.loc["os-8x8-one-layer", "objective:latency"] == 2067144
    assert {"objective:energy", "objective:latency", "objective:area", "objective:edp"} <= set(table)


def test_gzipped_outputs_are_read(adapter, tmp_path):
    trial = copy_of(THREE, tmp_path)
    for name in [*THREE_LAYER_FILES, "overall_simple.json"]:
        path = trial / name
        with gzip.open(f"{path}.gz", "wt") as fh:
            fh.write(path.read_text())
        path.unlink()
    assert adapter.parse_trial(trial).metrics == pytest.approx(adapter.parse_trial(THREE).metrics)


def test_missing_overall_names_file(adapter, tmp_path):
    trial = copy_of(ONE, tmp_path)
    (trial / "overall_simple.json").unlink()
    with pytest.raises(LogParseError, match="overall_simple.json") as err:
        adapter.parse_trial(trial)
    assert err.value.path.name == "overall_simple.json"


def test_truncated_json_names_file_and_line(adapter, tmp_path):
    trial = copy_of(THREE, tmp_path)
    path = trial / THREE_LAYER_FILES[1]
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:40]))
    with pytest.raises(LogParseError) as err:
        adapter.parse_trial(trial)
    assert err.value.path == path
    assert err.value.line is not None and err.value.line >= 40
    assert "invalid JSON" in str(err.value)


@pytest.mark.parametrize(("removed", "says"), [(1, "2 layer results for the 3 layers"),
                                                (2, "1 layer result for the 3 layers")])
def test_missing_layer_is_truncated_output(adapter, tmp_path, removed: int, says: str):
    """Counted in words, as every count BoAnon prints (was "1 layer result(s)")."""
    trial = copy_of(THREE, tmp_path)
    for name in THREE_LAYER_FILES[3 - removed:]:
        (trial / name).unlink()
    with pytest.raises(LogParseError, match=f"truncated output: {says} in "):
        adapter.parse_trial(trial)


@pytest.mark.parametrize("name, text, message", [
    ("overall_simple.json", '{"energy": "n/a", "latency": 5}', "'energy' is not a finite number"),
    ("overall_simple.json", '{"energy": 1e9}', "missing field 'latency'"),
    ("design.json", "", "empty file"),
    ("design.json", '{"params": {"pe_rows": 8}}', "missing the 'derived' object"),
])
def test_bad_file_names_file_and_problem(adapter, tmp_path, name, text, message):
    trial = copy_of(ONE, tmp_path)
    (trial / name).write_text(text)
    with pytest.raises(LogParseError, match=message) as err:
        adapter.parse_trial(trial)
    assert err.value.path == trial / name


def test_missing_field_in_layer_file(adapter, tmp_path):
    trial = copy_of(ONE, tmp_path)
    path = next(trial.glob("*_complete.json"))
    data = json.loads(path.read_text())
    del data["outputs"]["memory"]["word_accesses"]
    path.write_text(json.dumps(data))
    with pytest.raises(LogParseError, match="outputs.memory.word_accesses") as err:
        adapter.parse_trial(trial)
    assert err.value.path == path


def test_plain_zigzag_dump_without_design_file(adapter, tmp_path):
    trial = copy_of(ONE, tmp_path)
    (trial / "design.json").unlink()
    rec = adapter.parse_trial(trial)
    assert set(rec.objectives) == {"energy", "latency", "edp"}
    assert rec.metrics["reads_rf_w_W"] == 57802752 and "pe_count" not in rec.metrics
