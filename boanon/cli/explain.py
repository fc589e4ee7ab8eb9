"""``boanon explain``: why the best trial (or any) beats the default: the ablation path and the
metrics that moved."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import pandas as pd

from boanon import units
from boanon.best import plain_config
from boanon.cli.stores import reading_store, writing_store
from boanon.config import TuneConfig, load_config
from boanon.errors import ConfigError, MissingFile
from boanon.explain import START, ablation_path, metric_moves
from boanon.objectives import Objective
from boanon.report import RunView, fit_surrogate, read_run
from boanon.results import ABLATION, broken
from boanon.space import Space
from boanon.store import CONFIG_NOTE, DIRECTORY_NOTE, TRIALS_NOTE, StoredTrial
from boanon.store import trials_dir as store_trials_dir
from boanon.tuner import store_result
from boanon.tuning import sigterm_interrupts


@click.command("explain")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("--trial", "trial_id", default=None, metavar="NAME|ID",
              help="Explain this trial instead of the best.")
@click.option("--objective", default=None, help="The objective to explain (default: the first).")
@click.option("--measure", is_flag=True,
              help="Also run the path's intermediate configurations through the run's runner and store "
                   "them as trials of the run (surrogate 'ablation').")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="With --measure: the run's tuning YAML (default: the one `boanon tune` recorded); "
                   "its relative paths are read from the directory the run was started in.")
@click.option("--trials-dir", type=click.Path(file_okay=False), default=None,
              help="With --measure: where the measurements' logs go (default: <store>.trials beside the "
                   "store, as `boanon tune` and its --resume).")
@click.option("--metrics", "n_metrics", type=click.IntRange(min=0), default=12, show_default=True,
              help="How many moved metrics to list.")
def explain_command(store_file: str, trial_id: str | None, objective: str | None, measure: bool,
                    config_file: str | None, trials_dir: str | None, n_metrics: int) -> None:
    """Why the best trial beats the default: which parameter changes matter, in what order (by the
    run's model; with --measure also on the system), and which metrics moved on the way."""
    with (writing_store(store_file) if measure else reading_store(store_file)) as store:
        try:
            run = read_run(store)
            goal = next((o for o in run.objectives if o.name == (objective or run.objectives[0].name)), None)
            if goal is None:
                names = [o.name for o in run.objectives]
                raise ValueError(f"unknown objective {objective!r}; the run's: {names}")
            default = run.default()
            target = run.trial(trial_id) if trial_id is not None else run.best(goal)
            if default is None or target is None:
                raise ValueError("no finished feasible trial yet" if target is None
                                 else "the run has no finished trial of the default configuration")
            if target.status != "done" or goal.name not in target.objectives:
                raise ValueError(f"trial {target.name} is {target.status}: nothing to explain")
            if target.config == default.config:
                click.echo(f"{target.name} has the default configuration ({goal.name}="
                           f"{target.objectives[goal.name]:.6g})" + ("" if trial_id else
                           ": no trial beats the default yet; pass --trial to compare another"))
                return
            surrogate = fit_surrogate(run)
            path = ablation_path(surrogate, default.config, target.config, goal)
            measured: dict[int, StoredTrial] = {}
            if measure and len(path) > 2:
                with sigterm_interrupts():
                    measured = _measure(run, path, config_file, trials_dir, target.name)
        except (ValueError, KeyError, ConfigError) as exc:
            raise click.ClickException(f"{store_file}: {exc}") from None
        except KeyboardInterrupt:
            click.echo("\ninterrupted: the measurement that was running is stored as failed", err=True)
            sys.exit(130)
        steps = path.iloc[1:].sort_values("gain", ascending=False)  # most helpful change first
        params = [n for name in steps["param"] for n in name.split("+")]
        moves = metric_moves(run.graph, default.metrics, target.metrics, params, goal.name)
    differ = "differs" if len(params) == 1 else "differ"
    click.echo(f"{_valued(target, goal, run)} against the default {_valued(default, goal, run)}, "
               f"{goal.direction}: {len(params)} of {units.count(len(run.space), 'parameter')} {differ}")
    click.echo(_path_text(path, run, surrogate.name, goal.name, default, target, measured))
    caveat = model_caveat(path["gain"].sum(), goal.to_minimize(default.objectives[goal.name])
                          - goal.to_minimize(target.objectives[goal.name]), stepped=bool(measured))
    if caveat:
        click.echo(caveat)
    click.echo(_moves_text(moves, n_metrics, run.graph is not None))


def _valued(trial: StoredTrial, goal: Objective, run: RunView) -> str:
    """``t0000 (cost=11.83, infeasible: breaks g0_load <= 0.6)``: the output constraints it breaks
    are said, for a gain over a default that breaks one is no gain over a configuration to deploy."""
    bounds = ", ".join(c.describe() for c in broken(trial, run.constraints))
    return f"{trial.name} ({goal.name}={trial.objectives[goal.name]:.6g}" \
        + (f", infeasible: breaks {bounds})" if bounds else ")")


def _path_text(path: pd.DataFrame, run: RunView, model: str, objective: str, default: StoredTrial,
               target: StoredTrial, measured: dict[int, StoredTrial]) -> str:
    lines = [f"\nablation path, greedy by the {model} model's predicted {objective} (mean +- sd)"
             + (", and measured" if measured else "") + ":"]
    space = run.space
    for row in path.itertuples():
        if row.param == START:
            what, observed = f"default ({default.name})", default.objectives[objective]
        else:
            what = f"{row.step:>2}. {row.param} {_change(space, row.param, row.old, row.new)}"
            trial = target if row.step == len(path) - 1 else measured.get(row.step)
            observed = None if trial is None else trial.objectives.get(objective)
        line = f"  {what:<48} {row.mean:>10.4g} +- {row.sd:<8.2g}"
        if row.param != START:
            line += f" gain {row.gain:+.3g}" + (f" ({row.share:.0%})" if pd.notna(row.share) else "")
        if observed is not None:
            line += f"   measured {observed:.4g}"
        elif row.step in measured:
            line += f"   measured: {measured[row.step].status} ({measured[row.step].error})"
        lines.append(line)
    steps = path.iloc[1:]
    if len(steps) > 1 and steps["share"].notna().all():
        order = steps.sort_values("share", ascending=False)
        top = order[order["share"].cumsum().shift(fill_value=0) < 0.8]
        give = "gives" if len(top) == 1 else "give"
        lines.append(f"{len(top)} of {len(steps)} changes {give} {top['share'].sum():.0%} of the predicted "
                     f"improvement: {', '.join(top['param'])}")
    return "\n".join(lines)


def _change(space: Space, name: str, old: object, new: object) -> str:
    """``old -> new`` as export writes the values (several parameters changed together as
    stored); a change too small for export's rounding (``1.0 -> 1.0``) shows more digits."""
    if name not in space.params:
        return f"{old} -> {new}"
    shown = [plain_config(space, {name: v})[name] for v in (old, new)]
    if shown[0] == shown[1] and old != new:
        return f"{old:.6g} -> {new:.6g}"
    return f"{shown[0]} -> {shown[1]}"


MODEL_ACCOUNTS = (0.5, 2.0)
"""The range of the model's predicted improvement, as a share of the measured one, in which the
path's shares say what made the measured gain."""


def model_caveat(predicted: float, measured: float, stepped: bool = False) -> str | None:
    """A warning when the model's predicted improvement from the default to the trial (the
    path's whole gain) is far from the measured one: its shares then split an improvement the
    model does not see (a share of 84 % of a 1 % prediction against a measured doubling).
    ``stepped``: the steps were measured (``--measure``), so it points at them, not at itself."""
    if measured <= 0 or MODEL_ACCOUNTS[0] <= predicted / measured <= MODEL_ACCOUNTS[1]:
        return None
    see = "the measured steps say more" if stepped else "--measure runs each step"
    return (f"the model predicts {predicted:+.3g} of the measured {measured:+.3g} improvement: "
            f"the shares above say little about what made it ({see})")


def _moves_text(moves: pd.DataFrame, n: int, has_graph: bool) -> str:
    if not n or moves.empty:
        return ""
    where = "nearest the objective in the run's graph first; moved by: changed ancestors, most helpful " \
        "first; <- its parents" if has_graph else "the run has no graph"
    lines = [f"\nmetrics that moved (observed, default -> this trial; {where}):"]
    for row in moves.head(n).itertuples():
        change = f"{row.change:+.0%}" if pd.notna(row.change) else "from 0"
        line = f"  {row.metric:<32} {row.before:>10.4g} -> {row.after:<10.4g} {change:>7}"
        movers = row.moved_by.split(", ") if row.moved_by else []
        if movers:
            more = f" and {len(movers) - 3} more" if len(movers) > 3 else ""
            line += f"  moved by {', '.join(movers[:3])}{more}"
        parents = row.via.split(", ") if row.via else []
        if parents:
            line += f"  <- {', '.join(parents)}" if len(parents) <= 3 else f"  <- {len(parents)} parents"
        lines.append(line)
    return "\n".join(lines)


def _measure(run: RunView, path: pd.DataFrame, config_file: str | None, trials_dir: str | None,
             target: str) -> dict[int, StoredTrial]:
    """Run the path's intermediate configurations (not its ends: both ran already) through the run's
    runner, store each as a trial of the run, and return them by step.

    The YAML is read, and its trials run, from the directory the run was started in (its relative
    paths, its runner's own, mean what they meant to the run); the paths given to this command
    are the user's, from where it is run. The logs go where ``boanon tune --resume`` would put
    this store's next trials: ``trials_dir`` or ``<store>.trials``. Not to the folder the run
    recorded: a copied store records its original's, whose next trials would then find their
    folders taken."""
    store = run.store
    yaml_file = str(Path(config_file).absolute()) if config_file else store.note(CONFIG_NOTE)
    if yaml_file is None:
        raise ValueError("the store does not say which tuning YAML ran it: pass --config")
    if not config_file and not Path(yaml_file).is_file():
        raise ValueError(f"the tuning YAML the run recorded, {yaml_file}, is not there any more: "
                         "pass --config")
    if store.counts()["running"]:
        raise ValueError("trials are running: measure when the run has stopped")
    folder = store_trials_dir(store, trials_dir).resolve()
    with _run_directory(store.note(DIRECTORY_NOTE)) as started_in:
        config = _tuning_config(yaml_file, started_in)
        if config.space.to_dict() != run.space.to_dict():
            raise ValueError(f"{yaml_file} has another search space than the run: pass its --config")
        recorded = store.note(TRIALS_NOTE)
        if recorded is not None and Path(recorded) != folder:
            click.echo(f"the run logged its trials in {recorded}; these measurements' logs go to {folder}",
                       err=True)
        return _run_steps(run, path, config, folder, target)


def _run_steps(run: RunView, path: pd.DataFrame, config: TuneConfig, folder: Path,
               target: str) -> dict[int, StoredTrial]:
    """:func:`_measure`'s trials, one per intermediate step of ``path``, logged in ``folder``."""
    from boanon.runners.trial import run_trial

    store = run.store
    runner = config.make_runner()
    out: dict[int, StoredTrial] = {}
    for row in path.iloc[1:-1].itertuples():
        trial = store.start_trial(row.config, surrogate=ABLATION,
                                  reason=f"ablation step {row.step} towards {target}: {row.param}")
        click.echo(f"measuring step {row.step} ({row.param}) as {trial.name} ...", err=True)
        try:
            record = run_trial(runner, dict(row.config), folder / trial.name, config.adapter)
        except Exception as exc:  # one failed configuration is that step's result, not the end
            out[row.step] = store_result(store, run.space, run.objectives, trial, exc)
        except BaseException:  # Ctrl-C, a polite kill: no trial is left running for ever
            store.fail_trial(trial.id, "ablation measurement interrupted")
            raise
        else:
            out[row.step] = store_result(store, run.space, run.objectives, trial, record)
    return out


@contextmanager
def _run_directory(recorded: str | None) -> Iterator[str | None]:
    """Inside, the current directory is the one the run was started in (the store's note), as in
    ``boanon tune``; yields it, or None where the store does not say (recorded before BoAnon
    kept it) or it is gone: then the current directory stays, as it always did."""
    if recorded is None or not Path(recorded).is_dir():
        if recorded is not None:
            click.echo(f"the run was started in {recorded}, which is gone: its YAML's relative paths "
                       "are read from the current directory", err=True)
        yield None
        return
    before = os.getcwd()
    os.chdir(recorded)
    try:
        yield recorded
    finally:
        os.chdir(before)


def _tuning_config(config_file: str, started_in: str | None) -> TuneConfig:
    """The run's tuning YAML, read from the current directory: ``started_in``, the run's, or None
    where that is not known. Its errors name the YAML (and the field) themselves, so they leave
    before the command's errors are prefixed with the store, which is not to blame; a relative
    path missing from a directory that may not be the run's says so."""
    try:
        return load_config(config_file)
    except ConfigError as exc:
        hint = "" if started_in is not None or not isinstance(exc, MissingFile) or exc.path.is_absolute() \
            else " (the run's YAML paths are relative to the directory the run was started in: run " \
            "explain from there, or pass --config)"
        raise click.ClickException(f"{exc}{hint}") from None
