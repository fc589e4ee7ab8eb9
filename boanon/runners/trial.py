"""One trial end to end: run the system into its directory, then read it back through an adapter."""

from __future__ import annotations

from pathlib import Path

from boanon.adapters import get_adapter
from boanon.adapters.files import write_config
from boanon.adapters.ingest import parse_trial_dir
from boanon.runners.base import Runner
from boanon.table import TrialRecord, Value


def run_trial(runner: Runner, config: dict[str, Value], trial_dir: Path,
              adapter: str | None = None) -> TrialRecord:
    """Run ``config`` into ``trial_dir`` (created, must be empty) and parse it.

    ``adapter`` overrides the runner's own. Errors propagate: :class:`TrialFailed` from the
    runner, :class:`LogParseError` from the adapter, or whatever the runner raised.
    """
    return run_trial_stopping(runner, config, trial_dir, adapter)[0]


def run_trial_stopping(runner: Runner, config: dict[str, Value], trial_dir: Path,
                       adapter: str | None = None) -> tuple[TrialRecord, bool]:
    """:func:`run_trial`, also saying whether the runner's progress callback cut the run short."""
    trial_dir.mkdir(parents=True, exist_ok=True)
    if any(trial_dir.iterdir()):
        raise FileExistsError(f"{trial_dir}: trial directory is not empty")
    stopped = run_config(runner, config, trial_dir)
    return parse_trial_dir(get_adapter(adapter or runner.adapter), trial_dir), stopped


def run_config(runner: Runner, config: dict[str, Value], trial_dir: Path) -> bool:
    """Record ``config`` as ``trial_dir/config.json``, then run it into ``trial_dir`` (which
    exists and is empty); True when the runner's progress callback cut the run short.

    Recorded here, not by each runner: every trial directory then says which configuration ran
    (ingest reads its parameters from it), whatever a plug-in runner writes; a runner may
    overwrite it with more (the ``sgd`` runner's defaults filled in)."""
    write_config(trial_dir, config)
    return bool(runner.run(dict(config), trial_dir))
