"""Walk a directory of trials, parse each with one adapter, and assemble the tidy table."""

from __future__ import annotations

import functools
import os
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from boanon import units
from boanon.adapters.base import Adapter, available_adapters, get_adapter
from boanon.adapters.files import read_config
from boanon.adapters.table import TABLE_FORMATS, TableAdapter, read_table_file, roles_file, table_format
from boanon.errors import LogParseError, bounded
from boanon.table import (
    TRIAL,
    TrialRecord,
    columns_of,
    record_problem,
    records_to_table,
    two_roles,
    validate_table,
)

FROM_TRIAL_FOLDERS = "logs are read from the folder holding the trial folders"


@dataclass
class IngestResult:
    """The table plus everything a user needs to trust it."""

    table: pd.DataFrame
    adapter: str
    skipped: list[tuple[str, str]] = field(default_factory=list)
    partially_missing: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        """Human-readable report: counts by role, skipped trials and columns with gaps."""
        t = self.table
        lines = [
            f"adapter:    {self.adapter}",
            f"trials:     {len(t)}",
            f"parameters: {len(columns_of(t, 'param'))}",
            f"metrics:    {len(columns_of(t, 'metric'))}",
            f"objectives: {len(columns_of(t, 'objective'))}",
            f"skipped:    {len(self.skipped)}",
        ]
        lines += [f"  {trial}: {reason}" for trial, reason in self.skipped]
        if self.partially_missing:
            lines.append(f"columns missing in some trials: {len(self.partially_missing)}")
            for col, trials in sorted(self.partially_missing.items()):
                shown = ", ".join(trials[:5]) + (" ..." if len(trials) > 5 else "")
                lines.append(f"  {col}: missing in {units.count(len(trials), 'trial')}: {shown}")
        return "\n".join(lines)


class FolderOfDatasets(LogParseError):
    """A folder of datasets named where one dataset (a folder of trials) was wanted; ``datasets``
    maps each to the adapter that reads its trials, for a caller to say which to name."""

    def __init__(self, folder: Path, datasets: dict[Path, str]):
        self.datasets = datasets
        super().__init__(folder, f"no adapter recognises these trials; found trial directories under "
                         f"{', '.join(map(str, datasets))}: run `boanon ingest {next(iter(datasets))}`")


def trial_dirs(logdir: Path) -> list[Path]:
    """Sub-directories of ``logdir`` (the trials), sorted by name; hidden ones are ignored."""
    if not logdir.exists():
        raise LogParseError(logdir, "does not exist")
    if not logdir.is_dir():
        raise LogParseError(logdir, "not a directory of trial sub-directories")
    dirs = _subdirs(logdir)
    if not dirs:
        raise LogParseError(logdir, f"contains no trial sub-directories{_too_low(logdir)}")
    return dirs


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def detect_adapter(dirs: list[Path]) -> Adapter:
    """The registered adapter that recognises the most trial directories (sampled). When none
    does, the error says where trials are if the directory was one level too high
    (:class:`FolderOfDatasets`) or too low."""
    chosen = _vote(dirs)
    if chosen is None:
        folder = dirs[0].parent
        datasets = datasets_below(dirs)
        if datasets:
            raise FolderOfDatasets(folder, datasets)
        hint = _too_low(folder) or f"; name one with --adapter ({', '.join(available_adapters())})"
        raise LogParseError(folder, f"no adapter recognises these trials{hint}")
    return chosen


def _too_low(folder: Path) -> str:
    """``; <where the trials are>`` when an adapter recognises ``folder`` as one trial (a path
    one level too low); else nothing."""
    trial = _one_trial(folder, _vote([folder], quiet=True))
    return f"; {FROM_TRIAL_FOLDERS}{trial}" if trial else ""


