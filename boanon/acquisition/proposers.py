"""The tuning strategies as small objects injected into the loop (as Optuna injects a sampler):
each says which surrogates compete to propose, what it needs (a causal graph) and what it does
without it.

:func:`boanon.acquisition.propose` fits a proposer's candidates and keeps the one that
cross-validates best; a proposer marked ``at_random`` is asked for none and proposes random
configurations (any other must name at least one candidate). :class:`~boanon.tuner.Tuner`
learns a graph only for a proposer whose :meth:`Proposer.needs_graph` says so, and while none is
learned asks :meth:`Proposer.without_graph` what to propose with instead. A new strategy is one
class with :func:`~boanon.strategies.register_strategy`, in its own module (a plug-in's, or here
for a built-in): docs/contributing.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import pandas as pd

from boanon.graph import CausalGraph
from boanon.models import DAGSurrogate, PlainGPSurrogate, Surrogate
from boanon.multitask import MultiTaskGPSurrogate, joint_candidate
from boanon.objectives import Objective
from boanon.space import Space
from boanon.strategies import STRATEGIES, register_strategy
from boanon.table import names_of


class Proposer(ABC):
    """A strategy: which surrogates compete to propose. Subclasses set ``name`` (the registry's
    key, recorded with the run) and override what differs from the defaults below."""

    name: str = ""
    at_random: bool = False
    """True for a strategy without surrogates (asked for none: its proposals are random)."""
    models_graph: bool = False
    """True when its model is built on the causal graph, so a view of the run shows the model
    over the run's graph (the dashboard, before the first structured proposal)."""

    def needs_graph(self, related_outputs: Sequence[str] = ()) -> bool:
        """Whether proposals read a causal graph, so the loop learns one (``related_outputs``:
        the outputs the run names to model jointly with the objectives)."""
        return self.models_graph

    def without_graph(self, why: str) -> tuple[Proposer, str]:
        """The proposer to use while the graph it needs is not learned (``why``: the loop's note),
        and what prefixes the proposal's reason; by default itself, with no note."""
        return self, ""

    @abstractmethod
    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        """The unfitted surrogates that compete (none: propose at random), and a note on what the
        strategy lacked (empty when nothing), which prefixes the reason for the proposal; ``rng``
        (the proposal's) seeds what the surrogates draw when they fit. ``outputs`` are the
        constrained outputs (every surrogate models them); ``related`` are outputs worth
        modelling jointly with the objectives (only a joint model reads them)."""


@register_strategy
class RandomProposer(Proposer):
    """No model: random feasible configurations."""

    name = "random"
    at_random = True

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        return [], ""


@register_strategy
class PlainGPProposer(Proposer):
    """The plain GP only: one GP per output over all parameters."""

    name = "gp"

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        return [PlainGPSurrogate(space, objectives, outputs)], ""


@register_strategy
class StructuredProposer(Proposer):
    """The learned graph's model (when there is a graph), the plain GP and, where it can help and
    stays cheap, the coregionalised GP over the objectives and the ``related`` outputs
    (:func:`~boanon.multitask.joint_candidate`). While the loop has not learned a graph, the
    plain GP proposes alone, and the reason says why."""

    name = "structured"
    models_graph = True

    def without_graph(self, why: str) -> tuple[Proposer, str]:
        return PlainGPProposer(), f"structure not learned ({why}); "

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        dag: list[Surrogate] = [] if graph is None else [  # its safety net's folds follow the run's seed
            DAGSurrogate(space, graph, objectives, outputs, random_state=int(rng.integers(2**63)))]
        joint = joint_candidate(space, table, objectives, joint_outputs(outputs, related, table))
        return ([*dag, PlainGPSurrogate(space, objectives, outputs), *([joint] if joint is not None else [])],
                "no graph given: " if graph is None else "")


@register_strategy
class MultiTaskProposer(Proposer):
    """The coregionalised GP alone, over the objectives, the constrained outputs and the
    ``related`` outputs, on every workload in the table (the run's and its related tasks'), as
    in multi-task BO. Without ``related`` outputs, a learned ``graph`` names them: the
    objectives' parents among the logged metrics (the mediators it found), up to
    :data:`MAX_MEDIATORS` per objective."""

    name = "multitask"

    def needs_graph(self, related_outputs: Sequence[str] = ()) -> bool:
        return not related_outputs  # the graph names the outputs no one named

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        if not related and graph is not None:
            related = [m for o in objectives for m in _mediators(graph, o.name)[:MAX_MEDIATORS]]
        return [MultiTaskGPSurrogate(space, objectives, joint_outputs(outputs, related, table))], ""


MAX_MEDIATORS = 3
"""Mediators per objective the multitask strategy takes from a graph when not told its outputs."""


def _mediators(graph: CausalGraph, node: str) -> list[str]:
    return [p for p in graph.parents(node) if graph.roles.get(p) == "metric"]


def joint_outputs(outputs: Sequence[str], related: Sequence[str], table: pd.DataFrame) -> list[str]:
    """The constrained ``outputs`` and the ``related`` ones the table has a value of, once each."""
    logged = {*names_of(table, "metric"), *names_of(table, "objective")}
    return list(dict.fromkeys([*outputs, *(r for r in related if r in logged)]))


def make_proposer(strategy: str | Proposer) -> Proposer:
    """The proposer of ``strategy``: a name is looked up in the registry
    (:data:`boanon.strategies.STRATEGIES`; an unknown one lists the known ones), a proposer
    object passes through."""
    return STRATEGIES.get(strategy)() if isinstance(strategy, str) else strategy
