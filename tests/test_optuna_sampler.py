"""BoAnonSampler's own mechanisms: the mapping of distributions, the Tuner it rebuilds from a
study (same proposals as the Tuner itself), metrics, pending trials, constraints, warm start,
and ``boanon import`` of a study into a store."""

from __future__ import annotations

import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

optuna = pytest.importorskip("optuna")

from click.testing import CliRunner  # noqa: E402
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402

import boanon.optuna  # noqa: E402
from boanon.cli import main  # noqa: E402
from boanon.errors import StoreError  # noqa: E402
from boanon.optuna import (  # noqa: E402
    PARAMS_ATTR,
    REASON_ATTR,
    SURROGATE_ATTR,
    BoAnonSampler,
    import_study,
    param_of,
    params_within,
    to_boanon,
    to_optuna,
)
from boanon.optuna_export import distribution  # noqa: E402
from boanon.space import Bool, Categorical, Float, Int, Space  # noqa: E402
from boanon.store import Store  # noqa: E402
from boanon.synthetic import SyntheticSystem  # noqa: E402
from boanon.tuner import Tuner  # noqa: E402
from boanon.tuning import TuneRequest, open_run  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
SYSTEM = SyntheticSystem(n_params=4, n_groups=2, seed=0)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "optuna.md"


def _objective(trial: optuna.Trial) -> float:
    """The synthetic system through Optuna, logging its metrics as the docs say."""
    config = {n: trial.suggest_float(n, 0.0, 1.0) for n in SYSTEM.space.names}
    record = SYSTEM.record(f"t{trial.number}", config)
    trial.set_user_attr("metrics", record.metrics)
    return record.objectives["cost"]


@pytest.mark.parametrize("param", [Float("x", 1e-3, 10.0, log=True), Float("x", -1.0, 2.0),
                                   Int("x", 1, 64, log=True), Int("x", -3, 3),
                                   Categorical("x", ("a", "b", "c")), Bool("x")])
def test_export_s_distributions_map_back_to_the_same_parameters(param):
    assert param_of("x", distribution(param)) == param


def test_steps_round_to_the_grid_and_non_string_choices_come_back_as_themselves():
    stepped = FloatDistribution(-10.2, 10.2, step=0.1)
    v = to_optuna(stepped, 3.14159)
    assert isinstance(v, float) and v == pytest.approx(3.1) and stepped._contains(stepped.to_internal_repr(v))
    assert to_optuna(IntDistribution(3, 9, step=2), 7.9) == 7
    mixed = CategoricalDistribution((1, "1", None))
    assert param_of("c", mixed).choices == ("0:1", "1:1", "2:None")  # str() alike: indexed labels
    for choice in mixed.choices:
        assert to_optuna(mixed, to_boanon(mixed, choice)) == choice
        assert type(to_optuna(mixed, to_boanon(mixed, choice))) is type(choice)
    assert param_of("s", FloatDistribution(1.0, 1.0)) is None  # a single value: nothing to search


@pytest.mark.parametrize("choices", [[1, True], [0.0, False], [2, "b", 2.0]])
def test_choices_optuna_takes_for_one_are_refused_naming_the_parameter(choices):
    # Optuna stores a choice as the index of the first one equal to it: the objective got 1 where
    # BoAnon proposed True, and the Tuner recorded "1" for every trial, learning nothing
    def objective(trial: optuna.Trial) -> float:
        return trial.suggest_float("x", 0, 1) + (trial.suggest_categorical("c", choices) is True)

    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
    first, second = (c for c in choices if any(c == d and type(c) is not type(d) for d in choices))
    with pytest.raises(ValueError, match=re.escape(f"parameter 'c': choices {first!r} and {second!r} are one "
                                                   f"value to Optuna ({first!r} == {second!r})")):
        study.optimize(objective, n_trials=3)
    assert [t.state.name for t in study.trials] == ["FAIL"]


@pytest.mark.parametrize(("proposed", "within"), [
    ({"step": 0.1 + 0.2, "k": 3, "cache": "lru"}, True),  # 0.30000000000000004: on the grid
    ({"step": 0.35, "k": 3, "cache": "lru"}, False), ({"step": 1.5, "k": 3, "cache": "lru"}, False),
    ({"step": 0.3, "k": 9, "cache": "lru"}, False), ({"step": 0.3, "k": 3, "cache": "arc"}, False),
    ({"step": "fast", "k": 3, "cache": "lru"}, False), ({"step": 0.3, "k": 3}, False)])
def test_a_running_trial_s_proposal_counts_only_within_the_distributions(proposed, within):
    # checked with Optuna's private Distribution._contains, which a release may change or drop
    distributions = {"step": FloatDistribution(0.0, 1.0, step=0.1), "k": IntDistribution(1, 8),
                     "cache": CategoricalDistribution(["off", "lru"])}
    trial = optuna.trial.create_trial(state=optuna.trial.TrialState.RUNNING,
                                      system_attrs={PARAMS_ATTR: proposed})
    assert (params_within(trial, distributions) == proposed) is within
    assert "._contains" not in Path(boanon.optuna.__file__).read_text()


