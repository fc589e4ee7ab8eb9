"""The parametric accelerator: its cost model, ZigZag documents and derived quantities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from boanon.space import Space
from boanon.targets.zigzag import default_space, hardware
from boanon.targets.zigzag.runner import ZigZagRunner
from boanon.targets.zigzag.workload import conv_slice

DEFAULT = Space.from_dict(default_space()).default()


def test_default_space_is_a_valid_space_with_in_range_defaults():
    space = Space.from_dict(default_space(), source="zigzag")
    assert set(space.names) == set(DEFAULT)
    space.validate(DEFAULT)
    assert DEFAULT["dataflow"] in hardware.DATAFLOWS


def test_sram_costs_grow_with_size_and_width():
    small, big, wide = (hardware.sram_costs(8 * 1024, 64), hardware.sram_costs(8 * 1024**2, 64),
                        hardware.sram_costs(8 * 1024, 512))
    assert all(b > s for s, b in zip(small, big, strict=True))
    assert wide[0] > small[0] and wide[2] > small[2]
    # a 2 MiB, 256-bit 22 nm macro: CACTI says 135 pJ/read and 3.7 mm^2; the fit (RMS error
    # about 0.5 in ln units) stays within two RMS errors, a factor of 3
    r, _, area = hardware.sram_costs(16777216, 256)
    assert 135 / 3 < r < 135 * 3 and 3.67 / 3 < area < 3.67 * 3


def test_sram_fit_reproduces_from_zigzag_cacti_pool():
    zigzag = pytest.importorskip("zigzag")
    pool = Path(zigzag.__file__).parent / "cacti" / "cacti_master" / "example_mem_pool.yaml"
    fitted = hardware.fit_sram_costs(yaml.safe_load(pool.read_text()))
    for key, coef in hardware.SRAM_FIT.items():
        assert np.allclose(fitted[key], coef, atol=1e-6), key


def test_accelerator_document_passes_zigzag_validation_innermost_first():
    pytest.importorskip("zigzag")
    from zigzag.parser.accelerator_validator import AcceleratorValidator

    design = {**DEFAULT, "pe_rows": 8, "pe_cols": 32, "gb_kib": 64}
    doc = hardware.accelerator(design, hardware.CostModel())
    validator = AcceleratorValidator(doc)
    assert validator.validate(), validator.validator.errors
    assert list(doc["memories"]) == ["rf_w", "rf_i", "rf_o", "gb", "dram"]
    assert doc["operational_array"]["sizes"] == [8, 32]
    assert doc["memories"]["gb"]["size"] == 64 * 1024 * 8
    assert doc["memories"]["rf_o"]["ports"][0]["bandwidth_max"] == 2 * design["rf_bandwidth"]


def test_design_summary_counts_private_register_files_per_pe():
    design = {**DEFAULT, "pe_rows": 4, "pe_cols": 8}
    doc = hardware.accelerator(design, hardware.CostModel(mac_area_um2=200.0))
    s = hardware.design_summary(design, doc)
    mems = doc["memories"]
    assert s["pe_count"] == 32
    assert s["area_mac_array"] == pytest.approx(32 * 200e-6)
    assert s["area_rf"] == pytest.approx(32 * sum(mems[m]["area"] for m in ("rf_w", "rf_i", "rf_o")))
    assert s["area_gb"] == pytest.approx(mems["gb"]["area"])
    assert s["area"] == pytest.approx(s["area_mac_array"] + s["area_rf"] + s["area_gb"])
    rf = design["rf_weight_bytes"] + design["rf_input_bytes"] + design["rf_output_bytes"]
    assert s["onchip_bytes"] == 32 * rf + design["gb_kib"] * 1024


def test_mapping_unrolls_the_dataflow_dimensions():
    doc = hardware.mapping({**DEFAULT, "dataflow": "pixel_parallel", "pe_rows": 7, "pe_cols": 9})
    assert doc[0]["spatial_mapping"] == {"D1": ["OX, 7"], "D2": ["OY, 9"]}
    with pytest.raises(ValueError, match="unknown dataflow 'systolic'"):
        hardware.mapping({**DEFAULT, "dataflow": "systolic"})


def test_conv_slice_keeps_only_the_chosen_layers():
    pytest.importorskip("onnx")
    proto = conv_slice("resnet18", [1, 11])
    assert [n.name for n in proto.graph.node] == ["/layer1/layer1.0/conv1/Conv",
                                                  "/layer3/layer3.0/conv2/Conv"]
    with pytest.raises(ValueError, match="Conv layers 0..19"):
        conv_slice("resnet18", [20])


def test_runner_rejects_unknown_parameters_and_options(tmp_path):
    from boanon.errors import ConfigError, InvalidOption

    with pytest.raises(InvalidOption, match=r"^option 'model': expected one of \['resnet18'"):
        ZigZagRunner(model="vgg16")
    with pytest.raises(InvalidOption, match=r"^option 'opt': expected EDP, energy or latency$"):
        ZigZagRunner(opt="edp")
    with pytest.raises(InvalidOption, match=r"^option 'layers': alexnet has Conv layers 0..4; got \[5\]$"):
        ZigZagRunner(model="alexnet", layers=[5])
    with pytest.raises(InvalidOption, match="^option 'layers': "):
        ZigZagRunner(layers=[])
    with pytest.raises(ConfigError, match="pe_depth"):
        ZigZagRunner().design({"pe_depth": 4})
    with pytest.raises(ConfigError, match="pe_rows: expected an integer, got 4.5"):
        ZigZagRunner().design({"pe_rows": 4.5})


def test_a_misspelt_design_parameter_is_refused_with_the_closest_name():
    from boanon.errors import ConfigError

    # it said only "not a zigzag design parameter (pe_rows, pe_cols, ...)"; the list in a second
    # pair of brackets after the suggestion read as part of it
    with pytest.raises(ConfigError, match=r"pe_row: not a zigzag design parameter "
                       r"\(did you mean 'pe_rows'\?\); its parameters: pe_rows, pe_cols, "):
        ZigZagRunner().design({"pe_row": 8})


def test_design_fills_defaults_and_makes_plain_integers():
    design = ZigZagRunner().design({"pe_rows": np.int64(12), "gb_kib": 64.0})
    assert design == {**DEFAULT, "pe_rows": 12, "gb_kib": 64}
    assert type(design["pe_rows"]) is int and type(design["gb_kib"]) is int


def test_failure_reason_reads_the_worker_line_or_the_last_line(tmp_path):
    from boanon.targets.zigzag.runner import _failure_reason

    log = tmp_path / "zigzag.log"
    log.write_text("WARNING x\nzigzag failed: ValueError: bad size\n")
    assert _failure_reason(log, 3) == "ValueError: bad size"
    log.write_text("Traceback (most recent call last):\nMemoryError\n")
    assert _failure_reason(log, -9) == "ZigZag exited with status -9: MemoryError"


def test_example_uses_the_target_space_and_loads():
    from boanon.config import load_config

    path = Path(__file__).parents[1] / "examples" / "zigzag.yaml"
    example = yaml.safe_load(path.read_text())
    assert example["space"] == default_space()
    config = load_config(path)
    assert config.runner == "zigzag" and [o.name for o in config.outputs] == ["area"]
