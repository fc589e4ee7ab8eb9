"""Whether the run's own record says moving its switches pays.

A boolean or a categorical cannot move a little: a flip is the farthest move a kernel sees, so
expected improvement from a model fitted to a dozen trials keeps proposing flips. Where the
default's switches are poor (a batch job that spills without compression) the early gains are
flips; where they are good (a parameter server's tuned placement) every flip loses, and each
loss costs an evaluation. The model cannot tell these apart from few trials; the run's record
can. Like CASMOPOLITAN's trust region on categorical variables, which shrinks after failures,
the early search keeps the incumbent's switches until a trial that changed them has beaten it
(the initial design's trials count: a design point that beats the default shows its switches
are not the only good ones), and keeps them again once consecutive proposals that changed them
have failed (the design's failures do not count: they change everything at once). Only in a cold
run that ends within the early phase: in a longer one a failed flip is data the model uses later
(the best `sgd` configurations at 50 evaluations turn three to six machines' workers off), and
a warm start's model has seen flips in the related task's trials; in a short cold run a failed
flip is only an evaluation lost."""

from __future__ import annotations

import numpy as np
import pandas as pd

from boanon.objectives import Objective
from boanon.space import Space
from boanon.table import column

FLIP_FAILURES = 2
"""Consecutive proposals that changed the incumbent's switches and did not beat it before the
early search keeps them again."""


def switches_pay(space: Space, table: pd.DataFrame, objectives: list[Objective],
                 design_trials: int = 0) -> bool:
    """Whether, in ``table`` (the run's own trials, in the order they ran), a trial that changed a
    boolean or categorical of the best trial before it has beaten it, and the last
    :data:`FLIP_FAILURES` proposals that changed some (trials after the first ``design_trials``,
    the initial design) did not all fail. With several objectives a gain is not one comparison:
    the switches always move."""
    switches = space.switch_names
    objective = column("objective", objectives[0].name) if len(objectives) == 1 else None
    if not switches or objective is None or objective not in table.columns or not len(table):
        return True
    values = objectives[0].to_minimize(table[objective].to_numpy(dtype=float))
    settings = table[[column("param", n) for n in switches]].to_numpy(dtype=object)
    gained_by_flip, failures, best = False, 0, None
    for i, value in enumerate(values):
        if not np.isfinite(value):
            continue
        gained = best is None or value < values[best]
        if best is not None and any(settings[i] != settings[best]):
            gained_by_flip |= gained
            if i >= design_trials:
                failures = 0 if gained else failures + 1
        if gained:
            best = i
    return gained_by_flip and failures < FLIP_FAILURES