def test_importing_boanon_does_not_import_optuna():
    code = "import sys, boanon, boanon.tuner, boanon.cli; assert 'optuna' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_sampler_proposes_what_the_tuner_proposes():
    # the same seed and trials, serially: the same configurations (design, proposals, graph schedule)
    budget, n_init = 9, 4
    tuner = Tuner(SYSTEM.space, ["cost"], seed=3, n_init=n_init)
    for _ in range(budget):
        t = tuner.ask()
        tuner.tell(t.id, SYSTEM.record(t.name, t.config))
    study = optuna.create_study(sampler=BoAnonSampler(seed=3, n_startup_trials=n_init))
    study.set_metric_names(["cost"])
    study.optimize(_objective, n_trials=budget)
    ours = [t.config for t in tuner.store.trials()]
    theirs = [t.params for t in study.trials]
    np.testing.assert_allclose([[c[n] for n in SYSTEM.space.names] for c in theirs],
                               [[c[n] for n in SYSTEM.space.names] for c in ours], atol=1e-9)
    assert [t.system_attrs.get(SURROGATE_ATTR) for t in study.trials] == [None] + \
        [t.surrogate for t in tuner.store.trials()[1:]]
    # the same reasons, including why the structure was or was not learned at each step
    assert [t.system_attrs.get(REASON_ATTR) for t in study.trials[n_init:]] == \
        [t.reason for t in tuner.store.trials()[n_init:]]


def test_told_the_budget_the_sampler_holds_a_short_run_s_switches_as_the_tuner_does():
    # a short cold run keeps its booleans until flipping them has paid; that rule needs the
    # budget, which Optuna never tells a sampler: without it the two parted after the design
    space = Space([Float("x", 0.0, 1.0, default=0.5), Float("y", 0.0, 1.0, default=0.5), Bool("fast")])

    def cost(c: dict) -> float:
        return (c["x"] - 0.8) ** 2 + (c["y"] - 0.3) ** 2 + (0.0 if c["fast"] else 0.05)

    budget = 10
    tuner = Tuner(space, ["cost"], seed=1, budget=budget, strategy="gp")
    for _ in range(budget):
        t = tuner.ask()
        tuner.tell(t.id, {"cost": cost(t.config)})
    study = optuna.create_study(sampler=BoAnonSampler(seed=1, budget=budget, strategy="gp"))
    study.set_metric_names(["cost"])
    study.optimize(lambda trial: cost({"x": trial.suggest_float("x", 0.0, 1.0),
                                       "y": trial.suggest_float("y", 0.0, 1.0),
                                       "fast": trial.suggest_categorical("fast", [False, True])}),
                   n_trials=budget)
    ours = [t.config for t in tuner.store.trials()]
    theirs = [t.params for t in study.trials]
    assert [c["fast"] for c in theirs] == [c["fast"] for c in ours]
    np.testing.assert_allclose([[c["x"], c["y"]] for c in theirs], [[c["x"], c["y"]] for c in ours],
                               atol=1e-9)


def test_metrics_running_trials_and_constraints_reach_the_tuner():
    sampler = BoAnonSampler(seed=0, n_startup_trials=3, constraints_func=lambda t: [t.params["x0"] - 0.5])
    study = optuna.create_study(sampler=sampler)

    def objective(trial):
        value = _objective(trial)
        trial.set_user_attr("metric:extra", 2.0)
        return value

    study.optimize(objective, n_trials=4)
    running = study.ask()
    running.suggest_float(SYSTEM.space.names[0], 0.0, 1.0)  # its objective suggests the rest later
    space = {n: FloatDistribution(0.0, 1.0) for n in SYSTEM.space.names}
    tuner = sampler.tuner(study, space, exclude=None)
    table = tuner.table()
    assert {"metric:extra", "metric:g0_load"} <= set(table.columns)
    assert [c.name for c in tuner.output_constraints] == ["constraint_0"]
    expected = [t.params["x0"] - 0.5 for t in study.trials[:4]]
    assert list(table["metric:constraint_0"]) == pytest.approx(expected)
    pending = tuner.store.trials("running")
    assert [t.config for t in pending] == [running.relative_params]  # all that BoAnon proposed for it
    best = tuner.best()
    assert best is None or best.config["x0"] <= 0.5  # an infeasible trial is never the best

    bad = study.ask()
    bad.suggest_float("x0", 0.0, 1.0)
    bad.set_user_attr("metrics", {"m": "high"})
    study.tell(bad, 1.0)
    with pytest.raises(ValueError, match=f"trial {bad.number}: metric 'm' must be a number"):
        sampler.tuner(study, {"x0": FloatDistribution(0.0, 1.0)})


