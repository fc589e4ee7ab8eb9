"""``boanon status``: what a stored run has done so far."""

from __future__ import annotations

import shlex
import textwrap
from collections import Counter
from datetime import datetime

import click
import pandas as pd

from boanon import units
from boanon.best import config_line
from boanon.cli.outputs import OutputFile, refuse_overwriting
from boanon.cli.stores import reading_store
from boanon.learners.relations import Relation
from boanon.models.dag import node_label, node_parents
from boanon.multiobjective import (
    OutputConstraint,
    format_feasible,
    format_front,
    table_hypervolume,
)
from boanon.objectives import Objective
from boanon.report import history_reference_point, model_trial, study_space
from boanon.results import best_trial, origin, study_goals
from boanon.space import Space
from boanon.store import CONFIG_NOTE, DIRECTORY_NOTE, RESUME_NOTE, Store, StoredTrial

WIDTH = 100
"""Columns of ``boanon status``'s longer lines (relations, node models, configurations)."""
MAX_PARENTS_SHOWN = 4


@click.command("status")
@click.argument("store_file", metavar="RUN.db", type=click.Path(exists=True, dir_okay=False))
@click.option("--failures", "n_failures", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many failed trials to list.")
@click.option("--plot", "plot_file", type=OutputFile(), default=None,
              help="Also draw the run into this PNG file: the Pareto front for several objectives, "
                   "else the convergence (boanon plot draws more).")
def status_command(store_file: str, n_failures: int, plot_file: str | None) -> None:
    """Summarise a tuning run: trials by status, surrogates used, best trial, failures."""
    refuse_overwriting(plot_file, "--plot", store_file)
    with reading_store(store_file) as store:
        click.echo(summary(store, n_failures))
        objectives, _ = study_goals(store)
    if plot_file is not None:
        from boanon.cli.plot import plot_command

        kind = "pareto" if len(objectives) > 1 else "convergence"
        click.get_current_context().invoke(plot_command, store_file=store_file, kind=kind, output=plot_file)


def model_lines(trials: list[StoredTrial], store: Store, space: Space) -> list[str]:
    """What the run's latest structured model was made of, as its proposal recorded it: the
    relations its graph found in the logs and each node's model (the dashboard's node-fit table
    shows the same), wrapped to :data:`WIDTH` columns."""
    latest = model_trial(trials)
    if latest is None:
        return []
    structure = latest.info["structure"]
    lines = [f"model:      the structured surrogate that proposed {latest.name}"]
    relations = store.graph(latest.graph_id).metadata.get("relations", [])
    if relations:
        lines.append(f"  relations found in the logs ({len(relations)}):")
        lines += [wrapped(Relation.from_dict(r).describe(), "    ") for r in relations]
    lines.append(f"  node models ({len(structure['order'])}, in sampling order):")
    for node in structure["order"]:
        spec = structure["nodes"][node]
        parents = sum(node_parents(spec, space), [])
        shown = ", ".join(parents[:MAX_PARENTS_SHOWN]) + (", ..." if len(parents) > MAX_PARENTS_SHOWN else "")
        r2 = f"; held-out R^2 of the form {spec['heldout_r2']:.2f}" if "heldout_r2" in spec else ""
        count = units.count(len(parents), "parent")
        lines.append(wrapped(f"{node}: {node_label(spec)}, {count}" + (f" ({shown})" if parents else "") + r2,
                             "    "))
    if structure.get("unused"):
        lines.append(wrapped("not read by the chosen models (not sampled): " + ", ".join(structure["unused"]),
                             "  "))
    return lines


def hypervolume_line(table: pd.DataFrame, trials: list[StoredTrial], objectives: list[Objective],
                     constraints: list[OutputConstraint]) -> str:
    """The front's hypervolume against the reference point ``boanon plot`` and the dashboard use
    (fixed from the run's start), so the three give one number: a point inferred from the front
    gave another (2.46 where the page said 37.4)."""
    ref, how = history_reference_point(trials, objectives, constraints)
    if ref is None:
        return f"hypervolume: 0 ({how})"
    point = ", ".join(f"{o.name}={v:.4g}" for o, v in zip(objectives, ref, strict=True))
    return (f"hypervolume: {table_hypervolume(table, objectives, constraints, ref):.6g} "
            f"(reference point {point}: {how})")


def wrapped(text: str, indent: str) -> str:
    """``text`` as lines of at most :data:`WIDTH` columns, continued two columns further in."""
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_on_hyphens=False)


