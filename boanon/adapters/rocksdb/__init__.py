"""The ``rocksdb`` adapter: everything one db_bench run leaves, as one trial row.

A trial directory holds db_bench's ``stdout.txt``, the RocksDB ``LOG`` (or ``LOG.gz``) and
``OPTIONS-*`` files (see :mod:`.stdout`, :mod:`.log`, :mod:`.options`). Runs repeated by the
``rocksdb`` runner live in ``repeat-<k>/`` sub-directories: their objectives and metrics are
averaged, and each repeat's objectives are kept as ``<objective>_repeat<k>`` metrics. A
``reference/`` run (a fixed configuration run in the same trial) adds ``reference_<objective>``
metrics and noise-normalised ``<objective>_rel`` objectives (trial / reference). A run the
runner stopped early (``stopped.json`` names the benchmark it cut) takes that benchmark's
objectives from db_bench's ``report.csv`` (see :mod:`.report`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from boanon.adapters.base import Adapter, register_adapter
from boanon.adapters.files import find_file, head, read_config, read_text, require_file
from boanon.adapters.rocksdb.log import parse_log
from boanon.adapters.rocksdb.options import newest_options_file, parse_options
from boanon.adapters.rocksdb.report import REPORT_FILE, parse_report, report_objectives
from boanon.adapters.rocksdb.stdout import parse_stdout
from boanon.errors import LogParseError
from boanon.table import TrialRecord, Value

STDOUT_FILE = "stdout.txt"
LOG_FILE = "LOG"
REPEAT_PREFIX = "repeat-"
REFERENCE_DIR = "reference"
STOPPED_FILE = "stopped.json"
"""Written by the runner in a run it stopped early: ``{"benchmark": <the one cut short>, ...}``."""

CONFIG_ALIASES: dict[str, tuple[str, ...]] = {
    "compression_type": ("compression",),
    "bloom_bits": ("filter_policy",),
    "cache_size": ("block_cache_capacity",),
}
"""db_bench flag (as a runner's ``config.json`` names it) -> the names under which the OPTIONS
file or LOG restate it; those are dropped when ``config.json`` has the flag."""


@register_adapter
class RocksDBAdapter(Adapter):
    name = "rocksdb"

    def detect(self, trial_dir: Path) -> bool:
        stdout = find_file(trial_dir, STDOUT_FILE)
        return (stdout is not None and "RocksDB" in head(stdout)) or (
            newest_options_file(trial_dir) is not None and find_file(trial_dir, LOG_FILE) is not None)

    def parse_trial(self, trial_dir: Path) -> TrialRecord:
        repeats = sorted((d for d in trial_dir.glob(f"{REPEAT_PREFIX}*") if d.is_dir()),
                         key=lambda d: _repeat_number(d, trial_dir))
        runs = [parse_run(d) for d in (trial_dir, *repeats)]
        params = runs[0].params
        for flag in read_config(trial_dir):
            for alias in CONFIG_ALIASES.get(flag, ()):
                params.pop(alias, None)
        metrics, objectives = average_runs([(r.metrics, r.objectives) for r in runs])
        reference = trial_dir / REFERENCE_DIR
        if reference.is_dir():
            for name, ref in parse_run(reference).objectives.items():
                metrics[f"reference_{name}"] = ref
                if name in objectives and ref > 0:
                    objectives[f"{name}_rel"] = objectives[name] / ref
        return TrialRecord(trial=trial_dir.name, params=params, metrics=metrics, objectives=objectives)


@dataclass
class Run:
    """One db_bench run: the options in force, its metrics and its objectives."""

    params: dict[str, Value]
    metrics: dict[str, float]
    objectives: dict[str, float]


def parse_run(run_dir: Path) -> Run:
    """Parse the stdout, LOG and newest OPTIONS file of one db_bench run directory."""
    options = newest_options_file(run_dir)
    if options is None:
        raise LogParseError(run_dir / "OPTIONS-*", "file not found (no RocksDB OPTIONS file)")
    params = parse_options(options)
    stopped = (run_dir / STOPPED_FILE).is_file()
    log = parse_log(require_file(run_dir, LOG_FILE), _num_levels(params), complete=not stopped)
    stdout = parse_stdout(require_file(run_dir, STDOUT_FILE), statistics=log.statistics and not stopped)
    if stopped:
        objectives, metrics = report_objectives(_stopped_benchmark(run_dir / STOPPED_FILE),
                                                parse_report(require_file(run_dir, REPORT_FILE)))
        stdout.objectives.update(objectives)
        stdout.metrics.update(metrics)
    return Run({**params, **log.params}, {**stdout.metrics, **log.metrics}, stdout.objectives)


def _stopped_benchmark(path: Path) -> str:
    try:
        bench = json.loads(read_text(path)).get("benchmark")
    except (json.JSONDecodeError, AttributeError):
        bench = None
    if not isinstance(bench, str) or not bench.isidentifier():
        raise LogParseError(path, 'expected {"benchmark": "<db_bench benchmark name>", ...}', 1)
    return bench


def average_runs(runs: list[tuple[dict[str, float], dict[str, float]]]) -> tuple[dict[str, float],
                                                                                 dict[str, float]]:
    """Mean metrics and objectives over repeated runs, keeping each repeat's objectives as metrics."""
    if len(runs) == 1:
        return runs[0]
    sums: list[dict[str, list[float]]] = [defaultdict(list), defaultdict(list)]
    for metrics, objectives in runs:
        for acc, values in zip(sums, (metrics, objectives), strict=True):
            for name, value in values.items():
                acc[name].append(value)
    metrics, objectives = ({name: sum(v) / len(v) for name, v in acc.items()} for acc in sums)
    for k, (_, run_objectives) in enumerate(runs):
        metrics.update({f"{name}_repeat{k}": value for name, value in run_objectives.items()})
    return metrics, objectives


def _num_levels(options: dict[str, Value]) -> int:
    value = options.get("num_levels", 7)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 7


def _repeat_number(run_dir: Path, trial_dir: Path) -> int:
    suffix = run_dir.name[len(REPEAT_PREFIX):]
    if not suffix.isdigit():
        raise LogParseError(run_dir, f"repeat directories are named {REPEAT_PREFIX}<k> inside {trial_dir}")
    return int(suffix)
