"""Fault injection: absurd values and logs cut at a line end, in copies of real trials, are
refused with the file and line, never ingested silently."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from boanon.adapters import get_adapter
from boanon.adapters.ingest import parse_trial_dir
from boanon.errors import LogParseError

ROOT = Path(__file__).resolve().parents[1]


def _trial(tmp_path: Path, dataset: str) -> Path:
    return Path(shutil.copytree(ROOT / "datasets" / dataset / "trial-000", tmp_path / "trial-000"))


def _refused(trial: Path, adapter: str, file: str, message: str, line: int | None) -> None:
    with pytest.raises(LogParseError) as caught:
        parse_trial_dir(get_adapter(adapter), trial)
    assert caught.value.path == trial / file and caught.value.line == line, str(caught.value)
    assert message in caught.value.reason, str(caught.value)


def _options(trial: Path) -> tuple[Path, list[str]]:
    path = next(trial.glob("OPTIONS-*"))
    return path, path.read_text().splitlines(keepends=True)


def _line(lines: list[str], pattern: str) -> int:
    return next(n for n, text in enumerate(lines) if re.search(pattern, text))


@pytest.mark.parametrize(("value", "message"), [
    ("1e400", "'1e400' is not a finite number"), ("NaN", "'NaN' is not a finite number"),
    ("18446744073709551616", "'18446744073709551616' is out of range")])
def test_an_absurd_options_value_is_refused(tmp_path: Path, value: str, message: str) -> None:
    trial = _trial(tmp_path, "rocksdb-mixgraph")
    path, lines = _options(trial)
    at = _line(lines, r"^\s*max_bytes_for_level_multiplier=")
    lines[at] = f"  max_bytes_for_level_multiplier={value}\n"
    path.write_text("".join(lines))
    _refused(trial, "rocksdb", path.name, f"option 'max_bytes_for_level_multiplier': {message}", at + 1)


def test_an_options_file_cut_at_a_line_end_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "rocksdb-mixgraph")
    path, lines = _options(trial)
    path.write_text("".join(lines[:-5]))  # inside [TableOptions/BlockBasedTable "default"]
    _refused(trial, "rocksdb", path.name, "without RocksDB's closing blank line: truncated", len(lines) - 5)


def test_an_options_line_given_twice_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "rocksdb-mixgraph")
    path, lines = _options(trial)
    at = _line(lines, r"^\s*write_buffer_size=")
    lines.insert(at + 1, lines[at].replace("=", "=1"))
    path.write_text("".join(lines))
    _refused(trial, "rocksdb", path.name,
             f"option 'write_buffer_size' a second time in its section (first on line {at + 1})", at + 2)


def test_a_db_bench_stdout_cut_after_its_first_benchmark_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "rocksdb-readrandom")  # fillrandom, then readrandom
    stdout = trial / "stdout.txt"
    lines = stdout.read_text().splitlines(keepends=True)
    second = next(n for n, text in enumerate(lines) if text.startswith("readrandom "))
    cut = max(n for n in range(second) if lines[n].startswith("DB path:"))
    stdout.write_text("".join(lines[:cut]))
    _refused(trial, "rocksdb", "stdout.txt", "no STATISTICS section after the 'fillrandom' result, "
             "though the LOG shows statistics on: truncated", cut)


@pytest.mark.parametrize("value", ["1e308", "-Infinity", "NaN", "18446744073709551616"])
def test_an_absurd_config_json_value_is_refused(tmp_path: Path, value: str) -> None:
    trial = _trial(tmp_path, "sgd-googlenet")
    path = trial / "config.json"
    text = path.read_text()
    path.write_text(re.sub(r'("m0_share": )[^,\n]+', rf"\g<1>{value}", text))
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if '"m0_share"' in t)
    _refused(trial, "sgd", "config.json", "parameter 'm0_share': ", line)


def _sgd_log(trial: Path) -> tuple[Path, list[dict]]:
    path = trial / "workers.jsonl.gz"
    return path, [json.loads(line) for line in gzip.open(path, "rt")]


def _write(path: Path, rows: list[dict] | list[str]) -> None:
    with gzip.open(path, "wt") as out:
        out.writelines((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_sgd_traffic_of_2_to_the_64_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "sgd-googlenet")
    path, rows = _sgd_log(trial)
    rows[7]["traffic_mb"] = 2 ** 64
    _write(path, rows)
    _refused(trial, "sgd", path.name, "field 'traffic_mb' has invalid value 18446744073709551616", 8)


def test_a_nan_in_an_sgd_log_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "sgd-googlenet")
    path, rows = _sgd_log(trial)
    lines = [json.dumps(r) for r in rows]
    lines[3] = re.sub(r'"compute_s": [^,]+', '"compute_s": NaN', lines[3])
    _write(path, lines)
    _refused(trial, "sgd", path.name, "field 'compute_s' has invalid value nan", 4)


def test_an_sgd_log_cut_at_a_line_end_inside_an_iteration_is_refused(tmp_path: Path) -> None:
    trial = _trial(tmp_path, "sgd-googlenet")
    path, rows = _sgd_log(trial)
    per_iteration = sum(1 for r in rows if r["iteration"] == 0)
    keep = len(rows) - per_iteration // 2  # the last iteration loses half its machines
    _write(path, rows[:keep])
    _refused(trial, "sgd", path.name, f"of the {per_iteration} machine/device lines", keep)
