"""Units: declared on a parameter or objective, else read off the name; kept in the run's store."""

from __future__ import annotations

import pytest

from boanon.errors import ConfigError
from boanon.objectives import Objective
from boanon.space import Space
from boanon.units import declared, infer, label, units


@pytest.mark.parametrize(("name", "unit"), [
    ("m3_busy_s", "s"), ("latency_us", "µs"), ("rocksdb.db.get.micros", "µs"), ("write_bytes", "B"),
    ("readrandom_ops_per_sec", "ops/s"), ("m3_traffic_mb", "MB"), ("cpu_us_per_op", "µs/op"),
    ("gb_kib", "KiB"), ("step_ms", "ms"), ("fillrandom_mb_per_sec", "MB/s"), ("area_mm2", "mm²"),
    ("iteration_time", None), ("area_gb", None), ("stall_count_slowdown_for_pending_compaction_bytes", None),
    ("m0_share", None), ("bus", None), ("x10", None), ("m3_ps", None),
])
def test_a_unit_is_read_off_the_name_only_where_the_name_says_one(name, unit):
    assert infer(name) == unit


def test_declared_units_travel_with_the_space_and_objectives_and_win_over_the_name():
    space = Space.from_dict({"cache": {"type": "int", "low": 1, "high": 64, "unit": "MiB"},
                             "wait_s": {"type": "float", "low": 0, "high": 1, "unit": "ms"},
                             "mode": {"type": "categorical", "choices": ["a", "b"]}})
    objective = Objective.from_dict({"name": "iteration_time", "unit": "s"})
    study = {"space": Space.from_dict(space.to_dict()).to_dict(),
             "objectives": [Objective.from_dict(objective.to_dict()).to_dict()]}
    assert declared(study) == {"cache": "MiB", "wait_s": "ms", "iteration_time": "s"}
    got = units(["cache", "wait_s", "mode", "iteration_time", "m1_busy_s"], declared(study))
    assert got == {"cache": "MiB", "wait_s": "ms", "iteration_time": "s", "m1_busy_s": "s"}
    assert label("iteration_time", got["iteration_time"]) == "iteration_time (s)"
    assert Objective("cost").to_dict() == {"name": "cost", "direction": "minimize"}  # none: stores unchanged


def test_a_bad_unit_is_a_clear_error_naming_the_field():
    with pytest.raises(ConfigError, match=r"space\.mode.*has no unit"):
        Space.from_dict({"mode": {"type": "categorical", "choices": ["a", "b"], "unit": "s"}})
    with pytest.raises(ConfigError, match=r"space\.x.*short text"):
        Space.from_dict({"x": {"type": "float", "low": 0, "high": 1, "unit": 3}})
    with pytest.raises(ConfigError, match=r"objectives.*short text"):
        Objective.from_dict({"name": "cost", "unit": ""})
