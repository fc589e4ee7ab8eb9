import numpy as np
import pytest

from boanon.expressions import Expression


def test_names_exclude_functions_and_constants():
    e = Expression.parse("a * exp(load) / speed + max(b, pi)")
    assert e.names == {"a", "load", "speed", "b"}


def test_evaluates_vectorised_with_broadcasting():
    e = Expression.parse("a * load / speed + b")
    load = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = e.evaluate({"a": 2.0, "load": load, "speed": np.array([1.0, 2.0]), "b": 1.0})
    np.testing.assert_allclose(out, [[3.0, 3.0], [7.0, 5.0]])


def test_functions_and_conditionals():
    e = Expression.parse("where(x > 1, sqrt(x), -x) + min(x, 2, 3) + (1 if x == 0 else 0)")
    out = e.evaluate({"x": np.array([0.0, 4.0])})
    np.testing.assert_allclose(out, [0.0 + 0.0 + 1.0, 2.0 + 2.0])


def test_power_and_boolean_logic():
    e = Expression.parse("x ** 2 * (x > 0 and not y < 1)")
    np.testing.assert_allclose(e.evaluate({"x": np.array([2.0, 2.0, -1.0]), "y": np.array([1, 0, 5])}),
                               [4.0, 0.0, 0.0])


@pytest.mark.parametrize("text,match", [
    ("__import__('os').system('x')", "unknown function"),
    ("a.b", "Attribute is not allowed"),
    ("open('f')", "unknown function"),
    ("'abc' + x", "only numeric constants"),
    ("[x for x in y]", "not allowed"),
    ("a +", "cannot parse"),
    ("", "non-empty"),
    ("log(x, base=2)", "keyword"),
])
def test_rejects_unsafe_or_invalid(text, match):
    with pytest.raises(ValueError, match=match):
        Expression.parse(text)


def test_missing_variable_is_named():
    with pytest.raises(KeyError, match="speed"):
        Expression.parse("load / speed").evaluate({"load": 1.0})


def test_division_by_zero_gives_inf_not_an_exception():
    assert np.isinf(Expression.parse("1 / x").evaluate({"x": 0.0}))


def test_scalar_mode_reads_strings_tuples_and_in_and_short_circuits():
    e = Expression.parse("codec in ('lz4', 'zstd') and level > 2 or x == 0 or 1 / x > 2", mode="scalar")
    assert e.names == {"codec", "level", "x"}
    assert e.evaluate({"codec": "lz4", "level": 3, "x": 1}) is True
    assert e.evaluate({"codec": "zlib", "level": 3, "x": 0}) is True  # 1 / 0 never evaluated
    assert e.evaluate({"codec": "zlib", "level": 3, "x": 1}) is False
    assert Expression.parse("pi < 1", mode="scalar").names == {"pi"}  # no constants: a parameter


@pytest.mark.parametrize("text,mode,match", [
    ("x + " * 600 + "x", "array", "at most 2000 characters"),
    ("-" * 150 + "x", "array", "nest at most 100 levels"),
    ("x ** 100000", "array", "exponent 100000 is larger than 1000"),
    ("x < 2 ** 99999", "scalar", "exponent 99999 is larger than 1000"),
    ("f(x) < 1", "scalar", "Call is not allowed"),
    ("x in (1, 2)", "array", "In is not allowed"),
])
def test_pathological_or_foreign_input_is_refused_when_parsed(text, mode, match):
    with pytest.raises(ValueError, match=match):
        Expression.parse(text, mode=mode)


@pytest.mark.parametrize("text,match", [
    ("x < 2 ** 10 ** 10", "exponent 10000000000 is larger than 1000"),  # hours of big-int power
    ("x < (9 ** 999) ** 999", "more than 100000 bits"),
    ("x == 'ab' * 10 ** 9", "arithmetic needs numbers"),  # a gigabyte string
])
def test_scalar_evaluation_refuses_unbounded_work(text, match):
    with pytest.raises(ValueError, match=match):
        Expression.parse(text, mode="scalar").evaluate({"x": 1})


def test_unknown_names_are_reported_before_the_whitelist():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['__import__'\]"):
        Expression.parse("__import__('os') or a", mode="scalar", known=["a"])
