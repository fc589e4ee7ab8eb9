"""Draw a causal graph: Graphviz DOT text, rendered to SVG or PNG by the ``dot`` program.

Parameters are blue boxes, metrics grey ellipses, objectives red double octagons, and a metric an
output constraint bounds (``outputs:``) wears its bound and a red border: the run aims at it too. Edge width
follows the weight; the fallback edges of parameters without a learned path are dotted. A
key under the picture explains all of that and says what was left out.

Learned graphs of real systems are dense (the SGD cluster's: 102 nodes, 487 edges), and one
drawn whole is a strip no one reads. :func:`view` makes the picture a person asks for: the
objectives' ancestors only, each node's few strongest parents (the number of edges left out is
said in the legend), and nodes grouped into boxes by entity (``m3_share`` and ``m3_busy_s``
belong to machine ``m3``) so a machine's parameters sit with its metrics. A large view lists
the nodes' formulas in the key instead of under their names, so the picture fits a page.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import networkx as nx

from boanon.graph import CausalGraph, Edge
from boanon.multitask.tasks import TASK
from boanon.nodespec import NodeSpec
from boanon.units import count

ROLE_LOOK = {  # role: (the key's noun, shape, fill, border, further attributes)
    "param": ("parameter", 'shape=box, style="rounded,filled"', "#cfe2ff", "#3d6bb3", ""),
    "metric": ("metric", "shape=ellipse, style=filled", "#eeeeee", "#777777", ', margin="0.02,0.02"'),
    "objective": ("objective", "shape=doubleoctagon, style=filled", "#f8c4c0", "#b3403d", ""),
}
"""How each role is drawn, in the picture and in its key (one table: the key's colours are the nodes')."""
STYLE = {role: f'{shape}, fillcolor="{fill}", color="{border}"{extra}'
         for role, (_, shape, fill, border, extra) in ROLE_LOOK.items()}
BOUND_STYLE = ', color="#b3403d", penwidth=2.2'
"""A bounded output's border (the objectives' red): the run steers it as it steers them."""
FORMATS = ("svg", "png")
ENTITY = r"^([A-Za-z]+\d+)[_.:/-]"
"""The default grouping: a name's leading token when it ends in a number (``m3_``, ``node12.``,
``cf1/``), the usual way logs name a machine, worker or column family."""
HIDDEN = frozenset({TASK})
"""Internal nodes never drawn: the task indicator of a warm-started run is no parameter a person sets."""
LABEL_EDGES_UP_TO = 30
"""Above this many edges the weights are shown by width only (labels would cover the picture)."""


@dataclass
class View:
    """A graph prepared for drawing: which nodes and edges, grouped how, and what was left out."""

    graph: CausalGraph
    groups: dict[str, str]
    hidden_edges: int = 0
    max_parents: int | None = None
    hidden_nodes: int = 0
    bounds: dict[str, str] = field(default_factory=dict)
    """Node -> its output constraint as text (``g0_load <= 0.6``), drawn as the node's label."""


def ancestors_of_objectives(graph: CausalGraph, objectives: Iterable[str] | None = None) -> CausalGraph:
    """The objectives (default: every objective node) and their ancestors, nothing else."""
    g = graph.to_networkx()
    targets = [o for o in (objectives if objectives is not None else graph.nodes("objective")) if o in g]
    keep = set(targets).union(*(nx.ancestors(g, o) for o in targets))
    return replace(graph, roles={n: r for n, r in graph.roles.items() if n in keep},
                   edges=[e for e in graph.edges if e.source in keep and e.target in keep])


