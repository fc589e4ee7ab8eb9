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
