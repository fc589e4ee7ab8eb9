"""``boanon learn``: trial logs (or a table) in, causal graph out, with the reasons for what is left out."""

from __future__ import annotations

import warnings
from collections import defaultdict

import click

from boanon import units
from boanon.adapters import available_adapters, ingest
from boanon.annotations import Knowledge
from boanon.cli.ingest import with_skip_hint
from boanon.cli.outputs import OutputFile, refuse_overwriting
from boanon.errors import ConfigError, LogParseError, did_you_mean
from boanon.graph import CausalGraph
from boanon.graph_render import format_problem, render, view
from boanon.learners import DEFAULT_ALPHA, DEFAULT_LEARNER, DEFAULT_MAX_PARENTS, LEARNERS, LearnResult, learn
from boanon.learners.relations import Relation
from boanon.table import names_of, with_objectives

SHOWN_PER_REASON = 8


@click.command("learn")
@click.argument("source", metavar="LOGDIR|TABLE.csv", type=click.Path(exists=True))
@click.option("--annotations", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Expert knowledge YAML (required/forbidden edges, tiers, node models).")
@click.option("--learner", type=click.Choice(LEARNERS.names()), default=DEFAULT_LEARNER, show_default=True)
@click.option("-o", "--output", type=OutputFile(), required=True, help="Graph JSON to write.")
@click.option("--render", "render_path", type=OutputFile(), default=None,
              help="Also draw the graph (.svg, .png or .dot): grouped by entity, each node's strongest "
                   "edges, with a legend (boanon plot --kind graph draws a run's graph with more options).")
@click.option("--max-parents", type=click.IntRange(min=1), default=DEFAULT_MAX_PARENTS, show_default=True)
@click.option("--max-metrics", type=click.IntRange(min=1), default=None,
              help="Keep only the metrics most related to the objectives.")
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True,
              help="Resamples for edge stability (0: none).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=DEFAULT_ALPHA,
              show_default=True, help="Significance level of the independence tests.")
@click.option("--all-metrics", is_flag=True,
              help="Keep metrics with no directed path to an objective (pruned by default).")
@click.option("--objective", "objectives", multiple=True, metavar="NAME",
              help="Learn towards these results only (repeatable): the system's other results "
                   "become metrics, as in a run tuning NAME (default: every logged objective).")
@click.option("--no-relations", is_flag=True,
              help="Do not search for relations among the logged quantities (sums, maxima, shares).")
@click.option("--interventions", is_flag=True,
              help="Re-select each node's parameter parents by regression on the parameters "
                   "(better recall on a run's own, correlated trials; docs/learning.md).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--adapter", type=click.Choice(available_adapters()), default=None,
              help="Adapter for LOGDIR (default: auto-detect).")
@click.option("--skip-bad", is_flag=True, help="Skip trials that fail to parse.")
@click.option("-v", "--verbose", is_flag=True, help="List every dropped metric with its reason.")
def learn_command(source: str, annotations: str | None, learner: str, output: str, render_path: str | None,
                  max_parents: int, max_metrics: int | None, bootstrap: int, alpha: float,
                  all_metrics: bool, objectives: tuple[str, ...], no_relations: bool, interventions: bool,
                  seed: int, adapter: str | None, skip_bad: bool, verbose: bool) -> None:
    """Learn a causal graph over parameters, metrics and objectives from LOGDIR or TABLE.csv."""
    for path, option in ((output, "-o"), (render_path, "--render")):
        refuse_overwriting(path, option, source, annotations)
    if render_path and (problem := format_problem(render_path)):
        raise click.BadParameter(f"{render_path}: {problem}", param_hint="'--render'")
    try:
        table = ingest(source, adapter=adapter, skip_bad=skip_bad).table
        if objectives:
            results = set(names_of(table, "objective")) | set(names_of(table, "metric"))
            unknown = [o for o in objectives if o not in results]
            if unknown:
                raise ConfigError("--objective", unknown[0], f"not a result of {source}"
                                  f"{did_you_mean(unknown[0], results)}")
            table = with_objectives(table, objectives)
        knowledge = Knowledge.from_yaml(annotations) if annotations else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = learn(table, knowledge, learner=learner, max_parents=max_parents,
                           max_metrics=max_metrics, bootstrap=bootstrap, seed=seed, alpha=alpha,
                           prune=not all_metrics, relations=not no_relations,
                           interventions=interventions)
    except LogParseError as exc:  # names its file
        raise click.ClickException(with_skip_hint(exc, source, skip_bad, "learn from")) from exc
    except ConfigError as exc:  # names its file
        raise click.ClickException(str(exc)) from exc
    except ValueError as exc:  # the table's, as learning read it ("only 2 trials ..."): name it
        raise click.ClickException(_named(str(exc), source)) from exc
    _some_objective_left(result.graph, names_of(table, "objective"), source)
    result.graph.save(output)
    click.echo(summary(result, verbose=verbose))
    click.echo(f"wrote {output}")
    if render_path:
        try:
            click.echo(f"wrote {render(view(result.graph, ancestors=False), render_path)}")
        except (RuntimeError, ValueError) as exc:
            raise click.ClickException(str(exc)) from exc