@pytest.mark.parametrize("value", [True, "3.5"])
def test_a_logged_metric_that_is_no_number_is_refused_as_tell_refuses_it(value):
    # float() took True as 1.0 and "3.5" as 3.5, which Tuner.tell and every log reader refuse
    study = optuna.create_study(sampler=BoAnonSampler(seed=0))
    trial = study.ask()
    trial.suggest_float("x0", 0.0, 1.0)
    trial.set_user_attr("metrics", {"m": value})
    study.tell(trial, 1.0)
    with pytest.raises(ValueError, match=rf"trial 0: metric 'm' must be a number, got {value!r}"):
        study.sampler.tuner(study, {"x0": FloatDistribution(0.0, 1.0)})


def test_several_objectives_are_proposed_for_jointly():
    system = SyntheticSystem(n_params=3, n_groups=1, n_objectives=2, seed=1)

    def objective(trial):
        config = {n: trial.suggest_float(n, 0.0, 1.0) for n in system.space.names}
        record = system.record(f"t{trial.number}", config)
        trial.set_user_attr("metrics", record.metrics)
        return record.objectives["cost"], record.objectives["cost2"]

    sampler = BoAnonSampler(seed=0, n_startup_trials=4)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(objective, n_trials=6)
    assert study.trials[-1].system_attrs[SURROGATE_ATTR] in ("structured", "gp")
    assert "hypervolume" in study.trials[-1].system_attrs[REASON_ATTR].lower() or study.best_trials


def test_warm_start_from_a_store_and_import_of_a_study(tmp_path):
    store = tmp_path / "earlier.db"
    tuner = Tuner(SYSTEM.space, ["cost"], seed=0, n_init=3, store=store)
    for _ in range(4):
        t = tuner.ask()
        tuner.tell(t.id, SYSTEM.record(t.name, t.config))
    tuner.store.close()
    sampler = BoAnonSampler(seed=0, warm_start=store)
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    study = optuna.create_study(sampler=sampler, storage=url, study_name="s")
    study.set_metric_names(["cost"])
    study.optimize(_objective, n_trials=4)
    rebuilt = sampler.tuner(study, {n: FloatDistribution(0.0, 1.0) for n in SYSTEM.space.names})
    assert len(rebuilt.related) == 1 and len(rebuilt.related[0].table) == 4
    assert rebuilt.n_init == 3  # a warm start's short design, as the Tuner's

    out = tmp_path / "imported.db"
    cli = ["import", url, "--study", "s", "-o", str(out)]
    done = CliRunner().invoke(main, cli)
    assert done.exit_code == 0, done.output
    assert "wrote 4 trials (4 done" in done.output
    with Store(out, read_only=True) as imported:
        table = imported.to_table()
        assert len(table) == 4 and "metric:g0_load" in table.columns
        assert list(table["objective:cost"]) == pytest.approx([t.value for t in study.trials])
    again = CliRunner().invoke(main, cli)
    assert again.exit_code != 0 and "exists already" in again.output


def test_import_from_a_mistyped_storage_or_study_says_so_and_changes_nothing(tmp_path):
    # optuna.load_study created an empty database at a mistyped sqlite path (and Optuna's tables
    # inside a BoAnon store), and said only 'Record does not exist.' of a mistyped study name
    url = f"sqlite:///{tmp_path / 'steps.db'}"
    optuna.create_study(study_name="steps", storage=url).optimize(lambda t: t.suggest_float("x", 0, 1),
                                                                  n_trials=2)
    tuner = Tuner(SYSTEM.space, ["cost"], n_init=1, store=tmp_path / "run.db")
    trial = tuner.ask()
    tuner.tell(trial.id, SYSTEM.record(trial.name, trial.config))
    tuner.store.close()
    store_bytes = (tmp_path / "run.db").read_bytes()
    missing, out = tmp_path / "nothere.db", tmp_path / "out.db"
    expected = {
        (f"sqlite:///{missing}", "--study", "steps"): f"{missing} does not exist",
        (url, "--study", "stepz"): f"no study 'stepz' in {url}; studies there: steps",
        (f"sqlite:///{tmp_path / 'run.db'}",): "run.db is not an Optuna storage",
        (str(tmp_path / "steps.db"),): "not a storage URL (a sqlite file's is sqlite:///<path>)",
    }
    for args, message in expected.items():
        done = CliRunner().invoke(main, ["import", *args, "-o", str(out)])
        assert done.exit_code == 1 and message in done.output, done.output
    assert not missing.exists() and not out.exists()
    assert (tmp_path / "run.db").read_bytes() == store_bytes


def test_the_search_space_follows_the_suggestion_order_not_the_names():
    study = optuna.create_study(sampler=BoAnonSampler(seed=0))
    study.optimize(lambda t: sum(t.suggest_float(n, 0, 1) for n in ("x2", "x10", "a")), n_trials=1)
    sampler = study.sampler
    assert list(sampler.infer_relative_search_space(study, study.trials[0])) == ["x2", "x10", "a"]


