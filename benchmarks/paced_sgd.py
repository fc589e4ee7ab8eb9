"""The ``sgd`` runner in scaled real time, for benchmarks and tests of parallel tuning.

Kept apart from ``benchmarks/parallel.py`` so that a trial process unpickling the runner imports
only this module and the sgd target, not the benchmark's plotting and tuning imports.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from boanon.targets.sgd import SgdRunner


class PacedSgdRunner(SgdRunner):
    """The ``sgd`` runner in scaled real time: every simulated iteration sleeps its simulated
    duration x ``pace`` before it is reported (the progress hook stays available)."""

    def __init__(self, pace: float = 0.002, **options: Any):
        self._callback = None
        super().__init__(**options)
        self.pace = float(pace)

    @property
    def progress(self) -> Callable[[int, float], bool | None]:
        return self._paced

    @progress.setter
    def progress(self, callback: Callable[[int, float], bool | None] | None) -> None:
        self._callback = callback

    def _paced(self, iteration: int, seconds: float) -> bool | None:
        time.sleep(seconds * self.pace)
        return None if self._callback is None else self._callback(iteration, seconds)
