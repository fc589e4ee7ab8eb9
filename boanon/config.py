"""The tuning YAML read by ``boanon tune``: what to tune, towards what, and how to run it.

::

    space: {x: {type: float, low: 0, high: 1, default: 0.5}, ...}
    constraints: ["a < b"]                              # optional
    objectives: [{name: cost, direction: minimize}]
    runner: {callable: "examples.synthetic_system:evaluate", options: {seed: 0}}
        # or {name: rocksdb, options: {...}} or {command: [prog, "--x={x}", "--out={trial_dir}"],
        #                                          options: {timeout: 60}}
    adapter: table                                      # optional: overrides the runner's adapter
    graph: graph.json                                   # optional: fixed graph (else learned)
    annotations: annotations.yaml                       # optional: expert knowledge
    budget: 30
    seed: 0
    strategy: structured                                # structured | gp | multitask | random
    n_init: 6                                           # initial design incl. the default config
    relearn_every: 5                                    # re-learn the graph at least every N trials
    outputs: [{name: area, max: 2.0e6}]                 # optional: bounds on metrics/objectives
    ref_point: {energy: 1.0e9, latency: 5.0e6}          # optional: hypervolume reference (else inferred)
    scalarization: {kind: weighted_sum, weights: [1, 1]}  # optional: instead of EHVI (several objectives)
    warm_start: earlier-run.db                          # optional: related trials (store, dataset, table),
                                                        #   or a list of them, one task each
    related_outputs: [write_amplification]              # optional: modelled jointly with the objectives

Every error is a :class:`ConfigError` naming the file and the field (a :class:`MissingFile` for a
file that is not there). Relative paths (graph, annotations, warm_start, a ``file.py:function``
callable, a command's program) are relative to the current directory: ``boanon tune`` records it
in the store, and ``boanon explain --measure`` reads the YAML from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boanon.errors import ConfigError, InvalidOption, MissingFile, refuse_unknown_keys
from boanon.multiobjective import OutputConstraint, Scalarization, parse_output_constraints, parse_ref_point
from boanon.objectives import Objective, parse_objectives
from boanon.space import Categorical, Space
from boanon.strategies import DEFAULT_STRATEGY, strategy_names
from boanon.yamlfile import load_yaml

KEYS = {"space", "constraints", "objectives", "runner", "adapter", "graph", "annotations", "budget",
        "seed", "strategy", "n_init", "relearn_every", "outputs", "ref_point", "scalarization", "warm_start",
        "related_outputs"}
RUNNER_KINDS = ("name", "callable", "command")


@dataclass
class TuneConfig:
    """A validated tuning YAML. ``runner_options`` are the runner's constructor arguments."""

    source: str
    space: Space
    objectives: list[Objective]
    runner: str
    runner_options: dict[str, Any] = field(default_factory=dict)
    adapter: str | None = None
    graph: Path | None = None
    annotations: Path | None = None
    budget: int | None = None
    seed: int = 0
    strategy: str = DEFAULT_STRATEGY
    n_init: int | None = None
    relearn_every: int = 5
    outputs: list[OutputConstraint] = field(default_factory=list)
    ref_point: list[float] | None = None
    scalarization: Scalarization | None = None
    warm_start: list[Path] = field(default_factory=list)
    related_outputs: list[str] = field(default_factory=list)

    def make_runner(self) -> Any:
        """A fresh runner instance: an option its constructor refuses (misspelt, missing or
        invalid) is named ``runner.options.<option>``, its other errors ``runner``."""
        from boanon.runners import make_runner

        try:
            return make_runner(self.runner, **self.runner_options)
        except InvalidOption as exc:  # named where a long YAML has it
            raise ConfigError(self.source, f"runner.options.{exc.option}", exc.reason) from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(self.source, "runner", str(exc)) from None

    def load_graph(self) -> Any:
        """The fixed graph named by ``graph`` (None when the graph is to be learned)."""
        from boanon.graph import CausalGraph

        if self.graph is None:
            return None
        try:
            graph = CausalGraph.load(self.graph)
        except ValueError as exc:
            raise ConfigError(self.source, "graph", str(exc)) from None
        missing = [o.name for o in self.objectives if o.name not in graph.roles]
        if missing:  # another system's graph: the structured model was a plain GP, unsaid
            raise ConfigError(self.source, "graph", f"{self.graph} has no node {missing[0]!r}, an "
                              f"objective of the run (its objectives: "
                              f"{', '.join(graph.nodes('objective')) or 'none'}): a graph of another system?")
        return graph

    def propose_options(self) -> dict[str, Any]:
        """The proposal settings of several objectives (reference point, scalarisation) that are set."""
        options = {"ref_point": self.ref_point, "scalarization": self.scalarization}
        return {k: v for k, v in options.items() if v is not None}

    def load_knowledge(self) -> Any:
        """The expert knowledge named by ``annotations`` (None when absent)."""
        if self.annotations is None:
            return None
        from boanon.annotations import Knowledge

        knowledge = Knowledge.from_yaml(self.annotations)
        self._reads_no_categorical(knowledge)
        return knowledge

    def _reads_no_categorical(self, knowledge: Any) -> None:
        """Refuse a node model whose expression reads a categorical parameter of the space: it
        reads numbers, and the run's first structured fit ended in a traceback (after the
        initial design) instead of the run not starting."""
        from boanon.nodespec import NodeSpec

        for node, spec in knowledge.node_models.items():
            parents = NodeSpec.parse(node, spec, knowledge.source).parents
            cats = sorted(p for p in parents if isinstance(self.space.params.get(p), Categorical))
            if cats:
                raise ConfigError(knowledge.source, f"node_models.{node}",
                                  f"reads categorical parameter(s) {cats} as numbers; an expression "
                                  "reads numbers (a bool is 0 or 1): leave the node to the models, "
                                  "or tune a number instead")


