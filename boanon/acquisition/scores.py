"""One score for several objectives and output constraints, from given joint samples.

It turns a surrogate's joint samples (``{name: (n_samples, n_configs)}``, the Surrogate
protocol's output) and the finished trials into one score per candidate, to be maximised, with
the acquisition the problem calls for among those that need no model
(:func:`boanon.acquisition.build.choose_acquisition`): EHVI over the observed feasible front by
default, or the expected improvement of a scalarisation; while no observed trial is feasible,
the probability of feasibility. Benchmarks and tests score samples they drew themselves with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.acquisition.base import Problem
from boanon.acquisition.build import choose_acquisition
from boanon.acquisition.feasibility import probability_of_feasibility
from boanon.multiobjective.feasibility import OutputConstraint
from boanon.multiobjective.scalarize import Scalarization
from boanon.objectives import Objective


def score_candidates(samples: Mapping[str, np.ndarray], table: pd.DataFrame,
                     objectives: Sequence[Objective], constraints: Sequence[OutputConstraint] = (),
                     ref_point: Sequence[float] | None = None,
                     scalarization: Scalarization | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Scores (n_configs,) to maximise, and plain-data info on how they were computed.

    ``table`` holds the finished trials; ``ref_point`` is in the objectives' own units and
    directions (inferred from the feasible front when None). Configurations still running are
    already in the model that drew ``samples`` (:meth:`boanon.models.Surrogate.fantasize`).
    """
    problem = Problem(table, tuple(objectives), tuple(constraints),
                      None if ref_point is None else tuple(ref_point), scalarization)
    acquisition = choose_acquisition(problem, with_model=False)(None, problem)
    pof = probability_of_feasibility(samples, constraints)
    return acquisition.score(samples), {**acquisition.describe(), "probability_of_feasibility": pof}