WORKER = """
import sys, optuna
from boanon.optuna import BoAnonSampler
optuna.logging.set_verbosity(optuna.logging.WARNING)
sampler = BoAnonSampler(seed=0, n_startup_trials=2)
study = optuna.load_study(study_name="p", storage=sys.argv[1], sampler=sampler)
study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_int("k", 0, 4), n_trials=2)
"""


def test_workers_in_several_processes_share_a_study_through_its_storage(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    optuna.create_study(study_name="p", storage=url)
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, url]) for _ in range(2)]
    assert [w.wait(timeout=300) for w in workers] == [0, 0]
    trials = optuna.load_study(study_name="p", storage=url).trials
    assert len(trials) == 4 and all(t.state.name == "COMPLETE" for t in trials)
    # each process rebuilt the Tuner from the shared storage: past the design, trials are proposals
    assert {t.system_attrs.get(SURROGATE_ATTR) for t in trials[3:]} <= {"gp", "structured"}


RACER = """
import itertools, os, sys, time, optuna
from pathlib import Path
from boanon.optuna import BoAnonSampler
optuna.logging.set_verbosity(optuna.logging.WARNING)
url, marks, n_workers = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
sampler = BoAnonSampler(seed=0, n_startup_trials=4, strategy="gp")
study = optuna.load_study(study_name="p", storage=url, sampler=sampler)
rounds = itertools.count()

def together():  # every worker ends its trial here, so their next trials are proposed at once
    mark = f"{next(rounds)}-"
    (marks / f"{mark}{os.getpid()}").touch()
    deadline = time.monotonic() + 30
    while len(list(marks.glob(mark + "*"))) < n_workers and time.monotonic() < deadline:
        time.sleep(0.002)

def objective(trial):
    x, k = trial.suggest_float("x", 0.0, 1.0), trial.suggest_int("k", 0, 4)
    together()
    return (x - 0.3) ** 2 + k

study.optimize(objective, n_trials=4)
"""


def test_workers_proposing_at_the_same_time_propose_different_configurations(tmp_path):
    # each worker's trial is proposed while the other's has no parameters yet: both took the same
    # position, so the same design point and the same generator, and proposed the same configuration
    url, marks = f"sqlite:///{tmp_path / 'p.db'}", tmp_path / "marks"
    optuna.create_study(study_name="p", storage=url)
    marks.mkdir()
    workers = [subprocess.Popen([sys.executable, "-c", RACER, url, str(marks), "2"]) for _ in range(2)]
    assert [w.wait(timeout=300) for w in workers] == [0, 0]
    trials = optuna.load_study(study_name="p", storage=url).trials
    assert len(trials) == 8 and all(t.state.name == "COMPLETE" for t in trials)
    assert {t.system_attrs.get(SURROGATE_ATTR) for t in trials} == {None, "init", "gp"}
    configs = [(t.params["x"], t.params["k"]) for t in trials]
    assert len(set(configs)) == len(configs), configs


def test_workers_sharing_a_seed_sample_different_values_outside_the_search_space(tmp_path):
    # each worker process holds a sampler of its own (two here, on one sqlite study); a parameter
    # is sampled outside the Tuner while no trial has finished (or when it is not in the search
    # space): one generator per process, seeded alike, gave two workers' trials the same values
    url = f"sqlite:///{tmp_path / 'p.db'}"
    optuna.create_study(study_name="p", storage=url)
    workers = [optuna.load_study(study_name="p", storage=url, sampler=BoAnonSampler(seed=0))
               for _ in range(2)]
    trials = [w.ask() for w in workers] + [w.ask() for w in workers]  # trials 0 to 3, none finished
    values = [t.suggest_float("x", 0.0, 1.0) for t in trials]
    assert values[0] == 0.5  # the study's first trial runs the default configuration
    assert len(set(values)) == len(values), values


KILLED = """
import sys, time, optuna
from pathlib import Path
from boanon.optuna import BoAnonSampler
optuna.logging.set_verbosity(optuna.logging.WARNING)
url, mark, storage = sys.argv[1], Path(sys.argv[2]), eval(sys.argv[3], {"optuna": optuna, "url": sys.argv[1]})

class Stalled(BoAnonSampler):  # holds trial 3's proposal until the test kills the process
    def sample_relative(self, study, trial, search_space):
        if search_space and trial.number == 3:
            mark.touch()
            time.sleep(600)
        return super().sample_relative(study, trial, search_space)

study = optuna.load_study(study_name="steps", storage=storage, sampler=Stalled(seed=0, n_startup_trials=2))
study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_int("k", 0, 4), n_trials=5)
"""


