"""``boanon plan``: the cheapest machines and workers per stage to finish a tuning job by a deadline."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import click

from boanon.cli.options import Duration, StopperSpec
from boanon.cli.outputs import OutputFile, refuse_overwriting
from boanon.config import load_config
from boanon.errors import ConfigError
from boanon.planning.durations import TrialTimes, from_store, from_table
from boanon.planning.instances import InstanceType, load_instances
from boanon.planning.plan import LOCAL, MadeFor, PlanFile
from boanon.planning.planner import Planner
from boanon.planning.simulator import asha_rule
from boanon.tuning import TuneRequest, run_tuning


@click.command("plan")
@click.argument("config_file", metavar="CONFIG.yaml", type=click.Path(exists=True, dir_okay=False))
@click.option("--deadline", "seconds", required=True, type=Duration(),
              help="When the job must end: 2h, 90m, 1h30m or seconds.")
@click.option("--instances", "instances_file", required=True, metavar="INSTANCES.yaml",
              type=click.Path(exists=True, dir_okay=False),
              help="Instance types: price_per_hour, billing, startup, speed, max_count.")
@click.option("--store", "store_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Take trial durations from this run's store (read only).")
@click.option("--dataset", type=click.Path(exists=True), default=None,
              help="Take trial durations from a dataset or table (with --duration-column).")
@click.option("--duration-column", default=None, help="The dataset's column of trial durations (s).")
@click.option("--duration-scale", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True, help="Multiply the duration column by this (e.g. iterations per trial).")
@click.option("--profile", "profile_trials", type=click.IntRange(min=1), default=3, show_default=True,
              help="Without --store or --dataset: run this many trials to measure them.")
@click.option("--trials-dir", type=click.Path(file_okay=False), default=None,
              help="The store's trial logs, for progress steps (default: <store>.trials).")
@click.option("--probability", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9,
              show_default=True, help="Meet the deadline with this probability.")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="Trials in the job (default: the YAML's budget).")
@click.option("--early-stopping", type=StopperSpec(asha_rule), default=None, metavar="asha[:key=value,...]",
              help="The job's early-stopping rule, as boanon tune takes it (asha only).")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Progress steps of a complete trial (default: from the store's progress files).")
@click.option("--stages", type=click.IntRange(min=1), default=3, show_default=True,
              help="Stages of the plan (each ends after an equal share of the trials).")
@click.option("--ask-overhead", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="The loop's time per trial (default: measured in the store; 0 for a dataset).")
@click.option("--replications", type=click.IntRange(min=10), default=200, show_default=True,
              help="Monte-Carlo runs per plan.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--alternatives", type=click.IntRange(min=0), default=8, show_default=True,
              help="How many rejected alternatives to print.")
@click.option("-o", "--output", type=OutputFile(), default=None,
              help="Write the plan as JSON for boanon tune --plan.")
def plan_command(config_file: str, seconds: float, instances_file: str, store_file: str | None,
                 dataset: str | None, duration_column: str | None, duration_scale: float,
                 profile_trials: int, trials_dir: str | None, probability: float, budget: int | None,
                 early_stopping: str | None, steps: int | None, stages: int,
                 ask_overhead: float | None, replications: int, seed: int, alternatives: int,
                 output: str | None) -> None:
    """Plan a tuning job: the cheapest plan that ends by --deadline with --probability."""
    refuse_overwriting(output, "-o", config_file, instances_file, store_file, dataset)
    try:
        config = load_config(config_file)
        made_for = MadeFor.of(config_file)  # the settings read now, before a profile runs them
        budget = budget or config.budget
        if budget is None:
            raise ConfigError(config_file, "budget", "missing: set it in the file or pass --budget")
        instances = load_instances(instances_file)
        times = _times(config_file, store_file, dataset, duration_column, duration_scale,
                       profile_trials, trials_dir, steps)
        if ask_overhead is not None:
            times = replace(times, ask_overhead=ask_overhead)
        planner = Planner(instances, seconds, probability, stages, early_stopping, steps,
                          replications, seed).fit(times, budget)
    except (ConfigError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    if output and planner.feasible_:  # first: a reader that stops early (`| head`) costs no plan
        _plan_file(planner, instances, times, seconds, probability, made_for).save(output)
    click.echo(times.summary())
    if not planner.feasible_:
        raise click.ClickException(_infeasible(planner, seconds, probability))
    _echo_plan(planner, budget, seconds, probability, alternatives)
    if output:
        click.echo(f"plan written to {output}; run it with: boanon tune {config_file} --plan {output}")


def _plan_file(planner: Planner, instances: dict[str, InstanceType], times: TrialTimes,
               seconds: float, probability: float, made_for: MadeFor) -> PlanFile:
    """The plan for ``boanon tune --plan``: its stages, the instance types they use, what the
    simulation predicts (the fastest plan and the rejected ones too) and the YAML it is for."""
    fastest, fastest_prediction = planner.fastest_
    used = {s.instance for s in planner.plan_.stages}
    return PlanFile(planner.plan_, {n: t for n, t in instances.items() if n in used}, {
        **planner.prediction_.to_dict(seconds, probability), "deadline_s": seconds,
        "probability": probability, "durations": times.summary(),
        "fastest": {"plan": fastest.describe(), **fastest_prediction.to_dict(seconds, probability)},
        LOCAL: planner.simulator_.without_startup().predict(planner.plan_).to_dict(seconds, probability),
        "rejected": [a.to_dict() for a in planner.rejected_]}, made_for)


def _infeasible(planner: Planner, seconds: float, probability: float) -> str:
    """Why no plan was chosen: what the fastest one reaches."""
    fastest, prediction = planner.fastest_
    return (f"no plan ends by {seconds:.0f} s with probability {probability:g}: the fastest plan "
            f"({fastest.describe()}) ends by {prediction.time_at(probability):.0f} s "
            f"(mean {prediction.to_dict()['time_s']['mean']:.0f} s, cost {prediction.cost():.4g})")


def _echo_plan(planner: Planner, budget: int, seconds: float, probability: float,
               alternatives: int) -> None:
    """The chosen plan's stages and predictions, the fastest plan and the rejected ones."""
    fastest, fastest_prediction = planner.fastest_
    predicted = planner.prediction_.to_dict(seconds, probability)
    click.echo(f"plan: the cheapest of the plans looked at that ends by {seconds:.0f} s "
               f"with probability {probability:g}")
    for i, (stage, begins) in enumerate(zip(planner.plan_.stages, predicted["stage_start_s"], strict=True)):
        click.echo(f"  stage {i + 1}: {stage.workers} x {stage.instance} from ~{begins:.0f} s until "
                   f"{stage.until_ended} of {budget} trials ended")
    t, c = predicted["time_s"], predicted["cost"]
    click.echo(f"predicted time: mean {t['mean']:.0f} s, p10 {t['p10']:.0f}, p50 {t['p50']:.0f}, "
               f"p90 {t['p90']:.0f}; by the deadline with probability {predicted['p_deadline']:.2f}")
    click.echo(f"predicted cost: mean {c['mean']:.4g}, p10 {c['p10']:.4g}, p90 {c['p90']:.4g}")
    click.echo(f"fastest plan: {fastest.describe()}: {fastest_prediction.time_at(probability):.0f} s "
               f"at probability {probability:g}, cost {fastest_prediction.cost():.4g}")
    rejected = planner.rejected_
    if rejected and alternatives:
        click.echo(f"rejected alternatives ({len(rejected)}; {min(alternatives, len(rejected))} shown, "
                   "the last round first):")
        for a in rejected[:alternatives]:
            click.echo(f"  {a.plan.describe()}: {a.time:.0f} s, cost {a.cost:.4g}: {a.reason}")


