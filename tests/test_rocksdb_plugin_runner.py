"""A trial of an application that embeds RocksDB, run by a plug-in runner: the LOG, the OPTIONS
file and the ``config.json`` every runner's trial has, but no stdout and no objectives file. It
is the application's, not a db_bench trial that lost its stdout; a db_bench trial still says so.
The files are real: a db_bench trial's of datasets/ (db_bench as the application)."""

import shutil
from pathlib import Path

import pytest

from boanon.adapters import get_adapter, ingest
from boanon.errors import LogParseError

DATASETS = Path(__file__).resolve().parents[1] / "datasets"


def _copy(trial: Path, to: Path, *names: str) -> Path:
    """``to`` holding the files of ``trial`` whose names start with one of ``names``."""
    to.mkdir(parents=True)
    for f in trial.iterdir():
        if f.name.startswith(names):
            shutil.copy(f, to / f.name)
    return to


def test_a_plugin_runners_application_trial_reads_as_the_applications(tmp_path):
    # it was read as a broken db_bench trial: "trial-000/stdout.txt: file not found"
    for k in ("000", "001"):
        _copy(DATASETS / f"rocksdb-mixgraph/trial-{k}", tmp_path / "app" / f"trial-{k}", "LOG", "OPTIONS",
              "config.json")
    result = ingest(tmp_path / "app")
    assert result.adapter == "rocksdb" and len(result.table) == 2 and not result.skipped
    record = get_adapter("rocksdb").parse_trial(tmp_path / "app" / "trial-000")
    assert record.objectives == {} and record.metrics["uptime_seconds"] > 0  # the LOG's statistics dump
    assert "param:write_buffer_size" in result.table


@pytest.mark.parametrize(("dataset", "trace"), [
    ("rocksdb-mixgraph/trial-000", "stderr.txt"),  # db_bench 7.x's version banner
    ("rocksdb-readrandomwriterandom/trial-001", "rusage.json"),  # the runner's record of db_bench
])
def test_a_db_bench_trial_without_its_stdout_is_still_an_error_naming_it(tmp_path, dataset, trace):
    trial = _copy(DATASETS / dataset, tmp_path / "t", "LOG", "OPTIONS", "config.json", trace)
    with pytest.raises(LogParseError, match=r"t/stdout\.txt: file not found"):
        get_adapter("rocksdb").parse_trial(trial)
