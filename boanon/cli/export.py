"""``boanon export``: a stored run as the tidy table (the shape ``boanon ingest`` writes), or its
best configuration as a file (YAML, a RocksDB OPTIONS file, db_bench flags)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click
import numpy as np

from boanon.best import format_for, plain_config, render_config
from boanon.cli.outputs import OutputFile, StorageURL, refuse_overwriting
from boanon.cli.stores import reading_store
from boanon.errors import ConfigError
from boanon.multiobjective import PARETO, OutputConstraint, pareto_flags
from boanon.objectives import Objective
from boanon.report import read_run
from boanon.results import is_feasible, study_goals
from boanon.storage_urls import sqlite_file
from boanon.store import StoredTrial, holds_a_run
from boanon.table import TRIAL, write_table


@click.command("export")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=OutputFile(allow_dash=True), default="-",
              show_default=True, help="File to write ('-' for standard output).")
@click.option("--pareto/--no-pareto", default=None,
              help="Add a 'pareto' column (on the front of the feasible trials that ran to the end, "
                   "not stopped early); default: on for runs "
                   "with several objectives or output constraints.")
@click.option("--best", is_flag=True,
              help="Write the best trial's configuration instead of the table (YAML; an OPTIONS file "
                   "when the output is named OPTIONS*).")
@click.option("--trial", "trial_id", default=None, metavar="NAME|ID",
              help="Write this trial's configuration (e.g. a point of the Pareto front).")
@click.option("--objective", default=None, help="With --best: best by this objective (default: the first).")
@click.option("--format", "fmt", default=None,
              help="Format of the configuration: yaml or one a target registers (RocksDB's: options, "
                   "an OPTIONS file; db_bench, flags); default from the output's name.")
@click.option("--optuna", "optuna_url", type=StorageURL(), default=None, metavar="STORAGE_URL",
              help="Write the run into an Optuna storage (e.g. sqlite:///optuna.db) for optuna-dashboard "
                   "and Optuna's plots; needs the optuna extra. A later export replaces the study.")
@click.option("--study-name", default=None, help="With --optuna: the study's name (default: the store's).")
def export_command(store_file: str, output: str, pareto: bool | None, best: bool, trial_id: str | None,
                   objective: str | None, fmt: str | None, optuna_url: str | None,
                   study_name: str | None) -> None:
    """Write the finished trials of a run as CSV, one row per trial (failed trials left out), or
    with --best / --trial one configuration as a file."""
    refuse_overwriting(output, "-o", store_file)
    if optuna_url is not None:
        _export_optuna(store_file, optuna_url, study_name)
    elif best or trial_id is not None:
        _export_config(store_file, output, trial_id, objective, fmt)
    else:
        _export_table(store_file, output, pareto)


def _export_config(store_file: str, output: str, trial_id: str | None, objective: str | None,
                   fmt: str | None) -> None:
    with reading_store(store_file) as store:
        try:
            run = read_run(store)
            if trial_id is not None:
                trial = run.trial(trial_id)
            else:
                chosen = [o for o in run.objectives if o.name == (objective or run.objectives[0].name)]
                if not chosen:
                    raise ValueError(f"unknown objective {objective!r}; the run's: "
                                     f"{[o.name for o in run.objectives]}")
                trial = run.best(chosen[0])
                if trial is None:
                    raise ValueError("no finished feasible trial yet")
            default = run.default()
            broken = default is not None and not is_feasible(default, run.constraints)
            values = ", ".join(f"{k}={v:.6g}" for k, v in trial.objectives.items() if k in
                               {o.name for o in run.objectives})
            header = f"configuration of trial {trial.name} of {store.path} ({_state(trial)})" + \
                (f": {values}" if values else "")
            if default is not None and default is not trial:
                header += "\nthe default configuration (trial {}) gave: {}".format(default.name, ", ".join(
                    f"{o.name}={default.objectives[o.name]:.6g}" for o in run.objectives
                    if o.name in default.objectives)) + (f" ({INFEASIBLE})" if broken else "")
            text = render_config(plain_config(run.space, trial.config),
                                 fmt or ("yaml" if output == "-" else format_for(output)), header)
        except (ValueError, KeyError) as exc:
            raise click.ClickException(f"{store_file}: {exc}") from None
    for warning in worse_than_default(trial, default, run.objectives, run.constraints):
        click.echo(f"warning: {warning}", err=True)
    if output == "-":
        click.echo(text, nl=False)
    else:
        with open(output, "w") as fh:
            fh.write(text)
        click.echo(f"wrote the configuration of {trial.name} to {output}", err=True)


INFEASIBLE = "infeasible: it breaks the output constraints"


def _state(trial: StoredTrial) -> str:
    """``done``, or a trial's status with why it measured nothing (``failed: python3 timed out
    after 4 s``): a failed trial's header ended in ``(failed): `` and said no more."""
    reason = (trial.error or "").strip().splitlines()
    return f"{trial.status}: {reason[0]}" if reason else f"{trial.status}"


