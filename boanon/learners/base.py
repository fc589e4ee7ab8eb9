"""What every learner returns, and the registry that names learners.

A learner is a function ``(prepared, knowledge, *, alpha, seed) -> PartialGraph``: it sees the
preprocessed table and the expert knowledge and returns directed and still-undirected edges.
Orientation by tiers, the parent cap, pruning and the expert's required/forbidden edges are
applied afterwards to every learner's output alike (:mod:`boanon.learners.postprocess`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from boanon.annotations import Knowledge
from boanon.learners.preprocess import Prepared
from boanon.registry import Registry


@dataclass
class PartialGraph:
    """Directed edges ``(a, b)`` meaning a -> b, undirected pairs, and per-pair test results."""

    directed: set[tuple[str, str]] = field(default_factory=set)
    undirected: set[frozenset[str]] = field(default_factory=set)
    strength: dict[frozenset[str], float] = field(default_factory=dict)

    def adjacent(self, a: str, b: str) -> bool:
        return (a, b) in self.directed or (b, a) in self.directed or frozenset((a, b)) in self.undirected

    def pairs(self) -> set[frozenset[str]]:
        return {frozenset(e) for e in self.directed} | set(self.undirected)


class Learner(Protocol):
    def __call__(self, prepared: Prepared, knowledge: Knowledge, *, alpha: float, seed: int) -> PartialGraph:
        ...


@dataclass(frozen=True)
class LearnerInfo:
    name: str
    fn: Learner
    description: str


ENTRY_POINT_GROUP = "boanon.learners"
LEARNERS: Registry[LearnerInfo] = Registry("learner", ENTRY_POINT_GROUP, builtins=(
    "boanon.learners.tiered_pc", "boanon.learners.causallearn_learners", "boanon.learners.pgmpy_learners"))
"""The learners by name: BoAnon's own and those other packages declare under the entry-point
group ``boanon.learners`` (a learner function, or a :class:`LearnerInfo`)."""


def register_learner(name: str, description: str) -> Callable[[Learner], Learner]:
    """Decorator: make a learner available to :func:`boanon.learners.learn` under ``name``."""
    def wrap(fn: Learner) -> Learner:
        LEARNERS.register(name, LearnerInfo(name, fn, description))
        return fn
    return wrap


def get_learner(name: str) -> LearnerInfo:
    """The learner called ``name`` (a plug-in's bare function gets its docstring as description);
    an unknown name is a ValueError listing the known ones."""
    entry: Any = LEARNERS.get(name)
    if isinstance(entry, LearnerInfo):
        return entry
    return LearnerInfo(name, entry, (entry.__doc__ or "").strip())
