"""Planning a tuning job: the instances file, trial durations, the simulator and the planner, and
``boanon plan`` on a real store (the store is not written)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from boanon.cli import main
from boanon.early_stopping import SuccessiveHalving
from boanon.errors import ConfigError
from boanon.planning.durations import TrialTimes, from_store, from_table
from boanon.planning.instances import InstanceType, load_instances, parse_duration
from boanon.planning.plan import Plan, PlanFile, Stage, even_stages
from boanon.planning.planner import Planner
from boanon.planning.simulator import Simulator
from boanon.store import Store
from boanon.table import TrialRecord

ROOT = Path(__file__).resolve().parents[1]
BOANON = str(Path(sys.executable).parent / "boanon")


def _instances(**types: dict) -> dict[str, InstanceType]:
    return {n: InstanceType(n, **spec) for n, spec in types.items()}


# --- the instances file ------------------------------------------------------------------------
@pytest.mark.parametrize("text, field", [
    ("instances: {a: {max_count: 2}}", "instances.a.price_per_hour"),
    ("instances: {a: {price_per_hour: -1, max_count: 2}}", "instances.a.price_per_hour"),
    ("instances: {a: {price_per_hour: 1, max_count: 0}}", "instances.a.max_count"),
    ("instances: {a: {price_per_hour: 1, max_count: 2, billing: soon}}", "instances.a.billing"),
    ("instances: {a: {price_per_hour: 1, max_count: 2, speed: 0}}", "instances.a.speed"),
    ("instances: {a: {price_per_hour: 1, max_count: 2, cores: 4}}", "instances.a.cores"),
    ("instances: {a: {price_per_hour: 1, max_count: 2, 1: x, cores: 4}}", "instances.a.1"),  # was a TypeError
    ("instances: []", "instances"),
])
def test_instances_file_errors_name_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "instances.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_instances(path)
    assert error.value.source == str(path) and error.value.field == field


def test_a_misspelt_instance_field_is_named_with_the_fix(tmp_path: Path) -> None:
    # "unknown field; expected some of (...)": a wording of its own, without the fix
    path = tmp_path / "instances.yaml"
    path.write_text("instances: {a: {price_per_hour: 1, max_cuont: 2}}")
    with pytest.raises(ConfigError, match=r"instances\.a\.max_cuont: unknown key "
                                          r"\(did you mean 'max_count'\?\)"):
        load_instances(path)


@pytest.mark.parametrize("text, field, message", [
    ("instance:\n  c5: {price_per_hour: 1, max_count: 2}\n", "instance",
     "unknown key (did you mean 'instances'?)"),
    ("instances:\n  c5: {price_per_hour: 1, max_count: 2}\nregion: eu\n", "region", "unknown key"),
    ("", "instances", "missing (required)"),
])
def test_the_instances_files_top_level_key_is_checked(tmp_path: Path, text: str, field: str,
                                                      message: str) -> None:
    # a misspelt `instance:` was read as an instance type: "instances.instance.c5: unknown key"
    path = tmp_path / "instances.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_instances(path)
    assert (error.value.source, error.value.field) == (str(path), field)
    assert message in str(error.value)


def test_instances_file_and_billing(tmp_path: Path) -> None:
    path = tmp_path / "instances.yaml"
    path.write_text("instances:\n  c5: {price_per_hour: 3.6, billing: 1m, startup: 1m30s, speed: 2, "
                    "max_count: 4}\n")
    c5 = load_instances(path)["c5"]
    assert (c5.billing, c5.startup, c5.speed, c5.max_count) == (60.0, 90.0, 2.0, 4)
    assert c5.cost(61) == pytest.approx(3.6 * 120 / 3600)  # two started minutes
    assert parse_duration("1h30m", "x", "y") == 5400 and parse_duration(45, "x", "y") == 45
    with pytest.raises(ConfigError, match="--deadline: value"):
        parse_duration("2 hours", "--deadline", "value")
    assert load_instances(ROOT / "examples" / "instances.yaml")["m5.large"].billing == 3600


# --- the simulator -----------------------------------------------------------------------------
def test_simulator_time_and_cost_of_a_deterministic_job() -> None:
    """10 s trials, no overhead: the arithmetic can be checked by hand."""
    times = TrialTimes(np.array([10.0]), 0.0)
    inst = _instances(a=dict(price_per_hour=3.6, billing=1, startup=5, speed=1, max_count=4),
                      h=dict(price_per_hour=3.6, billing=3600, startup=0, speed=2, max_count=4))
    sim = Simulator(inst, times, budget=8, replications=10)
    one = sim.predict(Plan(even_stages(8, 1, "a", 1), 8))
    assert np.all(one.times == 5 + 80) and np.all(one.costs == pytest.approx(3.6 * 85 / 3600))
    four = sim.predict(Plan(even_stages(8, 1, "a", 4), 8))
    assert np.all(four.times == 5 + 20)
    hourly = sim.predict(Plan(even_stages(8, 1, "h", 2), 8))  # speed 2: 5 s trials, billed 1 h each
    assert np.all(hourly.times == 20) and np.all(hourly.costs == pytest.approx(2 * 3.6))
    # 4 workers until 1 trial ended, then 1: three machines go when their trials end at 5 + 10
    shrink = sim.predict(Plan((Stage("a", 4, 1), Stage("a", 1, 8)), 8))
    assert np.all(shrink.times == 5 + 10 + 40) and np.all(shrink.stage_starts[:, 1] == 15)
    assert np.all(shrink.costs == pytest.approx(3.6 * (55 + 3 * 15) / 3600))


def test_simulator_stops_the_trials_the_asha_rule_stops() -> None:
    """One worker runs trials in order: the trials the simulator cuts short are the ones the real
    SuccessiveHalving stops when fed the same values in the same order."""
    times = TrialTimes(np.array([8.0]), 0.0, steps=8)
    spec = "asha:min_resource=1,reduction_factor=2"
    sim = Simulator(_instances(a=dict(price_per_hour=1, max_count=1)), times, 12, spec, replications=1)
    time_asha = sim.predict(Plan(even_stages(12, 1, "a", 1), 12, spec)).times[0]
    rule, ranks, expected = SuccessiveHalving(min_resource=1, reduction_factor=2), sim._ranks[0], 0.0
    for trial in range(12):
        for step in range(1, 9):
            if rule.report(trial, step, ranks[trial]):
                expected += step + 1  # a stopped trial ends at its next step (1 s each)
                break
        else:
            expected += 8
            rule.end(trial)
    assert time_asha == pytest.approx(expected)
    assert expected < 12 * 8  # some trials were stopped


# --- the planner -------------------------------------------------------------------------------
STRAGGLY = TrialTimes(np.array([50.0, 60, 70, 80, 240]), 1.0, steps=30)
TYPES = _instances(small=dict(price_per_hour=0.2, billing=3600, startup=60, speed=1.0, max_count=16),
                   big=dict(price_per_hour=0.7, billing=60, startup=120, speed=3.0, max_count=4))


def test_planner_meets_the_deadline_in_simulation() -> None:
    planner = Planner(TYPES, deadline=900, probability=0.9, stages=3).fit(STRAGGLY, 60)
    assert planner.feasible_
    assert planner.prediction_.time_at(0.9) <= 900
    # fresh draws (another seed) of the chosen plan: it still ends by the deadline ~90 % of the time
    check = Simulator(TYPES, STRAGGLY, 60, replications=400, seed=7).predict(planner.plan_)
    assert check.p_deadline(900) >= 0.85
    # and it is cheaper than the fastest plan it started from
    assert planner.prediction_.cost() < planner.fastest_[1].cost()


def test_planner_picks_the_cheaper_of_two_feasible_plans() -> None:
    """Both all-small and all-big plans meet a loose deadline; the big machines, billed by the
    minute, cost a tenth of the small ones billed by the hour, though the small plan is faster."""
    deadline = 3000
    planner = Planner(TYPES, deadline=deadline, probability=0.9, stages=2).fit(STRAGGLY, 40)
    sim = planner.simulator_
    small = sim.predict(Plan(even_stages(40, 2, "small", 16), 40))
    big = sim.predict(Plan(even_stages(40, 2, "big", 4), 40))
    assert small.time_at(0.9) < big.time_at(0.9) <= deadline  # both feasible, small the faster
    assert big.cost() < small.cost()
    assert {s.instance for s in planner.plan_.stages} == {"big"}
    assert planner.prediction_.cost() <= big.cost()
    reasons = " | ".join(a.reason for a in planner.rejected_)
    assert "costs no less" in reasons or "misses the deadline" in reasons


@pytest.mark.parametrize("deadline", [150, 200])
def test_no_stage_lists_more_machines_than_trials_left_when_it_starts(deadline: float) -> None:
    # extra machines cost nothing (never rented), so the tie kept them: "30 x m5 until 30 ended"
    # for the last 10 trials, and "21 x m5, then 30 x m5" for a stage that rents none more
    types = _instances(m5={"price_per_hour": 0.1, "max_count": 32, "startup": 60.0, "billing": 3600.0})
    times = TrialTimes(np.array([50.0, 60.0, 70.0]), ask_overhead=1.0)
    planner = Planner(types, deadline=deadline, probability=0.9, stages=3, replications=20).fit(times, 30)
    for plan in (planner.plan_, planner.fastest_[0]):
        assert [s.workers <= 30 - before for s, before in zip(plan.stages, (0, 10, 20), strict=True)] == \
            [True] * 3, plan.describe()
    listed_more = planner.plan_.with_stage(2, workers=30)  # the machines it left out: never rented
    assert planner.simulator_.predict(listed_more).cost() == planner.prediction_.cost()
    assert planner.simulator_.predict(listed_more).time_at(0.9) == planner.prediction_.time_at(0.9)


def test_planner_refuses_an_impossible_deadline_with_the_fastest_plan() -> None:
    planner = Planner(TYPES, deadline=100, probability=0.9).fit(STRAGGLY, 60)
    assert not planner.feasible_
    fastest, prediction = planner.fastest_
    assert planner.plan_ == fastest and fastest.stages[0] == Stage("small", 16, 20)
    assert prediction.time_at(0.9) > 100


# --- durations and the command -----------------------------------------------------------------
def _store_with_durations(path: Path, durations: list[float], gap: float = 0.5) -> None:
    """A real store whose trials ran one after another for ``durations`` seconds."""
    with Store(path) as store:
        for i, _ in enumerate(durations):
            trial = store.start_trial({"x": 0.1 * i})
            store.finish_trial(trial.id, TrialRecord(trial.name, {"x": 0.1 * i}, {}, {"cost": 1.0}))
    clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
    conn = sqlite3.connect(path)
    for i, d in enumerate(durations):
        start = clock + timedelta(seconds=gap)
        clock = start + timedelta(seconds=d)
        conn.execute("UPDATE trials SET started = ?, finished = ? WHERE id = ?",
                     (start.isoformat(), clock.isoformat(), i))
    conn.commit()
    conn.close()


def test_durations_from_a_store_and_a_table(tmp_path: Path) -> None:
    store = tmp_path / "run.db"
    _store_with_durations(store, [10.0, 20.0, 30.0])
    trials = tmp_path / "run.trials" / "t0001"
    trials.mkdir(parents=True)
    (trials / "progress.jsonl").write_text("".join(json.dumps({"step": s, "value": 1.0}) + "\n"
                                                   for s in range(1, 26)))
    times = from_store(store)
    assert sorted(times.durations) == pytest.approx([10, 20, 30])
    assert times.ask_overhead == pytest.approx(0.5) and times.steps == 25
    table = tmp_path / "table.csv"
    table.write_text("trial,metric:run_s,objective:cost\nt0,2.5,1\nt1,3.5,2\n")
    assert list(from_table(table, "run_s", scale=10).durations) == [25.0, 35.0]
    with pytest.raises(ConfigError, match="no column 'wall'"):
        from_table(table, "wall")
    with pytest.raises(ConfigError, match=r"no column 'run_sec' in its table \(did you mean 'run_s'\?\)"):
        from_table(table, "run_sec")  # a typo is shown its fix
    with pytest.raises(ConfigError, match="not a BoAnon run store"):
        from_store(table)


def test_steps_missing_from_a_store_name_where_they_were_looked_for(tmp_path: Path) -> None:
    # "none were recorded with the durations; give them (--steps)": a store moved from its
    # trial folders was not seen as the cause
    store = tmp_path / "run.db"
    _store_with_durations(store, [10.0, 20.0])
    instances = tmp_path / "instances.yaml"
    instances.write_text("instances: {small: {price_per_hour: 0.2, max_count: 2}}\n")
    done = CliRunner().invoke(main, ["plan", str(ROOT / "examples" / "synthetic.yaml"), "--instances",
                                     str(instances), "--store", str(store), "--budget", "4",
                                     "--deadline", "1h", "--early-stopping", "asha"])
    assert done.exit_code == 1
    assert (f"none were recorded with the durations (no progress.jsonl of a done trial in "
            f"{tmp_path / 'run.trials'}); give them (--steps) or the run's trial folders (--trials-dir)") \
        in " ".join(done.output.split())


def test_a_mistyped_trials_dir_is_named(tmp_path: Path) -> None:
    """``plan --trials-dir`` naming no directory, or one without the run's trial folders, was
    read as a run without progress reports, silently (a plan without early-stopping rungs); with
    --dataset or a profile it went unread."""
    args = _plan_args(tmp_path)
    (tmp_path / "other" / "x0001").mkdir(parents=True)
    for given, message in [(tmp_path / "run.trails", "no such directory"),
                           (tmp_path / "other", "holds no folder of the store's 4 done trials "
                                                "(t0000, t0001, t0002, ...): not this run's trial folders")]:
        result = CliRunner().invoke(main, [*args, "--deadline", "1h", "--trials-dir", str(given)])
        assert result.exit_code == 1, result.output
        assert f"Error: {given}: --trials-dir: {message}" in " ".join(result.output.split())
    (tmp_path / "run.trials" / "t0002").mkdir(parents=True)  # the run's: one trial's folder will do
    assert CliRunner().invoke(main, [*args, "--deadline", "1h", "--trials-dir",
                                     str(tmp_path / "run.trials")]).exit_code == 0
    table = tmp_path / "table.csv"
    table.write_text("trial,metric:run_s,objective:cost\nt0,2.5,1\nt1,3.5,2\n")
    unread = CliRunner().invoke(main, ["plan", str(ROOT / "examples" / "synthetic.yaml"), "--instances",
                                       str(tmp_path / "instances.yaml"), "--dataset", str(table),
                                       "--duration-column", "run_s", "--budget", "4", "--deadline", "1h",
                                       "--trials-dir", str(tmp_path / "run.trials")])
    assert unread.exit_code == 1
    assert "Error: command line: --trials-dir: only with --store" in unread.output


def _plan_args(tmp_path: Path) -> list[str]:
    """``plan`` of 30 trials on two instance types, with durations from a store of 4 trials."""
    store = tmp_path / "run.db"
    _store_with_durations(store, [40.0, 50.0, 60.0, 200.0])
    instances = tmp_path / "instances.yaml"
    instances.write_text("instances:\n  small: {price_per_hour: 0.2, billing: 1h, startup: 60s, "
                         "max_count: 8}\n  big: {price_per_hour: 0.7, billing: 1m, startup: 2m, "
                         "speed: 3, max_count: 4}\n")
    return ["plan", str(ROOT / "examples" / "synthetic.yaml"), "--instances", str(instances),
            "--store", str(store), "--budget", "30", "--replications", "50"]


def test_plan_command_writes_a_plan_and_leaves_the_store_alone(tmp_path: Path) -> None:
    args = _plan_args(tmp_path)
    store = tmp_path / "run.db"
    before = store.read_bytes()
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(main, [*args, "--deadline", "30m", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "predicted time: mean" in result.output and "rejected alternatives" in result.output
    plan = PlanFile.load(out)
    assert plan.plan.budget == 30 and plan.predicted["time_s"]["at_probability_0.9"] <= 1800
    assert set(plan.instances) == {s.instance for s in plan.plan.stages}
    assert store.read_bytes() == before and not Path(f"{store}-wal").exists()
    refused = CliRunner().invoke(main, [*args, "--deadline", "5m"])
    assert refused.exit_code == 1
    assert "no plan ends by 300 s with probability 0.9: the fastest plan (" in refused.output
    bad = CliRunner().invoke(main, [*args, "--deadline", "soon"])
    assert bad.exit_code == 2  # a usage error (it said "--deadline: value: ..." after reading the YAML)
    assert bad.output.endswith("Error: Invalid value for '--deadline': expected a duration such as 90s, "
                               "2m or 1h30m, got 'soon'\n"), bad.output


@pytest.mark.parametrize("option, value, message", [
    ("--deadline", "0", "expected a duration > 0, got '0'"),  # planned for, then "no plan ends by 0 s"
    ("--deadline", "0s", "expected a duration > 0, got '0s'"),
    ("--deadline", "-5", "expected a duration > 0, got '-5'"),  # said ">= 0", as if 0 were one
    ("--early-stopping", "asha:min_resource=0",  # refused after the durations, naming no option
     "early stopping 'asha:min_resource=0': need min_resource >= 1 and reduction_factor >= 2"),
    ("--early-stopping", "median", "early stopping 'median': plans simulate 'asha' only"),
])
def test_a_bad_deadline_or_rule_is_the_options_usage_error_before_any_work(
        tmp_path: Path, option: str, value: str, message: str) -> None:
    args = [*_plan_args(tmp_path), "--deadline", "1h"]
    result = CliRunner().invoke(main, [*args, f"{option}={value}"])
    assert result.exit_code == 2, result.output
    assert result.output.endswith(f"Error: Invalid value for '{option}': {message}\n"), result.output
    assert "trial durations" not in result.output  # before the durations were read


def test_a_plan_is_refused_for_a_yaml_it_was_not_made_for(tmp_path: Path) -> None:
    """``tune OTHER.yaml --plan plan.json`` ran a plan made for another system's durations (or
    for the YAML before it changed), unsaid: the plan records the YAML's path and settings."""
    from boanon.planning.run import load_plan

    args = _plan_args(tmp_path)
    config = tmp_path / "synthetic.yaml"
    config.write_text((ROOT / "examples" / "synthetic.yaml").read_text())
    args[1] = str(config)
    out = tmp_path / "plan.json"
    assert CliRunner().invoke(main, [*args, "--deadline", "30m", "-o", str(out)]).exit_code == 0
    made_for = json.loads(out.read_text())["made_for"]
    assert made_for["config"] == str(config.resolve()) and len(made_for["sha256"]) == 64
    other = tmp_path / "other.yaml"  # another system: the synthetic one of another seed
    other.write_text(config.read_text().replace("seed: 0,", "seed: 1,"))
    refused = CliRunner().invoke(main, ["tune", str(other), "--plan", str(out), "--store",
                                        str(tmp_path / "x.db")])
    assert refused.exit_code == 1
    assert (f"Error: {out}: made_for: the plan was made for {config.resolve()}, not for {other}, whose "
            f"settings differ: plan again for it (boanon plan {other} ... -o {out})") in refused.output
    assert not (tmp_path / "x.db").exists()
    copy = tmp_path / "copy.yaml"  # the same settings elsewhere, commented and laid out anew: the same job
    copy.write_text("# tuned on the cluster\n" + yaml.safe_dump(yaml.safe_load(config.read_text()),
                                                                sort_keys=True, indent=4))
    assert load_plan(out, copy).plan.budget == 30
    config.write_text(config.read_text().replace("budget: 30", "budget: 40"))  # changed since
    with pytest.raises(ConfigError, match=f"the plan was made for {re.escape(str(config.resolve()))}, "
                                          "whose settings changed since: plan again"):
        load_plan(out, config)
    data = json.loads(out.read_text())
    del data["made_for"]  # a plan written before plans recorded their YAML: still read, as it was
    out.write_text(json.dumps(data))
    assert load_plan(out, other).made_for is None
    out.write_text(json.dumps({**data, "made_for": "synthetic.yaml"}))
    with pytest.raises(ConfigError, match=r"plan.json: made_for: expected \{config: "):
        load_plan(out, config)


