"""``boanon plot``: a figure of a stored run (convergence, graph, Pareto front, parameter effects)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from boanon.cli.outputs import OutputFile, refuse_overwriting
from boanon.cli.stores import reading_store
from boanon.graph_render import format_problem
from boanon.objectives import Objective
from boanon.report import (
    RunView,
    effect_sizes,
    effects,
    fit_surrogate,
    history,
    history_reference_point,
    hypervolume_history,
    read_run,
)
from boanon.results import is_feasible

KINDS = ("convergence", "graph", "pareto", "effects")


def _regex(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``value`` if it is a regular expression: one that is not ('(') was a traceback from deep in
    the drawing, after the run was read."""
    if value:
        try:
            re.compile(value)
        except re.error as exc:
            raise click.BadParameter(f"{value!r} is no regular expression: {exc}") from None
    return value


@click.command("plot")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("--kind", type=click.Choice(KINDS), default="convergence", show_default=True,
              help="convergence: each trial and the best so far, the default as a line; graph: the "
                   "run's last graph (objectives' ancestors, grouped, with a legend); pareto: the front "
                   "of a run with several objectives; effects: what the run's model says each "
                   "parameter does to the objective.")
@click.option("-o", "--output", type=OutputFile(), required=True,
              help="Image file (.png or .svg; graph also .dot).")
@click.option("--objective", default=None, help="Objective of the effects plot (default: the first).")
@click.option("--all-nodes", is_flag=True, help="graph: also nodes without a path to an objective.")
@click.option("--max-parents", type=click.IntRange(min=1), default=3, show_default=True,
              help="graph: edges kept per node (its strongest parents, and its strongest child).")
@click.option("--all-edges", is_flag=True, help="graph: every edge (overrides --max-parents).")
@click.option("--max-nodes", type=click.IntRange(min=0), default=30, show_default=True,
              help="graph: at most this many nodes, the objectives' neighbourhood along their strongest "
                   "paths, so the picture fits a page (0: every node).")
@click.option("--group", default=None, metavar="REGEX", callback=_regex,
              help="graph: boxes by the first group of REGEX in a node's name (default: a leading "
                   "entity such as m3_ or node12.); '' for no boxes.")
def plot_command(store_file: str, kind: str, output: str, objective: str | None, all_nodes: bool,
                 max_parents: int, all_edges: bool, max_nodes: int, group: str | None) -> None:
    """Draw a figure of the run stored in RUN.db (read only)."""
    refuse_overwriting(output, "-o", store_file)
    if kind == "graph" and (problem := format_problem(output)):
        raise click.BadParameter(f"{output}: {problem}", param_hint="'-o'")
    with reading_store(store_file) as store:
        try:
            run = read_run(store)
            chosen = _figure_of(run, kind, objective)
        except ValueError as exc:
            raise click.ClickException(f"{store_file}: {exc}") from None
        try:
            if kind == "convergence":
                _convergence(run, output)
            elif kind == "pareto":
                from boanon.multiobjective.plot import plot_pareto

                ref, how = history_reference_point(run.trials, run.objectives, run.constraints)
                plot_pareto(store.to_table(("done",)), run.objectives, output, run.constraints,
                            ref_point=ref, ref_how=how)
            elif kind == "effects":
                _effects(run, output, chosen)
            else:
                _graph(run, output, all_nodes, None if all_edges else max_parents, group, max_nodes or None)
        except (ValueError, KeyError, RuntimeError) as exc:
            raise click.ClickException(f"{output}: {exc}") from None
    click.echo(f"wrote {output}")


def _figure_of(run: RunView, kind: str, objective: str | None) -> Objective:
    """The objective the figure of ``kind`` is of; a ValueError where the run cannot give the
    figure: the run's to blame, not the output (the error named the output file)."""
    chosen = next((o for o in run.objectives if o.name == (objective or run.objectives[0].name)), None)
    if chosen is None:
        raise ValueError(f"unknown objective {objective!r}; the run's: {[o.name for o in run.objectives]}")
    if kind == "pareto" and len(run.objectives) < 2:
        raise ValueError(f"a Pareto plot needs two objectives or more; the run has one "
                         f"({run.objectives[0].name}): --kind convergence draws it")
    if kind == "pareto" and not run.done:  # it named the output, in a KeyError's quotes
        raise ValueError("no trial is done yet: no front to draw")
    if kind == "graph" and run.graph is None:
        raise ValueError("the run has no graph (strategy gp or random, or none learned yet)")
    if kind == "effects" and run.best(chosen) is None:
        raise ValueError("no finished feasible trial yet: nothing to model")
    return chosen


def _convergence(run: RunView, output: str) -> None:
    from boanon.plots import plot_convergence

    default = run.default()
    plot_convergence(history(run), run.objectives, output,
                     default=None if default is None else default.objectives,
                     hypervolume=hypervolume_history(run) if len(run.objectives) > 1 else None,
                     default_feasible=default is None or is_feasible(default, run.constraints))


def _effects(run: RunView, output: str, chosen: Objective) -> None:
    from boanon.plots import plot_effects

    best = run.best(chosen)
    assert best is not None  # _figure_of refused the run without one
    surrogate = fit_surrogate(run)
    table = effects(surrogate, best.config)
    plot_effects(table, effect_sizes(table, run.graph), chosen, output, at=best.config,
                 unit_of={p.name: p.unit for p in run.space.params.values() if getattr(p, "unit", None)},
                 title=f"{surrogate.name} model of {chosen.name} around the best trial {best.name} "
                       "(dotted); band: one standard deviation")


def _graph(run: RunView, output: str, all_nodes: bool, max_parents: int | None, group: str | None,
           max_nodes: int | None) -> None:
    from boanon.graph_render import ENTITY, render, view

    assert run.graph is not None  # _figure_of refused the run without one
    render(view(run.graph, [o.name for o in run.objectives], ancestors=not all_nodes,
                max_parents=max_parents, group=ENTITY if group is None else group or None,
                max_nodes=max_nodes, bounds={c.name: c.describe() for c in run.constraints}), Path(output))
