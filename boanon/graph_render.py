"""Draw a causal graph: Graphviz DOT text, rendered to SVG or PNG by the ``dot`` program.

Parameters are blue boxes, metrics grey ellipses, objectives red double octagons, ranked top
to bottom in that order. Edge width follows the weight; an edge's label shows its weight and,
when measured, its stability; the fallback edges of parameters without a learned path are dotted.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from boanon.graph import CausalGraph

STYLE = {
    "param": 'shape=box, style="rounded,filled", fillcolor="#cfe2ff", color="#3d6bb3"',
    "metric": 'shape=ellipse, style=filled, fillcolor="#eeeeee", color="#777777"',
    "objective": 'shape=doubleoctagon, style=filled, fillcolor="#f8c4c0", color="#b3403d"',
}
FORMATS = ("svg", "png")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(node: str, spec: dict | None, width: int = 48) -> str:
    """A node's label: its name, and the relation or formula that models it (shortened)."""
    if not spec:
        return ""
    text = spec.get("function") or spec.get("formula") or ""
    sign = "=" if "function" in spec else "~"
    short = text if len(text) <= width else text[: width - 3] + "..."
    label = node + "\n" + f"{sign} {short}"
    return f", label={_quote(label)}"


def to_dot(graph: CausalGraph) -> str:
    """The graph as DOT text (roles as shapes and colours, one rank per role)."""
    fallback = {tuple(s.split(" -> ")) for s in graph.metadata.get("params_connected", [])}
    lines = ["digraph causal {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9, color="#555555"];']
    for role in ("param", "metric", "objective"):
        nodes = graph.nodes(role)
        if not nodes:
            continue
        rank = {"param": "source", "objective": "sink"}.get(role, "same")
        lines.append(f"  subgraph {role}s {{")
        if role != "metric":
            lines.append(f"    rank={rank};")
        lines += [f"    {_quote(n)} [{STYLE[role]}{_label(n, graph.node_models.get(n))}];" for n in nodes]
        lines.append("  }")
    for e in graph.edges:
        attrs = []
        label = [f"{e.weight:.2f}"] if e.weight is not None else []
        if e.stability is not None:
            label.append(f"s={e.stability:.2f}")
        if label:
            attrs.append(f"label={_quote(' '.join(label))}")
        if e.weight is not None:
            attrs.append(f"penwidth={0.6 + 2.4 * min(max(e.weight, 0.0), 1.0):.2f}")
        if (e.source, e.target) in fallback:
            attrs.append("style=dotted")
        style = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {_quote(e.source)} -> {_quote(e.target)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(graph: CausalGraph, path: str | Path) -> Path:
    """Write ``path`` (``.svg``, ``.png`` or ``.dot``) and return it; needs Graphviz for images."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    dot = to_dot(graph)
    if fmt in ("dot", "gv"):
        path.write_text(dot)
        return path
    if fmt not in FORMATS:
        raise ValueError(f"{path}: cannot render .{fmt}; use .svg, .png or .dot")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz 'dot' not found on PATH (scripts/install-system-deps.sh installs it); "
                           "write a .dot file instead")
    done = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=dot.encode(), capture_output=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed for {path}: {done.stderr.decode(errors='replace').strip()}")
    return path
