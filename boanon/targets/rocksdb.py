"""The ``rocksdb`` target: run ``db_bench`` for one configuration into a trial directory.

Every configuration runs on a fresh temporary database (deleted afterwards) with
``--statistics=1 --histogram=1``; the trial keeps db_bench's stdout (``stdout.txt``), the
RocksDB ``LOG`` (gzipped when large), the newest ``OPTIONS-*`` file and the process's resource
usage (``rusage.json``: CPU time from ``os.wait4``, which noise from other processes touches far
less than throughput), which the ``rocksdb`` adapter parses back. With ``repeats`` and a
``reference`` the trial alternates candidate and reference runs (candidate, reference,
candidate, reference...), so each candidate run has a reference run made under the same load.
The default sizes (1M keys, small LSM ranges in :func:`default_space`) make flushes
and compactions matter on a small machine in 10-40 s per run.

With a ``progress`` callback (set by the parallel tuning loop for early stopping), the first
run also writes db_bench's per-interval report (``report.csv``) and each interval of the
measured benchmark is reported as ``progress(k, ops_per_sec)``; when the callback returns False
db_bench is interrupted and the run keeps what it measured (``stopped.json``, see the adapter).

Build a dataset of random trials with ``boanon generate rocksdb --help``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from boanon import lifetime
from boanon.adapters.rocksdb import (
    LOG_FILE,
    REFERENCE_DIR,
    REPEAT_PREFIX,
    STDERR_FILE,
    STDOUT_FILE,
    STOPPED_FILE,
)
from boanon.adapters.rocksdb.options import newest_options_file
from boanon.adapters.rocksdb.report import REPORT_FILE, parse_report_lines
from boanon.adapters.rocksdb.rusage import RUSAGE_FILE
from boanon.errors import ConfigError, InvalidOption, did_you_mean
from boanon.runners.base import Runner, TrialFailed, register_runner, sigterm_deferred
from boanon.table import Value

POLL_S = 0.1
"""How often a reporting run looks at db_bench's report file and stdout."""
STOP_GRACE_S = 10.0
"""How long a stopped db_bench gets to exit after SIGTERM before it is killed."""
SETTLE_S = 0.5
"""After the stdout summary of the last load benchmark, how long before the report file is
taken to be the measured benchmark's: db_bench rewrites it within milliseconds."""

Progress = Callable[[int, float], "bool | None"]
"""Called with (interval number, ops/sec of that interval); returning False stops the run."""

MIXGRAPH_FAST20 = {
    "keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917, "keyrange_dist_c": 0.0164,
    "keyrange_dist_d": -0.08082, "keyrange_num": 30, "value_k": 0.2615, "value_sigma": 25.45,
    "iter_k": 2.517, "iter_sigma": 14.236, "mix_get_ratio": 0.83, "mix_put_ratio": 0.14,
    "mix_seek_ratio": 0.03, "mix_max_scan_len": 10000,
}
"""The social-graph (ZippyDB) parameters of Cao et al., FAST'20; ``sine_mix_rate`` is left off
because it caps the request rate."""

WORKLOADS: dict[str, tuple[str, dict[str, Value]]] = {
    "readrandom": ("fillrandom,readrandom", {}),
    "readrandomwriterandom": ("fillrandom,readrandomwriterandom", {}),
    "mixgraph": ("fillrandom,mixgraph", MIXGRAPH_FAST20),
    "readwhilewriting": ("fillrandom,readwhilewriting", {}),
}
"""Workload name -> (db_bench ``--benchmarks``, extra flags). Each loads the DB first."""

MiB = 1 << 20