def _kill_a_worker_mid_proposal(tmp_path: Path, storage: str = "url") -> str:
    """The URL of a study whose trial 3 was being proposed when its worker (on ``storage``, an
    expression of ``url``) got SIGKILL."""
    url, mark = f"sqlite:///{tmp_path / 'steps.db'}", tmp_path / "proposing"
    optuna.create_study(study_name="steps", storage=url)
    worker = subprocess.Popen([sys.executable, "-c", KILLED, url, str(mark), storage])
    deadline = time.monotonic() + 120
    while not mark.exists() and worker.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), "the worker never reached trial 3's proposal"
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    return url


def _proposals_of(monkeypatch) -> list[int]:
    """The positions proposals are computed at from now on (a replayed trial is asked at none)."""
    asked: list[int] = []
    ask = Tuner.ask

    def counted(self, position=None):
        if position is not None:
            asked.append(position)
        return ask(self, position)

    monkeypatch.setattr(Tuner, "ask", counted)
    return asked


def _go_on(storage) -> optuna.Study:
    sampler = BoAnonSampler(seed=0, n_startup_trials=2)
    study = optuna.load_study(study_name="steps", storage=storage, sampler=sampler)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_int("k", 0, 4), n_trials=2)
    return study


def test_the_docs_heartbeat_fails_a_worker_killed_mid_proposal(tmp_path, monkeypatch):
    # without it the dead trial stayed running and every later proposal computed its proposal too
    snippets = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    line = next(x for c in snippets for x in c.splitlines() if x.startswith("storage = RDBStorage("))
    storage = line.removeprefix("storage = ").replace("RDBStorage(", "optuna.storages.RDBStorage(")
    for docs, here in (('"sqlite:///steps.db"', "url"), ("=60", "=1"), ("=180", "=2")):  # seconds here
        assert docs in storage, (docs, line)
        storage = storage.replace(docs, here)
    url = _kill_a_worker_mid_proposal(tmp_path, storage)
    time.sleep(3)  # past the grace period
    asked = _proposals_of(monkeypatch)
    study = _go_on(eval(storage, {"optuna": optuna, "url": url}))
    assert study.trials[3].state.name == "FAIL"
    assert 3 not in asked and [t.state.name for t in study.trials[4:]] == ["COMPLETE"] * 2


def test_a_dead_worker_s_trial_failed_by_hand_is_proposed_for_no_more(tmp_path, monkeypatch):
    url = _kill_a_worker_mid_proposal(tmp_path)
    asked = _proposals_of(monkeypatch)
    _go_on(url)
    assert asked.count(3) == 2  # no heartbeat: each later proposal computed the dead trial's first
    study = optuna.load_study(study_name="steps", storage=url)
    study.tell(3, state=optuna.trial.TrialState.FAIL)  # as the docs say
    asked.clear()
    _go_on(url)
    assert 3 not in asked and len(asked) == 2


