import re

import numpy as np
import pytest

from boanon.errors import ConfigError
from boanon.space import SOBOL_MAX_DIMENSIONS, Bool, Categorical, Float, Int, Space, SpaceTooLarge

SPEC = {
    "min_merge": {"type": "int", "low": 1, "high": 8, "default": 1},
    "max_buffers": {"type": "int", "low": 1, "high": 8, "default": 2},
    "buffer": {"type": "int", "low": 1 << 20, "high": 1 << 28, "log": True, "default": 1 << 26},
    "ratio": {"type": "float", "low": 0.0, "high": 1.0},
    "compression": {"type": "categorical", "choices": ["none", "snappy", "zlib"], "default": "snappy"},
    "fsync": {"type": "bool", "default": False},
}


def space() -> Space:
    return Space.from_dict(SPEC, ["min_merge < max_buffers"])


def test_samples_are_feasible_typed_and_space_filling():
    s = space()
    configs = s.sample(64, np.random.default_rng(0))
    assert all(c["min_merge"] < c["max_buffers"] for c in configs)
    assert all(isinstance(c["buffer"], int) and isinstance(c["fsync"], bool) for c in configs)
    assert {c["compression"] for c in configs} == {"none", "snappy", "zlib"}
    logs = np.log2([c["buffer"] for c in configs])
    assert logs.min() < 22 and logs.max() > 26  # spread over the log range, not bunched at the top


def test_integer_and_log_ranges_give_every_value_a_fair_share():
    counts = np.bincount([Int("i", 1, 4).from_unit(u) for u in np.linspace(0, 1, 4000)])[1:]
    assert counts.min() > 900
    assert Int("i", 1, 64, log=True).from_unit(0.0) == 1 and Int("i", 1, 64, log=True).from_unit(1.0) == 64


def test_encoding_is_one_hot_for_categoricals_and_unit_scaled():
    s = space()
    x = s.encode([s.default()])
    assert x.shape == (1, s.encoded_width()) == (1, 8)
    assert x[0, 4:7].tolist() == [0.0, 1.0, 0.0]  # compression one-hot, snappy
    assert x[0, 2] == pytest.approx((26 - 20) / 8)  # log scale
    assert ((x >= 0) & (x <= 1)).all()


def test_validate_names_the_parameter_and_the_constraint():
    s = space()
    good = s.default()
    assert s.validate(good) == good
    with pytest.raises(ConfigError, match="compression: expected one of"):
        s.validate({**good, "compression": "lz9"})
    with pytest.raises(ConfigError, match="constraints: violates 'min_merge < max_buffers'"):
        s.validate({**good, "min_merge": 5, "max_buffers": 2})
    with pytest.raises(ConfigError, match="ratio: missing"):
        s.validate({k: v for k, v in good.items() if k != "ratio"})


def test_bad_specs_name_the_field():
    with pytest.raises(ConfigError, match=r"space.a: low \(5\) must be below high \(1\)"):
        Space.from_dict({"a": {"type": "int", "low": 5, "high": 1}})
    with pytest.raises(ConfigError, match="space.a: missing 'high'"):
        Space.from_dict({"a": {"type": "float", "low": 0}})
    with pytest.raises(ConfigError, match="space.a: unknown type 'str'"):
        Space.from_dict({"a": {"type": "str"}})
    with pytest.raises(ConfigError, match=r"constraints: .*unknown parameter\(s\) \['b'\]"):
        Space.from_dict({"a": {"type": "bool"}}, ["a and b"])
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) \['__import__'\]"):
        Space.from_dict({"a": {"type": "int", "low": 0, "high": 2}}, ["__import__('os') or a"])
    with pytest.raises(ConfigError, match="Attribute is not allowed"):
        Space.from_dict({"a": {"type": "int", "low": 0, "high": 2}}, ["a.real > 0"])
    with pytest.raises(ValueError, match="log-scale range needs low > 0"):
        Float("f", 0.0, 1.0, log=True)
    with pytest.raises(ValueError, match=r"default: expected one of \['a', 'b'\], got 'x'"):
        Categorical("c", ("a", "b"), default="x")


