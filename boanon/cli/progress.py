"""Where a tuning run stands, as ``boanon tune`` shows it while trials run.

On a terminal: a tqdm bar on stderr (trials done of the budget, elapsed time, ETA from the
trials' pace, the current best), with each trial's line written above it. Piped or redirected
(a log file, CI, ``nohup``): no bar, and each trial's line ends with the same figures, so the
log alone says how far the run is and how long it has left.
"""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm


class Progress:
    """``budget`` trials in all, ``start`` of them done before this session (a resumed run)."""

    def __init__(self, budget: int, start: int, err: IO[str] | None = None, out: IO[str] | None = None):
        self.budget, self.start = budget, min(start, budget)
        self.err = err or sys.stderr
        self.out = out or sys.stdout
        self.done = self.start
        self.began = time.monotonic()
        self.bar = tqdm(total=budget, initial=self.start, desc="tuning", unit="trial", file=self.err,
                        disable=not self.err.isatty(), dynamic_ncols=True, leave=True,
                        bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| {elapsed} elapsed, ETA {remaining}"
                                   "{postfix}")

    @property
    def on_terminal(self) -> bool:
        return not self.bar.disable

    def count(self, counts: bool = True) -> str:
        """Count a finished trial (``counts``: against the budget; an interrupted attempt does
        not) and return the figures its line carries off a terminal:
        ``(4/9 trials, 00:03 elapsed, ETA 00:04)``."""
        if counts:
            self.done += 1
            self.bar.update(1)
        elapsed = time.monotonic() - self.began
        ran = self.done - self.start
        eta = "-" if ran <= 0 else tqdm.format_interval(elapsed / ran * (self.budget - self.done))
        return f"({self.done}/{self.budget} trials, {tqdm.format_interval(elapsed)} elapsed, ETA {eta})"

    def show(self, line: str, best: str) -> None:
        """Write one trial's ``line`` (above the bar on a terminal) and the run's ``best`` so far."""
        if self.on_terminal:
            self.bar.set_postfix_str(best)
            tqdm.write(line, file=self.out)
        else:
            print(line, file=self.out, flush=True)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
