"""``boanon import``: an Optuna study's finished trials into a new BoAnon store (the other
direction of ``boanon export --optuna``), for ``boanon status``/``dashboard``/``explain`` and as a
``warm_start:`` of a later run."""

from __future__ import annotations

import click

from boanon.cli.outputs import OutputFile


@click.command("import")
@click.argument("storage", metavar="STORAGE_URL")
@click.option("--study", "study_name", default=None,
              help="The study's name (needed when the storage holds several).")
@click.option("-o", "--store", "store_file", required=True, type=OutputFile(),
              help="The new BoAnon store to write (must not exist).")
def import_command(storage: str, study_name: str | None, store_file: str) -> None:
    """Copy the finished trials of an Optuna study (e.g. sqlite:///optuna.db) into a new store:
    parameters over the study's common search space, values as objectives (named by the study's
    metric names), the 'metrics' user attribute as logged metrics; needs the optuna extra."""
    try:
        from boanon.optuna import import_study
    except ImportError:
        raise click.ClickException("boanon import needs Optuna: pip install 'boanon[optuna]'") from None
    try:
        tuner, n = import_study(storage, study_name, store_file)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    with tuner:  # closed once counted: nothing of this process holds the new store
        counts = tuner.store.counts()
    click.echo(f"wrote {n} trials ({counts['done']} done, {counts['stopped']} stopped, "
               f"{counts['failed']} failed) to {store_file}; look at it with: boanon status {store_file}",
               err=True)
