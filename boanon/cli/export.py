"""``boanon export``: a stored run as the tidy table (the shape ``boanon ingest`` writes)."""

from __future__ import annotations

import sys

import click
import numpy as np

from boanon.cli.status import reading_store, study_goals
from boanon.multiobjective import PARETO, pareto_flags
from boanon.table import TRIAL, write_table


@click.command("export")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, help="CSV file to write ('-' for standard output).")
@click.option("--pareto/--no-pareto", default=None,
              help="Add a 'pareto' column (on the front of the feasible trials that ran to the end, "
                   "not stopped early); default: on for runs "
                   "with several objectives or output constraints.")
def export_command(store_file: str, output: str, pareto: bool | None) -> None:
    """Write the finished trials of a run as CSV, one row per trial (failed trials left out)."""
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