def test_a_local_run_of_a_plan_is_compared_with_the_plan_without_start_up(tmp_path: Path) -> None:
    # `boanon tune --plan` runs on a local cluster: the plan's 60-120 s of start-up per machine
    # were in its planned time ("planned 94.9 s ... actual 5.7 s") and cost, never in the run's
    from boanon.planning.run import PlannedRun

    out = tmp_path / "plan.json"
    planned = CliRunner().invoke(main, [*_plan_args(tmp_path), "--deadline", "30m", "-o", str(out)])
    assert planned.exit_code == 0, planned.output
    plan = PlanFile.load(out)
    local = plan.predicted["local_without_startup"]
    assert local["time_s"]["mean"] <= plan.predicted["time_s"]["mean"] - 60  # no machine starts up
    here, elsewhere = PlannedRun(plan, time_s=5.0, local=True).report(), PlannedRun(plan, time_s=5.0).report()
    assert f"time  planned {local['time_s']['mean']:.1f} s" in here and "start at once" in here
    assert f"time  planned {plan.predicted['time_s']['mean']:.1f} s" in elsewhere  # a cluster of the type


def test_the_plan_is_written_though_the_report_finds_its_reader_gone(tmp_path: Path) -> None:
    """``boanon plan ... -o plan.json | head -8`` exited 1 with no plan: the report came first,
    and printing into the pipe head had closed failed before the save."""
    out = tmp_path / "plan.json"
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the report starts, as a `| head` that exited
    try:
        run = subprocess.run([BOANON, *_plan_args(tmp_path), "--deadline", "30m", "-o", str(out)],
                             stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write)
    assert run.stderr == ""  # quiet; exit status 1, as Python and click end on a closed stdout
    assert run.returncode == 1
    assert PlanFile.load(out).plan.budget == 30