def _vote(dirs: list[Path], quiet: bool = False) -> Adapter | None:
    """The adapter that recognises the most of ``dirs`` (sampled), or None. ``quiet``: an
    adapter left out (:func:`_votes`) is not warned about again where a hint is looked for."""
    sample = dirs[:: max(1, len(dirs) // 10)][:10]
    votes = Counter({name: _votes(name, sample, quiet) for name in available_adapters()})
    if not votes or votes.most_common(1)[0][1] == 0:
        return None
    return get_adapter(votes.most_common(1)[0][0])


def _votes(name: str, sample: list[Path], quiet: bool) -> int:
    """How many of ``sample`` the adapter ``name`` recognises. One whose ``detect()`` raises (a
    plug-in's bug) is that adapter's problem, not every adapter's: it gets no votes, and a
    warning names it, the folder and the exception, so auto-detection goes on with the others."""
    try:
        adapter = get_adapter(name)
    except Exception as exc:  # a plug-in's constructor
        return _left_out(name, None, exc, quiet)
    count = 0
    for d in sample:
        try:
            count += bool(adapter.detect(d))
        except Exception as exc:
            return _left_out(name, d, exc, quiet)
    return count


def _left_out(name: str, trial_dir: Path | None, exc: Exception, quiet: bool) -> int:
    """Warn (unless ``quiet``) that the adapter ``name`` failed to detect (on ``trial_dir``) and
    is left out: no votes."""
    if quiet:
        return 0
    where = f"{trial_dir}: " if trial_dir is not None else ""
    warnings.warn(bounded(f"{where}the {name!r} adapter's detect() failed ({type(exc).__name__}: {exc}): "
                          "auto-detection left it out (name it with --adapter to use it)"),
                  RuntimeWarning, stacklevel=2)
    return 0


def datasets_below(dirs: list[Path]) -> dict[Path, str]:
    """Those of ``dirs`` whose own sub-directories an adapter recognises as trials (a folder of
    datasets named instead of a dataset), each with that adapter's name."""
    found = {}
    for d in dirs:
        subdirs = _subdirs(d)
        chosen = _vote(subdirs, quiet=True) if subdirs else None
        if chosen is not None:
            found[d] = chosen.name
    return found


def parse_trial_dir(adapter: Adapter, trial_dir: Path) -> TrialRecord:
    """Parse one trial and add the configuration its runner recorded in ``config.json``.

    The recorded configuration names the parameters as the search space does, so it wins over
    what the adapter read back from the logs under the same name.
    """
    record = _parsed(adapter, trial_dir)
    problem = record_problem(record)
    if problem:  # whatever the adapter (a plug-in too): nothing unfit reaches the table
        raise LogParseError(trial_dir, f"{problem} (as read by the {adapter.name!r} adapter)")
    record.params.update(read_config(trial_dir))
    _params_are_no_results(record, trial_dir, adapter)
    return record


def _params_are_no_results(record: TrialRecord, trial_dir: Path, adapter: Adapter) -> None:
    """Refuse a name that is both a parameter and a metric or objective: the graph has one node
    of a name, and learning lost the parameter."""
    clash = two_roles(record.params, [*record.metrics, *record.objectives])
    if clash:
        raise LogParseError(trial_dir, f"{clash!r} is both a parameter and a result (as read by "
                            f"the {adapter.name!r} adapter): a quantity has one role")


def _parsed(adapter: Adapter, trial_dir: Path) -> TrialRecord:
    """``adapter``'s record of ``trial_dir``. Any other exception it raises (a plug-in's
    ``float('abc')``) is this trial's :class:`LogParseError`, so ``skip_bad`` skips it and the
    error names the trial; its type and text stay in the message (a bug shows as one)."""
    try:
        return adapter.parse_trial(trial_dir)
    except LogParseError:
        raise
    except Exception as exc:
        raise LogParseError(trial_dir, f"the {adapter.name!r} adapter failed: "
                            f"{type(exc).__name__}: {exc}") from exc


def ingest(logdir: str | Path, adapter: str | None = None, skip_bad: bool = False) -> IngestResult:
    """Parse every trial under ``logdir`` into one table.

    Without ``skip_bad`` the first bad trial raises its :class:`LogParseError` (which names the
    file and line); with it, bad trials are listed in ``skipped`` and the rest still ingest.
    A single CSV/JSONL file is read by the ``table`` adapter; any other file (a log), or a file
    named with another adapter, is a :class:`LogParseError` saying which folder to pass. A table
    that is not well formed (e.g. a trial id twice) raises a ValueError naming ``logdir``.
    """
    logdir = Path(logdir)
    if logdir.is_file():
        return _result(_read_table(logdir, adapter), TableAdapter.name, [], logdir)
    dirs = trial_dirs(logdir)
    chosen = get_adapter(adapter) if adapter else detect_adapter(dirs)
    records: list[TrialRecord] = []
    skipped: list[tuple[str, str]] = []
    for d in dirs:
        try:
            records.append(parse_trial_dir(chosen, d))
        except LogParseError as exc:
            if not skip_bad:
                raise
            skipped.append((d.name, str(exc)))
    if not records:
        raise LogParseError(logdir, f"no trial could be parsed by the {chosen.name!r} adapter")
    return _result(records, chosen.name, skipped, logdir)


def _read_table(path: Path, adapter: str | None) -> list[TrialRecord]:
    """The trials of a single file, a CSV/JSONL table. A file not read as one is refused saying
    why and where logs are read from (its folder's parent, when its folder is a trial): the one
    message, whether the file was named alone or with an adapter."""
    owner = functools.cache(lambda: _vote([path.parent]))  # its folder's adapter: voted at most once
    problem = _not_read_as_table(path, adapter, owner)
    if problem:
        raise LogParseError(path, f"{problem}; {FROM_TRIAL_FOLDERS}{_one_trial(path.parent, owner())}")
    return read_table_file(path)


def _not_read_as_table(path: Path, adapter: str | None, owner: Callable[[], Adapter | None]) -> str | None:
    """Why the single file ``path`` is not read as a table, or None: only the ``table`` adapter
    reads a file (the others read a folder of trial folders), and only a file named as a table.
    A table-named file in a trial folder (the ``sgd`` runner's ``workers.jsonl.gz``) is that
    trial's, read by the adapter that recognises the trial, unless the ``table`` adapter is
    named or the file's roles sidecar says it is a table. ``owner``: the adapter that
    recognises the file's folder as a trial, if any."""
    if adapter not in (None, TableAdapter.name):
        return f"a single file is read by the {TableAdapter.name!r} adapter, not {adapter!r}"
    if table_format(path) is None:
        return (f"not a table: a single file is read as a CSV/JSONL table (a name ending in "
                f"{'/'.join(TABLE_FORMATS)}, gzipped or not)")
    if adapter is None and not roles_file(path).is_file() and owner() is not None:
        return (f"a file of one trial, not a table of its own (name the {TableAdapter.name!r} "
                "adapter to read it as one)")
    return None


def _one_trial(folder: Path, chosen: Adapter | None) -> str:
    """``: pass <its parent> (...)`` when ``chosen``, the adapter voted for ``folder``,
    recognises it as one trial (a path one level too low), else nothing."""
    if chosen is None:
        return ""
    parent = folder.absolute().parent
    shown = parent if folder.is_absolute() else Path(os.path.relpath(parent))  # as the user typed it
    return (f": pass {shown} ({folder.absolute().name} is one trial: the {chosen.name!r} adapter "
            "recognises it)")


def _result(records: list[TrialRecord], adapter: str, skipped: list[tuple[str, str]],
            source: Path) -> IngestResult:
    table = validate_table(records_to_table(records), str(source))
    missing = {
        col: table.loc[table[col].isna(), TRIAL].astype(str).tolist()
        for col in table.columns
        if col != TRIAL and table[col].isna().any()
    }
    return IngestResult(table=table, adapter=adapter, skipped=skipped, partially_missing=missing)
