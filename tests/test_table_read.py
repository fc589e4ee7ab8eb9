"""Reading a table back from CSV: a bad cell is an error naming the file, column and row."""

import pandas as pd
import pytest

from boanon.multitask.warmstart import load_related
from boanon.table import read_table, validate_table

CSV = "trial,param:threads,metric:latency,objective:ops\nt0,4,10.5,100\nt1,8,12ms,120\nt2,16,9.0,130\n"


def test_a_unit_in_a_metric_cell_names_file_column_and_row(tmp_path):
    path = tmp_path / "trials.csv"
    path.write_text(CSV)
    with pytest.raises(ValueError, match=r"trials\.csv: column 'metric:latency' must be numeric; "
                                         r"row 1 holds '12ms'"):
        read_table(str(path))


def test_clean_csv_reads_numbers_and_keeps_missing_cells(tmp_path):
    path = tmp_path / "trials.csv"
    path.write_text(CSV.replace("12ms", ""))
    table = read_table(str(path))
    assert table["metric:latency"].isna().tolist() == [False, True, False]
    assert table["objective:ops"].tolist() == [100, 120, 130]


def test_a_column_without_a_role_names_the_source():
    with pytest.raises(ValueError, match=r"^runs\.csv: column 'latency' is not of the form"):
        validate_table(pd.DataFrame({"trial": ["a"], "latency": [1.0]}), source="runs.csv")


def test_an_exported_table_with_a_pareto_column_names_the_csv(tmp_path):
    path = tmp_path / "export.csv"
    lines = CSV.splitlines()
    path.write_text("\n".join([lines[0] + ",pareto"] + [line + ",True" for line in lines[1:]]) + "\n")
    with pytest.raises(ValueError, match=r"export\.csv:3: metric 'latency' is not a number"):
        load_related(path)
