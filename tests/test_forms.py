"""Parametric node forms: chosen by held-out error, used only when they explain the node."""

from __future__ import annotations

import numpy as np
import pytest

from boanon.expressions import Expression
from boanon.models.forms import choose_form


def _check_formula(form, raw, y, tolerance):
    env = {**raw, **form.init}
    predicted = Expression.parse(form.formula).evaluate(env)
    assert np.sqrt(np.mean((predicted - y) ** 2)) <= tolerance * np.std(y)


@pytest.mark.parametrize(("truth", "expected"), [
    (lambda x, z: 3.0 * x + 0.5 * z + 2.0, "affine"),
    (lambda x, z: (x - 4.0) ** 2 + 0.1 * z, "quadratic"),
    (lambda x, z: 2.0 * np.maximum(x - 6.0, 0.0) + 0.2 * x, "hinge"),
    (lambda x, z: 5.0 * x**1.5 / z, "power"),
])
def test_the_generating_form_is_chosen_and_its_constants_fit(truth, expected):
    rng = np.random.default_rng(0)
    x, z = rng.uniform(1, 10, 25), rng.uniform(1, 3, 25)
    y = truth(x, z) * (1 + rng.normal(0, 0.01, 25))
    form = choose_form({"x": x, "z": z}, y, ["x", "z"])
    assert form is not None and form.name == expected, form
    assert form.heldout_r2 > 0.95
    _check_formula(form, {"x": x, "z": z}, y, 0.1)


def test_a_fixed_cost_when_a_device_has_work_is_an_indicator():
    rng = np.random.default_rng(1)
    load = np.where(rng.random(30) < 0.4, 0.0, rng.uniform(10, 400, 30))
    y = 0.06 * load + 0.5 * (load > 0) + rng.normal(0, 0.01, 30)
    form = choose_form({"load": load}, y, ["load"])
    assert form is not None and "where(load > 0, 1, 0)" in form.formula
    _check_formula(form, {"load": load}, y, 0.05)


def test_no_form_for_noise_or_too_few_trials():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 30)
    assert choose_form({"x": x}, rng.normal(size=30), ["x"]) is None
    assert choose_form({"x": x[:4]}, 2 * x[:4], ["x"]) is None


def test_categorical_parents_are_left_to_the_residual():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 20)
    form = choose_form({"x": x, "codec": np.full(20, np.nan)}, 4 * x + 1, ["x", "codec"])
    assert form is not None and "codec" not in form.formula and form.parents == ("x",)


def test_a_power_form_stays_finite_when_a_sampled_parent_goes_below_zero():
    rng = np.random.default_rng(0)
    m = rng.uniform(0.5, 4, 20)
    form = choose_form({"m": m}, 2 * m**1.5, ["m"])
    assert form is not None and form.name == "power"
    values = Expression.parse(form.formula).evaluate({"m": np.array([-1.0, 0.0, 2.0]), **form.init})
    assert np.all(np.isfinite(values))
