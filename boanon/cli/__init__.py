"""The ``boanon`` command line: one sub-module per command, registered on one group."""

from __future__ import annotations

import click

from boanon.cli.dashboard import dashboard_command
from boanon.cli.explain import explain_command
from boanon.cli.export import export_command
from boanon.cli.generate import generate_command
from boanon.cli.import_study import import_command
from boanon.cli.ingest import ingest_command
from boanon.cli.learn import learn_command
from boanon.cli.plan import plan_command
from boanon.cli.plot import plot_command
from boanon.cli.status import status_command
from boanon.cli.tune import tune_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="boanon")
def main() -> None:
    """BoAnon: turn a system's own logs into a tuned configuration."""


main.add_command(ingest_command)
main.add_command(learn_command)
main.add_command(generate_command)
main.add_command(plan_command)
main.add_command(tune_command)
main.add_command(status_command)
main.add_command(export_command)
main.add_command(import_command)
main.add_command(dashboard_command)
main.add_command(plot_command)
main.add_command(explain_command)