def neighbourhood(g: nx.DiGraph, targets: Iterable[str], max_nodes: int = 30) -> list[str]:
    """The ``targets`` and the strongest paths into them, strongest first, until ``max_nodes``:
    a view that stays readable however large the graph (the SGD cluster's 105 nodes). A path's
    strength is the product of its edges' weights (an edge without one, such as a node's
    expression reads, counts as 1); each node keeps its strongest way on to a target, and the
    sources (nodes without parents: the parameters) are taken in order of their path's strength."""
    targets = [t for t in targets if t in g]
    strength = {t: 1.0 for t in targets}
    onward: dict[str, str] = {}
    for node in reversed(list(nx.topological_sort(g))):
        if node in targets:
            continue
        ways = [(_weight(g.edges[node, c]) * strength[c], c) for c in g.successors(node) if c in strength]
        if ways:
            strength[node], onward[node] = max(ways)
    sources = sorted((n for n in strength if g.in_degree(n) == 0 and n not in targets),
                     key=lambda n: (-strength[n], n))
    keep = list(targets)
    for source in sources:
        path, node = [], source
        while node not in keep:
            path.append(node)
            node = onward[node]
        if len(keep) + len(path) > max_nodes:
            continue
        keep += path
    return keep


def _weight(data: dict) -> float:
    weight = data.get("weight")
    return 1.0 if weight is None else min(abs(weight), 1.0)


def without(graph: CausalGraph, hidden: Iterable[str]) -> CausalGraph:
    """``graph`` without the ``hidden`` nodes and their edges."""
    drop = set(hidden)
    return replace(graph, roles={n: r for n, r in graph.roles.items() if n not in drop},
                   edges=[e for e in graph.edges if e.source not in drop and e.target not in drop])


def strongest_parents(graph: CausalGraph, k: int) -> tuple[CausalGraph, int]:
    """Each node's ``k`` heaviest incoming edges and its heaviest outgoing one (so no node of
    the objectives' ancestry looks like a dead end), and how many edges were dropped. Edges
    without a weight count as heaviest."""
    by_target: dict[str, list[Edge]] = {}
    by_source: dict[str, list[Edge]] = {}
    for e in graph.edges:
        by_target.setdefault(e.target, []).append(e)
        by_source.setdefault(e.source, []).append(e)
    keep: set[int] = set()
    for edges in by_target.values():
        keep.update(id(e) for e in sorted(edges, key=_heaviest)[:k])
    keep.update(id(min(edges, key=_heaviest)) for edges in by_source.values())
    edges = [e for e in graph.edges if id(e) in keep]
    return replace(graph, edges=edges), len(graph.edges) - len(edges)


def _heaviest(e: Edge) -> float:
    return -(e.weight if e.weight is not None else float("inf"))


def entity_groups(nodes: Iterable[str], pattern: str = ENTITY) -> dict[str, str]:
    """``{node: group}`` for nodes whose name matches ``pattern`` (its first group is the group's
    name); a group of one node is no group."""
    regex = re.compile(pattern)
    found = {n: m[1] for n in nodes if (m := regex.search(n)) and m.groups()}
    sizes = Counter(found.values())
    return {n: g for n, g in found.items() if sizes[g] > 1}


def with_outputs(graph: CausalGraph, outputs: Iterable[str]) -> CausalGraph:
    """``graph`` with every one of ``outputs`` a node: a bounded output the learner found no path
    into is still one the run steers, so it is drawn, alone (the key says it has no path)."""
    absent = [o for o in outputs if o not in graph.roles]
    return replace(graph, roles={**graph.roles, **dict.fromkeys(absent, "metric")}) if absent else graph


def view(graph: CausalGraph, objectives: Iterable[str] | None = None, ancestors: bool = True,
         max_parents: int | None = 3, group: str | None = ENTITY, max_nodes: int | None = None,
         bounds: Mapping[str, str] | None = None) -> View:
    """The picture a person asks for (see the module docstring); ``ancestors=False`` keeps nodes
    without a path to an objective, ``max_parents=None`` every edge, ``group=None`` no boxes;
    ``max_nodes`` keeps the objectives' :func:`neighbourhood` of that size (the strongest paths
    into them). ``bounds`` (output -> its constraint as text) are targets as the objectives are,
    each drawn with its bound. Internal nodes (the task indicator of a warm start) are never drawn."""
    bounds = dict(bounds or {})
    graph = with_outputs(without(graph, HIDDEN), bounds)
    targets = [*(objectives if objectives is not None else graph.nodes("objective")), *bounds]
    if ancestors:
        graph = ancestors_of_objectives(graph, targets)
    n_before = len(graph.roles)
    if max_nodes is not None and len(graph.roles) > max_nodes:
        keep = set(neighbourhood(graph.to_networkx(), targets, max_nodes))
        graph = without(graph, set(graph.roles) - keep)
    hidden = 0
    if max_parents is not None:
        graph, hidden = strongest_parents(graph, max_parents)
    groups = entity_groups(graph.roles, group) if group else {}
    return View(graph, groups, hidden, max_parents if hidden else None, n_before - len(graph.roles),
                {n: b for n, b in bounds.items() if n in graph.roles})


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _formula(node: str, spec: dict | None, width: int) -> str | None:
    """A node's relation or formula in short (``= f`` deterministic, ``~ f`` with a residual)."""
    if not spec:
        return None
    parsed = NodeSpec.parse(node, spec)
    text = parsed.expression.text
    sign = "=" if parsed.node_kind.deterministic else "~"
    return f"{sign} {text if len(text) <= width else text[: width - 3] + '...'}"


