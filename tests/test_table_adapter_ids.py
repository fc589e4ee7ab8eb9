"""Trial ids from a table file stay names, and an ingested table is validated as a whole."""

import pytest
from click.testing import CliRunner

from boanon.adapters import ingest
from boanon.cli import main


def test_trial_ids_are_text_and_an_empty_one_gets_a_row_name(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("trial,param:x,objective:y\n007,1,2\n,2,3\n42,3,4\n")
    table = ingest(csv).table
    assert table["trial"].tolist() == ["007", "row-0001", "42"]
    assert table["param:x"].tolist() == [1, 2, 3]


def test_duplicate_trial_ids_raise_naming_the_file(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("trial,param:x,objective:y\na,1,2\nb,2,3\na,3,4\n")
    with pytest.raises(ValueError, match=r"runs\.csv: trial 'a' appears more than once"):
        ingest(csv)
    out = CliRunner().invoke(main, ["ingest", str(csv)])
    assert out.exit_code != 0 and "trial 'a' appears more than once" in out.output


def test_a_single_file_with_another_adapter_is_refused(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text("trial,param:x,objective:y\na,1,2\n")
    with pytest.raises(ValueError, match=r"runs\.csv: a single file is read by the 'table' adapter, "
                                         r"not 'rocksdb'"):
        ingest(csv, adapter="rocksdb")
    assert ingest(csv, adapter="table").adapter == "table"
