"""How long trials take: the measured sample the simulator draws from.

Three sources, all giving :class:`TrialTimes` (durations on a machine of speed 1):

* a run's store: every trial's start and end are recorded, so a finished trial's duration is
  ``finished - started`` (which includes what a worker adds: process start, log parsing), and the
  gap between a trial ending and the next one starting is the loop's time to tell and ask (the
  proposal), which the simulator charges to every trial. The file is opened read-only;
* a dataset or table: one column holds each trial's duration in seconds (``--duration-column``);
* a short profiling run: the tuning YAML's own loop for a few trials into a temporary store,
  measured as a store is (`boanon plan --profile`, in the command line: it runs the tuning loop).

The number of progress steps a full trial reports (what the early-stopping rungs are placed on)
comes from the store's ``progress.jsonl`` files, or is given.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from boanon.adapters.files import json_lines
from boanon.errors import ConfigError, did_you_mean


@dataclass(frozen=True)
class TrialTimes:
    """Durations (s) of complete trials, the loop's overhead per trial (s), and the progress steps
    of a complete trial (None: the runner does not report progress)."""

    durations: np.ndarray
    ask_overhead: float = 0.0
    steps: int | None = None
    source: str = ""
    steps_from: str = ""  # where the steps were looked for (a run's trial folders), for errors

    def __post_init__(self) -> None:
        if len(self.durations) == 0 or not np.all(np.isfinite(self.durations)) \
                or np.any(self.durations <= 0):
            raise ConfigError(self.source or "durations", "durations",
                              "need at least one finite positive trial duration")

    def summary(self) -> str:
        d = self.durations
        return (f"{len(d)} trial durations from {self.source}: median {np.median(d):.3g} s, "
                f"p90 {np.quantile(d, 0.9):.3g} s, max {d.max():.3g} s; loop overhead "
                f"{self.ask_overhead:.3g} s per trial" + (f"; {self.steps} progress steps per trial"
                                                          if self.steps else ""))


def from_store(path: str | Path, trials_dir: str | Path | None = None,
               steps: int | None = None) -> TrialTimes:
    """The durations of a run's done trials, read without writing to the store."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "store", "no such file")
    # read only; with no write-ahead log beside it no run is writing, and ``immutable`` keeps
    # SQLite from creating one (a read-only WAL connection otherwise leaves -wal/-shm files)
    immutable = "&immutable=1" if not Path(f"{path}-wal").exists() else ""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{immutable}", uri=True)
        try:
            rows = conn.execute("SELECT name, status, started, finished FROM trials ORDER BY id").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise ConfigError(path, "store", f"not a BoAnon run store ({exc})") from None
    ended = [(n, s, _seconds(a), _seconds(b)) for n, s, a, b in rows if b is not None]
    done = [(n, b - a) for n, s, a, b in ended if s == "done"]
    if not done:
        raise ConfigError(path, "trials", "no done trial to take durations from")
    from boanon.store import trials_dir as store_trials_dir

    folders = store_trials_dir(path, trials_dir)
    if trials_dir is not None:
        _check_trial_folders(folders, [n for n, _ in done])
    if steps is None:
        steps = _progress_steps(folders, [n for n, _ in done])
    return TrialTimes(np.array([d for _, d in done]), _ask_overhead(ended), steps, str(path),
                      steps_from=str(folders))


def _check_trial_folders(folders: Path, names: list[str]) -> None:
    """Refuse trial folders given by hand (``--trials-dir``) that are missing or hold none of
    the run's done trials (``names``): a mistyped one was read as a run without progress
    reports, unsaid, and a plan made for no early-stopping rungs."""
    if not folders.is_dir():
        raise ConfigError(folders, "--trials-dir", "not a directory" if folders.exists()
                          else "no such directory")
    if not any((folders / name).is_dir() for name in names):
        raise ConfigError(folders, "--trials-dir", f"holds no folder of the store's {len(names)} done "
                          f"trials ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}): not "
                          "this run's trial folders")


def from_table(table_or_dir: str | Path, column: str, scale: float = 1.0,
               ask_overhead: float = 0.0, steps: int | None = None) -> TrialTimes:
    """Durations from a column of a dataset's table (``metric:``/``objective:`` prefix optional),
    times ``scale`` (e.g. iterations per trial when the column is one iteration's time)."""
    from boanon.adapters import ingest

    table = ingest(table_or_dir).table
    names = [column, f"metric:{column}", f"objective:{column}"]
    found = next((c for c in names if c in table.columns), None)
    if found is None:
        known = [c.split(":", 1)[-1] for c in table.columns if c.startswith(("metric:", "objective:"))]
        raise ConfigError(table_or_dir, "duration column", f"no column {column!r} in its table"
                          f"{did_you_mean(column, known)}")
    values = table[found].dropna().to_numpy(dtype=float) * scale
    return TrialTimes(values, ask_overhead, steps, f"{table_or_dir} ({found} x {scale:g})")


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def _ask_overhead(ended: list[tuple[str, str, float, float]]) -> float:
    """Median gap between a trial's start and the latest end before it: the loop's tell + ask."""
    ends = np.sort([b for _, _, _, b in ended])
    gaps = []
    for _, _, started, _ in ended:
        i = int(np.searchsorted(ends, started, side="right"))
        if i > 0:
            gaps.append(started - ends[i - 1])
    return float(np.median(gaps)) if gaps else 0.0


def _progress_steps(trials_dir: Path, names: list[str]) -> int | None:
    """The most steps a done trial reported (its ``progress.jsonl``), or None without reports."""
    steps = [int(p["step"]) for name in names if (trials_dir / name / "progress.jsonl").is_file()
             for _, p in json_lines(trials_dir / name / "progress.jsonl")]
    return max(steps) if steps else None