def default_space() -> dict[str, dict[str, Any]]:
    """The search space as the tuning YAML's ``space`` mapping; defaults are RocksDB's own.

    Size ranges reach well below RocksDB's defaults so that a 1M-key database sees many
    flushes and a multi-level LSM tree; the defaults stay RocksDB's (db_bench's for the cache).
    """
    return {
        "write_buffer_size": {"type": "int", "low": 256 * 1024, "high": 64 * MiB, "log": True,
                              "default": 64 * MiB},
        "max_write_buffer_number": {"type": "int", "low": 2, "high": 8, "default": 2},
        "min_write_buffer_number_to_merge": {"type": "int", "low": 1, "high": 4, "default": 1},
        "max_background_jobs": {"type": "int", "low": 1, "high": 8, "default": 2},
        "level0_file_num_compaction_trigger": {"type": "int", "low": 2, "high": 16, "default": 4},
        "level0_slowdown_writes_trigger": {"type": "int", "low": 8, "high": 64, "default": 20},
        "level0_stop_writes_trigger": {"type": "int", "low": 16, "high": 128, "default": 36},
        "target_file_size_base": {"type": "int", "low": 256 * 1024, "high": 64 * MiB, "log": True,
                                  "default": 64 * MiB},
        "max_bytes_for_level_base": {"type": "int", "low": 1 * MiB, "high": 256 * MiB, "log": True,
                                     "default": 256 * MiB},
        "max_bytes_for_level_multiplier": {"type": "float", "low": 4.0, "high": 16.0, "default": 10.0},
        "block_size": {"type": "int", "low": 1024, "high": 65536, "log": True, "default": 4096},
        "cache_size": {"type": "int", "low": 1 * MiB, "high": 512 * MiB, "log": True,
                       "default": 8 * MiB},
        "bloom_bits": {"type": "int", "low": 0, "high": 20, "default": 0},
        "compression_type": {"type": "categorical", "choices": ["none", "snappy", "lz4", "zlib", "zstd"],
                             "default": "snappy"},
    }


def default_constraints() -> list[str]:
    """Constraints RocksDB itself needs (or silently fixes up) between the options above."""
    return [
        "min_write_buffer_number_to_merge < max_write_buffer_number",
        "level0_file_num_compaction_trigger < level0_slowdown_writes_trigger",
        "level0_slowdown_writes_trigger < level0_stop_writes_trigger",
        "target_file_size_base <= max_bytes_for_level_base",
    ]


def default_config() -> dict[str, Value]:
    """The default value of every parameter of :func:`default_space`."""
    return {name: spec["default"] for name, spec in default_space().items()}


