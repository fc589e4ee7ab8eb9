"""Every parameter type's values leave the unit cube inside their range, at and near the bounds.

A log range's ``exp(log(low) + u * ...)`` lands a last bit outside ``[low, high]`` at u = 0 or 1
(8.0 gave 7.999999999999998): ``Space.validate`` then refused BoAnon's own proposal.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from boanon.errors import ConfigError
from boanon.space import Bool, Categorical, Float, Int, Space

# The same examples on every run and machine, no example database written into the checkout, and no
# per-example deadline (a loaded CI machine stalls a microsecond call now and then).
SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=200,
                    suppress_health_check=[HealthCheck.too_slow])

# Bounds of every scale: powers of two, decimals, tiny and huge, negative for linear ranges.
positive = st.one_of(st.sampled_from([1e-9, 1e-3, 0.1, 0.3, 1.0, 8.0, 10.0, 256.0, 1e6, 2.0**40]),
                     st.floats(1e-6, 1e9, allow_nan=False))
anywhere = st.one_of(positive, positive.map(lambda x: -x), st.just(0.0))
# The unit interval's ends, their neighbours and anything between.
unit = st.one_of(st.sampled_from([0.0, 1.0, 5e-324, 1e-16, 1 - 1e-16, math.nextafter(1.0, 0.0)]),
                 st.floats(0.0, 1.0))


def _range(lo: float, hi: float) -> tuple[float, float]:
    lo, hi = sorted((lo, hi))
    return (lo, lo + abs(lo) + 1) if lo == hi else (lo, hi)


@SETTINGS
@given(st.tuples(positive, positive).map(lambda t: _range(*t)), unit)
@example((8.0, 256.0), 0.0)
@example((8.0, 256.0), 1.0)
def test_log_float_from_unit_stays_in_range(bounds, u):
    p = Float("x", *bounds, log=True)
    assert p.check(p.from_unit(u)) == p.from_unit(u)


@SETTINGS
@given(st.tuples(anywhere, anywhere).map(lambda t: _range(*t)), unit)
def test_float_from_unit_stays_in_range(bounds, u):
    p = Float("x", *bounds)
    assert p.check(p.from_unit(u)) == p.from_unit(u)


@SETTINGS
@given(st.tuples(positive, positive).map(lambda t: _range(*t)), st.booleans())
def test_float_round_trips_its_bounds(bounds, log):
    if log and bounds[0] <= 0:
        return
    p = Float("x", *bounds, log=log)
    for v in bounds:
        back = p.from_unit(p.to_unit(v))
        assert p.check(back) == back
        assert back == pytest.approx(v, rel=1e-9, abs=1e-12 * (bounds[1] - bounds[0]))


@SETTINGS
@given(st.integers(-10**6, 10**6), st.integers(1, 10**6), st.booleans(), unit)
def test_int_from_unit_and_round_trip_at_the_bounds(low, span, log, u):
    if log:
        low = abs(low) + 1
    p = Int("i", low, low + span, log=log)
    assert p.check(p.from_unit(u)) == p.from_unit(u)
    for v in (p.low, p.high):
        assert p.from_unit(p.to_unit(v)) == v


@SETTINGS
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.booleans(), st.floats(0.0, 1.0))
@example(2, 94, True, 0.1)  # 2..96 on a log scale: 10 came back as 8, 3 as 2
def test_an_int_local_step_of_zero_moves_one_integer(low, span, log, at):
    """The search's neighbours of an integer start where ``from_unit`` reads it back: from the
    models' encoding instead, a log-scale integer's steps drifted down (10 of 2..96 became 8)."""
    p = Int("i", low, low + span, log=log)
    v = low + round(at * span)
    assert abs(p.neighbour(v, np.random.default_rng(0), 0.0) - v) <= 1  # the one forced step (or a bound)


@SETTINGS
@given(st.integers(2, 12), unit)
def test_categorical_and_bool_from_unit(n, u):
    c = Categorical("c", tuple(range(n)))
    assert c.check(c.from_unit(u)) == c.from_unit(u)
    assert [c.from_unit(c_u) for c_u in (0.0, 1.0)] == [0, n - 1]
    b = Bool("b")
    assert b.check(b.from_unit(u)) is b.from_unit(u)


def test_a_proposal_on_a_log_range_at_its_bounds_validates():
    space = Space([Float("lr", 8.0, 256.0, log=True), Int("n", 3, 300, log=True), Bool("b"),
                   Categorical("c", ("x", "y", "z"))])
    for u in (np.zeros(4), np.ones(4)):
        config = space.from_unit(u)
        try:
            assert space.validate(config) == config
        except ConfigError as exc:  # the old failure, spelled out
            pytest.fail(f"BoAnon's own point {config} refused: {exc}")
    assert space.from_unit(np.zeros(4))["lr"] == 8.0 and space.from_unit(np.ones(4))["lr"] == 256.0