def test_unsatisfiable_constraints_are_reported():
    s = Space([Bool("a"), Bool("b")], ["a and not a"])
    with pytest.raises(ValueError, match="could only find 0 of 3 feasible"):
        s.sample(3, np.random.default_rng(0), max_tries=3)


def test_neighbours_change_few_parameters_and_stay_feasible():
    s = space()
    rng = np.random.default_rng(1)
    base = s.default()
    for n in s.neighbours(base, 20, rng):
        assert s.is_feasible(n)
        changed = [k for k in base if n[k] != base[k]]
        assert 1 <= len(changed) <= 3
    assert s.to_dict()["buffer"] == SPEC["buffer"]


def test_numpy_scalars_are_accepted_as_numbers():
    s = Space([Float("r", 0.0, 1.0), Int("n", 1, 10)])
    assert s.validate({"r": np.int64(1), "n": np.float64(3.0)}) == {"r": 1.0, "n": 3}
    with pytest.raises(ConfigError, match="r"):
        s.validate({"r": np.bool_(True), "n": 3})


def test_space_files_with_bad_yaml_or_shape_name_the_file_and_line(tmp_path):
    broken = tmp_path / "space.yaml"
    broken.write_text("space:\n  a: {type: int, low: 1\n")
    with pytest.raises(ConfigError, match=r"space.yaml: line \d+: invalid YAML"):
        Space.from_yaml(broken)
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="list.yaml: file: expected a mapping"):
        Space.from_yaml(listed)
    with pytest.raises(ConfigError, match="missing.yaml: file: cannot read"):
        Space.from_yaml(tmp_path / "missing.yaml")
    good = tmp_path / "good.yaml"
    good.write_text("space:\n  a: {type: int, low: 1, high: 4}\n  b: {type: int, low: 1, high: 4}\n"
                    "constraints: ['a < b']\n")
    assert Space.from_yaml(good).constraints[0].expression == "a < b"


def test_a_constraint_cannot_make_the_search_run_for_hours():
    """``2 ** 10 ** 10`` is a ten-billion-bit integer: the old evaluator computed it (for hours)."""
    space = Space.from_dict({"a": {"type": "int", "low": 0, "high": 2}}, ["a < 2 ** 10 ** 10"])
    with pytest.raises(ValueError, match="exponent 10000000000 is larger than 1000"):
        space.is_feasible({"a": 1})


@pytest.mark.parametrize("spec, message", [
    ({"type": "float", "low": 0.0, "high": float("inf")}, "space.x.high: expected a finite number, got inf"),
    ({"type": "float", "low": -float("inf"), "high": float("inf")}, "space.x.low: expected a finite number"),
    ({"type": "float", "low": -1e308, "high": 1e308}, "space.x: the range [-1e+308, 1e+308] is too wide"),
    ({"type": "float", "low": 0.0, "high": float("nan")}, "space.x.high: expected a finite number, got nan"),
    ({"type": "int", "low": 0, "high": float("inf")}, "space.x.high: expected a finite number, got inf"),
    ({"type": "int", "low": -10**400, "high": 0}, "space.x: low (an integer of 1329 bits) must be"),
    ({"type": "int", "low": -10**308, "high": 10**308}, "space.x: the range"),
    ({"type": "float", "low": 2.0, "high": 2.0}, "space.x: low (2.0) must be below high (2.0)"),
    ({"type": "float", "low": 0.0, "high": 1.0, "log": True}, "space.x: a log-scale range needs low > 0"),
])
def test_absurd_bounds_are_refused_at_load(spec, message):
    with pytest.raises(ConfigError) as caught:
        Space.from_dict({"x": spec}, source="tune.yaml")
    assert str(caught.value).startswith(f"tune.yaml: {message}")


