"""Where a tuning run stands, as ``boanon tune`` shows it while trials run.

On a terminal: a tqdm bar on stderr (trials done of the budget, elapsed time, ETA, the current
best), with each trial's line written above it. The ETA comes from the measured time between
recent finished trials (a trial's run and the proposal before it), counting only trials a model
proposed once there are some: the initial design's trials come without a proposal, and their
pace promised minutes where proposals take one each. Piped or redirected
(a log file, CI, ``nohup``): no bar, and each trial's line ends with the same figures, so the
log alone says how far the run is and how long it has left.
"""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm


class Progress:
    """``budget`` trials in all, ``start`` of them done before this session (a resumed run), the
    first ``n_init`` of the run an initial design (no proposal before them)."""

    def __init__(self, budget: int, start: int, err: IO[str] | None = None, out: IO[str] | None = None,
                 n_init: int = 0):
        self.budget, self.start = budget, min(start, budget)
        self.n_init = n_init
        self.err = err or sys.stderr
        self.out = out or sys.stdout
        self.done = self.start
        self.began = self.last = time.monotonic()
        self.steps: list[tuple[float, bool]] = []  # (seconds since the previous trial ended, proposed)
        self.eta = "-"
        self.bar = tqdm(total=budget, initial=self.start, desc="tuning", unit="trial", file=self.err,
                        disable=not self.err.isatty(), dynamic_ncols=True, leave=True,
                        bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| {elapsed} elapsed{postfix}")

    @property
    def on_terminal(self) -> bool:
        return not self.bar.disable

    def count(self, counts: bool = True, proposed: bool = False) -> str:
        """Count a finished trial (``counts``: against the budget; an interrupted attempt does
        not; ``proposed``: a model proposed it, so its time includes a proposal) and return the
        figures its line carries off a terminal: ``(4/9 trials, 00:03 elapsed, ETA 00:04)``."""
        now = time.monotonic()
        if counts:
            self.done += 1
            self.bar.update(1)
            self.steps.append((now - self.last, proposed))
        self.last = now
        self.eta = self.estimate()
        elapsed = tqdm.format_interval(now - self.began)
        return f"({self.done}/{self.budget} trials, {elapsed} elapsed, ETA {self.eta})"

    def estimate(self, recent: int = 3) -> str:
        """Time left: the initial design's trials to go at its pace, the others at the mean pace
        of the ``recent`` last proposed trials; before a proposed trial has finished, a lower
        bound (``>``: a proposal and its trial take at least a trial's time)."""
        left = self.budget - self.done
        if left <= 0:
            return tqdm.format_interval(0)
        def pace(of_proposed: bool) -> float | None:
            xs = [s for s, p in self.steps if p == of_proposed][-recent:]
            return sum(xs) / len(xs) if xs else None

        design, proposed = pace(False), pace(True)
        n_design = min(left, max(0, self.n_init - self.done))
        per_proposal = proposed if proposed is not None else design
        if per_proposal is None or (n_design and design is None):
            return "-"
        total = n_design * (design or 0.0) + (left - n_design) * per_proposal
        if proposed is None and left > n_design:  # a lower bound; under a second it says nothing
            return f">{tqdm.format_interval(total)}" if total >= 1 else "-"
        return tqdm.format_interval(total)

    def show(self, line: str, best: str) -> None:
        """Write one trial's ``line`` (above the bar on a terminal) and the run's ``best`` so far."""
        if self.on_terminal:
            self.bar.set_postfix_str(f"ETA {self.eta}, {best}")
            tqdm.write(line, file=self.out)
        else:
            print(line, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        """Write ``text`` on standard error (above the bar on a terminal)."""
        if self.on_terminal:
            tqdm.write(text, file=self.err)
        else:
            print(text, file=self.err, flush=True)

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