def test_the_complete_example_of_the_docs_runs(tmp_path, monkeypatch, capsys):
    text = DOCS.read_text()
    example = text.split("## A complete example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(example, "docs/optuna.md", "exec"), scope)
    study = scope["study"]
    assert len(study.trials) == 12 and all(t.state.name == "COMPLETE" for t in study.trials)
    assert study.trials[-1].system_attrs[SURROGATE_ATTR] in ("gp", "structured")  # no pruner: a model
    assert "boanon:reason" not in capsys.readouterr().out  # it printed the reason's text, not its key


def test_the_docs_snippets_run_in_order_as_written(tmp_path, monkeypatch):
    # in a new directory: the load_study snippet found no study (the example before it ran in
    # memory), and the import named its store after the Optuna storage, which existed already
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    for lang, code in re.findall(r"```(python|sh)\n(.*?)```", DOCS.read_text(), re.S):
        if lang == "python":
            exec(compile(code, "docs/optuna.md", "exec"), scope)
            continue
        for line in code.splitlines():
            args = shlex.split(line, comments=True)
            assert args[0] in ("pip", "boanon"), line  # pip: not here
            if args[0] == "boanon":
                done = CliRunner().invoke(main, args[1:])
                assert done.exit_code == 0, (line, done.output)
    assert sorted(optuna.get_all_study_names("sqlite:///steps.db")) == ["steps", "steps-warm"]
    assert (tmp_path / "steps-run.db").is_file() and (tmp_path / "back.db").is_file()


def test_an_import_keeps_when_each_trial_ran(tmp_path):
    # every imported trial was stored at the import's time: `boanon status` said the study ran
    # in 0 s, and `boanon plan --store` took milliseconds for its trial durations
    from datetime import datetime, timedelta, timezone

    url = f"sqlite:///{tmp_path / 'steps.db'}"
    study = optuna.create_study(study_name="steps", storage=url)
    space = {"x": FloatDistribution(0.0, 1.0)}
    start = datetime(2026, 1, 2, 10, 0, 0)  # naive local time, as Optuna records it
    for i, (x, state) in enumerate([(0.2, "COMPLETE"), (0.7, "COMPLETE"), (0.5, "FAIL")]):
        began = start + timedelta(minutes=i)
        study.add_trial(optuna.trial.FrozenTrial(
            number=i, state=optuna.trial.TrialState[state], value=x if state == "COMPLETE" else None,
            datetime_start=began, datetime_complete=began + timedelta(seconds=30 + i), params={"x": x},
            distributions=space, user_attrs={}, system_attrs={}, intermediate_values={}, trial_id=i))
    out = tmp_path / "run.db"
    assert CliRunner().invoke(main, ["import", url, "-o", str(out)]).exit_code == 0
    with Store(out, read_only=True) as store:
        trials = store.trials()
    assert [t.status.value for t in trials] == ["done", "done", "failed"]
    for i, trial in enumerate(trials):
        began = datetime.fromisoformat(trial.started)
        assert began == (start + timedelta(minutes=i)).astimezone(timezone.utc)
        assert datetime.fromisoformat(trial.finished) - began == timedelta(seconds=30 + i)
    status = CliRunner().invoke(main, ["status", str(out)])
    assert "(152 s)" in status.output, status.output


def test_an_import_cut_short_by_a_bad_trial_leaves_no_store(tmp_path):
    # it left a half-written store, and the import run again after the fix said "exists already"
    url = f"sqlite:///{tmp_path / 'steps.db'}"
    study = optuna.create_study(study_name="steps", storage=url)
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    study.optimize(lambda t: (t.set_user_attr("metrics", "not a mapping"), t.suggest_float("x", 0, 1))[1],
                   n_trials=1)
    out = tmp_path / "out.db"
    done = CliRunner().invoke(main, ["import", url, "-o", str(out)])
    assert done.exit_code == 1, done.output
    assert "study 'steps' in" in done.output and "trial 2:" in done.output, done.output
    assert not out.exists() and not Path(f"{out}-wal").exists()


@pytest.mark.slow
def test_an_import_the_tuner_refuses_leaves_no_store(tmp_path):
    # the Tuner was made outside the try that removes the store: one refusing the study after
    # creating the store (a space wider than the Sobol design's 21201 dimensions) left the file;
    # such a space is now refused when built, before any store, and still names the study
    url = f"sqlite:///{tmp_path / 'wide.db'}"
    wide = {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(21202)}
    optuna.create_study(study_name="wide", storage=url).add_trial(
        optuna.trial.create_trial(params=dict.fromkeys(wide, 0.5), distributions=wide, value=1.0))
    out = tmp_path / "out.db"
    done = CliRunner().invoke(main, ["import", url, "-o", str(out)])
    assert done.exit_code == 1, done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wide.db"]  # no store, -wal or -shm
    assert done.output == (f"Error: study 'wide' in {url}: 21202 parameters, more than the 21201 a search "
                           "can draw (its Sobol design has one dimension per parameter): tune at most 21201 "
                           "and leave the others out of the space\n"), done.output


def quadratic(config: dict) -> dict:
    """The system of the run tuned beside an import (a ``callable`` runner)."""
    return {"cost": (config["x"] - 0.3) ** 2}


@pytest.mark.parametrize("run_ended", [False, True], ids=["beside a live run", "after a run ended"])
def test_an_import_that_loses_the_race_for_its_store_leaves_the_winner_s_store(tmp_path, run_ended,
                                                                               descriptors_held):
    # the import checked that no store was there, read the study, then opened the store: a
    # `boanon tune` that made it meanwhile saw the import fail on its study and delete its store
    optuna_db, store = tmp_path / "optuna.db", tmp_path / "run.db"
    url = f"sqlite:///{optuna_db}"
    optuna.create_study(study_name="s", storage=url).optimize(lambda t: t.suggest_float("y", 0, 1),
                                                              n_trials=2)
    config = tmp_path / "tune.yaml"
    config.write_text(yaml.safe_dump({"space": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
                                      "objectives": ["cost"], "runner": {"callable": f"{__name__}:quadratic"},
                                      "strategy": "random", "n_init": 2}))
    holder = sqlite3.connect(optuna_db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # the import waits inside reading the study (a real lock)
    refused: list[BaseException] = []

    def importing() -> None:
        try:
            import_study(f"{url}?timeout=120", None, store)  # waits for the lock, however slow the run
        except BaseException as exc:  # noqa: BLE001  (checked below)
            refused.append(exc)
    def opened() -> int:  # descriptors this process holds on the Optuna database
        return sum(name == optuna_db.name for _, name in descriptors_held(tmp_path))
    before = opened()
    importer = threading.Thread(target=importing)
    importer.start()
    deadline = time.monotonic() + 60
    while opened() == before:  # the import opened the database: it found no store there
        assert time.monotonic() < deadline and importer.is_alive(), refused
        time.sleep(0.01)
    run = open_run(TuneRequest(config, budget=2, store=store))  # the winner: a real run, its lock held
    try:
        run.loop()
        if run_ended:
            run.close()
        holder.close()  # the import goes on
        importer.join(timeout=120)
    finally:
        run.close()
    assert store.is_file(), f"the import deleted the run's store: {refused}"
    with Store(store, read_only=True) as kept:
        assert kept.counts()["done"] == 2
    assert len(refused) == 1
    assert ("exists already" if run_ended else "in use by another run") in str(refused[0])


def test_a_trial_enqueued_outside_the_distributions_is_left_out_not_fatal():
    # Optuna runs an enqueued value outside its distribution (with a warning); replaying it into
    # the Tuner raised "enqueue: x: expected a number in [0.0, 10.0]" at every later proposal
    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
    study.enqueue_trial({"x": 20.0, "n": 7})
    with pytest.warns(UserWarning, match="out of range"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 10) - 3) ** 2 + t.suggest_int("n", 1, 5),
                       n_trials=5, catch=())
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 5
    assert study.trials[0].params == {"x": 20.0, "n": 7}
    assert study.trials[-1].system_attrs[SURROGATE_ATTR] in ("gp", "structured")  # no pruner: a model
    assert all(0 <= t.params["x"] <= 10 and 1 <= t.params["n"] <= 5 for t in study.trials[1:])


