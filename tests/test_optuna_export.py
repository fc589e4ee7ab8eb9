"""``boanon export --optuna``: a run read back by Optuna itself, as optuna-dashboard reads it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from boanon.cli import main
from boanon.store import SCHEMA_VERSION, Store
from boanon.table import TrialRecord

optuna = pytest.importorskip("optuna")


@pytest.fixture(scope="module")
def run_db(tmp_path_factory, synthetic_run) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("optuna"), budget=7)


def _export(run_db: Path, url: str, *extra: str):
    return CliRunner().invoke(main, ["export", str(run_db), "--optuna", url, *extra])


def test_optuna_reads_the_run_back(run_db, tmp_path):
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    result = _export(run_db, url)
    assert result.exit_code == 0, result.output
    with Store(run_db) as store:
        trials = store.trials()
        best = min(trials, key=lambda t: t.objectives["cost"])
    study = optuna.load_study(study_name="run", storage=url)
    assert study.direction == optuna.study.StudyDirection.MINIMIZE and study.metric_names == ["cost"]
    assert [t.params for t in study.trials] == [t.config for t in trials]
    assert [t.value for t in study.trials] == [t.objectives["cost"] for t in trials]
    assert study.best_value == best.objectives["cost"]
    assert study.best_trial.user_attrs["boanon_trial"] == best.name
    assert study.trials[0].user_attrs["reason"] == "initial design: the default configuration"
    assert study.trials[0].distributions["x0"] == optuna.distributions.FloatDistribution(0.0, 1.0)
    assert all(t.duration is not None and t.duration.total_seconds() >= 0 for t in study.trials)
    # Optuna's own analyses run on it
    importances = optuna.importance.get_param_importances(study)
    assert set(importances) == {f"x{i}" for i in range(12)}
    from optuna.visualization.matplotlib import plot_optimization_history

    with pytest.warns(optuna.exceptions.ExperimentalWarning):  # Optuna's label for its matplotlib plots
        assert plot_optimization_history(study) is not None

    # exporting again (a run that went on) replaces the study; another study of that name is kept
    assert _export(run_db, url).exit_code == 0
    assert len(optuna.get_all_study_names(url)) == 1
    optuna.create_study(study_name="mine", storage=url)
    clash = _export(run_db, url, "--study-name", "mine")
    assert clash.exit_code != 0 and "already holds a study 'mine'" in clash.output
    assert len(optuna.load_study(study_name="mine", storage=url).trials) == 0


def test_failed_stopped_and_running_trials(run_db, tmp_path):
    store_path = tmp_path / "more.db"
    with Store(run_db) as store:
        store._conn.execute(f"VACUUM INTO '{store_path}'")
    with Store(store_path) as store:
        config = store.trial(0).config
        failed = store.start_trial(config, surrogate="user")
        store.fail_trial(failed.id, "TrialFailed: exit status 1")
        stopped = store.start_trial(config, surrogate="user")
        store.finish_trial(stopped.id, TrialRecord(stopped.name, config, {}, {"cost": 99.0}), stopped=True)
        store.start_trial(config, surrogate="user")  # still running: left out
        n = len(store.trials())
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    assert _export(store_path, url).exit_code == 0
    trials = optuna.load_study(study_name="more", storage=url).trials
    assert len(trials) == n - 1
    assert trials[-2].state == optuna.trial.TrialState.FAIL
    assert trials[-2].user_attrs["error"] == "TrialFailed: exit status 1"
    assert trials[-1].state == optuna.trial.TrialState.PRUNED
    assert trials[-1].user_attrs["objectives_when_stopped"] == {"cost": 99.0}


def test_output_constraints_become_optunas_constraint_values(tmp_path, synthetic_run):
    """Optuna (and its dashboard) read feasibility from the ``constraints`` system attribute:
    one value per bound, feasible when <= 0."""
    run_db = synthetic_run(tmp_path, budget=4, outputs=[{"name": "cost", "max": 20.0}])
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    assert _export(run_db, url).exit_code == 0
    with Store(run_db) as store:
        costs = [t.objectives["cost"] for t in store.trials()]
    trials = optuna.load_study(study_name="run", storage=url).trials
    assert [t.system_attrs["constraints"] for t in trials] == [[pytest.approx(c - 20.0)] for c in costs]
    assert [t.user_attrs["feasible"] for t in trials] == [c <= 20.0 for c in costs]


@pytest.mark.parametrize("url", ["postgresql://nouser:secret@127.0.0.1:1/x", "mysql://nouser:secret@127.0.0.1:1/x",
                                 "nosuchdb://x"])
def test_a_storage_that_cannot_be_opened_is_named_without_a_traceback(run_db, tmp_path, url):
    # no driver installed, or a server that does not answer: both commands ended in SQLAlchemy's traceback
    shown = url.replace(":secret@", ":***@")
    for args in (["import", url, "-o", str(tmp_path / "out.db")], ["export", str(run_db), "--optuna", url]):
        done = CliRunner().invoke(main, args)
        assert isinstance(done.exception, SystemExit) and done.exit_code == 1, (args, done.output)
        assert f"cannot open the Optuna storage {shown}: " in done.output and "secret" not in done.output
    assert not (tmp_path / "out.db").exists()


def test_exporting_into_a_file_that_is_no_database_says_so(run_db, tmp_path):
    (tmp_path / "notes.txt").write_text("not a database\n")
    url = f"sqlite:///{tmp_path / 'notes.txt'}"
    done = _export(run_db, url)
    assert isinstance(done.exception, SystemExit), done.output
    assert f"cannot open the Optuna storage {url}: file is not a database" in done.output


SQLITE_URLS = ["sqlite:///run.db", "sqlite:////abs/run.db", "sqlite+pysqlite:///r.db?mode=ro", "sqlite://",
               "sqlite:///:memory:", "sqlite:///", "sqlite:///my%20runs/o.db", "sqlite:///a+b%2Bc.db",
               "sqlite+pysqlcipher://:secret@/x.db", "sqlite:///file:x.db?uri=true", "postgresql://u@h/x"]


@pytest.mark.parametrize("url", SQLITE_URLS)
def test_the_sqlite_file_a_url_names_is_the_one_sqlalchemy_opens(url):
    # the command line's regex and the import's make_url were two parsers, and disagreed
    from sqlalchemy.engine import make_url

    from boanon.storage_urls import sqlite_file

    parsed = make_url(url)
    expected = parsed.database if parsed.get_backend_name() == "sqlite" else None
    assert sqlite_file(url) == (None if expected in (None, "", ":memory:") else expected)


def test_export_into_a_percent_escaped_directory_writes_where_sqlalchemy_does(run_db, tmp_path):
    # the command line looked for the directory 'my%20runs' and refused a URL Optuna would open
    (tmp_path / "my runs").mkdir()
    result = _export(run_db, f"sqlite:///{tmp_path}/my%20runs/optuna.db")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my runs" / "optuna.db").is_file()
@pytest.mark.parametrize("which", ["its own", "another", "another schema version's"])
def test_an_export_into_a_runs_store_is_refused_and_the_store_kept(run_db, tmp_path, which):
    target = run_db if which == "its own" else tmp_path / "other.db"  # Optuna added its tables,
    if which != "its own":  # then failed with a traceback; a copy with what the store's WAL holds
        with closing(sqlite3.connect(run_db)) as source, closing(sqlite3.connect(target)) as copy:
            source.backup(copy)
    if which == "another schema version's":  # a newer BoAnon's store was taken for Optuna's
        with closing(sqlite3.connect(target)) as db, db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    before = target.read_bytes()
    result = _export(run_db, f"sqlite:///{target}")
    assert result.exit_code == 2, result.output
    assert result.output.endswith(f"{target} is a BoAnon run store, not an Optuna storage: name "
                                  "another file\n")
    assert target.read_bytes() == before
