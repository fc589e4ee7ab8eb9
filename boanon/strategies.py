"""The tuning strategies' registry: a strategy's name -> its proposer class
(:class:`~boanon.acquisition.proposers.Proposer`). Strings name a strategy only at the edges (the
tuning YAML, ``--strategy``, the Optuna sampler's ``strategy=``), resolved here once; the loop
holds the proposer object. The registry lives in a module of its own so that reading a tuning YAML
(:mod:`boanon.config`) needs no model until a name is looked up; a plug-in registers its proposer
under the entry-point group ``boanon.strategies``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from boanon.registry import Registry

STRATEGIES: Registry[Any] = Registry("strategy", "boanon.strategies",
                                     builtins=("boanon.acquisition.proposers",))
"""Strategy name -> proposer class (built-ins register in :mod:`boanon.acquisition.proposers`)."""

DEFAULT_STRATEGY = "structured"
"""The strategy of a run that names none (:class:`~boanon.acquisition.proposers.StructuredProposer`)."""

P = TypeVar("P", bound=type)


def register_strategy(cls: P) -> P:
    """Class decorator: make a proposer class a strategy under its ``name``."""
    return STRATEGIES.register_class(cls)


def strategy_names() -> list[str]:
    """The registered strategies' names, built-in and plugged in."""
    return STRATEGIES.names()


def models_graph(strategy: str) -> bool:
    """Whether the strategy registered as ``strategy`` builds its model on the causal graph (a
    view of a run asks, from the name its store recorded; a strategy not installed here: no)."""
    try:
        return bool(STRATEGIES.get(strategy).models_graph)
    except ValueError:
        return False
