"""Expert knowledge about the causal graph: required and forbidden edges, metric tiers, node models.

Knowledge is written in Python or in a YAML annotations file::

    require:                      # edges that must be in the graph
      - cache_size -> block_cache_miss
      - [bloom_bits, bloom_filter_useful]
    forbid:                       # edges that must not be
      - write_buffer_size -> compact_read_bytes
    forbid_patterns:              # regular expressions, anchored at both ends
      - {source: "level0_.*", target: "bloom_.*"}
    tiers:                        # ordered groups of metrics: no edge from a later tier to an earlier one
      - ["block_cache_.*", "bloom_.*"]
      - ["rocksdb_.*_micros.*"]
    node_models:
      latency: {formula: "a * reads / cache_hit + b", free: {a: {init: 1.0, low: 0.0}, b: {}},
                residual: gp}
      edp: {function: "energy * latency"}

The role tiers always hold on top of this: parameters have no parents, objectives have no
children, and there is no parameter -> parameter edge. Within them a required edge (or a node
model's parent edge) is always allowed: the expert's word beats forbids and metric tiers. Names
must be node ids (table column names without the role prefix); :meth:`Knowledge.validate`
rejects names that are not in the data, so a typo never silently turns into missing knowledge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import networkx as nx

from boanon.errors import ConfigError, did_you_mean, refuse_unknown_keys
from boanon.graph import CausalGraph, Edge
from boanon.nodespec import NodeSpec
from boanon.yamlfile import load_yaml

_YAML_KEYS = {"require", "forbid", "forbid_patterns", "tiers", "node_models"}


def anchored(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` so that it must match a whole name (``m1`` never matches ``m10``)."""
    return re.compile(rf"(?:{pattern})\Z")


@dataclass(frozen=True)
class ForbidPattern:
    source: str
    target: str

    def matches(self, source: str, target: str) -> bool:
        return bool(anchored(self.source).match(source) and anchored(self.target).match(target))


