"""A seeded two-objective synthetic system as a ``module:function`` callable.

``boanon tune examples/synthetic-multiobjective.yaml`` runs :func:`evaluate` for every trial:
8 parameters in 2 subsystems; ``cost`` and ``cost2`` pull every subsystem towards different
targets, so they conflict and have a known Pareto set (``SyntheticSystem.pareto_configs``).
``target_shift`` moves every optimum: the same system under another "workload", for warm starts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from boanon.synthetic import SyntheticSystem


@lru_cache(maxsize=16)
def system(seed: int = 0, n_params: int = 8, n_groups: int = 2, target_shift: float = 0.0) -> SyntheticSystem:
    """The system for these options (built once per process)."""
    return SyntheticSystem(n_params=n_params, n_groups=n_groups, n_distractors=2, n_duplicates=0,
                           n_objectives=2, seed=seed, target_shift=target_shift)


def evaluate(config: dict[str, Any], seed: int = 0, n_params: int = 8, n_groups: int = 2,
             target_shift: float = 0.0) -> dict[str, float]:
    """Metrics and the ``cost`` and ``cost2`` objectives of ``config``."""
    return system(seed, n_params, n_groups, target_shift).evaluate(config)