def _label(node: str, spec: dict | None, inline: bool, bound: str | None = None, width: int = 34) -> str:
    """A node's attributes beyond its role's style: a bounded output is named with its bound
    and has a red border; a small graph shows a node's relation or formula under its name; a
    large one marks the node (a thick purple border, as the dashboard does) and lists the
    formula in the key, so long formulas do not widen every rank."""
    formula = _formula(node, spec, width)
    label = (bound or node) + (chr(10) + formula if formula is not None and inline else "")
    attrs = f", label={_quote(label)}" if label != node else ""
    if bound:
        return attrs + BOUND_STYLE
    return attrs + (', penwidth=2.5, color="#6a3d9a"' if formula is not None and not inline else "")


def _width(weight: float | None) -> float:
    return 1.0 if weight is None else 0.6 + 2.4 * min(max(weight, 0.0), 1.0)


def to_dot(graph: CausalGraph | View, legend: bool = True) -> str:
    """The graph (or a :func:`view` of it) as DOT text: roles as shapes and colours, groups as
    boxes, and a legend."""
    v = graph if isinstance(graph, View) else View(graph, {})
    g = v.graph
    fallback = _fallback_edges(g)
    labelled = len(g.edges) <= LABEL_EDGES_UP_TO

    def node(n: str) -> str:
        extra = _label(n, g.node_models.get(n), labelled, v.bounds.get(n))
        return f"{_quote(n)} [{STYLE[g.roles[n]]}{extra}];"

    lines = ["digraph causal {", "  rankdir=LR; ranksep=0.4; nodesep=0.12; labelloc=b; labeljust=l;",
             '  graph [fontname="Helvetica", fontsize=12];',
             '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9, color="#555555", arrowsize=0.6];']
    for name in sorted(set(v.groups.values())):
        members = [n for n in g.roles if v.groups.get(n) == name]
        lines += [f"  subgraph {_quote('cluster_' + name)} {{",
                  f'    label={_quote(name)}; labelloc=t; style="rounded,filled"; fillcolor="#fbfbf4";'
                  ' color="#bbbbaa";',
                  *[f"    {node(n)}" for n in members], "  }"]
    for role in ("param", "metric", "objective"):
        loose = [n for n in g.nodes(role) if n not in v.groups]
        if loose:
            lines.append(f"  subgraph {role}s {{")
            if role != "metric" and not v.groups:  # ranks across group boxes would fight the boxes
                lines.append(f"    rank={'source' if role == 'param' else 'sink'};")
            lines += [f"    {node(n)}" for n in loose]
            lines.append("  }")
    for e in g.edges:
        attrs = [f"penwidth={_width(e.weight):.2f}"] if e.weight is not None else []
        label = [f"{e.weight:.2f}"] if e.weight is not None else []
        if e.stability is not None:
            label.append(f"s={e.stability:.2f}")
        if label and labelled:
            attrs.append(f"label={_quote(' '.join(label))}")
        if (e.source, e.target) in fallback:
            attrs.append("style=dotted")
        style = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {_quote(e.source)} -> {_quote(e.target)}{style};")
    if legend:
        lines.append(f"  label=<{_legend(v, labelled)}>;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _fallback_edges(g: CausalGraph) -> set[tuple[str, ...]]:
    """The edges added for a parameter with no learned path to an objective (drawn dotted)."""
    return {tuple(s.split(" -> ")) for s in g.metadata.get("params_connected", [])}


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _legend(v: View, labelled: bool) -> str:
    """The key, as the graph's own label under the picture (an HTML-like table: drawn legend
    edges with labels would double every rank's width): the three node kinds, the edge styles,
    what was left out and how to see it, and (large graphs) the formulas of the marked nodes."""
    notes = [f"{count(len(v.graph.roles), 'node')}, {count(len(v.graph.edges), 'edge')}"]
    if v.hidden_nodes:
        ancestors = count(v.hidden_nodes, "more distant or weaker ancestor")
        notes.append(f"the objectives' strongest paths: {ancestors} left out (--max-nodes 0 draws every one)")
    if v.hidden_edges:
        notes.append(f"{count(v.hidden_edges, 'weaker edge')} hidden "
                     f"({count(v.max_parents, 'strongest parent')} per node, "
                     "and its strongest child; --all-edges draws them)")
    if v.groups:
        notes.append("boxes: nodes of one entity (name prefix)")
    notes += [f"no learned path into {n}" for n in v.bounds if not v.graph.parents(n)]
    weighted = any(e.weight is not None for e in v.graph.edges)
    if not labelled and weighted:
        notes.append("edge width = weight (labels off: too many edges)")
    formulas = {} if labelled else {
        n: f for n in v.graph.roles if (f := _formula(n, v.graph.node_models.get(n), 70)) is not None}
    # only what the picture holds: a key entry for a kind drawn nowhere sends a reader looking
    cell = '<td bgcolor="{}" border="1" color="{}">&nbsp;{}&nbsp;</td>'
    drawn = set(v.graph.roles.values())
    kinds = [cell.format(fill, border, noun) for role, (noun, _, fill, border, _) in ROLE_LOOK.items()
             if role in drawn]
    if v.bounds:
        kinds.append(cell.format("#eeeeee", "#b3403d", "red border: an output constraint (its bound)"))
    if set(formulas) - set(v.bounds):  # a bounded output with a formula wears red, not purple
        kinds.append(cell.format("#eeeeee", "#6a3d9a", "purple border: has a formula (below)"))
    edge_styles = ["thick = strong (weight 1), thin = weak (weight 0.1)"] if weighted else []
    if _fallback_edges(v.graph) & {(e.source, e.target) for e in v.graph.edges}:
        edge_styles.append("dotted = fallback (no learned path)")
    span = f'<td colspan="{len(kinds)}" align="left">'
    rows = [
        "<tr>" + "".join(kinds) + "</tr>",
        *([f"<tr>{span}edges: {', '.join(edge_styles)}</td></tr>"] if edge_styles else []),
        *(f"<tr>{span}{_html(n)}</td></tr>" for n in notes),
        *(f'<tr>{span}<font point-size="9">{_html(f"{n} {formula}")}</font></td></tr>'
          for n, formula in formulas.items()),
    ]
    return '<table border="0" cellborder="0" cellspacing="2" cellpadding="1">' + "".join(rows) + "</table>"


def format_problem(path: str | Path) -> str | None:
    """Why :func:`render` cannot write ``path`` (its suffix names no format it draws), else None:
    a command checks it before its work, not after (``learn --render g.pdf`` learned first)."""
    fmt = Path(path).suffix.lstrip(".").lower()
    return None if fmt in (*FORMATS, "dot", "gv") else f"cannot render .{fmt}; use .svg, .png or .dot"


def render(graph: CausalGraph | View, path: str | Path) -> Path:
    """Write ``path`` (``.svg``, ``.png`` or ``.dot``) and return it; needs Graphviz for images."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    problem = format_problem(path)
    if problem:
        raise ValueError(f"{path}: {problem}")
    dot = to_dot(graph)
    if fmt in ("dot", "gv"):
        path.write_text(dot)
        return path
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz 'dot' not found on PATH (scripts/install-system-deps.sh installs it); "
                           "write a .dot file instead")
    done = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=dot.encode(), capture_output=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed for {path}: {done.stderr.decode(errors='replace').strip()}")
    return path
