"""``boanon dashboard``: serve the live web page of a run (see docs/dashboard.md)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, closing
from pathlib import Path
from typing import TYPE_CHECKING

import click

from boanon.errors import ConfigError

if TYPE_CHECKING:
    from boanon.dashboard.app import RunView


@click.command("dashboard")
@click.argument("store_files", metavar="RUN.db [RUN.db ...]", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (the default serves this machine only).")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="Port to listen on (0: any free one).")
@click.option("--trials-dir", type=click.Path(file_okay=False), default=None,
              help="Where the run keeps its trials' logs (default: <store>.trials, as boanon tune); "
                   "one store only.")
@click.option("--poll", "poll_s", type=click.FloatRange(min=0.2), default=2.0, show_default=True,
              help="Seconds between the page's refreshes.")
def dashboard_command(store_files: tuple[str, ...], host: str, port: int, trials_dir: str | None,
                      poll_s: float) -> None:
    """Follow a tuning run in the browser: progress, trials, graph, models (read-only; Ctrl-C stops).

    Several stores are several studies side by side: pick one to see it, and compare their best
    so far on one chart."""
    from boanon.dashboard.app import Dashboard  # the web stack only for this command

    if trials_dir is not None and len(store_files) > 1:
        raise click.UsageError("--trials-dir names one store's trials: give one store with it")
    _refuse_repeats(store_files)
    with ExitStack() as stack:
        dashboard = Dashboard(_open_views(stack, store_files, trials_dir, poll_s), host, port)
        stack.pop_all()  # the dashboard closes them as it stops, once no request reads them
        stack.callback(dashboard.stop)
        try:
            try:
                url = dashboard.start()
            except RuntimeError as exc:
                raise click.ClickException(str(exc)) from None
            click.echo(f"dashboard of {', '.join(store_files)}: {url}  (Ctrl-C to stop)")
            dashboard.thread.join()
        except KeyboardInterrupt:
            pass


def _open_views(stack: ExitStack, store_files: Sequence[str], trials_dir: str | None,
                poll_s: float) -> list[RunView]:
    """A view of each store, each closed with ``stack``: on any error while the others open
    (Ctrl-C too), those opened before are closed. A file that is no store is a one-line error."""
    from boanon.dashboard.app import RunView

    try:
        return [stack.enter_context(closing(RunView(f, trials_dir, poll_s=poll_s))) for f in store_files]
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _refuse_repeats(store_files: Sequence[str]) -> None:
    """A store given twice (under any path to it) would be two identical studies side by side."""
    seen: dict[Path, str] = {}
    for name in store_files:
        path = Path(name).resolve()
        if path in seen:
            also = "" if seen[path] == name else f" (as {seen[path]} and {name})"
            raise click.UsageError(f"{name}: the same store is given twice{also}; each store is one study")
        seen[path] = name
