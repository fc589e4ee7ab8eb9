"""The tuning strategies as small objects: each says which surrogates compete to propose.

:func:`boanon.acquisition.propose` fits a strategy's candidates and keeps the one that
cross-validates best; a strategy marked ``at_random`` is asked for none and proposes random
configurations (any other must name at least one candidate). A new
strategy is one class here and one entry in :data:`PROPOSERS` (and its name in
:mod:`boanon.strategies`, which a test keeps equal to these).
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
from boanon.table import names_of


class Proposer(ABC):
    """A strategy: which surrogates compete to propose."""

    name: str = ""
    at_random: bool = False
    """True for a strategy without surrogates (asked for none: its proposals are random)."""

    @abstractmethod
    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        """The unfitted surrogates that compete (none: propose at random), and a note on what the
        strategy lacked (empty when nothing), which prefixes the reason for the proposal; ``rng``
        (the proposal's) seeds what the surrogates draw when they fit. ``outputs`` are the
        constrained outputs (every surrogate models them); ``related`` are outputs worth
        modelling jointly with the objectives (only a joint model reads them)."""


class RandomProposer(Proposer):
    """No model: random feasible configurations."""

    name = "random"
    at_random = True

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        return [], ""


class PlainGPProposer(Proposer):
    """The plain GP only: one GP per output over all parameters."""

    name = "gp"

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        return [PlainGPSurrogate(space, objectives, outputs)], ""


class StructuredProposer(Proposer):
    """The learned graph's model (when there is a graph), the plain GP and, where it can help and
    stays cheap, the coregionalised GP over the objectives and the ``related`` outputs
    (:func:`~boanon.multitask.joint_candidate`)."""

    name = "structured"

    def candidates(self, space: Space, table: pd.DataFrame, objectives: list[Objective],
                   graph: CausalGraph | None, outputs: Sequence[str], rng: np.random.Generator,
                   related: Sequence[str] = ()) -> tuple[list[Surrogate], str]:
        dag: list[Surrogate] = [] if graph is None else [  # its safety net's folds follow the run's seed
            DAGSurrogate(space, graph, objectives, outputs, random_state=int(rng.integers(2**63)))]
        joint = joint_candidate(space, table, objectives, joint_outputs(outputs, related, table))
        return ([*dag, PlainGPSurrogate(space, objectives, outputs), *([joint] if joint is not None else [])],
                "no graph given: " if graph is None else "")


class MultiTaskProposer(Proposer):
    """The coregionalised GP alone, over the objectives, the constrained outputs and the
    ``related`` outputs, on every workload in the table (the run's and its related tasks'), as
    in multi-task BO. Without ``related`` outputs, a learned ``graph`` names them: the
    objectives' parents among the logged metrics (the mediators it found), up to
    :data:`MAX_MEDIATORS` per objective."""

    name = "multitask"

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


PROPOSERS: dict[str, Proposer] = {p.name: p for p in (StructuredProposer(), PlainGPProposer(),
                                                      MultiTaskProposer(), RandomProposer())}
"""Strategy name -> its proposer."""

STRATEGIES = tuple(PROPOSERS)


def proposer(strategy: str) -> Proposer:
    """The proposer of ``strategy``; an unknown name lists the known ones."""
    try:
        return PROPOSERS[strategy]
    except KeyError:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}") from None
