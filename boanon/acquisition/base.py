"""Acquisition functions as small named objects, in BoTorch's shape, and the data they are built from.

An acquisition is built from a fitted model and the :class:`Problem` (the finished trials, the
objectives, the output constraints, a reference point or scalarisation), keeps what it needs
from them (an incumbent, a front and reference point), is called on candidate configurations
(``acquisition(configs, n_samples) -> values`` to maximise) and says what it is as plain data
(:meth:`AcquisitionFunction.describe`), computed once when it is built rather than while it is
evaluated. Each class says which problems it applies to (:meth:`AcquisitionFunction.applies`);
:func:`boanon.acquisition.build.build_acquisition` picks one from these declarations. Adding an
acquisition is a module with a subclass registered in :data:`ACQUISITIONS`, its test and its doc.

The acquisition is a deterministic function of the configurations: every call with ``n`` samples
draws from a generator seeded by ``(base, n)``, ``base`` drawn once from the run's generator. With
the models' shared draws (:func:`boanon.models.nodes.shared_normals`) every candidate of a search
is scored on the same random numbers, as BoTorch's fixed base samples do. The exception is the
coregionalised GP (:mod:`boanon.multitask.icm`), which draws jointly over the configurations of
a call: its score of a candidate depends on the other candidates in the call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from boanon import units
from boanon.multiobjective.feasibility import OutputConstraint, observed_feasible
from boanon.multiobjective.pareto import objective_matrix
from boanon.multiobjective.scalarize import Scalarization
from boanon.objectives import Objective
from boanon.registry import Registry

if TYPE_CHECKING:
    from boanon.models import Surrogate

ACQUISITIONS: Registry[type[AcquisitionFunction]] = Registry(
    "acquisition", "boanon.acquisitions",
    builtins=("boanon.acquisition.ei", "boanon.acquisition.ehvi", "boanon.acquisition.scalarized",
              "boanon.acquisition.feasibility"))
"""Acquisition classes by name; a plug-in registers its own (``@register_acquisition``)."""


@dataclass(frozen=True, eq=False)
class Problem:
    """What an acquisition improves on: the finished ``trials`` (the run's own), the
    ``objectives``, the output ``constraints``, EHVI's ``ref_point`` (objectives' units; None:
    inferred from the front) and a ``scalarization`` replacing EHVI."""

    trials: pd.DataFrame
    objectives: tuple[Objective, ...]
    constraints: tuple[OutputConstraint, ...] = ()
    ref_point: tuple[float, ...] | None = None
    scalarization: Scalarization | None = None

    @cached_property
    def observed(self) -> np.ndarray:
        """(n_trials, n_objectives), minimised (:func:`boanon.multiobjective.objective_matrix`)."""
        return objective_matrix(self.trials, self.objectives)

    @cached_property
    def feasible(self) -> np.ndarray:
        """Per trial: every objective measured and every constraint held."""
        return observed_feasible(self.trials, self.constraints) & np.all(np.isfinite(self.observed), axis=1)

    @property
    def n_feasible(self) -> int:
        return int(self.feasible.sum())

    def summary(self) -> str:
        return (f"{units.count(len(self.objectives), 'objective')}, "
                f"{units.count(len(self.constraints), 'output constraint')}, "
                f"{'a' if self.scalarization else 'no'} scalarisation, "
                f"{units.count(self.n_feasible, 'feasible trial')}")


class AcquisitionFunction(ABC):
    """A model's score of candidate configurations for one :class:`Problem`, to maximise.

    ``applies`` declares the problems a class can score; among the registered ``default``
    classes that apply, :func:`~boanon.acquisition.build.choose_acquisition` takes the one of
    highest ``priority`` (a class that is not ``default`` is used only when named).
    ``needs_model`` False: it can be built without a model, to score given samples
    (:func:`boanon.acquisition.score_candidates`).
    """

    name: ClassVar[str] = ""
    default: ClassVar[bool] = True
    priority: ClassVar[int] = 0
    needs_model: ClassVar[bool] = False

    def __init__(self, model: Surrogate | None, problem: Problem, rng: np.random.Generator | None = None):
        self.model = model
        self.problem = problem
        self._draws = None if rng is None else fixed_draws(rng)

    @classmethod
    @abstractmethod
    def applies(cls, problem: Problem) -> bool:
        """Whether this acquisition can score ``problem``."""

    @abstractmethod
    def score(self, samples: Mapping[str, np.ndarray]) -> np.ndarray:
        """(n_configs,) values from joint samples ``{output: (n_samples, n_configs)}``."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What it is, as plain data (a proposal records it)."""

    def __call__(self, configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
        if self.model is None or self._draws is None:
            raise ValueError(f"the {self.name} acquisition was built without a model and a generator: "
                             "it can only score given samples")
        return self.score(self.model.sample(configs, n_samples, self._draws(n_samples)))


def register_acquisition(cls: type[AcquisitionFunction]) -> type[AcquisitionFunction]:
    """Class decorator: register ``cls`` under its ``name``."""
    return ACQUISITIONS.register_class(cls)


def fixed_draws(rng: np.random.Generator) -> Callable[[int], np.random.Generator]:
    """``n_samples -> generator``, the same draws for every call with the same ``n_samples``."""
    base = int(rng.integers(2**63))
    return lambda n_samples: np.random.default_rng([base, n_samples])


def stack_objectives(samples: Mapping[str, np.ndarray], objectives: Sequence[Objective]) -> np.ndarray:
    """(n_samples, n_configs, n_objectives) in the minimisation convention."""
    missing = [o.name for o in objectives if o.name not in samples]
    if missing:
        raise KeyError(f"the model gave no samples for objective(s) {missing}")
    return np.stack([o.to_minimize(samples[o.name]) for o in objectives], axis=-1)
