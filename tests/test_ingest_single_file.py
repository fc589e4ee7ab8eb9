"""A single file named to ``boanon ingest``: read as a table only when it is one, else refused
with one message, the same from the CLI and the Python API, saying which folder to pass."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.adapters import ingest
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
