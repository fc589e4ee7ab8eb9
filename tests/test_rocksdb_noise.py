"""benchmarks/rocksdb_noise.py on two tiny real db_bench trials: the table, the choice, the resume."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import rocksdb_noise


@pytest.mark.skipif(shutil.which("db_bench") is None, reason="db_bench not installed")
def test_noise_table_chooses_the_steadiest_objective_and_resumes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--runs", "2", "--num", "20000", "--reads", "5000", "--trials", str(tmp_path / "trials"),
            "--out", str(tmp_path / "noise.csv")]
    rocksdb_noise.main(args)
    table = pd.read_csv(tmp_path / "noise.csv")
    objectives = table[table["role"] == "objective"].set_index("quantity")
    assert set(objectives.index) == set(rocksdb_noise.OBJECTIVES)
    assert objectives["cv_percent"].idxmin() == table.loc[table["chosen"], "quantity"].item()
    assert (table["n"] == 2).all()
    assert {"write_amplification", "block_reads_per_get"} <= set(table["quantity"])
    runs = pd.read_csv(tmp_path / "noise_runs.csv")
    assert len(runs) == 2 and (runs["cpu_micros_per_op"] > 0).all()
    # a second call reads complete trials back; an incomplete one is run again
    (tmp_path / "trials" / "run-01" / "stdout.txt").unlink()
    capsys.readouterr()
    rocksdb_noise.main(args)
    out = capsys.readouterr().out
    assert "run 0: read back" in out and "run 1: read back" not in out and "run 1: " in out
    assert (tmp_path / "trials" / "run-01" / "stdout.txt").is_file()
