"""The next configuration to run: fit surrogates, pick one by cross-validation, maximise acquisition.

Single objective: Monte-Carlo expected improvement over a plug-in incumbent (the best posterior
mean among the trials run so far: with noisy observations the best *observed* value is biased
low, a known weakness of plain EI). Several objectives or output constraints: the scores of
:func:`boanon.multiobjective.score_candidates` (EHVI, or EI of a scalarisation, times
feasibility) from the same joint samples. Pending configurations are fantasised (kriging
believer) so parallel workers do not all get the same proposal.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from boanon.acquisition.decompose import parameter_groups
from boanon.acquisition.optimize import SearchSettings, config_key, maximize
from boanon.acquisition.selection import select_surrogate
from boanon.graph import CausalGraph
from boanon.models import DAGSurrogate, PlainGPSurrogate, Surrogate
from boanon.models.base import param_configs
from boanon.models.threads import single_blas_thread
from boanon.multiobjective import OutputConstraint, Scalarization, score_candidates
from boanon.multiobjective.scalarize import expected_improvement
from boanon.multitask import joint_candidate, target_trials
from boanon.objectives import Objective, parse_objectives
from boanon.space import Space

Strategy = Literal["structured", "gp", "random"]
EARLY_TRIALS = 20
TRUST_REGION = 0.2
STRATEGIES = ("structured", "gp", "random")


@dataclass
class Proposal:
    """A configuration to run, the surrogate that chose it, why, and plain-data details."""

    config: dict[str, Any]
    surrogate: str
    reason: str
    info: dict[str, Any] = field(default_factory=dict)


@single_blas_thread
def propose(space: Space, table: pd.DataFrame, objectives: Sequence[Objective | Mapping[str, Any] | str],
            graph: CausalGraph | None = None, strategy: Strategy = "structured",
            rng: np.random.Generator | None = None, pending: Sequence[Mapping[str, Any]] = (),
            n_candidates: int = 256, constraints: Sequence[OutputConstraint] = (), n_folds: int = 5,
            settings: SearchSettings | None = None, ref_point: Sequence[float] | None = None,
            scalarization: Scalarization | None = None, early_trials: int = EARLY_TRIALS) -> Proposal:
    """Propose one configuration (see the module docstring).

    ``table`` holds finished trials; ``strategy="structured"`` fits the DAG surrogate (when a
    ``graph`` is given) and the plain GP and uses whichever cross-validates better;
    ``"gp"`` uses the plain GP only; ``"random"`` a random feasible configuration. With a
    related task in ``table``, proposals stay random until one of the run's own trials has every
    objective: the incumbent to improve on is the run's (parallel workers can ask before then).
    ``n_candidates`` is the size of the Sobol design (``settings`` tunes the rest of the search).
    With several objectives, ``ref_point`` (objectives' units) fixes EHVI's reference point and
    ``scalarization`` replaces EHVI by the expected improvement of that scalarisation.
    While the run has fewer than ``early_trials`` trials of its own, the search stays in a trust
    region around its best configurations (:class:`SearchSettings`).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    objectives = parse_objectives(objectives)
    rng = rng if rng is not None else np.random.default_rng()
    settings = settings or SearchSettings(n_sobol=n_candidates)
    started = time.perf_counter()
    seen = _configs(space, table) + [dict(c) for c in pending]
    cols = [f"objective:{o.name}" for o in objectives]
    missing = [c for c in cols if c not in table.columns]
    n = 0 if missing else int(table[cols].notna().all(axis=1).sum())
    own = target_trials(table)  # with a related task, only the run's own trials set the bar
    if strategy == "random" or n < 2 or not own[cols].notna().all(axis=1).any():
        why = "random strategy" if strategy == "random" \
            else f"{n} trial(s) with all objectives: too few to model" if n < 2 \
            else "none of the run's own trials has all objectives yet (only a related task's): no bar to beat"
        return Proposal(_random_unseen(space, seen, rng), "random", why, {"n_trials": n})

    outputs = [c.name for c in constraints]
    candidates: list[Surrogate] = []
    note = ""
    if strategy == "structured" and graph is not None:
        candidates.append(DAGSurrogate(space, graph, objectives, outputs))
    elif strategy == "structured":
        note = "no graph given: "
    candidates.append(PlainGPSurrogate(space, objectives, outputs))
    joint = joint_candidate(space, table, objectives, outputs) if strategy == "structured" else None
    if joint is not None:  # related outputs or workloads modelled jointly; CV decides
        candidates.append(joint)
    for s in candidates:
        s.fit(table)
    t_fit = time.perf_counter()
    chosen, reason, scores = select_surrogate(candidates, table, rng, n_folds)
    t_cv = time.perf_counter()
    model = chosen.fantasize([dict(c) for c in pending], rng)
    score, acq_info = _acquisition(model, own, objectives, constraints, rng, ref_point, scalarization)
    groups = parameter_groups(space, graph, [o.name for o in objectives]) \
        if isinstance(chosen, DAGSurrogate) and graph is not None else []
    n_own = int(own[cols].notna().all(axis=1).sum())
    if n_own < early_trials and settings.trust_region is None:
        settings = replace(settings, trust_region=TRUST_REGION)
    config, value, search = maximize(space, score, rng, starts=_best_observed(own, objectives, space),
                                     groups=groups, exclude=seen, settings=settings)
    search["trust_region"] = settings.trust_region
    predicted = model.predict([config], n_samples=128, rng=rng)
    t_end = time.perf_counter()
    info = {
        "n_trials": n, "n_pending": len(pending), "cv": scores,
        "acquisition": {**acq_info, "value": value, **search},
        "predicted": {name: {"mean": float(m[0]), "sd": float(s[0])} for name, (m, s) in predicted.items()},
        "groups": groups if len(groups) > 1 else [],
        "timings_s": {"fit": round(t_fit - started, 4), "cv": round(t_cv - t_fit, 4),
                      "acquisition": round(t_end - t_cv, 4), "total": round(t_end - started, 4)},
    }
    if isinstance(chosen, DAGSurrogate):
        info["structure"] = {"node_models": {n: m.kind for n, m in chosen.models.items()},
                             **{k: v for k, v in chosen.report.items() if v}}
    return Proposal(config, chosen.name, note + reason, info)


def _acquisition(model: Surrogate, table: pd.DataFrame, objectives: list[Objective],
                 constraints: Sequence[OutputConstraint], rng: np.random.Generator,
                 ref_point: Sequence[float] | None = None, scalarization: Scalarization | None = None):
    """The score function ``(configs, n_samples) -> values`` to maximise, and what it is."""
    if len(objectives) == 1 and not constraints:
        o = objectives[0]
        observed = _configs(model.space, table[table[f"objective:{o.name}"].notna()])
        # Screen with few samples, then re-estimate the five best: the minimum of noisy Monte-Carlo
        # means is biased low.
        means = o.to_minimize(model.sample(observed, 16, rng)[o.name].mean(axis=0))
        top = [observed[i] for i in np.argsort(means)[:5]]
        best = float(o.to_minimize(model.sample(top, 128, rng)[o.name].mean(axis=0)).min())

        def ei(configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
            return expected_improvement(o.to_minimize(model.sample(configs, n_samples, rng)[o.name]), best)

        return ei, {"kind": "ei", "incumbent": float(o.from_minimize(best)),
                    "incumbent_rule": "best posterior mean among observed trials"}

    info: dict[str, Any] = {}

    def multi(configs: list[dict[str, Any]], n_samples: int) -> np.ndarray:
        values, details = score_candidates(model.sample(configs, n_samples, rng), table, objectives,
                                           constraints, ref_point, scalarization)
        info.update({k: v for k, v in details.items() if not isinstance(v, np.ndarray)})
        return values

    return multi, info


def _configs(space: Space, table: pd.DataFrame) -> list[dict[str, Any]]:
    return param_configs(space, table) if len(table) else []


def _best_observed(table: pd.DataFrame, objectives: list[Objective], space: Space,
                   k: int = 3) -> list[dict[str, Any]]:
    """The ``k`` best observed configurations of each objective: starting points for local search."""
    out: list[dict[str, Any]] = []
    for o in objectives:
        values = o.to_minimize(table[f"objective:{o.name}"].to_numpy(dtype=float))
        order = np.argsort(np.where(np.isfinite(values), values, np.inf))[:k]
        out += _configs(space, table.iloc[order])
    return out


def _random_unseen(space: Space, seen: Sequence[Mapping[str, Any]], rng: np.random.Generator) -> dict:
    """A random feasible configuration not run yet (a repeat only if the space is exhausted)."""
    keys = {config_key(dict(c)) for c in seen}
    candidates = space.sample(16, rng, sobol=False)
    fresh = [c for c in candidates if config_key(c) not in keys]
    return (fresh or candidates)[0]
