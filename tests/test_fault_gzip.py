"""Fault injection: a damaged gzipped log costs only its own trial under ``ingest --skip-bad``."""

from __future__ import annotations

import gzip
import shutil
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _break_deflate_stream(path: Path) -> None:
    """Flip the first byte whose change makes zlib itself fail (not the gzip CRC check)."""
    data = path.read_bytes()
    for offset in range(10, len(data)):
        damaged = bytearray(data)
        damaged[offset] ^= 0xFF
        try:
            gzip.decompress(bytes(damaged))
        except zlib.error:
            path.write_bytes(bytes(damaged))
            return
        except (OSError, EOFError):
            continue
    raise AssertionError(f"{path}: no single byte breaks its deflate stream")


@pytest.mark.parametrize(("dataset", "log"), [("rocksdb-mixgraph", "LOG.gz"),
                                              ("sgd-googlenet", "workers.jsonl.gz")])
def test_a_corrupted_gzip_log_is_skipped_and_named(tmp_path: Path, dataset: str, log: str) -> None:
    for trial in ("trial-000", "trial-001", "trial-002"):
        shutil.copytree(ROOT / "datasets" / dataset / trial, tmp_path / trial)
    damaged = tmp_path / "trial-001" / log
    _break_deflate_stream(damaged)
    out = tmp_path / "table.csv"
    result = CliRunner().invoke(main, ["ingest", str(tmp_path), "--skip-bad", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"trial-001: {damaged}: cannot read: Error -3 while decompressing data" in result.output
    assert out.read_text().count("\ntrial-00") == 2  # the two healthy trials reached the table

    strict = CliRunner().invoke(main, ["ingest", str(tmp_path)])
    assert strict.exit_code == 1 and f"Error: {damaged}: cannot read: Error -3" in strict.output