def worse_than_default(trial: StoredTrial, default: StoredTrial | None, objectives: list[Objective],
                       constraints: Sequence[OutputConstraint] = ()) -> list[str]:
    """What a person about to deploy ``trial`` should know: each objective on which it is
    worse than the default configuration (best by one objective can lose on another), and
    whether the default itself breaks an output constraint (then it is no alternative)."""
    if default is None or default is trial:
        return []
    infeasible = "" if is_feasible(default, constraints) else "; the default breaks an output constraint"
    out = []
    for o in objectives:
        mine, theirs = trial.objectives.get(o.name), default.objectives.get(o.name)
        if mine is not None and theirs is not None and o.better(theirs, mine):
            out.append(f"{trial.name} is worse than the default configuration ({default.name}) on "
                       f"{o.name}: {mine:.6g} against {theirs:.6g} ({o.direction}){infeasible}")
    return out


def _refuse_a_store(url: str) -> None:
    """Refuse an Optuna storage that is a BoAnon run's store (this run's or another's): Optuna
    added its tables to it, then failed on the table names both use, with a traceback."""
    file = sqlite_file(url)
    if file is None or not Path(file).is_file():
        return
    try:
        a_run = holds_a_run(file)
    except ConfigError:  # a store of another schema version: a run's all the same
        a_run = True
    if not a_run:
        return  # not a run's store: Optuna's to judge
    raise click.BadParameter(f"{file} is a BoAnon run store, not an Optuna storage: name another "
                             "file", param_hint="'--optuna'")


def _export_optuna(store_file: str, url: str, study_name: str | None) -> None:
    _refuse_a_store(url)
    try:
        import optuna

        from boanon.optuna_export import export_to_optuna
    except ImportError:
        raise click.ClickException("--optuna needs Optuna: pip install 'boanon[optuna]'") from None
    with reading_store(store_file) as store:
        try:
            name, n = export_to_optuna(read_run(store), url, study_name)
        except (ValueError, KeyError) as exc:
            raise click.ClickException(f"{store_file}: {exc}") from None
        except optuna.exceptions.OptunaError as exc:  # the storage's to blame (another program's tables)
            raise click.ClickException(f"{url}: {exc}") from None
    click.echo(f"wrote {n} trials to Optuna study {name!r} in {url}; look at it with: "
               f"optuna-dashboard {url}", err=True)


def _export_table(store_file: str, output: str, pareto: bool | None) -> None:
    with reading_store(store_file) as store:
        table = store.to_table()
        done = store.trials("done")
        objectives, constraints = study_goals(store)
    if pareto is None:
        pareto = len(objectives) > 1 or bool(constraints)
    if pareto and objectives and len(table):
        # the front of the trials that ran to the end, as `boanon status` shows it
        finished = table[TRIAL].isin([t.name for t in done]).to_numpy()
        flags = np.zeros(len(table), dtype=bool)
        flags[finished] = pareto_flags(table[finished], objectives, constraints).to_numpy()
        table.insert(1, PARETO, flags)
    write_table(table, sys.stdout if output == "-" else output)
    if output != "-":
        click.echo(f"wrote {len(table)} trials to {output}", err=True)
