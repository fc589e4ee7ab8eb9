"""``python -m boanon.targets.sgd generate``: build a dataset of simulated SGD trials."""

from __future__ import annotations

from pathlib import Path

import click

from boanon.targets.sgd.cluster import NETWORKS
from boanon.targets.sgd.generate import generate


@click.group()
def main() -> None:
    """The simulated distributed-SGD target."""


@main.command("generate")
@click.option("--trials", type=click.IntRange(min=1), default=40, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seeds both the configurations and each trial's noise.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--network", type=click.Choice(sorted(NETWORKS)), default="googlenet",
              show_default=True)
@click.option("--iterations", type=click.IntRange(min=1), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--noise", type=float, default=0.05, show_default=True)
@click.option("--straggler-prob", type=float, default=0.03, show_default=True)
def generate_command(trials: int, seed: int, out: Path, **options: object) -> None:
    """Run TRIALS independently randomised configurations into OUT/trial-NNN."""
    dirs = generate(out, trials, seed, **options)
    click.echo(f"wrote {len(dirs)} trials to {out}")


if __name__ == "__main__":
    main()