def load_config(path: str | Path) -> TuneConfig:
    """Read and validate a tuning YAML file."""
    source = str(path)
    data = load_yaml(path)
    if not isinstance(data, Mapping):
        raise ConfigError(source, "file", "expected a mapping with space, objectives and runner")
    return parse_config(data, source)


def parse_config(data: Mapping[str, Any], source: str = "config") -> TuneConfig:
    """Validate an already-parsed tuning mapping (see the module docstring)."""
    refuse_unknown_keys(data, KEYS, source)
    for key in ("space", "objectives", "runner"):
        if key not in data:
            raise ConfigError(source, key, "missing (required)")
    if not isinstance(data["space"], Mapping):
        raise ConfigError(source, "space", "expected a mapping of parameter name -> spec")
    constraints = data.get("constraints") or []
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise ConfigError(source, "constraints", "expected a list of predicate strings")
    space = Space.from_dict(data["space"], constraints, source=source)
    if not isinstance(data["objectives"], list):
        raise ConfigError(source, "objectives", "expected a list of {name, direction}")
    objectives = parse_objectives(data["objectives"], source=source)
    runner, options = _runner(data["runner"], space, objectives, source)
    adapter = data.get("adapter")
    if adapter is not None:
        from boanon.adapters import available_adapters

        if adapter not in available_adapters():
            raise ConfigError(source, "adapter", f"unknown adapter {adapter!r}; available: "
                              f"{', '.join(available_adapters())}")
        if runner == "command":
            options["adapter"] = adapter
    strategy = data.get("strategy", DEFAULT_STRATEGY)
    if strategy not in strategy_names():
        raise ConfigError(source, "strategy", f"expected one of {strategy_names()}, got {strategy!r}")
    return TuneConfig(
        source=source, space=space, objectives=objectives, runner=runner, runner_options=options,
        adapter=adapter, graph=_path(data, "graph", source), annotations=_path(data, "annotations", source),
        budget=_int(data, "budget", source, None), seed=_int(data, "seed", source, 0, minimum=0),
        strategy=strategy, n_init=_int(data, "n_init", source, None),
        relearn_every=_int(data, "relearn_every", source, 5),
        outputs=parse_output_constraints(data.get("outputs"), source),
        ref_point=parse_ref_point(data.get("ref_point"), objectives, source),
        scalarization=None if data.get("scalarization") is None
        else Scalarization.from_spec(data["scalarization"], objectives, source),
        warm_start=_paths(data, "warm_start", source),
        related_outputs=_names(data, "related_outputs", source))