def _named(message: str, source: str) -> str:
    """``message`` led by ``source`` unless it names it already (a malformed table's error does)."""
    return message if message.startswith(f"{source}:") else f"{source}: {message}"


def _some_objective_left(graph: CausalGraph, objectives: list[str], source: str) -> None:
    """Refuse a graph every one of the table's ``objectives`` was left out of (each constant over
    the trials): it was written, and the command ended well, with nothing to tune towards."""
    if graph.nodes("objective"):
        return
    dropped = graph.metadata.get("dropped", {})
    reasons = ", ".join(f"{name}: {dropped.get(name, 'left out')}" for name in objectives)
    raise click.ClickException(f"{source}: every objective was left out of the graph ({reasons}): "
                               "there is nothing to learn it towards")


def objective_edges(graph: CausalGraph) -> list[str]:
    """One line per objective: its parents, strongest first, with weight and stability."""
    lines = []
    for obj in graph.nodes("objective"):
        edges = sorted((e for e in graph.edges if e.target == obj), key=lambda e: -(e.weight or 0.0))
        lines.append(f"{obj} <- " + (", ".join(_edge_text(e.source, e.weight, e.stability) for e in edges)
                                     or "(no parents)"))
    return lines


def _edge_text(source: str, weight: float | None, stability: float | None) -> str:
    extra = [f"w={weight:.2f}"] if weight is not None else []
    if stability is not None:
        extra.append(f"s={stability:.2f}")
    return f"{source} ({', '.join(extra)})" if extra else source


def summary(result: LearnResult, verbose: bool = False) -> str:
    """What ``boanon learn`` prints: edges into the objectives, nodes by role, drops and timings."""
    graph, report = result.graph, result.report
    lines = ["edges into the objectives:"] + [f"  {line}" for line in objective_edges(graph)]
    counts = ", ".join(units.count(len(graph.nodes(r)), r) for r in ("param", "metric", "objective"))
    lines.append(f"graph: {counts}, {units.count(len(graph.edges), 'edge')} "
                 f"(learner {graph.metadata['learner']}, "
                 f"{units.count(graph.metadata['n_trials'], 'trial')})")
    by_reason: dict[str, list[str]] = defaultdict(list)
    for name, reason in report["dropped"].items():
        if name in graph.roles:  # set aside from the tests but in the graph (a relation's target)
            continue
        by_reason[_reason_kind(reason)].append(name)
    if by_reason:
        lines.append(f"left out of the graph ({sum(map(len, by_reason.values()))}):")
        for kind, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            shown = names if verbose else names[:SHOWN_PER_REASON]
            more = f", ... (+{len(names) - len(shown)})" if len(names) > len(shown) else ""
            lines.append(f"  {kind}: {len(names)}: {', '.join(shown)}{more}")
        if verbose:
            lines.append("reasons:")
            lines += [f"  {name}: {reason}" for name, reason in report["dropped"].items()]
    if report.get("relations"):
        lines.append(f"relations found in the logs ({len(report['relations'])}; '~': approximate, "
                     "a GP learns the rest):")
        lines += [f"  {Relation.from_dict(r).describe()}" for r in report["relations"]]
    if report["merged"]:
        lines.append(f"merged duplicate groups: {len(report['merged'])} "
                     "(metadata.merged in the JSON: representative -> members)")
    if report["params_connected"]:
        lines.append("parameters without a learned path, connected to the objectives: "
                     + ", ".join(dict.fromkeys(e.split(" -> ")[0] for e in report["params_connected"])))
    if report.get("reversed"):
        lines.append("parts kept as parents of the total they were below: "
                     + ", ".join(f"{b} -> {a}" for a, b in (e.split(" -> ") for e in report["reversed"])))
    if report.get("params_linked"):
        lines.append("parameters linked to an objective they predict beyond its parents: "
                     + ", ".join(report["params_linked"]))
    t = report["timings"]
    lines.append(f"time: {t['total_s']:.2f} s (relations {t['relations_s']:.2f}, "
                 f"preprocess {t['preprocess_s']:.2f}, learn {t['learn_s']:.2f}, "
                 f"postprocess {t['postprocess_s']:.2f}, predictive parents {t['predictive_s']:.2f}, "
                 f"bootstrap {t['bootstrap_s']:.2f})")
    return "\n".join(lines)


def _reason_kind(reason: str) -> str:
    """The reason without its numbers, to group metrics dropped for the same cause."""
    for kind in ("duplicate of", "near-constant", "constant", "missing in", "not among",
                 "no directed path to an objective"):
        if reason.startswith(kind):
            return {"duplicate of": "duplicates (merged)", "not among": "beyond --max-metrics",
                    "missing in": "mostly missing"}.get(kind, kind)
    return reason
