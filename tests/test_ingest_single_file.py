"""A single file named to ``boanon ingest``: read as a table only when it is one, else refused
with one message, the same from the CLI and the Python API, saying which folder to pass."""

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from boanon.adapters import ingest
from boanon.adapters.table import roles_file
from boanon.cli import main
from boanon.errors import LogParseError

ROOT = Path(__file__).resolve().parents[1]
WHERE = (r"; logs are read from the folder holding the trial folders: pass {dataset} \({trial} is one "
         r"trial: the '{adapter}' adapter recognises it\)$")


def _refused_alike(path: Path, said: str, adapter: str | None = None) -> None:
    """``ingest(path, adapter)`` refuses ``path`` with ``said``, and ``boanon ingest`` with the same."""
    with pytest.raises(LogParseError, match=said) as error:
        ingest(path, adapter=adapter)
    res = CliRunner().invoke(main, ["ingest", *(["--adapter", adapter] if adapter else []), str(path)])
    assert (res.exit_code, res.output) == (1, f"Error: {error.value}\n")


@pytest.mark.parametrize("name", ["stdout.txt", "LOG.gz"])
def test_a_log_named_with_a_folder_adapter_says_which_folder_to_pass(name, monkeypatch):
    # it said: "... not 'rocksdb'; the 'rocksdb' adapter reads a directory of trial sub-directories"
    monkeypatch.chdir(ROOT)
    log = Path("datasets/rocksdb-readrandom/trial-000") / name
    where = WHERE.format(dataset="datasets/rocksdb-readrandom", trial="trial-000", adapter="rocksdb")
    _refused_alike(log, rf"^{re.escape(str(log))}: a single file is read by the 'table' adapter, not "
                        rf"'rocksdb'{where}", adapter="rocksdb")


def test_a_table_named_file_of_a_trial_is_that_trials_not_a_table(monkeypatch):
    # it was read as a table of its own: "workers.jsonl.gz:1: column 'aggregation_s' has no role"
    monkeypatch.chdir(ROOT)
    log = Path("datasets/sgd-alexnet/trial-003/workers.jsonl.gz")  # as the sgd runner writes it
    where = WHERE.format(dataset="datasets/sgd-alexnet", trial="trial-003", adapter="sgd")
    _refused_alike(log, rf"^{re.escape(str(log))}: a file of one trial, not a table of its own \(name the "
                        rf"'table' adapter to read it as one\){where}")


def test_a_trials_file_is_read_as_a_table_when_said_to_be_one(tmp_path):
    trial = tmp_path / "trial-003"
    shutil.copytree(ROOT / "datasets/sgd-alexnet/trial-003", trial)
    log = trial / "workers.jsonl.gz"
    with pytest.raises(LogParseError, match=r"workers\.jsonl\.gz:1: column 'aggregation_s' has no role"):
        ingest(log, adapter="table")  # named: read as a table, whose columns need their roles
    columns = json.loads(gzip.decompress(log.read_bytes()).splitlines()[0])
    roles_file(log).write_text(yaml.safe_dump({"objectives": ["iteration_s"],
                                               "ignore": [c for c in columns if c != "iteration_s"]}))
    table = ingest(log).table  # its roles sidecar says it is a table
    assert table.columns.tolist() == ["trial", "objective:iteration_s"] and len(table) > 1


@pytest.mark.parametrize(("roles", "section", "entry"), [
    ("params: [[x, mode]]\nobjectives: [latency]\n", "params", "['x', 'mode']"),
    ("params: [x, mode]\nobjectives: [{latency: min}]\n", "objectives", "{'latency': 'min'}"),
    ("params: [x, mode]\nobjectives: [latency]\nignore: [yes]\n", "ignore", "True"),  # YAML 1.1's yes
])
def test_a_roles_sidecar_entry_that_is_no_name_is_an_error_naming_it(tmp_path, roles, section, entry):
    # a list or a mapping was "TypeError: unhashable type: 'list'", a traceback from the CLI
    csv = tmp_path / "runs.csv"
    csv.write_text("x,mode,latency\n1,fast,12.5\n")
    roles_file(csv).write_text(roles)
    said = rf"^{re.escape(str(roles_file(csv)))}: {section}: entry {re.escape(entry)} is not a column name"
    with pytest.raises(LogParseError, match=said) as error:
        ingest(csv)
    res = CliRunner().invoke(main, ["ingest", str(csv)])
    assert (res.exit_code, res.output) == (1, f"Error: {error.value}\n")
