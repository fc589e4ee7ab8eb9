"""A sleep-dominated system that reports progress, for validating plans without using CPU.

Kept apart from ``benchmarks/plan_validation.py`` so that a Dask worker unpickling the runner
imports only this module. A trial runs ``steps`` steps; each sleeps ``step_s x (0.5 + x0)``
seconds, three times that for a straggler (``x1 > 0.85``), and reports a loss that falls with the
steps towards a value set by ``x2`` and ``x3``, so asynchronous successive halving has curves to
compare. The log is ``result.json`` for the ``table`` adapter.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from boanon.adapters.table import RESULT_FILE
from boanon.runners.base import Runner
from boanon.table import Value

SPACE = {f"x{i}": {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5} for i in range(4)}


class SleepyRunner(Runner):
    """See the module docstring; ``progress`` is set by the tuning loop when it stops trials early."""

    name = "sleepy"
    adapter = "table"

    def __init__(self, step_s: float = 0.25, steps: int = 8):
        self.step_s, self.steps = float(step_s), int(steps)
        self.progress: Callable[[int, float], bool | None] | None = None

    def run(self, config: dict[str, Value], trial_dir: Path) -> bool:
        x = [float(config[f"x{i}"]) for i in range(4)]  # type: ignore[arg-type]
        step_s = self.step_s * (0.5 + x[0]) * (3.0 if x[1] > 0.85 else 1.0)
        final = (x[2] - 0.3) ** 2 + (x[3] - 0.7) ** 2
        started, loss, stopped = time.monotonic(), float("nan"), False
        for step in range(1, self.steps + 1):
            time.sleep(step_s)
            loss = final + 1.0 / step
            if self.progress is not None and self.progress(step, loss) is False and step < self.steps:
                stopped = True
                break
        result = {"metrics": {"run_s": time.monotonic() - started, "steps": step},
                  "objectives": {"loss": loss}}
        (trial_dir / RESULT_FILE).write_text(json.dumps(result) + "\n")
        return stopped
