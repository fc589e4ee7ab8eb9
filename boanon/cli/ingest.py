"""``boanon ingest``: trial logs in, tidy table out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from boanon.adapters import available_adapters, ingest
from boanon.cli.outputs import OutputFile, refuse_overwriting
from boanon.errors import LogParseError
from boanon.table import write_table


def with_skip_hint(exc: LogParseError, logdir: str, skip_bad: bool, verb: str) -> str:
    """The error, and where one trial of a folder of trials is to blame, that ``--skip-bad`` goes
    on with the others (``boanon learn`` on a run's trials stopped at its first failed trial
    without saying so). A single table file has no other trials; nor helps skipping when the
    folder as a whole is the problem (no trials, none recognised)."""
    several = Path(logdir).is_dir() and not skip_bad and exc.path != Path(logdir)
    return f"{exc}\n(use --skip-bad to {verb} the other trials)" if several else str(exc)


@click.command("ingest")
@click.argument("logdir", type=click.Path(exists=True))
@click.option("--adapter", type=click.Choice(available_adapters()), default=None,
              help="Adapter to parse with (default: auto-detect).")
@click.option("-o", "--output", type=OutputFile(allow_dash=True), default=None,
              help="Write the table to this CSV file ('-': standard output, the summary to standard error).")
@click.option("--skip-bad", is_flag=True, help="Skip trials that fail to parse and list them.")
def ingest_command(logdir: str, adapter: str | None, output: str | None, skip_bad: bool) -> None:
    """Parse a directory of trials (or one CSV/JSONL file) into one table."""
    refuse_overwriting(output, "-o", logdir)
    try:
        result = ingest(logdir, adapter=adapter, skip_bad=skip_bad)
    except LogParseError as exc:
        raise click.ClickException(with_skip_hint(exc, logdir, skip_bad, "ingest")) from exc
    except ValueError as exc:  # the table as a whole is malformed (a trial id twice)
        raise click.ClickException(str(exc)) from exc
    to_stdout = output == "-"  # as `export -o -`: it wrote a file named '-'
    click.echo(result.summary(), err=to_stdout)
    if to_stdout:
        write_table(result.table, sys.stdout)
    elif output:
        write_table(result.table, output)
        click.echo(f"wrote {output}")
