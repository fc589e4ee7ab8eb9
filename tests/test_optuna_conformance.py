"""Optuna's own sampler conformance cases (``optuna.testing.pytest_samplers``) run on BoAnonSampler.

The basic, relative and multi-objective cases run as Optuna ships them. The single-objective-only
case does not apply: it checks that a sampler which cannot handle several objectives refuses a
multi-objective study, and BoAnonSampler handles them (EHVI over the Tuner's models).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

optuna = pytest.importorskip("optuna")

from optuna.testing.pytest_samplers import (  # noqa: E402
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from boanon.optuna import BoAnonSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)


class _BoAnon:
    """Optuna's cases read the sampler from a class fixture."""

    @pytest.fixture
    def sampler(self) -> Callable[[], BoAnonSampler]:
        # the default initial design (5 trials on these small spaces), so the cases of 10 and 20
        # trials reach the Tuner's proposals, the learned graph and the GP
        return lambda: BoAnonSampler(seed=0)


class TestBoAnonSamplerBasic(_BoAnon, BasicSamplerTestCase):
    pass


class TestBoAnonSamplerRelative(_BoAnon, RelativeSamplerTestCase):
    pass


class TestBoAnonSamplerMultiObjective(_BoAnon, MultiObjectiveSamplerTestCase):
    pass
