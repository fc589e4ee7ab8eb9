"""``boanon generate``: run random configurations of a target into a dataset of trials."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from boanon.runners.base import exit_by_sigterm, handling_sigterm, make_runner, runner_class
from boanon.space import Space, read_space_file
from boanon.targets.generate import generate_dataset, target_space, write_recipe


def parse_options(args: list[str]) -> dict:
    """``["--num", "1000", "--workload", "mixgraph"]`` -> runner options (values read as YAML)."""
    if len(args) % 2:
        raise click.UsageError(f"runner options come in '--name value' pairs, got {args}")
    options = {}
    for key, value in zip(args[::2], args[1::2], strict=True):
        if not key.startswith("--"):
            raise click.UsageError(f"expected a runner option like --num, got {key!r}")
        options[key[2:].replace("-", "_")] = yaml.safe_load(value)
    return options


@click.command("generate", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("runner")
@click.option("--trials", type=click.IntRange(min=1), default=40, show_default=True,
              help="Successful trials wanted.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the configuration draw.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Dataset directory.")
@click.option("--space", "space_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML with space: (and constraints:); default: the target's own space.")
@click.pass_context
def generate_command(ctx: click.Context, runner: str, trials: int, seed: int, out: str,
                     space_file: str | None) -> None:
    """Run random configurations of RUNNER into OUT/trial-NNN (resumes an interrupted run).

    Any other '--name value' pair is a runner option, e.g. --workload readrandom --num 1000000.
    """
    try:
        runner_class(runner)
    except ValueError as exc:  # the registry's words, with the closest name
        raise click.BadParameter(str(exc), param_hint="RUNNER") from None
    options = parse_options(ctx.args)
    try:
        instance = make_runner(runner, **options)
        if space_file:
            spec, constraints = read_space_file(space_file)
        else:
            spec, constraints = target_space(type(instance))
        space = Space.from_dict(spec, constraints, source=space_file or runner)
        write_recipe(Path(out), runner, options, spec, constraints, trials, seed)
    except (ValueError, TypeError) as exc:  # a ConfigError, or a runner option misspelt
        raise click.ClickException(str(exc)) from None
    # `timeout` or kill: the running system is killed, its files removed
    with handling_sigterm(exit_by_sigterm):
        try:
            generate_dataset(instance, space, trials, seed, Path(out), log=click.echo)
        except RuntimeError as exc:  # includes TrialFailed
            raise click.ClickException(str(exc)) from exc