def _times(config_file: str, store_file: str | None, dataset: str | None, column: str | None,
           scale: float, profile_trials: int, trials_dir: str | None, steps: int | None) -> TrialTimes:
    if store_file and dataset:
        raise ConfigError("command line", "--store/--dataset", "give one source of durations, not both")
    if trials_dir is not None and not store_file:  # else it went unread, unsaid
        raise ConfigError("command line", "--trials-dir", "only with --store: the trial folders of that "
                          "run (a dataset's or a profiling run's durations need none)")
    if store_file:
        return from_store(store_file, trials_dir, steps)
    if dataset:
        if column is None:
            raise ConfigError("command line", "--duration-column", "needed with --dataset")
        return from_table(dataset, column, scale, steps=steps)
    return profile(config_file, profile_trials)


def profile(config_file: str | Path, trials: int) -> TrialTimes:
    """Run the YAML's tuning loop for ``trials`` trials into a temporary store and measure them:
    ``boanon tune CONFIG --budget trials`` as it runs (its warm start, output constraints and
    initial design for that budget), so the loop's overhead is that of its proposals. Here, above
    both the planner and the tuning loop: the planner only reads durations."""
    with tempfile.TemporaryDirectory(prefix="boanon-profile-") as tmp:
        store_file, trials_dir = Path(tmp) / "profile.db", Path(tmp) / "trials"
        run_tuning(TuneRequest(config_file, budget=trials, store=store_file, trials_dir=trials_dir,
                               max_failures=0))
        times = from_store(store_file, trials_dir)
    return TrialTimes(times.durations, times.ask_overhead, times.steps,
                      f"a profiling run of {trials} trials of {config_file}")