def killed_note(store: Store) -> str:
    """`` (the tuning process has ended: killed? ...)`` and how to resume it, when the run's process
    is gone while at work (:meth:`Store.activity`, as the dashboard says): its trials still
    count as running, and nothing will finish them."""
    activity = store.activity()
    if not (activity and activity["killed"]):
        return ""
    command = store.note(RESUME_NOTE) or shlex.join(  # as ``boanon tune`` printed it, its options kept
        ["boanon", "tune", store.note(CONFIG_NOTE) or "CONFIG.yaml", "--store", str(store.path.absolute()),
         "--resume"])
    directory = store.note(DIRECTORY_NOTE)
    return f" (the tuning process has ended: killed? resume it with {command}" \
        + (f" from {directory})" if directory else ")")


def summary(store: Store, n_failures: int = 10) -> str:
    """The text ``boanon status`` prints."""
    study = store.study()
    if study is None:
        return f"{store.path}: no run recorded yet"
    objectives, constraints = study_goals(store)
    trials = store.trials()
    counts = store.counts()
    done = [t for t in trials if t.status == "done"]
    lines = [
        f"store:      {store.path}",
        f"run:        strategy {study.strategy}, seed {study.seed}, {len(study.space)} "
        f"parameters, objectives " + ", ".join(f"{o.name} ({o.direction})" for o in objectives),
        f"trials:     {len(trials)}: {counts['done']} done, {counts['stopped']} stopped early, "
        f"{counts['failed']} failed, {counts['interrupted']} interrupted, {counts['running']} running"
        + killed_note(store),
    ]
    related = study.warm_start
    if related:  # one source as a string, several as a list (Study)
        sources = [related] if isinstance(related, str) else related
        outputs = study.related_outputs
        lines.insert(2, f"related:    {units.count(len(sources), 'task')}: {', '.join(map(str, sources))}"
                     + (f"; related outputs: {', '.join(map(str, outputs))}" if outputs else ""))
    if trials:
        # every trial that counts, however it ended (an interrupted attempt's re-run counts once),
        # as the trials line counts them; in words: "init" names no surrogate (sorted by the
        # stored name, which may be None)
        used = Counter(t.surrogate for t in trials if t.status != "interrupted")
        if used:
            lines.append("origins:    " + ", ".join(f"{n} {origin(k)}" for k, n in
                                                    sorted(used.items(), key=lambda kv: str(kv[0]))))
        last = max((t.finished for t in trials if t.finished), default=None)
        if last is not None:
            elapsed = datetime.fromisoformat(last) - datetime.fromisoformat(trials[0].started)
            lines.append(f"time:       {trials[0].started} .. {last} ({elapsed.total_seconds():.0f} s)")
    space = study_space(study, str(store.path))
    for o in objectives:
        best = best_trial(done, o, constraints)
        if best is not None:
            unit = units.of(o.name, o.unit)
            lines.append(f"best {o.name}: {best.objectives[o.name]:.6g}{' ' + unit if unit else ''} "
                         f"in {best.name} ({origin(best.surrogate)})")
            lines.append(wrapped(config_line(space, best.config), "  "))
    if done and (len(objectives) > 1 or constraints):
        table = store.to_table(("done",))  # as the best trials above: runs cut short are left out
        if len(objectives) > 1:
            lines.append(format_front(table, objectives, constraints))
            lines.append(hypervolume_line(table, trials, objectives, constraints))
        else:  # one objective has no front: its best feasible trial is the best above
            lines.append(format_feasible(table, constraints))
    lines += model_lines(trials, store, space)
    failed = [t for t in trials if t.status == "failed"]
    if failed:
        lines.append(f"failures ({len(failed)}, last {min(n_failures, len(failed))} shown):")
        lines += [f"  {t.name}: {t.error}" for t in failed[max(len(failed) - n_failures, 0):] if n_failures]
    return "\n".join(lines)