def test_a_parameter_named_like_an_objective_or_a_metric_is_refused_naming_it():
    # a parameter "value" (the unnamed objective's name) raised KeyError('value') from the model
    # after the initial design; a metric "x" was taken and the learned graph lost parameter x
    def named(param: str, metric: str):
        def objective(trial: optuna.Trial) -> float:
            x, y = trial.suggest_float(param, 0, 1), trial.suggest_float("y", 0, 1)
            trial.set_user_attr("metrics", {metric: x * y})
            return x + y
        return objective

    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
    with pytest.raises(ValueError, match="'value' is both a parameter and an objective"):
        study.optimize(named("value", "m"), n_trials=4)
    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
    with pytest.raises(ValueError, match="trial 0: metric 'x' is named like a parameter"):
        study.optimize(named("x", "x"), n_trials=4)
    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
    study.set_metric_names(["step_time"])  # the docs' way out: name the objective
    study.optimize(named("value", "m"), n_trials=4)
    assert study.trials[-1].system_attrs[SURROGATE_ATTR] in ("gp", "structured")  # no pruner: a model


@pytest.mark.parametrize(("metric", "named_like"), [
    ("constraint_0", r"the output of a constraints_func value \(constraint_<i>\)"),
    ("value", r"an objective of the study \(study.set_metric_names\)")])
def test_a_metric_named_like_a_constraint_or_an_objective_is_refused_not_overwritten(metric, named_like):
    # the replay put the constraint's (or the objective's) value in the metric's place: the
    # trial's logged 42.0 was lost without a word and the model learned from the other number
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.set_user_attr("metrics", {metric: 42.0})
        return x

    sampler = BoAnonSampler(seed=0, n_startup_trials=2, constraints_func=lambda t: [t.params["x"] - 0.5])
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match=f"trial 0: metric '{metric}' is named like {named_like}"):
        study.optimize(objective, n_trials=3)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "FAIL"]


@pytest.mark.parametrize(("options", "message"), [
    ({"learn_options": {"alhpa": 0.05}}, "no option 'alhpa' \\(did you mean 'alpha'\\?\\)"),
    ({"propose_options": {"n_candidatez": 64}}, "'n_candidatez' \\(did you mean 'n_candidates'\\?\\)"),
    ({"n_startup_trials": 0}, "n_startup_trials must be >= 1"),
    ({"relearn_every": 0}, "relearn_every must be >= 1")])
def test_settings_no_study_can_use_are_refused_when_the_sampler_is_made(options, message):
    # they were refused at the first proposal (trial 1 failed), or never: a misspelt learn option
    # left every proposal on the plain GP, said only in the reason attribute
    with pytest.raises(ValueError, match=message):
        BoAnonSampler(**options)


def test_the_sampler_pickles_as_optuna_s_do_and_proposes_on_as_before():
    # a study (or sampler) sent to another process or saved by a searcher is pickled, as Optuna's
    # own samplers are: the sampler's lock made that "cannot pickle '_thread.lock' object"
    import pickle

    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=3))
    study.optimize(_objective, n_trials=6)
    copy = pickle.loads(pickle.dumps(study))
    study.optimize(_objective, n_trials=2)
    copy.optimize(_objective, n_trials=2)
    assert [t.params for t in copy.trials[6:]] == [t.params for t in study.trials[6:]]
    copy.optimize(_objective, n_trials=2, n_jobs=2)  # its own lock guards its graph cache
    assert [t.state.name for t in copy.trials] == ["COMPLETE"] * 10


