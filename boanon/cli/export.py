"""``boanon export``: a stored run as the tidy table (the shape ``boanon ingest`` writes)."""

from __future__ import annotations

import sys

import click

from boanon.store import Store
from boanon.table import write_table


@click.command("export")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, help="CSV file to write ('-' for standard output).")
def export_command(store_file: str, output: str) -> None:
    """Write the finished trials of a run as CSV, one row per trial (failed trials left out)."""
    with Store(store_file) as store:
        table = store.to_table()
    write_table(table, sys.stdout if output == "-" else output)
    if output != "-":
        click.echo(f"wrote {len(table)} trials to {output}", err=True)