def test_plan_file_errors_name_the_field(tmp_path: Path) -> None:
    good = PlanFile(Plan((Stage("a", 2, 5), Stage("a", 1, 10)), 10),
                    _instances(a=dict(price_per_hour=1, max_count=2)))
    path = tmp_path / "plan.json"
    good.save(path)
    assert PlanFile.load(path).plan == good.plan
    data = json.loads(path.read_text())
    data["stages"][1]["until_ended"] = 9
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="stages: the last stage must end at the budget"):
        PlanFile.load(path)
    data["stages"][1] = {"instance": "zz", "workers": 1, "until_ended": 10}
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"stages\[1\]\.instance: 'zz' is not in instances"):
        PlanFile.load(path)


def test_a_file_that_is_no_plan_says_what_a_plan_is(tmp_path: Path) -> None:
    # the tuning YAML given as --plan read "file: cannot read a plan: Expecting value: line 1
    # column 1 (char 0)": JSON's parser, not what the file should have been
    path = tmp_path / "sgd.yaml"
    path.write_text("# a tuning YAML\nspace: {x: {type: float, low: 0, high: 1}}\n")
    with pytest.raises(ConfigError, match=r"sgd.yaml: line 1: not a plan: a plan is the JSON file "
                                          r"`boanon plan -o plan.json` writes \(Expecting value\)"):
        PlanFile.load(path)