def test_a_value_that_is_not_finite_is_a_failed_trial_to_the_tuner():
    # docs/optuna.md: `return float("inf")` for a configuration that broke
    study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=3))
    study.optimize(lambda t: float("inf") if t.suggest_float("x", 0, 1) > 0.6 else t.params["x"], n_trials=8)
    broke = [t.number for t in study.trials if t.value == float("inf")]
    assert broke and all(t.state.name == "COMPLETE" for t in study.trials)
    tuner = study.sampler.tuner(study, boanon.optuna.search_space(study))
    failed = [t for t in tuner.store.trials() if t.status == "failed"]
    assert [t.reason for t in failed] == [f"Optuna trial {n}" for n in broke]
    assert all(t.error == "objective 'value' is not finite (inf)" for t in failed)


def test_the_sampler_closes_the_tuner_of_each_proposal():
    # each proposal's Tuner (an in-memory store copying the study's trials) was never closed:
    # its SQLite connection and the copy lasted until the garbage collector ran (off here)
    import gc
    import sqlite3

    def open_connections() -> int:
        def is_open(conn: sqlite3.Connection) -> bool:
            try:
                return conn.total_changes >= 0
            except sqlite3.ProgrammingError:  # "Cannot operate on a closed database."
                return False
        return sum(is_open(o) for o in gc.get_objects() if isinstance(o, sqlite3.Connection))

    gc.collect()
    gc.disable()
    try:
        before = open_connections()
        study = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=2))
        study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 2 + t.suggest_float("y", 0, 1), n_trials=5)
        assert study.trials[-1].system_attrs[SURROGATE_ATTR] in ("gp", "structured")  # a model's too
        assert open_connections() == before
    finally:
        gc.enable()


def test_the_sampler_runs_under_optuna_s_hyperband_pruner():
    # HyperbandPruner hands samplers a view of one bracket (_BracketStudy), which refuses any
    # attribute it does not list: reading metric_names there failed every trial after the first.
    # The bracket of a trial hashes the study's name: a fixed one keeps the brackets fixed
    study = optuna.create_study(study_name="hyperband", sampler=BoAnonSampler(seed=0, n_startup_trials=3),
                                pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=9))
    study.set_metric_names(["loss"])

    def objective(trial: optuna.Trial) -> float:
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_int("y", 0, 4)
        for step in range(9):
            trial.report((x - 0.3) ** 2 + y / (step + 1), step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return (x - 0.3) ** 2 + y / 9

    study.optimize(objective, n_trials=12)
    assert {t.state.name for t in study.trials} <= {"COMPLETE", "PRUNED"}
    # the model sees only the new trial's bracket: one that holds under two complete trials is
    # proposed at random, saying so, and the others by a model
    proposed = [(t.system_attrs[SURROGATE_ATTR], t.system_attrs[REASON_ATTR]) for t in study.trials[3:]]
    assert all("too few to model" in why for surrogate, why in proposed if surrogate == "random")
    assert any(surrogate in ("gp", "structured") for surrogate, _ in proposed)


def test_warm_starting_from_an_optuna_storage_says_how_to_import_it(tmp_path):
    # it said "not a BoAnon run store (a database with tables alembic_version, studies, ...)"
    storage = tmp_path / "earlier.db"
    optuna.create_study(study_name="earlier", storage=f"sqlite:///{storage}").optimize(
        lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=3)
    with pytest.raises(StoreError, match="an Optuna storage: `boanon import") as refused:
        BoAnonSampler(warm_start=[storage])
    command = re.search(r"`boanon (.*?)`", str(refused.value)).group(1)
    run = tmp_path / "earlier-run.db"
    command = command.replace("NAME", "earlier").replace("RUN.db", str(run))
    done = CliRunner().invoke(main, shlex.split(command))
    assert done.exit_code == 0, done.output
    assert len(BoAnonSampler(warm_start=[run]).related[0].table) == 3


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_one_sampler_serves_several_studies_each_from_its_own_trials(tmp_path, storage):
    # the sampler kept Optuna's IntersectionSearchSpace, which caches the first study's space: a
    # second in-memory study (the same study id) was sampled at random, one in a storage refused
    url = None if storage == "memory" else f"sqlite:///{tmp_path / 'studies.db'}"
    sampler = BoAnonSampler(seed=0, n_startup_trials=3)
    optuna.create_study(study_name="first", storage=url, sampler=sampler).optimize(_objective, n_trials=6)

    def other(trial: optuna.Trial) -> float:
        return (trial.suggest_float("u", 0, 1) - 0.3) ** 2 + trial.suggest_float("v", 0, 1)

    second = optuna.create_study(study_name="second", storage=url, sampler=sampler)
    second.optimize(other, n_trials=5)
    alone = optuna.create_study(sampler=BoAnonSampler(seed=0, n_startup_trials=3))
    alone.optimize(other, n_trials=5)
    assert [t.params for t in second.trials] == [t.params for t in alone.trials]
    assert second.trials[-1].system_attrs[SURROGATE_ATTR] == "gp"
