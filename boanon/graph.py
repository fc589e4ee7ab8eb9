"""The causal graph over parameters, metrics and objectives, as plain JSON-able data.

JSON shape (the contract between learners, annotations and the surrogate model)::

    {"nodes": [{"id": "block_size", "role": "param"}, ...],
     "edges": [{"source": "block_size", "target": "cache_misses",
                "weight": 0.8, "stability": 0.9}, ...],
     "node_models": {"latency": {"kind": "formula", ...}},
     "metadata": {...}}

Node ids are the table's column names without the role prefix.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from boanon.table import ROLES, Role, column, run_role


@dataclass
class Edge:
    source: str
    target: str
    weight: float | None = None
    stability: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "target": self.target}
        if self.weight is not None:
            out["weight"] = self.weight
        if self.stability is not None:
            out["stability"] = self.stability
        return out


@dataclass(repr=False)
class CausalGraph:
    """Nodes with roles, directed edges with optional weight and stability, node models."""

    roles: dict[str, Role] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    node_models: dict[str, dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: ``print(graph)`` of a learned graph would otherwise dump tens of kilobytes."""
        counts = ", ".join(f"{n} {r}{'s' if n != 1 else ''}" for r in ROLES if (n := len(self.nodes(r))))
        learner = f", learned by {self.metadata['learner']}" if "learner" in self.metadata else ""
        models = f", {len(self.node_models)} node models" if self.node_models else ""
        return f"<CausalGraph: {len(self.roles)} nodes ({counts}), {len(self.edges)} edges{models}{learner}>"

    def nodes(self, role: Role | None = None) -> list[str]:
        return [n for n, r in self.roles.items() if role is None or r == role]

    def parents(self, node: str) -> list[str]:
        return [e.source for e in self.edges if e.target == node]

    def children(self, node: str) -> list[str]:
        return [e.target for e in self.edges if e.source == node]

    def has_edge(self, source: str, target: str) -> bool:
        return any(e.source == source and e.target == target for e in self.edges)

    def column(self, node: str) -> str:
        """The table column of ``node``."""
        return column(self.roles[node], node)

    def with_objectives(self, objectives: Iterable[str], keep: Iterable[str] = ()) -> CausalGraph:
        """A copy in which objective nodes other than ``objectives`` and ``keep`` are metrics, by
        :func:`boanon.table.run_role` as in :func:`boanon.table.with_objectives` (only demoted: an
        objective has no children, so the graph stays valid; a metric is never promoted, it may
        have children)."""
        wanted, kept = set(objectives), set(keep)
        out = copy.deepcopy(self)
        out.roles = {n: r if r == "metric" else run_role(n, r, wanted, kept) for n, r in self.roles.items()}
        return out

    def to_networkx(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for n, r in self.roles.items():
            g.add_node(n, role=r)
        for e in self.edges:
            g.add_edge(e.source, e.target, weight=e.weight, stability=e.stability)
        return g

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": [{"id": n, "role": r} for n, r in self.roles.items()],
            "edges": [e.to_dict() for e in self.edges],
            "node_models": self.node_models,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "graph") -> CausalGraph:
        try:
            roles = {n["id"]: n["role"] for n in data["nodes"]}
            edges = [Edge(e["source"], e["target"], e.get("weight"), e.get("stability"))
                     for e in data["edges"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{source}: nodes need 'id' and 'role', edges 'source' and "
                             f"'target' (missing {exc})") from exc
        for n, r in roles.items():
            if r not in ROLES:
                raise ValueError(f"{source}: node {n!r} has role {r!r}; expected one of {ROLES}")
        for e in edges:
            for end in (e.source, e.target):
                if end not in roles:
                    raise ValueError(f"{source}: edge {e.source}->{e.target} names unknown node {end!r}")
        return cls(roles=roles, edges=edges, node_models=dict(data.get("node_models", {})),
                   metadata=dict(data.get("metadata", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> CausalGraph:
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        return cls.from_dict(data, source=str(path))
