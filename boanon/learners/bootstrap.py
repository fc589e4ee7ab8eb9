"""Edge stability: the share of resamples of the trials in which the learner finds each edge.

Resamples are subsamples without replacement (80 % of the trials by default): duplicated trials, as
in the classic bootstrap, would make conditional-independence tests overstate their evidence.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from boanon.annotations import Knowledge
from boanon.learners.base import LearnerInfo
from boanon.learners.interventions import reselect_parameter_parents
from boanon.learners.postprocess import orient
from boanon.learners.preprocess import Prepared


def edge_stability(prepared: Prepared, knowledge: Knowledge, learner: LearnerInfo, resamples: int, *,
                   seed: int = 0, fraction: float = 0.8, interventions: bool = False,
                   **options: Any) -> dict[tuple[str, str], float]:
    """Share of ``resamples`` subsamples whose oriented graph has each directed edge (with the
    parameter parents re-selected as ``learn`` does when ``interventions``). A required edge
    (the expert's, a relation's inputs) is in every resample's graph, as ``learn`` adds it to
    its own: it was counted only where the tests happened to find it, and the relation
    ``iteration_time = worker_busy_max_s + ps_update_max_s``, exact, read stability 0.00."""
    rng = np.random.default_rng(seed)
    size = max(5, int(round(fraction * prepared.n)))
    required = set(knowledge.required_edges())
    counts: Counter[tuple[str, str]] = Counter()
    for b in range(resamples):
        rows = np.sort(rng.choice(prepared.n, size=size, replace=False))
        sub = prepared.resample(rows)
        partial = learner.fn(sub, knowledge, seed=seed + b + 1, **options)
        dag = orient(partial, sub.roles, knowledge)
        if interventions:
            reselect_parameter_parents(dag, sub, knowledge, options.get("alpha", 0.01))
        counts.update(set(dag.edges) | required)
    return {e: c / resamples for e, c in counts.items()}