@pytest.mark.parametrize("spec, message", [
    ({"type": "int", "low": 1, "high": 10, "default": 2.5}, "expected an integer in [1, 10], got 2.5"),
    ({"type": "int", "low": 1, "high": 10, "default": True}, "expected an integer in [1, 10], got True"),
    ({"type": "float", "low": 0, "high": 1, "default": True}, "expected a number in [0.0, 1.0], got True"),
    ({"type": "float", "low": 0, "high": 1, "default": "0.5"}, "expected a number in [0.0, 1.0], got '0.5'"),
    ({"type": "float", "low": 0, "high": 1, "default": 1.5}, "expected a number in [0.0, 1.0], got 1.5"),
    ({"type": "bool", "default": "maybe"}, "expected a boolean, got 'maybe'"),
    ({"type": "categorical", "choices": ["a", "b"], "default": "c"}, "expected one of ['a', 'b'], got 'c'"),
])
def test_a_default_the_parameter_cannot_take_is_refused_at_load(spec, message):
    """The first trial runs the default: one of the wrong type used to pass the read and fail that
    trial (after the run's store was made), or crash comparing a string with the bounds."""
    with pytest.raises(ConfigError) as caught:
        Space.from_dict({"x": spec}, source="tune.yaml")
    assert str(caught.value) == f"tune.yaml: space.x.default: {message}"
    assert caught.value.field == "space.x.default"


def test_a_default_is_kept_as_its_parameter_reads_it():
    assert Int("n", 1, 10, default=3.0).default == 3 and isinstance(Int("n", 1, 10, default=3.0).default, int)
    assert Bool("b", default=1).default is True
    ratio = Space.from_dict({"r": {"type": "float", "low": 0, "high": 2, "default": 1}}).params["r"].default
    assert ratio == 1.0 and isinstance(ratio, float)


@pytest.mark.parametrize("spec, field, message", [
    ({"type": "categorical", "choices": "lz4"}, "choices", "expected a list of the values, got 'lz4'"),
    ({"type": "float", "low": 1, "high": 10, "log": "no"}, "log", "expected true or false, got 'no'"),
    ({"type": "int", "low": 1, "high": 10, "log": 1}, "log", "expected true or false, got 1"),
    ({"type": "int", "low": 0.5, "high": 10}, "low", "expected an integer, got 0.5"),
    ({"type": "int", "low": 0, "high": 10.5}, "high", "expected an integer, got 10.5"),
    ({"type": "float", "low": True, "high": 2}, "low", "expected a number, got True"),
    ({"type": "float", "low": "zero", "high": 2}, "low", "expected a number, got 'zero'"),
    ({"type": "float", "low": 0, "high": 10**400}, "high", "an integer of 1329 bits does not fit in a float"),
    ({"type": "categorical", "choices": ["a", [1, 2]]}, "choices",
     "each choice must be a scalar (a string, number or boolean), got [1, 2]"),
    ({"type": "categorical", "choices": [1, "1", 2]}, "choices",  # an exported CSV wrote both as 1
     "1 and '1' are written alike (1) in tables and logs: make them differ as text"),
    ({"type": "categorical", "choices": [True, 1]}, "choices",  # was "needs at least two distinct choices"
     "True and 1 are one value to Python (True == 1): a choice is looked up by value, so one of them "
     "could never run; make them differ (as strings, say)"),
])
def test_a_key_of_the_wrong_type_is_refused_naming_it(spec, field, message):
    """``tuple("lz4")`` made three choices l, z, 4; ``bool("no")`` a log scale; ``int(0.5)`` a 0;
    ``float(10**400)`` an OverflowError, a traceback; a list among the choices "unhashable type"."""
    with pytest.raises(ConfigError) as caught:
        Space.from_dict({"x": spec}, source="tune.yaml")
    assert str(caught.value) == f"tune.yaml: space.x.{field}: {message}"


def test_bounds_written_as_yaml_1_1_reads_them_still_load(tmp_path):
    """PyYAML reads ``1e-3`` and ``1.0e6`` as text (a YAML 1.1 float needs a dot and a signed
    exponent): both are numbers, the second a whole one (an int's bound ``1.0e6`` was refused)."""
    path = tmp_path / "space.yaml"
    path.write_text("space:\n  lr: {type: float, low: 1e-3, high: 1, log: true}\n"
                    "  n: {type: int, low: 1, high: 1.0e6, log: yes}\n")
    space = Space.from_yaml(path)
    assert space.to_dict() == {"lr": {"type": "float", "low": 0.001, "high": 1.0, "log": True},
                               "n": {"type": "int", "low": 1, "high": 1_000_000, "log": True}}
    assert isinstance(space.params["n"].high, int)


