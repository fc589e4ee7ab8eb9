"""A seeded synthetic structured system exposed as a ``module:function`` callable.

``boanon tune examples/synthetic.yaml`` runs :func:`evaluate` for every trial: 12 parameters in
4 subsystems, each with a chain of intermediate metrics, distractor and duplicate metrics, and
a known optimum (see :class:`boanon.synthetic.SyntheticSystem`). Its ``cost`` is minimised.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from boanon.synthetic import SyntheticSystem


@lru_cache(maxsize=16)
def system(seed: int = 0, n_params: int = 12, n_groups: int = 4) -> SyntheticSystem:
    """The system for these options (built once per process)."""
    return SyntheticSystem(n_params=n_params, n_groups=n_groups, seed=seed)


def evaluate(config: dict[str, Any], seed: int = 0, n_params: int = 12, n_groups: int = 4,
             delay: float = 0.0) -> dict[str, float]:
    """Metrics and the ``cost`` objective of ``config``; ``delay`` seconds imitate a slow system."""
    if delay:
        time.sleep(delay)
    return system(seed, n_params, n_groups).evaluate(config)
