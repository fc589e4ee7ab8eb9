"""The acquisition of a fitted model: what :func:`boanon.acquisition.maximize` maximises.

The one place that chooses an acquisition (:mod:`boanon.acquisition.base` has the classes'
contract): by name when one is given, else from what the registered classes declare they apply
to. The built-ins: a single objective without output constraints gets Monte-Carlo expected
improvement over a plug-in incumbent (:mod:`boanon.acquisition.ei`); several objectives or
output constraints get EHVI (:mod:`boanon.acquisition.ehvi`), or the expected improvement of a
scalarisation (:mod:`boanon.acquisition.scalarized`), both weighted by feasibility, and while no
observed trial is feasible the probability of feasibility (:mod:`boanon.acquisition.feasibility`),
so the search first finds the feasible region.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from boanon.acquisition.base import ACQUISITIONS, AcquisitionFunction, Problem
from boanon.multiobjective import OutputConstraint, Scalarization
from boanon.objectives import Objective

if TYPE_CHECKING:
    from boanon.models import Surrogate

Acquisition = Callable[[list[dict[str, Any]], int], np.ndarray]
"""``(configs, n_samples) -> values`` to maximise."""


def build_acquisition(model: Surrogate, table: pd.DataFrame, objectives: Sequence[Objective],
                      constraints: Sequence[OutputConstraint], rng: np.random.Generator,
                      ref_point: Sequence[float] | None = None, scalarization: Scalarization | None = None,
                      name: str | None = None) -> AcquisitionFunction:
    """The acquisition ``name`` (default: the one the problem calls for) of ``model`` against
    the finished trials in ``table``."""
    problem = Problem(table, tuple(objectives), tuple(constraints),
                      None if ref_point is None else tuple(ref_point), scalarization)
    return choose_acquisition(problem, name)(model, problem, rng)


def choose_acquisition(problem: Problem, name: str | None = None,
                       with_model: bool = True) -> type[AcquisitionFunction]:
    """The class named ``name``, or else the registered ``default`` class of highest ``priority``
    that applies to ``problem`` (``with_model`` False: one that scores samples without a model).

    Raises ValueError when the named class does not apply, or when no default one does (or two
    of equal priority do: registering them was a mistake)."""
    if name is not None:
        cls = ACQUISITIONS.get(name)
        if not cls.applies(problem):
            raise ValueError(f"acquisition {name!r} does not apply to {problem.summary()}")
        return cls
    fits = [ACQUISITIONS.get(n) for n in ACQUISITIONS.names()]
    fits = [c for c in fits if c.default and (with_model or not c.needs_model) and c.applies(problem)]
    if not fits:
        if not problem.n_feasible and not problem.constraints:
            raise ValueError("no finished trial has all objectives measured: nothing to improve on")
        raise ValueError(f"no acquisition applies to {problem.summary()}")
    top = max(c.priority for c in fits)
    best = [c for c in fits if c.priority == top]
    if len(best) > 1:
        raise ValueError(f"acquisitions {[c.name for c in best]} all apply to {problem.summary()} "
                         "with the same priority")
    return best[0]