@dataclass
class Knowledge:
    """What an expert knows; the learners and :meth:`apply` make it hold in every graph."""

    required: list[tuple[str, str]] = field(default_factory=list)
    forbidden: list[tuple[str, str]] = field(default_factory=list)
    forbidden_patterns: list[ForbidPattern] = field(default_factory=list)
    tiers: list[list[str]] = field(default_factory=list)
    node_models: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "knowledge"
    learned: set[str] = field(default_factory=set)
    """Nodes whose model was learned from the data (a relation), not given by the expert."""
    _memo: dict[tuple[str, str, str, str], bool] = field(default_factory=dict, repr=False, compare=False)
    _required: set[tuple[str, str]] | None = field(default=None, repr=False, compare=False)

    def _changed(self) -> None:
        """Forget the answers of :meth:`allows`: the knowledge they came from has changed."""
        self._memo.clear()
        self._required = None

    # --- Python API -----------------------------------------------------------------------
    def require(self, source: str, target: str) -> Knowledge:
        """Require the edge ``source -> target``."""
        self.required.append((source, target))
        self._changed()
        return self

    def forbid(self, source: str, target: str) -> Knowledge:
        """Forbid the edge ``source -> target``."""
        self.forbidden.append((source, target))
        self._changed()
        return self

    def forbid_pattern(self, source: str, target: str) -> Knowledge:
        """Forbid every edge whose ends fully match the two regular expressions."""
        for field_name, pattern in (("forbid_patterns.source", source), ("forbid_patterns.target", target)):
            try:
                anchored(pattern)
            except re.error as exc:
                raise ConfigError(self.source, field_name,
                                  f"invalid regular expression {pattern!r}: {exc}") from None
        self.forbidden_patterns.append(ForbidPattern(source, target))
        self._changed()
        return self

    def add_tier(self, metrics: Iterable[str]) -> Knowledge:
        """Append a tier: metrics (names or anchored patterns) that no earlier-tier metric depends on."""
        self.tiers.append(list(metrics))
        self._changed()
        return self

    def node_model(self, node: str, *, formula: str | None = None, free: Mapping[str, Any] | None = None,
                   residual: str = "gp", function: str | None = None) -> Knowledge:
        """Attach a node model: ``formula`` with ``free`` parameters (+ ``residual``) or a ``function``."""
        spec: dict[str, Any] = ({"function": function} if function is not None else
                                {"formula": formula, "free": dict(free or {}), "residual": residual})
        self.node_models[node] = _check_node_model(self.source, node, spec)
        self._changed()
        return self

    def with_node_models(self, models: Mapping[str, NodeSpec | Mapping[str, Any]]) -> Knowledge:
        """A copy that also holds ``models`` (learned relations) for nodes this knowledge gives
        no model: the expert's own node models win. A learned ``function`` node gets no other
        parents (it is determined by its inputs): every other edge into it is forbidden, so a
        learner orients its adjacencies away from it."""
        out = self._copy()
        for node, spec in models.items():
            if node not in out.node_models:
                parsed = NodeSpec.parse(node, spec, self.source)
                out.node_models[node] = parsed.to_dict()
                out.learned.add(node)
                if parsed.node_kind.deterministic:
                    out.forbid_pattern(".*", re.escape(node))
        return out

    def with_required(self, edges: Iterable[tuple[str, str]]) -> Knowledge:
        """A copy that also requires ``edges`` (found in the data), skipping those it holds."""
        out = self._copy()
        out.required += [e for e in edges if e not in out.required]
        return out

    def without_learned(self, keep: Iterable[str]) -> Knowledge:
        """A copy without the learned node models whose node is not in ``keep`` (pruned)."""
        drop = self.learned - set(keep)
        return self._copy(node_models={n: m for n, m in self.node_models.items() if n not in drop},
                          learned=self.learned - drop)

    def _copy(self, **changes: Any) -> Knowledge:
        """A copy that shares nothing mutable with this one (and none of its cached answers)."""
        fields = {"required": list(self.required), "forbidden": list(self.forbidden),
                  "forbidden_patterns": list(self.forbidden_patterns),
                  "tiers": [list(t) for t in self.tiers], "node_models": dict(self.node_models),
                  "learned": set(self.learned)}
        return replace(self, **{**fields, **changes}, _memo={}, _required=None)

    def is_function(self, node: str) -> bool:
        """Whether ``node`` has a deterministic model (a ``function``): it reads only its inputs."""
        spec = self.node_models.get(node)
        return bool(spec) and NodeSpec.parse(node, spec, self.source).node_kind.deterministic

    # --- YAML -----------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, source: str = "annotations") -> Knowledge:
        data = data or {}
        if not isinstance(data, Mapping):
            raise ConfigError(source, "<top>", f"expected a mapping, got {type(data).__name__}")
        refuse_unknown_keys(data, _YAML_KEYS, source)
        k = cls(source=source)
        for i, item in enumerate(_as_list(source, "require", data.get("require"))):
            k.require(*_parse_edge(source, f"require[{i}]", item))
        for i, item in enumerate(_as_list(source, "forbid", data.get("forbid"))):
            k.forbid(*_parse_edge(source, f"forbid[{i}]", item))
        for i, item in enumerate(_as_list(source, "forbid_patterns", data.get("forbid_patterns"))):
            k.forbid_pattern(*_parse_edge(source, f"forbid_patterns[{i}]", item))
        for i, tier in enumerate(_as_list(source, "tiers", data.get("tiers"))):
            if isinstance(tier, str):
                tier = [tier]
            if not isinstance(tier, list) or not all(isinstance(t, str) for t in tier):
                raise ConfigError(source, f"tiers[{i}]", "expected a list of metric names or patterns")
            k.add_tier(tier)
        models = data.get("node_models") or {}
        if not isinstance(models, Mapping):
            raise ConfigError(source, "node_models", "expected a mapping node -> model")
        for node, spec in models.items():
            k.node_models[str(node)] = _check_node_model(source, str(node), spec)
        return k

    @classmethod
    def from_yaml(cls, path: str | Path) -> Knowledge:
        """Read an annotations file; errors name the file and the field."""
        return cls.from_dict(load_yaml(path), source=str(path))

    def to_dict(self) -> dict[str, Any]:
        return {
            "require": [f"{s} -> {t}" for s, t in self.required],
            "forbid": [f"{s} -> {t}" for s, t in self.forbidden],
            "forbid_patterns": [{"source": p.source, "target": p.target} for p in self.forbidden_patterns],
            "tiers": [list(t) for t in self.tiers],
            "node_models": dict(self.node_models),
        }

    # --- queries --------------------------------------------------------------------------
    def required_edges(self) -> list[tuple[str, str]]:
        """Explicitly required edges plus the parent edges that node models imply."""
        out = list(self.required)
        for node, spec in self.node_models.items():
            parents = NodeSpec.parse(node, spec, self.source).parents
            out += [(p, node) for p in sorted(parents) if (p, node) not in out]
        return out

    def mentioned(self) -> set[str]:
        """Every node named explicitly (never merged away or dropped by preprocessing)."""
        names = {n for e in self.required_edges() + self.forbidden for n in e}
        return names | set(self.node_models)

    def metric_tier(self, node: str) -> int | None:
        """Index of the first tier naming ``node`` (anchored patterns), or None."""
        for i, tier in enumerate(self.tiers):
            if any(anchored(p).match(node) for p in tier):
                return i
        return None

    def allows(self, source: str, target: str, roles: Mapping[str, str]) -> bool:
        """Whether ``source -> target`` may be an edge: a required edge (or a node model's parent
        edge) always may, within the role tiers; any other must respect the role tiers, the
        metric tiers and the forbids."""
        key = (source, target, roles[source], roles[target])
        if key not in self._memo:
            self._memo[key] = self._allows(*key)
        return self._memo[key]

    def _allows(self, source: str, target: str, rs: str, rt: str) -> bool:
        if source == target or rt == "param" or rs == "objective":
            return False
        if self._required is None:
            self._required = set(self.required_edges())
        if (source, target) in self._required:
            return True
        if rs == rt == "metric":
            ts, tt = self.metric_tier(source), self.metric_tier(target)
            if ts is not None and tt is not None and ts > tt:
                return False
        if (source, target) in self.forbidden:
            return False
        return not any(p.matches(source, target) for p in self.forbidden_patterns)

    def validate(self, roles: Mapping[str, str]) -> None:
        """Raise ConfigError when the knowledge names unknown nodes or contradicts itself."""
        for field_name, edges in (("require", self.required), ("forbid", self.forbidden)):
            for s, t in edges:
                for n in (s, t):
                    if n not in roles:
                        raise ConfigError(self.source, field_name, f"edge {s} -> {t}: unknown node {n!r}"
                                          f"{did_you_mean(n, roles)}")
        self._check_tier_names(roles)
        for node, spec in self.node_models.items():
            if node not in roles:
                raise ConfigError(self.source, f"node_models.{node}", f"unknown node {node!r}"
                                  f"{did_you_mean(node, roles)}")
            for p in NodeSpec.parse(node, spec, self.source).parents:
                if p not in roles:
                    raise ConfigError(self.source, f"node_models.{node}",
                                      f"{p!r} is neither a node nor a free parameter{did_you_mean(p, roles)}")
        clash = set(self.required_edges()) & set(self.forbidden)
        if clash:
            s, t = sorted(clash)[0]
            raise ConfigError(self.source, "forbid", f"edge {s} -> {t} is both required and forbidden")
        for s, t in self.required_edges():
            if roles[t] == "param" or roles[s] == "objective" or s == t:
                raise ConfigError(self.source, self._field_of(s, t),
                                  f"edge {s} -> {t} breaks the role tiers ({roles[s]} -> {roles[t]})")
        g = nx.DiGraph(self.required_edges())
        if not nx.is_directed_acyclic_graph(g):
            cycle = " -> ".join(a for a, _ in nx.find_cycle(g))
            raise ConfigError(self.source, "require", f"required edges form a cycle: {cycle}")

    def _field_of(self, source: str, target: str) -> str:
        """The field that asks for edge ``source -> target``: ``require``, or the node model that
        reads ``source`` (an error named ``require`` sent a reader of a node model elsewhere)."""
        if (source, target) in self.required or target not in self.node_models:
            return "require"
        return f"node_models.{target}"

    def _check_tier_names(self, roles: Mapping[str, str]) -> None:
        """A tier entry written as a plain name (no pattern) must name a node: a misspelt one
        (``worker_busy_maxs``) left its tier empty, unsaid. A pattern may match nothing."""
        for i, tier in enumerate(self.tiers):
            for entry in tier:
                if re.escape(entry) == entry and entry not in roles:
                    raise ConfigError(self.source, f"tiers[{i}]", f"unknown node {entry!r}"
                                      f"{did_you_mean(entry, roles)}")

    def apply(self, graph: CausalGraph, strict: bool = True) -> CausalGraph:
        """A copy of ``graph`` in which the required edges exist and the forbidden ones do not.

        Tier-breaking edges of a user-given graph are removed too; node models are copied over.
        ``strict=False`` accepts forbidden edges naming nodes absent from ``graph`` (a learner
        pruned them, after the names were checked against the table).
        """
        if strict:
            self.validate(graph.roles)
        else:
            kept = Knowledge(list(self.required), node_models=self.node_models, source=self.source)
            kept.validate(graph.roles)
        required = self.required_edges()
        edges = [Edge(e.source, e.target, e.weight, e.stability) for e in graph.edges
                 if self.allows(e.source, e.target, graph.roles)]
        present = {(e.source, e.target) for e in edges}
        edges += [Edge(s, t) for s, t in required if (s, t) not in present]
        g = nx.DiGraph([(e.source, e.target) for e in edges])
        if not nx.is_directed_acyclic_graph(g):
            cycle = " -> ".join(a for a, _ in nx.find_cycle(g))
            raise ConfigError(self.source, "require", f"required edges close a cycle in the graph: {cycle}")
        return CausalGraph(roles=dict(graph.roles), edges=edges,
                           node_models={**graph.node_models, **self.node_models},
                           metadata=dict(graph.metadata))


def _check_node_model(source: str, node: str, spec: Any) -> dict[str, Any]:
    """``spec`` as knowledge keeps it: the on-disk form of the checked :class:`NodeSpec`."""
    return NodeSpec.parse(node, spec, source).to_dict()


def _as_list(source: str, field_name: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(source, field_name, f"expected a list, got {type(value).__name__}")
    return value


def _parse_edge(source: str, field_name: str, item: Any) -> tuple[str, str]:
    """An edge written as ``"a -> b"``, ``[a, b]`` or ``{source: a, target: b}``."""
    if isinstance(item, str) and "->" in item:
        a, b = (s.strip() for s in item.split("->", 1))
    elif isinstance(item, list) and len(item) == 2:
        a, b = (str(s) for s in item)
    elif isinstance(item, Mapping) and set(item) == {"source", "target"}:
        a, b = str(item["source"]), str(item["target"])
    else:
        raise ConfigError(source, field_name,
                          f"expected 'a -> b', [a, b] or {{source, target}}, got {item!r}")
    if not a or not b:
        raise ConfigError(source, field_name, f"empty node name in {item!r}")
    return a, b
