"""The zigzag runner end to end: a real ZigZag evaluation of one small layer, and its failures."""

from __future__ import annotations

import json

import pytest

from boanon.adapters import ingest
from boanon.runners import TrialFailed, make_runner, run_config

pytest.importorskip("zigzag")

SMALL_LAYER = [7]
"""ResNet-18's first 1x1 downsampling conv: four temporal loops, so ZigZag tries only 4! orders."""


def test_real_evaluation_is_ingested_back(tmp_path):
    runner = make_runner("zigzag", layers=SMALL_LAYER, timeout=300)
    trial = tmp_path / "trials" / "t0"
    trial.mkdir(parents=True)
    config = {"pe_rows": 8, "pe_cols": 16, "dataflow": "weight_stationary", "gb_kib": 64}
    run_config(runner, config, trial)
    assert json.loads((trial / "config.json").read_text()) == config
    assert {p.name for p in trial.iterdir()} == {
        "config.json", "design.json", "accelerator.yaml", "mapping.yaml", "zigzag.log",
        "overall_simple.json", "_layer2_layer2.0_downsample_downsample.0_Conv_complete.json"}
    result = ingest(tmp_path / "trials")
    assert result.adapter == "zigzag"
    row = result.table.iloc[0]
    assert row["param:pe_cols"] == 16 and row["param:dataflow"] == "weight_stationary"
    assert row["objective:energy"] > 0 and row["objective:latency"] > 0
    assert row["objective:edp"] == pytest.approx(row["objective:energy"] * row["objective:latency"])
    # 128 PEs; the layer has C=64 input and K=128 output channels, so all of them are busy
    assert row["metric:pe_count"] == 128
    assert row["metric:util_spatial"] == pytest.approx(1.0)
    # the 1x1 conv reads each of its 128*64 weights from DRAM exactly once (in 64-bit words)
    assert row["metric:reads_dram_W"] == 128 * 64 * 8 / 64


def test_unmappable_design_is_a_failed_trial(tmp_path):
    runner = make_runner("zigzag", layers=SMALL_LAYER, timeout=300)
    # a 1-byte output register file cannot hold one 16-bit partial sum
    with pytest.raises(TrialFailed, match="NoValidLoopOrderingFoundException"):
        run_config(runner, {"rf_output_bytes": 1}, tmp_path)
    assert (tmp_path / "config.json").is_file() and (tmp_path / "zigzag.log").is_file()


def test_timeout_is_a_failed_trial(tmp_path):
    runner = make_runner("zigzag", layers=SMALL_LAYER, timeout=0.5)
    with pytest.raises(TrialFailed, match=r"timed out after 0.5 s"):
        runner.run({}, tmp_path)
