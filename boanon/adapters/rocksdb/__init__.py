"""The ``rocksdb`` adapter: everything one db_bench run leaves, as one trial row.

A trial directory holds db_bench's ``stdout.txt``, the RocksDB ``LOG`` (or ``LOG.gz``) and
``OPTIONS-*`` files (see :mod:`.stdout`, :mod:`.log`, :mod:`.options`). The newest
``OPTIONS-NNNNNN`` is the one in force; a file copied as ``OPTIONS`` is read when there is
none. Only ``LOG`` is read: ``LOG.old.*`` are the logs of earlier opens of the database, which
may have run with other options. Without ``stdout.txt`` (and without a trace of db_bench: its
version banner at the top of ``stderr.txt``, the runner's ``rusage.json``) the directory is an
application's (RocksDB embedded, no db_bench), whatever runner made it (every runner's trial has
``config.json``): its metrics come from the LOG, including its last statistics dump, and its
objectives from ``objectives.json`` or ``objectives.csv`` (:mod:`.objectives`); an application
tuned through the ``command`` runner has a ``stdout.txt`` of its own, and an objectives file
(``{}`` at least) tells it from db_bench's. Without objectives, a run tunes one of the LOG's
metrics (``number_keys_read_per_sec``...) named as its objective.

Runs repeated by the ``rocksdb`` runner live in ``repeat-<k>/`` sub-directories: the trial's
objectives and metrics are their medians (one slow run on a shared machine does not drag the
value), each repeat's objectives are kept as ``<objective>_repeat<k>`` metrics and their spread
as ``<objective>_cv`` (standard deviation over mean). A ``reference/`` directory (a fixed
configuration run in the same trial, with its own ``repeat-<k>/`` when the runner interleaved
it with the repeats) adds ``reference_<objective>`` metrics and noise-normalised
``<objective>_rel`` objectives: the median over runs of trial / reference, each repeat divided
by the reference run made next to it, with ``<objective>_rel_cv``.
The runner's ``rusage.json`` (the db_bench process's CPU time, :mod:`.rusage`) adds the
``cpu_micros_per_op`` objective.
Options are named as db_bench's flags (a search space's names) through the one name map,
:mod:`.option_names` (``compression=kZSTD`` -> ``compression_type=zstd``), so a user's runs
without ``config.json`` read as the runner's do.
A run the runner stopped early (``stopped.json`` names the
benchmark it cut) takes that benchmark's objectives from db_bench's ``report.csv`` (see
:mod:`.report`).
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from boanon.adapters.base import Adapter, register_adapter
from boanon.adapters.files import find_file, head, read_text, require_file
from boanon.adapters.rocksdb.log import parse_log
from boanon.adapters.rocksdb.objectives import OBJECTIVES_FILES, user_objectives
from boanon.adapters.rocksdb.option_names import flag_params
from boanon.adapters.rocksdb.options import options_in_force, parse_options
from boanon.adapters.rocksdb.report import REPORT_FILE, parse_report, report_objectives
from boanon.adapters.rocksdb.rusage import RUSAGE_FILE, cpu_objectives
from boanon.adapters.rocksdb.stdout import parse_stdout
from boanon.errors import LogParseError
from boanon.table import TrialRecord, Value

STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"
LOG_FILE = "LOG"
REPEAT_PREFIX = "repeat-"
REFERENCE_DIR = "reference"
_DB_BENCH_OUTPUT = re.compile(r"^(Initializing RocksDB Options from|RocksDB:\s+version)", re.MULTILINE)
"""How db_bench's stdout starts (7.x: the options' origin; older: the version banner), and its
stderr (7.x: the version banner), which the runner keeps as ``stderr.txt``."""
_DB_BENCH_STDOUT = re.compile(r"^\w+\s*:\s*[\d.]+ micros/op ", re.MULTILINE)
"""What only db_bench's stdout holds: a benchmark's result line (its header's ``Entries: N`` an
application's own output may print too)."""
STOPPED_FILE = "stopped.json"
"""Written by the runner in a run it stopped early: ``{"benchmark": <the one cut short>, ...}``."""

@register_adapter
class RocksDBAdapter(Adapter):
    name = "rocksdb"

    def detect(self, trial_dir: Path) -> bool:
        return _db_bench_output(trial_dir, STDOUT_FILE) or (
            options_in_force(trial_dir) is not None and find_file(trial_dir, LOG_FILE) is not None)

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        runs = repeated_runs(trial_dir)
        params = runs[0].params
        metrics, objectives = combine_runs([(r.metrics, r.objectives) for r in runs])
        reference = trial_dir / REFERENCE_DIR
        if reference.is_dir():
            refs = repeated_runs(reference)
            _, ref_objectives = combine_runs([({}, r.objectives) for r in refs])
            metrics.update({f"reference_{name}": value for name, value in ref_objectives.items()})
            pairs = list(zip(runs, refs, strict=True)) if len(runs) == len(refs) else []
            for name, ref in ref_objectives.items():
                if name not in objectives or ref <= 0:
                    continue
                ratios = [r.objectives[name] / f.objectives[name] for r, f in pairs
                          if name in r.objectives and f.objectives.get(name, 0) > 0]
                if len(ratios) != len(pairs) or not ratios:
                    ratios = [objectives[name] / ref]  # unpaired: median over median
                objectives[f"{name}_rel"] = statistics.median(ratios)
                if len(ratios) > 1:
                    metrics[f"{name}_rel_cv"] = _cv(ratios)
        return TrialRecord(trial=trial_dir.name, params=params, metrics=metrics, objectives=objectives)


def repeated_runs(run_dir: Path) -> list[Run]:
    """The run in ``run_dir`` and those in its ``repeat-<k>/`` sub-directories, in order."""
    repeats = sorted((d for d in run_dir.glob(f"{REPEAT_PREFIX}*") if d.is_dir()),
                     key=lambda d: _repeat_number(d, run_dir))
    return [parse_run(d) for d in (run_dir, *repeats)]


@dataclass
class Run:
    """One db_bench run: the options in force, its metrics and its objectives."""

    params: dict[str, Value]
    metrics: dict[str, float]
    objectives: dict[str, float]


def parse_run(run_dir: Path) -> Run:
    """Parse the stdout, LOG and options file of one db_bench run directory, or the LOG, options
    file and objectives file of an application's (see the module docstring)."""
    options = options_in_force(run_dir)
    if options is None:
        raise LogParseError(run_dir / "OPTIONS-*", "file not found (no RocksDB OPTIONS-NNNNNN file, "
                            f"nor a copied OPTIONS){_database_below(run_dir)}")
    params = parse_options(options)
    stopped = (run_dir / STOPPED_FILE).is_file()
    if not (stopped or _ran_db_bench(run_dir)):
        _refuse_stdout_named_otherwise(run_dir)
        return _application_run(run_dir, params)
    log = parse_log(require_file(run_dir, LOG_FILE), _num_levels(params), complete=not stopped)
    stdout = parse_stdout(require_file(run_dir, STDOUT_FILE), statistics=log.statistics and not stopped)
    if stopped:
        objectives, metrics = report_objectives(_stopped_benchmark(run_dir / STOPPED_FILE),
                                                parse_report(require_file(run_dir, REPORT_FILE)))
        stdout.objectives.update(objectives)
        stdout.metrics.update(metrics)
    metrics = {**stdout.metrics, **log.metrics}
    if not stopped and (run_dir / RUSAGE_FILE).is_file():
        operations = sum(stdout.metrics.get(f"{bench}_operations", 0.0) for bench in stdout.benchmarks)
        cpu_metrics, cpu = cpu_objectives(run_dir / RUSAGE_FILE, operations)
        metrics.update(cpu_metrics)
        stdout.objectives.update(cpu)
    return Run(flag_params({**params, **log.params}), metrics, stdout.objectives)


def _refuse_stdout_named_otherwise(run_dir: Path) -> None:
    """A user who kept db_bench's stdout as ``db_bench.out`` had the trial read as an
    application's (from its LOG, no objectives) with that file unread: say what to name it."""
    for path in sorted(p for p in run_dir.iterdir() if p.is_file() and not p.name.endswith(".sst")):
        if _DB_BENCH_STDOUT.search(head(path)):
            raise LogParseError(run_dir / STDOUT_FILE, f"file not found; {path} holds db_bench's output: "
                                f"name it {STDOUT_FILE} (db_bench's stdout is read from that name only)")


def _database_below(run_dir: Path) -> str:
    """``; <dir> holds ...`` when a sub-folder other than a repeat's or the reference's has an
    options file: a database kept inside the trial folder (db_bench ``--db=<trial>/db``), whose
    files are read from the trial folder itself."""
    below = sorted(d for d in run_dir.iterdir() if d.is_dir() and d.name != REFERENCE_DIR
                   and not d.name.startswith(REPEAT_PREFIX) and options_in_force(d) is not None)
    return (f"; {below[0]} holds a database's options: its LOG and newest OPTIONS-NNNNNN are read "
            f"from the trial folder itself, copy them into {run_dir}") if below else ""


def _ran_db_bench(run_dir: Path) -> bool:
    """Whether db_bench made this run (its stdout is read, and a missing or broken one is an
    error): a trace of db_bench (its stdout or stderr as it starts, the runner's ``rusage.json``
    of it), or a ``stdout.txt`` without an objectives file (db_bench's, garbled). An application
    run by the ``command`` runner has a ``stdout.txt`` of its own: its objectives file (``{}``
    when the LOG's metrics are the objectives) tells it apart; one run by a plug-in runner may
    have no ``stdout.txt`` at all, only the ``config.json`` every runner's trial has."""
    if (_db_bench_output(run_dir, STDOUT_FILE) or _db_bench_output(run_dir, STDERR_FILE)
            or (run_dir / RUSAGE_FILE).is_file()):
        return True
    has_objectives = any(find_file(run_dir, name) for name in OBJECTIVES_FILES)
    return find_file(run_dir, STDOUT_FILE) is not None and not has_objectives


def _db_bench_output(run_dir: Path, name: str) -> bool:
    """Whether ``run_dir/name`` (or its ``.gz``) starts as db_bench's stdout or stderr does."""
    path = find_file(run_dir, name)
    return path is not None and _DB_BENCH_OUTPUT.search(head(path)) is not None


def _application_run(run_dir: Path, params: dict[str, Value]) -> Run:
    """A trial of an application that embeds RocksDB: its LOG (possibly of a database still
    open, with the last statistics dump) and the objectives the user measured, if any."""
    log = parse_log(require_file(run_dir, LOG_FILE), _num_levels(params), complete=False, statistics=True)
    objectives = user_objectives(run_dir)
    if objectives is None and "uptime_seconds" not in log.metrics:
        raise LogParseError(run_dir / LOG_FILE, "no db_bench stdout, no objectives.json/.csv, and no "
                            "statistics dump in the LOG: nothing to tune towards (turn statistics on, "
                            "or measure the objectives)")
    return Run(flag_params({**params, **log.params}), log.metrics, objectives or {})


def _stopped_benchmark(path: Path) -> str:
    try:
        bench = json.loads(read_text(path)).get("benchmark")
    except (json.JSONDecodeError, AttributeError):
        bench = None
    if not isinstance(bench, str) or not bench.isidentifier():
        raise LogParseError(path, 'expected {"benchmark": "<db_bench benchmark name>", ...}', 1)
    return bench


def combine_runs(runs: list[tuple[dict[str, float], dict[str, float]]]) -> tuple[dict[str, float],
                                                                                 dict[str, float]]:
    """Median metrics and objectives over repeated runs, keeping each repeat's objectives and
    their coefficient of variation (``<objective>_cv``) as metrics."""
    if len(runs) == 1:
        return runs[0]
    values: list[dict[str, list[float]]] = [defaultdict(list), defaultdict(list)]
    for metrics, objectives in runs:
        for acc, run_values in zip(values, (metrics, objectives), strict=True):
            for name, value in run_values.items():
                acc[name].append(value)
    metrics, objectives = ({name: statistics.median(v) for name, v in acc.items()} for acc in values)
    for k, (_, run_objectives) in enumerate(runs):
        metrics.update({f"{name}_repeat{k}": value for name, value in run_objectives.items()})
    metrics.update({f"{name}_cv": _cv(v) for name, v in values[1].items() if len(v) > 1})
    return metrics, objectives


def _cv(values: list[float]) -> float:
    """Sample standard deviation over mean (0 for a zero mean)."""
    mean = statistics.fmean(values)
    return statistics.stdev(values) / abs(mean) if mean else 0.0


def _num_levels(options: dict[str, Value]) -> int:
    value = options.get("num_levels", 7)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 7


def _repeat_number(run_dir: Path, trial_dir: Path) -> int:
    suffix = run_dir.name[len(REPEAT_PREFIX):]
    if not suffix.isdigit():
        raise LogParseError(run_dir, f"repeat directories are named {REPEAT_PREFIX}<k> inside {trial_dir}")
    return int(suffix)