def _runner(spec: Any, space: Space, objectives: list[Objective],
            source: str) -> tuple[str, dict[str, Any]]:
    """``runner:`` -> (registered runner name, constructor options)."""
    if not isinstance(spec, Mapping):
        raise ConfigError(source, "runner", "expected a mapping with one of name, callable, command")
    refuse_unknown_keys(spec, (*RUNNER_KINDS, "options"), source, "runner")
    kinds = [k for k in RUNNER_KINDS if k in spec]
    if len(kinds) != 1:
        raise ConfigError(source, "runner", "needs exactly one of name, callable or command "
                          f"(plus optional options), got {sorted(spec)}")
    options = spec.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(source, "runner.options", "expected a mapping")
    options = dict(options)
    kind = kinds[0]
    if kind == "callable":
        from boanon.runners.function import load_callable

        if not isinstance(spec["callable"], str):
            raise ConfigError(source, "runner.callable", "expected 'module:function'")
        module_file = Path(spec["callable"].rpartition(":")[0])
        if module_file.suffix == ".py" and not module_file.is_file():
            raise MissingFile(source, "runner.callable", module_file)
        try:
            load_callable(spec["callable"])
        except ValueError as exc:
            raise ConfigError(source, "runner.callable", str(exc)) from None
        return "callable", {"function": spec["callable"], "objectives": [o.name for o in objectives],
                            **options}
    if kind == "command":
        from boanon.runners.command import BUILTIN_FIELDS, template_fields

        command = spec["command"]
        if not isinstance(command, list) or not command:
            raise ConfigError(source, "runner.command", "expected a non-empty list of arguments "
                              "(never one shell string)")
        try:
            unknown = template_fields([str(a) for a in command]) - set(space.names) - BUILTIN_FIELDS
        except ValueError as exc:
            raise ConfigError(source, "runner.command", str(exc)) from None
        if unknown:
            raise ConfigError(source, "runner.command", f"{{{sorted(unknown)[0]}}} is not a parameter "
                              f"of the space nor one of {sorted(BUILTIN_FIELDS)}")
        return "command", {"command": [str(a) for a in command], **options}
    from boanon.runners.base import available_runners, runner_class

    if not isinstance(spec["name"], str):  # a list or mapping is no registry key: refused, not a TypeError
        raise ConfigError(source, "runner.name", f"expected a runner's name (one of "
                          f"{', '.join(available_runners())}), got {spec['name']!r}")
    try:
        runner_class(spec["name"])
    except ValueError as exc:  # the registry's words, with the closest name
        raise ConfigError(source, "runner.name", str(exc)) from None
    return spec["name"], options


def _path(data: Mapping[str, Any], key: str, source: str) -> Path | None:
    if data.get(key) is None:
        return None
    path = Path(str(data[key]))
    if not path.is_file():
        raise MissingFile(source, key, path)
    return path


def _paths(data: Mapping[str, Any], key: str, source: str) -> list[Path]:
    """A file or directory, or a list of them (each must exist)."""
    value = data.get(key)
    values = [] if value is None else value if isinstance(value, list) else [value]
    paths = [Path(str(v)) for v in values]
    for k, path in enumerate(paths):
        if not path.exists():
            field_name = f"{key}[{k}]" if isinstance(value, list) else key
            raise MissingFile(source, field_name, path, "file or directory")
    return paths


def _names(data: Mapping[str, Any], key: str, source: str) -> list[str]:
    """A list of quantity names."""
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(source, key, f"expected a list of names, got {value!r}")
    return list(value)


def _int(data: Mapping[str, Any], key: str, source: str, default: int | None,
         minimum: int = 1) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(source, key, f"expected an integer >= {minimum}, got {value!r}")
    return value