@pytest.mark.parametrize("spec, foreign", [
    ({"type": "bool", "low": 0}, "low"),
    ({"type": "categorical", "choices": ["a", "b"], "log": True}, "log"),
    ({"type": "int", "low": 0, "high": 3, "choices": [1, 2]}, "choices")])
def test_a_key_of_another_type_is_refused_not_ignored(spec, foreign):
    # `low` on a bool was dropped unseen: the user meant something the space does not hold
    with pytest.raises(ConfigError, match=rf"t\.yaml: space\.p\.{foreign}: does not apply to a "
                                          rf"parameter of type {spec['type']} \(it takes "):
        Space.from_dict({"p": spec}, source="t.yaml")


@pytest.mark.parametrize(("names", "message"), [
    (["", "x"], "parameter name '': a name must be non-empty"),  # was a traceback about column 'param:'
    ([" x"], "parameter name ' x': a name must be non-empty, without leading or trailing spaces"),
    (["x", "y", "x"], "parameter names must be unique: 'x' more than once"),
])
def test_a_parameter_name_that_no_table_column_can_hold_is_refused_naming_it(names, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Space([Float(n, 0.0, 1.0) for n in names])


@pytest.mark.parametrize("key, message", [
    ('""', "parameter name '': a name must be non-empty, without leading or trailing spaces"),
    ('" b"', "parameter name ' b': a name must be non-empty, without leading or trailing spaces"),
    ("1", "parameter name 1: a name must be a string, got int"),      # was an AttributeError's traceback
    ("yes", "parameter name True: a name must be a string, got bool"),  # YAML 1.1's boolean
])
def test_a_parameter_name_no_configuration_can_hold_is_filed_under_space(tmp_path, key, message):
    """It was filed under ``constraints`` (Space refused it with a ValueError, as it does a
    constraint), though the file had none or they were right."""
    path = tmp_path / "space.yaml"
    path.write_text(f"space:\n  a: {{type: int, low: 1, high: 4}}\n  {key}: {{type: bool}}\n"
                    "constraints: ['a < 4']\n")
    with pytest.raises(ConfigError) as info:
        Space.from_yaml(path)
    assert str(info.value) == f"{path}: space: {message}" and info.value.field == "space"
    path.write_text("space:\n  a: {type: int, low: 1, high: 4}\n  b: {type: bool}\nconstraints: ['a < c']\n")
    with pytest.raises(ConfigError) as info:  # a constraint's own error stays the constraints'
        Space.from_yaml(path)
    assert info.value.field == "constraints" and "unknown parameter(s) ['c']" in str(info.value)


def test_a_space_too_large_for_a_sobol_design_is_refused_naming_its_size_and_the_limit():
    """It was built, then its first Sobol draw (the initial design, or with ``n_init: 1`` the first
    proposal, after a trial) ended in scipy's bare "Maximum supported dimensionality is 21201."."""
    from scipy.stats import qmc

    assert SOBOL_MAX_DIMENSIONS == qmc.Sobol.MAXDIM  # the limit written out is scipy's
    message = ("21202 parameters, more than the 21201 a search can draw (its Sobol design has one "
               "dimension per parameter): tune at most 21201 and leave the others out of the space")
    floats = [Float(f"x{i}", 0.0, 1.0) for i in range(SOBOL_MAX_DIMENSIONS + 1)]
    with pytest.raises(SpaceTooLarge, match=re.escape(message) + "$"):
        Space(floats)
    with pytest.raises(ConfigError, match=re.escape(f"t.yaml: space: {message}") + "$"):
        Space.from_dict({p.name: {"type": "float", "low": 0, "high": 1} for p in floats}, source="t.yaml")
    assert len(Space(floats[:-1])) == SOBOL_MAX_DIMENSIONS  # the largest a search can draw
