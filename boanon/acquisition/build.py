"""The acquisition function of a fitted model: what :func:`boanon.acquisition.maximize` maximises.

Single objective without output constraints: Monte-Carlo expected improvement over a plug-in
incumbent (the best posterior mean among the trials run so far: with noisy observations the best
*observed* value is biased low, a known weakness of plain EI). Several objectives or output
constraints: :func:`boanon.acquisition.scores.score_candidates` (EHVI, or EI of a scalarisation,
times feasibility) from the same joint samples.

The acquisition is a deterministic function of the configurations: every call with ``n`` samples
draws from a generator seeded by ``(base, n)``, ``base`` drawn once from the run's generator. With
the models' shared draws (:func:`boanon.models.nodes.shared_normals`) every candidate of a search
is scored on the same random numbers, as BoTorch's fixed base samples do. The exception is the
coregionalised GP (:mod:`boanon.multitask.icm`), which draws jointly over the configurations of
a call: its score of a candidate depends on the other candidates in the call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from boanon.acquisition.ei import expected_improvement
from boanon.acquisition.scores import score_candidates
from boanon.models import Surrogate
from boanon.models.base import param_configs
from boanon.multiobjective import OutputConstraint, Scalarization
from boanon.objectives import Objective
from boanon.ties import stable_order

Acquisition = Callable[[list[dict[str, Any]], int], np.ndarray]
"""``(configs, n_samples) -> values`` to maximise."""


def build_acquisition(model: Surrogate, table: pd.DataFrame, objectives: Sequence[Objective],
                      constraints: Sequence[OutputConstraint], rng: np.random.Generator,
                      ref_point: Sequence[float] | None = None,
                      scalarization: Scalarization | None = None) -> tuple[Acquisition, dict[str, Any]]:
    """The acquisition of ``model`` against the finished trials in ``table``, and plain data on
    what it is (filled in as it is evaluated, for the several-objective scores)."""
    if len(objectives) == 1 and not constraints:
        return _expected_improvement(model, table, objectives[0], rng)
    info: dict[str, Any] = {}
    draws = _fixed_draws(rng)

    def multi(configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
        values, details = score_candidates(model.sample(configs, n_samples, draws(n_samples)), table,
                                           objectives, constraints, ref_point, scalarization)
        info.update({k: v for k, v in details.items() if not isinstance(v, np.ndarray)})
        return values

    return multi, info


def _expected_improvement(model: Surrogate, table: pd.DataFrame, o: Objective,
                          rng: np.random.Generator) -> tuple[Acquisition, dict[str, Any]]:
    observed = param_configs(model.space, table[table[f"objective:{o.name}"].notna()])
    # Screen with few samples, then re-estimate the five best: the minimum of noisy Monte-Carlo
    # means is biased low.
    means = o.to_minimize(np.nanmean(model.sample(observed, 16, rng)[o.name], axis=0))
    top = [observed[i] for i in stable_order(means)[:5]]
    best = float(np.nanmin(o.to_minimize(np.nanmean(model.sample(top, 128, rng)[o.name], axis=0))))
    draws = _fixed_draws(rng)

    def ei(configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
        return expected_improvement(o.to_minimize(model.sample(configs, n_samples, draws(n_samples))[o.name]),
                                    best)

    return ei, {"kind": "ei", "incumbent": float(o.from_minimize(best)),
                "incumbent_rule": "best posterior mean among observed trials"}


def _fixed_draws(rng: np.random.Generator) -> Callable[[int], np.random.Generator]:
    """``n_samples -> generator``, the same draws for every call with the same ``n_samples``."""
    base = int(rng.integers(2**63))
    return lambda n_samples: np.random.default_rng([base, n_samples])
