"""Fault injection on stores: read-only commands change nothing, and damaged or foreign files
give one error naming the store (and the row), never a traceback."""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from boanon.cli import main

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the current directory


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real run of 4 trials, ended: (its YAML, its store)."""
    tmp = tmp_path_factory.mktemp("run")
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    data.update(n_init=4)
    config = tmp / "tune.yaml"
    config.write_text(yaml.safe_dump(data))
    subprocess.run([BOANON, "tune", str(config), "--budget", "4", "--store", str(tmp / "run.db")],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    assert {p.name for p in tmp.iterdir()} == {"tune.yaml", "run.db", "run.trials"}  # closed
    return config, tmp / "run.db"


def _copy(store: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    shutil.copy(store, to / "run.db")
    return to / "run.db"


def _snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in folder.iterdir() if p.is_file()}


def _foreign(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()
    return path


def _invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{args}: traceback instead of an error:\n{result.output}"
    return result


def _read_only_commands(store: Path) -> list[Result]:
    return [_invoke("status", str(store)), _invoke("export", str(store), "-o", "-")]


def test_status_and_export_change_nothing_on_disk(healthy, tmp_path: Path) -> None:
    store = _copy(healthy[1], tmp_path / "healthy")
    empty = tmp_path / "empty" / "run.db"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    foreign = _foreign(tmp_path / "foreign.db")
    for path in (store, empty, foreign):
        before = _snapshot(path.parent)
        results = _read_only_commands(path)
        assert _snapshot(path.parent) == before, f"{path}: a read-only command changed the folder"
        if path == store:
            assert all(r.exit_code == 0 for r in results), results[0].output
            assert "4: 4 done" in results[0].output
        else:
            for r in results:
                assert r.exit_code == 1 and f"{path}: store: not a BoAnon run store (" in r.output


def test_resume_refuses_an_empty_or_foreign_file(healthy, tmp_path: Path) -> None:
    config = healthy[0]
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    foreign = _foreign(tmp_path / "foreign.db")
    for path in (empty, foreign):
        before = _snapshot(tmp_path)
        result = _invoke("tune", str(config), "--store", str(path), "--resume")
        assert result.exit_code == 1 and f"{path}: store: not a BoAnon run store (" in result.output
        assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("damage", ["page", *[f"bits{seed}" for seed in range(6)]])
def test_a_damaged_store_gives_one_error_naming_it(healthy, tmp_path: Path, damage: str) -> None:
    store = _copy(healthy[1], tmp_path)
    data = bytearray(store.read_bytes())
    rng = random.Random(damage)
    if damage == "page":  # one page (of 4096 bytes) overwritten with garbage
        page = rng.randrange(1, len(data) // 4096)
        data[page * 4096:(page + 1) * 4096] = rng.randbytes(4096)
    else:  # a few bits flipped anywhere
        for _ in range(8):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    store.write_bytes(bytes(data))
    results = [*_read_only_commands(store),
               _invoke("tune", str(healthy[0]), "--store", str(store), "--resume")]
    for r in results:  # a benign flip may read fine; a harmful one is named
        assert r.exit_code == 0 or f"Error: {store}: " in r.output, r.output


EDITS = {  # a hand edit of the second trial -> what the error says about it
    "UPDATE trials SET config = '{\"x0\": 0.5' WHERE id = 1": "trials row 1: config is not JSON",
    "UPDATE trials SET objectives = '[1, 2]' WHERE id = 1":
        "trials row 1: objectives is JSON list, expected an object",
    "UPDATE trials SET metrics = '{\"load\": \"high\"}' WHERE id = 1":
        "trials row 1: metrics: 'load' is 'high', not a number",
    "UPDATE trials SET started = 'yesterday' WHERE id = 1":
        "trials row 1: started 'yesterday' is not a date and time",
    "UPDATE trials SET name = 't0042' WHERE id = 1": "trials row 1: id 1 and name 't0042' do not match",
    "UPDATE studies SET spec = 'null'": "studies row 1: spec is JSON NoneType, expected an object",
    "UPDATE studies SET spec = json_remove(spec, '$.objectives')": "spec lacks 'objectives'",
    "UPDATE meta SET value = 'two' WHERE key = 'schema_version'": "meta: no schema version",
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_hand_edited_row_is_named(healthy, tmp_path: Path, edit: str) -> None:
    store = _copy(healthy[1], tmp_path)
    conn = sqlite3.connect(store)
    conn.execute(edit)
    conn.commit()
    conn.close()
    commands = [*_read_only_commands(store), _invoke("tune", str(healthy[0]), "--store", str(store),
                                                     "--budget", "5", "--resume")]
    if "objectives')" in edit:
        commands = commands[:1]  # only status reads the spec's fields; a resume names the change
    for r in commands:
        assert r.exit_code == 1 and f"Error: {store}: " in r.output and EDITS[edit] in r.output, \
            r.output
