"""Structure learning: a causal graph over parameters, metrics and objectives, from a trial table.

``learn(table, knowledge)`` first finds the deterministic relations among the logged quantities
(:mod:`.relations`: sums, maxima, products; each becomes a node model, as an expert's
``function:`` would, unless the expert gave that node one), preprocesses the metrics
(:mod:`.preprocess`), runs a registered learner (:data:`LEARNERS`), orients and prunes its output
(:mod:`.postprocess`), makes the knowledge hold and optionally measures edge stability
(:mod:`.bootstrap`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral
from time import perf_counter
from typing import Any

import pandas as pd

from boanon.annotations import Knowledge
from boanon.errors import check_options
from boanon.graph import CausalGraph
from boanon.learners import causallearn_learners, pgmpy_learners, tiered_pc  # noqa: F401  (registration)
from boanon.learners.base import LEARNERS, LearnerInfo, PartialGraph, get_learner, register_learner
from boanon.learners.bootstrap import edge_stability
from boanon.learners.interventions import reselect_parameter_parents
from boanon.learners.postprocess import finalize, orient
from boanon.learners.predictive import predictive_parents
from boanon.learners.preprocess import MIN_TRIALS as MIN_LEARN_TRIALS
from boanon.learners.preprocess import Prepared
from boanon.learners.preprocess import preprocess as _preprocess
from boanon.learners.relations import Relation, find_relations
from boanon.table import ROLES, columns_of, split_column

__all__ = ["DEFAULT_ALPHA", "DEFAULT_LEARNER", "DEFAULT_MAX_PARENTS", "LEARNERS", "LearnResult",
           "LEARN_FAILURES", "MIN_LEARN_TRIALS", "PartialGraph", "Prepared", "available_learners", "learn",
           "register_learner"]

DEFAULT_LEARNER = "tiered-pc"
DEFAULT_MAX_PARENTS = 8
DEFAULT_ALPHA = 0.01
LEARN_FAILURES: tuple[type[Exception], ...] = (ValueError, ArithmeticError)
"""What :func:`learn` raises when the trials cannot give a graph: a table too small or degenerate,
an unknown learner, a singular matrix (``numpy.linalg.LinAlgError`` is a ValueError), a numerical
breakdown. A tuning loop falls back to the plain GP on these; anything else is a bug and surfaces."""


@dataclass
class LearnResult:
    """The learned graph and a plain-dict report: what was dropped or merged and why, timings."""

    graph: CausalGraph
    report: dict[str, Any]


def check_learn_options(options: Mapping[str, Any]) -> None:
    """Refuse an unknown ``learner`` or an option neither :func:`learn` nor that learner takes,
    naming the closest: :func:`learn` raises these as it raises a failure to learn, which a tuning
    loop survives on the plain GP, so a tuner checks its ``learn_options`` when it is made."""
    own = set(inspect.signature(learn).parameters) - {"options"}
    learner = options.get("learner", DEFAULT_LEARNER)
    check_options(get_learner(learner).fn, {k: v for k, v in options.items() if k not in own},
                  f"learner {learner!r}", skip=2)


def available_learners() -> list[str]:
    return LEARNERS.names()


PREDICTIVE_MODES = (False, True, "auto")
"""``learn``'s ``predictive``: never, for every objective, or (the default) only for an objective
the independence tests gave no metric parent (where the structured model would be the plain GP)."""


def learn(table: pd.DataFrame, knowledge: Knowledge | None = None, learner: str = DEFAULT_LEARNER, *,
          max_parents: int | None = DEFAULT_MAX_PARENTS, max_metrics: int | None = None, bootstrap: int = 0,
          seed: int = 0, alpha: float = DEFAULT_ALPHA, prune: bool = True, relations: bool = True,
          interventions: bool = False, predictive: bool | str = "auto", **options: Any) -> LearnResult:
    """Learn a DAG from ``table`` (the tidy trial table) under ``knowledge``.

    ``max_parents`` caps each node's parents (strongest kept), ``max_metrics`` keeps only the
    metrics most related to the objectives, ``bootstrap`` > 0 stores each edge's stability over
    that many resamples, ``alpha`` is the tests' significance level, ``prune=False`` keeps the
    metrics that have no directed path to an objective, ``relations=False`` skips the search for
    deterministic relations, ``interventions=True`` re-selects every node's parameter parents by
    regression on the parameters (:mod:`.interventions`: better recall on a run's own trials,
    no better tuning measured yet, so not the default), ``predictive`` finds metric parents by
    held-out GP prediction (:mod:`.predictive`: relations that leave no correlation, as in
    function networks): by default (``"auto"``) only for an objective the tests left with no
    metric parent (where the structured model would otherwise be the plain GP), then learns
    again with what it found; ``True`` searches from every objective first (on a system whose
    chains the tests find it adds wrong edges), ``False`` never; other
    ``options`` go to the learner (e.g. ``max_depth`` for ``tiered-pc``).
    """
    if predictive not in PREDICTIVE_MODES:
        raise ValueError(f"predictive must be one of {PREDICTIVE_MODES}, got {predictive!r}")
    _check_counts(max_parents=max_parents, max_metrics=max_metrics, bootstrap=bootstrap)
    start = perf_counter()
    knowledge = knowledge or Knowledge()
    check_learn_options({"learner": learner, **options})  # before the minutes of work
    info = get_learner(learner)
    roles = {split_column(c)[1]: split_column(c)[0] for r in ROLES for c in columns_of(table, r)}
    knowledge.validate(roles)
    found = find_relations(table, skip=knowledge.node_models, known=knowledge.required_edges(),
                           allows=lambda source, target: knowledge.allows(source, target, roles)) \
        if relations else []
    knowledge = knowledge.with_node_models({r.target: r.node_model() for r in found})

    def search(skip: set[str]) -> list[tuple[str, str]]:
        return predictive_parents(table, skip=set(knowledge.node_models) | skip,
                                  known=knowledge.required_edges(),
                                  allows=lambda source, target: knowledge.allows(source, target, roles))

    if predictive is True:
        knowledge = knowledge.with_required(search(set()))
    t_rel = perf_counter()
    settings = dict(info=info, max_parents=max_parents, max_metrics=max_metrics, seed=seed, alpha=alpha,
                    prune=prune, interventions=interventions, options=options)
    graph, report, prepared = _learn_graph(table, knowledge, found, **settings)
    first_pass, t_first = report["timings"], perf_counter()
    objectives = {o for o, role in roles.items() if role == "objective"}
    searched = objectives - set(knowledge.node_models) if predictive is True else set()
    if predictive == "auto":
        searched = {o for o in objectives - set(knowledge.node_models) if o in graph.roles
                    and not any(graph.roles[p] == "metric" for p in graph.parents(o))}
        edges = search(objectives - searched) if searched else []
        if edges:  # the search's edges, required: learn again
            knowledge = knowledge.with_required(edges)
            graph, report, prepared = _learn_graph(table, knowledge, found, **settings)
    report["predictive_searched"] = sorted(searched)
    t_post = perf_counter()
    if bootstrap:  # once, on the graph kept
        stability = edge_stability(prepared, knowledge, info, bootstrap, seed=seed, alpha=alpha,
                                   interventions=interventions, **options)
        for e in graph.edges:
            e.stability = round(stability.get((e.source, e.target), 0.0), 3)
    end = perf_counter()
    # the first pass's steps; a second (the auto search's edges required) is in predictive_s
    report["timings"] = {"relations_s": round(t_rel - start, 3), **first_pass,
                         "predictive_s": round(t_post - t_first, 3), "bootstrap_s": round(end - t_post, 3),
                         "total_s": round(end - start, 3)}
    graph.metadata = {"learner": learner, "alpha": alpha, "interventions": interventions,
                      "max_parents": max_parents,
                      "max_metrics": max_metrics, "prune": prune,
                      "bootstrap": bootstrap, "n_trials": prepared.n, "options": dict(options),
                      "merged": report["merged"], "dropped": report["dropped"],
                      "params_connected": report["params_connected"], "reversed": report["reversed"],
                      "params_linked": report["params_linked"], "relations": report["relations"],
                      "timings": report["timings"]}
    return LearnResult(graph, report)


def _check_counts(*, max_parents: int | None, max_metrics: int | None, bootstrap: int) -> None:
    """The command line's bounds on the counts, for the API too: ``bootstrap=-1`` gave every edge a
    stability of -0.0, and a cap of 0 parents was undone by the fallback edges, both unsaid."""
    for name, value, low in (("max_parents", max_parents, 1), ("max_metrics", max_metrics, 1),
                             ("bootstrap", bootstrap, 0)):
        if value is None and name != "bootstrap":
            continue
        if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def _learn_graph(table: pd.DataFrame, knowledge: Knowledge, found: list[Relation], *, info: LearnerInfo,
                 max_parents: int | None, max_metrics: int | None, seed: int, alpha: float, prune: bool,
                 interventions: bool, options: dict[str, Any]
                 ) -> tuple[CausalGraph, dict[str, Any], Prepared]:
    """Preprocess, learn, orient, prune (:func:`learn`'s steps between the relations and the
    bootstrap): the graph, the report with these steps' timings, the prepared table."""
    t_start = perf_counter()
    linear = {r.target: f"a linear function of {', '.join(r.inputs)}" for r in found if r.is_linear()}
    prepared = _preprocess(table, max_metrics=max_metrics, protected=knowledge.mentioned(), set_aside=linear)
    t_pre = perf_counter()
    partial = info.fn(prepared, knowledge, alpha=alpha, seed=seed, **options)
    t_learn = perf_counter()
    report = {**prepared.report, "edges_capped": [], "reversed": [], "params_connected": [],
              "params_linked": []}
    report["dropped"] = dict(report["dropped"])
    dag = orient(partial, prepared.roles, knowledge)
    if interventions:
        reselect_parameter_parents(dag, prepared, knowledge, alpha)
    graph = finalize(dag, prepared, knowledge, max_parents=max_parents, report=report, prune=prune,
                     alpha=alpha)
    report["relations"] = [r.to_dict() for r in found if r.target in graph.roles]
    report["timings"] = {"preprocess_s": round(t_pre - t_start, 3), "learn_s": round(t_learn - t_pre, 3),
                         "postprocess_s": round(perf_counter() - t_learn, 3)}
    return graph, report, prepared