def flag(name: str, value: Value) -> str:
    """One db_bench command-line flag; booleans as ``true``/``false``."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ConfigError("configuration", name, "is not a db_bench flag name")
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f"--{name}={value}"


@register_runner
class RocksDBRunner(Runner):
    """Runs ``db_bench`` on a fresh database per configuration.

    Options (the YAML ``runner.options``): ``workload`` (see :data:`WORKLOADS`), ``num`` keys
    loaded, ``reads`` operations in the measured phase (default ``num // 2``), ``timeout``
    seconds per db_bench run, ``repeats`` runs per trial (the adapter takes their median and
    records their spread), ``reference`` (``"default"`` or a configuration run interleaved with
    the repeats, once per repeat, so the adapter can report noise-normalised ``*_rel``
    objectives), ``seed`` (db_bench's key
    sequence; fixed so trials differ only by configuration), ``flags`` (extra fixed db_bench
    flags), ``stats_dump_period_sec`` (LOG stats dumps), ``db_root`` (where temporary DBs go),
    ``gzip_log_over`` (bytes), ``db_bench`` (the executable) and ``report_interval`` (seconds
    between progress reports when ``progress`` is set).
    """

    name = "rocksdb"
    adapter = "rocksdb"
    progress_direction = "maximize"  # each report interval's ops/sec, whatever the objective

    def __init__(self, workload: str = "readrandom", num: int = 1_000_000, reads: int | None = None,
                 timeout: float = 180.0, repeats: int = 1, reference: str | Mapping[str, Value] | None = None,
                 seed: int = 1, flags: Mapping[str, Value] | None = None, stats_dump_period_sec: int = 5,
                 db_root: str | None = None, gzip_log_over: int = 64 * 1024, db_bench: str = "db_bench",
                 report_interval: int = 1, progress: Progress | None = None):
        if workload not in WORKLOADS:
            raise InvalidOption("workload",
                                f"unknown {workload!r}{did_you_mean(str(workload), WORKLOADS)}; "
                                f"expected one of {sorted(WORKLOADS)}")
        for field, value in (("num", num), ("repeats", repeats), ("timeout", timeout),
                             ("report_interval", report_interval)):
            if value <= 0:
                raise InvalidOption(field, f"must be positive, got {value!r}")
        executable = shutil.which(db_bench)
        if executable is None:
            raise InvalidOption("db_bench", f"{db_bench!r} not found on PATH "
                                "(scripts/install-system-deps.sh installs Debian's rocksdb-tools)")
        self.workload = workload
        self.num = int(num)
        self.reads = int(reads) if reads is not None else self.num // 2
        self.timeout = float(timeout)
        self.repeats = int(repeats)
        if reference == "default":
            reference = default_config()
        elif isinstance(reference, str):
            raise InvalidOption("reference", "expected 'default' or a mapping of options")
        self.reference = dict(reference) if reference else None
        self.seed = int(seed)
        self.flags = dict(flags or {})
        self.stats_dump_period_sec = int(stats_dump_period_sec)
        self.db_root = db_root
        self.gzip_log_over = int(gzip_log_over)
        self.db_bench = executable
        self.report_interval = int(report_interval)
        self.progress = progress

    def benchmarks(self) -> list[str]:
        """db_bench's benchmarks in order; the last is the measured one, the others load the DB."""
        return str(self.flags.get("benchmarks", WORKLOADS[self.workload][0])).split(",")

    def command(self, config: Mapping[str, Value], db: Path, report: Path | None = None) -> list[str]:
        """The db_bench argument list for ``config`` on database directory ``db``, writing the
        per-interval report to ``report`` when given."""
        benchmarks, workload_flags = WORKLOADS[self.workload]
        reporting = {"report_interval_seconds": self.report_interval, "report_file": str(report)}
        fixed = {"benchmarks": benchmarks, "db": str(db), "num": self.num, "reads": self.reads,
                 "seed": self.seed, "statistics": 1, "histogram": 1, "progress_reports": False,
                 "stats_dump_period_sec": self.stats_dump_period_sec,
                 **(reporting if report is not None else {}), **workload_flags, **self.flags}
        clash = sorted((set(fixed) - set(self.flags)) & set(config))  # `flags` may be tuned over
        if clash:
            raise ConfigError("configuration", clash[0], "is set by the runner and cannot be tuned")
        return [self.db_bench] + [flag(k, v) for k, v in {**fixed, **config}.items()]

    def run(self, config: dict[str, Value], trial_dir: Path) -> bool:
        for k in range(self.repeats):
            out = trial_dir if k == 0 else trial_dir / f"{REPEAT_PREFIX}{k}"
            if k == 0 and self.progress is not None:
                if self.run_reporting(config, out):
                    return True  # stopped early: repeats and the reference would only hold the worker
            else:
                self.run_once(config, out)
            if self.reference is not None:
                reference = trial_dir / REFERENCE_DIR
                self.run_once(self.reference, reference if k == 0 else reference / f"{REPEAT_PREFIX}{k}")
        return False

    def run_once(self, config: Mapping[str, Value], out: Path) -> None:
        """One db_bench run on a fresh temporary DB; leaves stdout, LOG and OPTIONS in ``out``."""
        self._execute(config, out)

    def run_reporting(self, config: Mapping[str, Value], out: Path) -> bool:
        """:meth:`run_once`, calling ``progress`` per report interval of the measured benchmark;
        returns whether ``progress`` stopped it (db_bench interrupted, ``stopped.json`` written)."""
        follower = _ReportFollower(out / REPORT_FILE, out / STDOUT_FILE, len(self.benchmarks()) - 1)
        stopped = self._execute(config, out, follower)
        if stopped:
            (out / STOPPED_FILE).write_text(json.dumps(
                {"benchmark": self.benchmarks()[-1], "intervals": follower.reported}) + "\n")
        return stopped

    def _execute(self, config: Mapping[str, Value], out: Path,
                 follower: _ReportFollower | None = None) -> bool:
        """Run db_bench on a fresh temporary DB until it exits or times out, or, with a
        ``follower``, until ``progress`` stops it; returns whether it was stopped."""
        out.mkdir(parents=True, exist_ok=True)
        db = Path(tempfile.mkdtemp(prefix="boanon-rocksdb-", dir=self.db_root))
        try:
            args = self.command(config, db, follower.report if follower is not None else None)
            with open(out / STDOUT_FILE, "wb") as stdout, open(out / STDERR_FILE, "wb") as stderr:
                started = time.monotonic()
                deadline = started + self.timeout
                stopped = False
                usage = None
                proc: subprocess.Popen[bytes] | None = None
                try:
                    # SIGKILLed with the runner's process: a killed loop runs no clean-up. A SIGTERM
                    # while it starts waits until proc is known: the finally below must kill it
                    # before the DB is removed (db_bench went on writing into it)
                    with sigterm_deferred():
                        proc = subprocess.Popen(args, stdout=stdout, stderr=stderr,
                                                preexec_fn=lifetime.dies_with(os.getpid()))
                    while not stopped and (usage := _reap(proc)) is None:
                        if time.monotonic() > deadline:
                            raise TrialFailed(f"db_bench timed out after {self.timeout:g} s; stderr: "
                                              f"{_tail((out / STDERR_FILE).read_bytes())}")
                        time.sleep(POLL_S)
                        stopped = follower is not None and self._report(follower.new_rows())
                    if stopped and (usage := _reap(proc)) is None:
                        # SIGTERM, not SIGINT: a process started in the background (nohup, a
                        # parallel worker) inherits an ignored SIGINT, and db_bench ran on to the
                        # end. What it wrote stays; one that outlives the grace is killed below.
                        proc.terminate()
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            proc.wait(timeout=STOP_GRACE_S)
                    else:
                        stopped = False  # it had finished before the stop could cut it short
                        if follower is not None:
                            self._report(follower.new_rows(final=True))
                finally:
                    if proc is not None and proc.poll() is None:
                        proc.kill()
                        proc.wait()
            if usage is not None and not stopped:
                (out / RUSAGE_FILE).write_text(json.dumps({
                    "user_seconds": usage.ru_utime, "system_seconds": usage.ru_stime,
                    "wall_seconds": round(time.monotonic() - started, 6),
                    "max_rss_kb": usage.ru_maxrss}) + "\n")
            stderr_text = (out / STDERR_FILE).read_bytes()
            if not stderr_text:
                (out / STDERR_FILE).unlink()
            if not stopped and proc.returncode != 0:
                raise TrialFailed(f"db_bench exited with status {proc.returncode}: {_tail(stderr_text)}")
            self._keep_db_files(db, out)
        finally:
            with sigterm_deferred():  # a kill arriving now is handled once the DB is gone
                shutil.rmtree(db, ignore_errors=True)
        return stopped

    def _report(self, intervals: list[tuple[int, float]]) -> bool:
        """Hand each new interval to ``progress``; True when it asks to stop."""
        return any(self.progress(step, qps) is False  # type: ignore[misc]
                   for step, qps in intervals)

    def _keep_db_files(self, db: Path, out: Path) -> None:
        log = db / LOG_FILE
        options = newest_options_file(db)
        if not log.is_file() or options is None:
            raise TrialFailed(f"db_bench left no LOG or OPTIONS file in {db}")
        if log.stat().st_size > self.gzip_log_over:
            with open(log, "rb") as src, gzip.open(out / f"{LOG_FILE}.gz", "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(log, out / LOG_FILE)
        shutil.copyfile(options, out / options.name)


class _ReportFollower:
    """The measured benchmark's new report intervals, numbered from 1, as db_bench writes them.

    db_bench rewrites its report file at the start of every benchmark; the measured (last)
    benchmark's intervals are those found once stdout holds the summaries of the ``loads``
    benchmarks before it and :data:`SETTLE_S` has passed.
    """

    def __init__(self, report: Path, stdout: Path, loads: int):
        self.report, self.stdout, self.loads = report, stdout, loads
        self.measured_since: float | None = None if loads else float("-inf")
        self.reported = 0

    def new_rows(self, final: bool = False) -> list[tuple[int, float]]:
        """Intervals not returned before; ``final`` once db_bench has exited (no settling)."""
        if self.measured_since is None and _summaries(self.stdout) >= self.loads:
            self.measured_since = time.monotonic()
        if self.measured_since is None or (not final and time.monotonic() < self.measured_since + SETTLE_S):
            return []
        text = self.report.read_text(encoding="utf-8") if self.report.is_file() else ""
        lines = text[:text.rfind("\n") + 1].splitlines()  # a line being written is left for later
        rows = parse_report_lines(list(enumerate(lines, start=1)), self.report)
        new = [(step, qps) for step, (_, qps) in enumerate(rows, start=1) if step > self.reported]
        self.reported = max(self.reported, len(rows))
        return new


def _reap(proc: subprocess.Popen) -> resource.struct_rusage | None:
    """``proc.poll()`` that keeps the exited child's resource usage: ``os.wait4`` reaps it (and
    only it, so parallel workers' children are not mixed in) and sets ``proc.returncode``."""
    if proc.returncode is not None:
        return None
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid == 0:
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage


def _summaries(stdout: Path) -> int:
    """How many benchmark summary lines db_bench has written (it flushes each at once)."""
    with open(stdout, encoding="utf-8", errors="replace") as lines:
        return sum("micros/op" in line for line in lines)


def _tail(stderr: bytes | None, n: int = 800) -> str:
    text = (stderr or b"").decode("utf-8", errors="replace").strip()
    return text[-n:] if text else "(no stderr)"
