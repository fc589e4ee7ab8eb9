"""The next configuration to run, in three steps: choose the model, build the acquisition, maximise it.

The run's proposer (:mod:`boanon.acquisition.proposers`) names the candidate surrogates;
:func:`choose_model` fits them and keeps the one that cross-validates best,
with the pending configurations fantasised into it (kriging believer) so parallel workers do not
all get the same proposal; :func:`boanon.acquisition.build.build_acquisition` turns it into a
score; :func:`maximize_acquisition` searches the space for the score's best configuration (in a
trust region around the best trials while the run is young). :func:`propose` runs the three.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from boanon import units
from boanon.acquisition.build import Acquisition, build_acquisition
from boanon.acquisition.decompose import parameter_groups
from boanon.acquisition.optimize import SearchSettings, SpaceExhausted, config_key, maximize
from boanon.acquisition.proposers import Proposer, make_proposer
from boanon.acquisition.selection import select_surrogate
from boanon.acquisition.success import SuccessWeighted
from boanon.acquisition.switch_record import switches_pay
from boanon.graph import CausalGraph
from boanon.models import DAGSurrogate, Surrogate
from boanon.models.base import param_configs
from boanon.models.success import SuccessModel
from boanon.models.threads import single_blas_thread
from boanon.multiobjective import OutputConstraint, Scalarization
from boanon.multitask import target_trials
from boanon.objectives import Objective, parse_objectives
from boanon.results import RANDOM
from boanon.space import Space, require_space
from boanon.strategies import DEFAULT_STRATEGY
from boanon.ties import stable_order

EARLY_TRIALS = 20
TRUST_REGION = 0.2
__all__ = ["Proposal", "choose_model", "maximize_acquisition", "propose"]


@dataclass
class Proposal:
    """A configuration to run, the surrogate that chose it, why, and plain-data details."""

    config: dict[str, Any]
    surrogate: str
    reason: str
    info: dict[str, Any] = field(default_factory=dict)


@single_blas_thread
def propose(space: Space, table: pd.DataFrame, objectives: Sequence[Objective | Mapping[str, Any] | str],
            graph: CausalGraph | None = None, proposer: Proposer | str = DEFAULT_STRATEGY,
            rng: np.random.Generator | int = 0, pending: Sequence[Mapping[str, Any]] = (),
            n_candidates: int = 256, constraints: Sequence[OutputConstraint] = (), n_folds: int = 5,
            settings: SearchSettings | None = None, ref_point: Sequence[float] | None = None,
            scalarization: Scalarization | None = None, early_trials: int = EARLY_TRIALS,
            related_outputs: Sequence[str] = (), acquisition: str | None = None,
            design_trials: int = 0, budget: int | None = None,
            failed: Sequence[Mapping[str, Any]] = ()) -> Proposal:
    """Propose one configuration (see the module docstring).

    ``table`` holds finished trials; ``proposer`` (:mod:`boanon.acquisition.proposers`, or a
    registered strategy's name) names the candidate surrogates: the structured one fits the DAG
    surrogate (when a ``graph`` is given) and the plain GP and uses whichever cross-validates
    better; the others the plain GP only, the coregionalised GP, or a random feasible
    configuration. ``rng`` is a generator or the seed of one: every proposal is reproducible
    (the tuning loop seeds it with the run's seed and the trial's position). With a related task
    in ``table``, proposals stay random until one of the run's own trials has every objective:
    the incumbent to improve on is the run's (parallel workers can ask before then).
    ``n_candidates`` is the size of the Sobol design (``settings`` tunes the rest of the search).
    With several objectives, ``ref_point`` (objectives' units) fixes EHVI's reference point and
    ``scalarization`` replaces EHVI by the expected improvement of that scalarisation.
    ``failed`` are configurations whose trials failed: never proposed again, since a failure
    that follows from the configuration (a design the system cannot run) would only repeat, and
    the models, fitted on measured trials, do not know it; the acquisition is weighted by the
    probability that a configuration runs (:mod:`boanon.models.success`), so the search also
    leaves their neighbourhood.
    While the run has fewer than ``early_trials`` trials of its own, the search stays in a trust
    region around its best configurations (:class:`SearchSettings`). A cold run (no related
    task's trials) whose ``budget`` (the evaluations it will have, when known) ends within that
    phase also keeps its booleans and categoricals there until flipping them has paid
    (:mod:`boanon.acquisition.switch_record`; the first ``design_trials`` of the run's own trials
    were its initial design, not proposals). ``related_outputs`` are logged quantities a joint
    model (the ``multitask`` strategy's, or the structured strategy's coregionalised candidate)
    learns together with the objectives. ``acquisition`` names a
    registered acquisition (:data:`boanon.acquisition.base.ACQUISITIONS`); by default the
    problem's own (:func:`boanon.acquisition.build.choose_acquisition`).
    """
    space = require_space(space, "propose")
    chooser = make_proposer(proposer)
    objectives = parse_objectives(objectives)
    rng = np.random.default_rng(rng)  # a generator passes through; a seed makes one
    settings = settings or SearchSettings(n_sobol=n_candidates)
    started = time.perf_counter()
    ran = _configs(space, table)
    seen = ran + [dict(c) for c in pending] + [dict(c) for c in failed]
    cols = [f"objective:{o.name}" for o in objectives]
    missing = [c for c in cols if c not in table.columns]
    n = 0 if missing else int(table[cols].notna().all(axis=1).sum())
    own = target_trials(table)  # with a related task, only the run's own trials set the bar
    if chooser.at_random or n < 2 or not own[cols].notna().all(axis=1).any():
        why = f"{chooser.name} strategy" if chooser.at_random \
            else f"{units.count(n, 'trial')} with all objectives: too few to model" if n < 2 \
            else "none of the run's own trials has all objectives yet (only a related task's): no bar to beat"
        return Proposal(_random_unseen(space, seen, rng), RANDOM, why, {"n_trials": n})

    # the models' own draws (fold splits, safety-net folds) come from a generator of their own, so
    # the acquisition's stream does not depend on which candidates competed: when the plain GP is
    # chosen, the structured strategy proposes exactly what the gp strategy proposes
    model_rng = np.random.default_rng(int(rng.integers(2**63)))
    candidates, note = chooser.candidates(space, table, objectives, graph, [c.name for c in constraints],
                                          model_rng, related_outputs)
    chosen, model, reason, scores, t_fit = choose_model(candidates, table, model_rng, pending, n_folds,
                                                        fantasy_rng=rng)
    t_cv = time.perf_counter()
    score = build_acquisition(model, own, objectives, constraints, rng, ref_point, scalarization, acquisition)
    if failed:
        score = SuccessWeighted(score, SuccessModel(space).fit(ran, failed))
    groups = parameter_groups(space, graph, [o.name for o in objectives]) \
        if isinstance(chosen, DAGSurrogate) and graph is not None else []
    n_own = int(own[cols].notna().all(axis=1).sum())
    early = n_own < early_trials
    # a cold run that ends within the early phase: a related task's trials have shown the model flips
    short = budget is not None and budget <= early_trials and len(own) == len(table)
    if early and short and not switches_pay(space, own, objectives, design_trials):
        settings = replace(settings, hold_switches=True)
    config, value, search = maximize_acquisition(space, score, own, objectives, rng, groups, seen, settings,
                                                 early)
    predicted = model.predict([config], n_samples=128, rng=rng)
    t_end = time.perf_counter()
    info = {
        "n_trials": n, "n_pending": len(pending), "cv": scores, "outputs": list(chosen.outputs),
        "acquisition": {**score.describe(), "value": value, **search},
        "predicted": {name: {"mean": float(m[0]), "sd": float(s[0])} for name, (m, s) in predicted.items()},
        "groups": groups if len(groups) > 1 else [],
        "timings_s": {"fit": round(t_fit - started, 4), "cv": round(t_cv - t_fit, 4),
                      "acquisition": round(t_end - t_cv, 4), "total": round(t_end - started, 4)},
    }
    if isinstance(chosen, DAGSurrogate):
        info["structure"] = {"node_models": {n: m.kind for n, m in chosen.models_.items()},
                             **{k: v for k, v in chosen.report_.items() if v}, **chosen.structure_record()}
    return Proposal(config, chosen.name, note + reason, info)


def choose_model(candidates: Sequence[Surrogate], table: pd.DataFrame, rng: np.random.Generator,
                 pending: Sequence[Mapping[str, Any]] = (), n_folds: int = 5,
                 fantasy_rng: np.random.Generator | None = None
                 ) -> tuple[Surrogate, Surrogate, str, dict[str, Any], float]:
    """Fit the ``candidates`` (a proposer's, :mod:`boanon.acquisition.proposers`) and keep the
    best by cross-validation (drawing from ``rng``; the pending configurations' fantasies from
    ``fantasy_rng``, default ``rng``).

    Returns the chosen surrogate, the model to score with (the chosen one believing the
    ``pending`` configurations gave their predicted mean), why it was chosen, the
    cross-validation scores and when the fits ended (``time.perf_counter``)."""
    for s in candidates:
        s.fit(table)
    t_fit = time.perf_counter()
    chosen, reason, scores = select_surrogate(candidates, table, rng, n_folds)
    model = chosen.fantasize([dict(c) for c in pending], rng if fantasy_rng is None else fantasy_rng)
    return chosen, model, reason, scores, t_fit


def maximize_acquisition(space: Space, score: Acquisition, table: pd.DataFrame, objectives: list[Objective],
                         rng: np.random.Generator, groups: list[list[str]], seen: list[dict[str, Any]],
                         settings: SearchSettings, early: bool
                         ) -> tuple[dict[str, Any], float, dict[str, Any]]:
    """The configuration not in ``seen`` that maximises ``score``, its value and how it was found.

    The search starts from the best trials in ``table``; while the run is ``early`` (and
    ``settings`` set no trust region) it stays in a trust region around them. When every
    configuration there has been run, it searches the whole space, and when the whole (small,
    discrete) space has been run, it repeats the best-scoring configuration (a repeat measures
    the noise), rather than stopping the run."""
    if early and settings.trust_region is None:
        settings = replace(settings, trust_region=TRUST_REGION)
    starts = _best_observed(table, objectives, space)
    whole = replace(settings, trust_region=None)
    attempts = [(settings, seen), (whole, seen), (whole, [])]
    for i, (tried, exclude) in enumerate(attempts):
        try:
            config, value, search = maximize(space, score, rng, starts=starts, groups=groups, exclude=exclude,
                                             settings=tried)
            break
        except SpaceExhausted:
            if i == len(attempts) - 1:
                raise
    search["trust_region"] = tried.trust_region
    search["switches_held"] = tried.trust_region is not None and tried.hold_switches
    search["repeat"] = not exclude and bool(seen)
    return config, value, search


def _configs(space: Space, table: pd.DataFrame) -> list[dict[str, Any]]:
    return param_configs(space, table) if len(table) else []


def _best_observed(table: pd.DataFrame, objectives: list[Objective], space: Space,
                   k: int = 3) -> list[dict[str, Any]]:
    """The ``k`` best observed configurations of each objective: starting points for local search."""
    out: list[dict[str, Any]] = []
    for o in objectives:
        values = o.to_minimize(table[f"objective:{o.name}"].to_numpy(dtype=float))
        order = stable_order(np.where(np.isfinite(values), values, np.inf))[:k]
        out += _configs(space, table.iloc[order])
    return out


def _random_unseen(space: Space, seen: Sequence[Mapping[str, Any]], rng: np.random.Generator) -> dict:
    """A random feasible configuration not run yet (a repeat only if the space is exhausted)."""
    keys = {config_key(dict(c)) for c in seen}
    candidates = space.sample(16, rng, sobol=False)
    fresh = [c for c in candidates if config_key(c) not in keys]
    return (fresh or candidates)[0]
