"""A ZigZag dump whose layer or design file has the wrong shape is a LogParseError naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boanon.adapters import get_adapter
from boanon.errors import LogParseError

ONE = Path(__file__).parent / "fixtures" / "zigzag" / "os-8x8-one-layer"


@pytest.fixture
def trial(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ONE, tmp_path / ONE.name))


@pytest.mark.parametrize(("keys", "value", "message"), [
    (("layer", "memory_operand_links"), ["W", "I"],
     r"'inputs\.layer\.memory_operand_links' must be an object"),
    (("accelerator", "mem_hierarchy_dict"), "reg, sram",
     r"'inputs\.accelerator\.mem_hierarchy_dict' must be an object"),
])
def test_layer_links_or_levels_not_objects(trial, keys, value, message):
    path = next(trial.glob("*_complete.json"))
    data = json.loads(path.read_text())
    data["inputs"][keys[0]][keys[1]] = value
    path.write_text(json.dumps(data))
    with pytest.raises(LogParseError, match=message) as err:
        get_adapter("zigzag").parse_trial(trial)
    assert err.value.path == path


def test_levels_of_an_operand_not_a_list(trial):
    path = next(trial.glob("*_complete.json"))
    data = json.loads(path.read_text())
    levels = data["inputs"]["accelerator"]["mem_hierarchy_dict"]
    levels[next(iter(levels))] = 3
    path.write_text(json.dumps(data))
    with pytest.raises(LogParseError, match="must be a list") as err:
        get_adapter("zigzag").parse_trial(trial)
    assert err.value.path == path


def test_design_file_not_an_object(trial):
    (trial / "design.json").write_text("[1, 2]")
    with pytest.raises(LogParseError, match="expected a JSON object describing the design") as err:
        get_adapter("zigzag").parse_trial(trial)
    assert err.value.path == trial / "design.json"