def test_the_profiling_run_is_the_yamls_own_loop_with_its_warm_start(tmp_path: Path, monkeypatch) -> None:
    """The profile ran a loop of its own, without the YAML's warm start or a budget: a cold design
    of 6 trials, so a profile of 8 measured the loop's overhead on design trials (~0.005 s) where
    the job's warm loop proposes from its fourth trial on (the sgd example's ~2 s a trial)."""
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the current directory
    data = yaml.safe_load((ROOT / "examples" / "synthetic.yaml").read_text())
    related = tmp_path / "related.db"  # an earlier run of the same system
    made = CliRunner().invoke(main, ["tune", "examples/synthetic.yaml", "--budget", "4", "--store",
                                     str(related)])
    assert made.exit_code == 0, made.output
    del data["n_init"]
    config = tmp_path / "warm.yaml"
    config.write_text(yaml.safe_dump({**data, "warm_start": str(related)}))
    instances = tmp_path / "instances.yaml"
    instances.write_text("instances: {local: {price_per_hour: 1, max_count: 2}}\n")
    result = CliRunner().invoke(main, ["plan", str(config), "--instances", str(instances), "--deadline",
                                       "1h", "--profile", "8", "--budget", "10", "--replications", "20"])
    assert result.exit_code == 0, result.output
    overhead = float(re.search(r"loop overhead ([0-9.e-]+) s per trial", result.output)[1])
    assert overhead > 0.05, result.output  # the median gap is a proposal's: 3 design trials, 5 proposed


def test_plan_command_profiles_the_system_without_a_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # examples.synthetic_system is imported from the current directory
    before = set(ROOT.iterdir())
    instances = tmp_path / "instances.yaml"
    instances.write_text("instances: {local: {price_per_hour: 1, max_count: 2}}\n")
    result = CliRunner().invoke(main, ["plan", "examples/synthetic.yaml", "--instances", str(instances),
                                       "--deadline", "1h", "--profile", "2", "--budget", "10",
                                       "--replications", "20"])
    assert result.exit_code == 0, result.output
    assert "2 trial durations from a profiling run of 2 trials of examples/synthetic.yaml" in result.output
    assert "stage 1: 1 x local" in result.output  # an hour is plenty: one machine is cheapest
    assert set(ROOT.iterdir()) == before  # the profiling store and trials were temporary

