"""Data flows one way: the views read the store and never import the tuning loop or the CLI, and
no two modules import each other (read from the source with ``ast``, imports inside functions too)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]

# What shows a run: read from its store, so a dashboard or a report never needs the loop's code.
VIEWS = ["boanon.dashboard", "boanon.report", "boanon.optuna_export", "boanon.plots", "boanon.explain",
         "boanon.best", "boanon.graph_render", "boanon.multiobjective.plot"]
LOOP_AND_CLI = ("boanon.tuner", "boanon.cli")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / "boanon").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The boanon modules ``module`` names in an import (``from a import b`` is ``a.b`` where that is
    a module, else ``a``), anywhere in its code."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([base] if base else [])])
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return {m for m in out if m in modules and m != module}


@functools.cache  # read once for the three tests (the tests do not change it)
def _graph(with_packages: bool) -> nx.DiGraph:
    """Module -> the modules it imports; ``with_packages`` adds what Python runs first: importing
    ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``."""
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        for target in _imports(module, path, modules):
            graph.add_edge(module, target)
            parts = target.split(".")
            for package in (".".join(parts[:i]) for i in range(2, len(parts) if with_packages else 0)):
                if not (module == package or module.startswith(package + ".")):
                    graph.add_edge(module, package)
    return graph


def test_the_import_graph_is_read_whole() -> None:
    graph = _graph(with_packages=False)
    assert graph.has_edge("boanon.tuner", "boanon.store")  # a plain import
    assert graph.has_edge("boanon.cli.status", "boanon.cli.plot")  # inside a function
    assert graph.has_edge("boanon.multiobjective", "boanon.multiobjective.pareto")  # relative
    assert not graph.has_edge("boanon.cli.status", "boanon.learners")
    assert _graph(with_packages=True).has_edge("boanon.cli.status", "boanon.learners")  # its __init__


def test_no_view_imports_the_tuning_loop_or_the_cli() -> None:
    graph = _graph(with_packages=True)
    for view in [m for m in graph if any(m == v or m.startswith(v + ".") for v in VIEWS)]:
        reached = nx.descendants(graph, view)
        bad = sorted(m for m in reached if m.startswith(LOOP_AND_CLI))
        assert not bad, f"{view} imports {bad}: " + " -> ".join(nx.shortest_path(graph, view, bad[0]))


def test_no_modules_import_each_other() -> None:
    circles = sorted(sorted(c) for c in nx.strongly_connected_components(_graph(with_packages=False))
                     if len(c) > 1)
    assert circles == [], circles
