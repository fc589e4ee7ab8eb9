"""Mutation test of the adapters: seeded mutants of the shipped datasets' trials (a number
replaced by NaN, an infinity, 1e400, a value beyond 64 bits, a quoted number, a boolean, or
its line cut short) are each either read with finite, typed values or refused with an error
naming a file of the trial. Before the fix 12 of 340 such mutants entered the table with a NaN,
an infinity, an absurd number or a number written as text."""

from __future__ import annotations

import gzip
import math
import random
import re
import shutil
from pathlib import Path

from boanon.adapters import get_adapter
from boanon.adapters.ingest import parse_trial_dir
from boanon.errors import LogParseError
from boanon.table import LIMIT

ROOT = Path(__file__).resolve().parents[1]
DATASETS = {"rocksdb-mixgraph": "rocksdb", "rocksdb-readrandom": "rocksdb", "sgd-googlenet": "sgd",
            "sgd-alexnet": "sgd", "zigzag-resnet18": "zigzag"}
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
REPLACEMENTS = ["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "1e400", "-1e400",
                "1e300", "36893488147419103232", "true", "null"]
N_MUTANTS = 150


def _read(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _write(path: Path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())


def mutate(rng: random.Random, trial: Path) -> str:
    """Change one number in one file of ``trial`` (in place); say how."""
    files = sorted(p for p in trial.iterdir() if p.is_file())
    while True:
        path = rng.choice(files)
        text = _read(path)
        numbers = list(NUMBER.finditer(text))
        if numbers:
            break
    found = rng.choice(numbers)
    kind = rng.choice(["replace", "replace", "quote", "cut"])
    if kind == "quote":
        new = f'"{found.group()}"'
    elif kind == "cut":  # the line ends right before the number
        new = text[found.start():].split("\n", 1)[1] if "\n" in text[found.start():] else ""
        _write(path, text[:found.start()] + "\n" + new)
        return f"{path.name}: line cut at {found.group()!r} (offset {found.start()})"
    else:
        new = rng.choice(REPLACEMENTS)
    _write(path, text[:found.start()] + new + text[found.end():])
    return f"{path.name}: {found.group()!r} -> {new!r} (offset {found.start()})"


def _unfit(record) -> list[str]:
    """The values of ``record`` that should never have entered the table."""
    bad = [f"metric/objective {k}={v!r}" for values in (record.metrics, record.objectives)
           for k, v in values.items()
           if isinstance(v, bool) or not isinstance(v, float) or not math.isfinite(v) or abs(v) >= LIMIT]
    bad += [f"parameter {k}={v!r}" for k, v in record.params.items()
            if isinstance(v, float) and (not math.isfinite(v) or abs(v) >= LIMIT)
            or isinstance(v, int) and not isinstance(v, bool) and abs(v) >= LIMIT
            or isinstance(v, str) and v.strip().lower().lstrip("+-") in ("nan", "inf", "infinity")]
    return bad


def test_every_mutant_is_read_with_finite_typed_values_or_refused_naming_its_file(tmp_path: Path) -> None:
    rng = random.Random(20261125)
    silent, refused = [], 0
    for i in range(N_MUTANTS):
        dataset = rng.choice(sorted(DATASETS))
        source = rng.choice(sorted(p for p in (ROOT / "datasets" / dataset).iterdir() if p.is_dir()))
        trial = tmp_path / f"m{i:03d}" / source.name
        shutil.copytree(source, trial)
        how = mutate(rng, trial)
        try:
            record = parse_trial_dir(get_adapter(DATASETS[dataset]), trial)
        except LogParseError as exc:
            assert str(trial) in str(exc), f"{dataset} {how}: the error names no file of the trial: {exc}"
            refused += 1
            continue
        bad = _unfit(record)
        if bad:
            silent.append(f"{dataset}/{trial.name} {how}: {bad[:3]}")
    assert not silent, f"{len(silent)} of {N_MUTANTS} mutants entered the table unfit:\n" + "\n".join(silent)
    assert refused > N_MUTANTS // 10  # the mutations do reach values the adapters read
