"""Benchmark problems: a search space, one objective, and an evaluation that returns a full trial.

Every evaluation goes through the target's registered runner into a temporary trial directory
and back through the target's adapter, exactly as ``boanon tune`` does, so the trial record
carries every logged metric: BoAnon's structured strategy can use them, generic tuners only see
the objective. The synthetic problems are simulated in-process and know their optimum, so their
results can be read as regret.

Problems are built lazily by name (:func:`make_problem`): building one may need a system
(``db_bench``, ZigZag) that the others do not.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import pipeline
from benchmarks.function_networks import NETWORKS, FunctionNetwork
from boanon.acquisition.optimize import config_key
from boanon.annotations import Knowledge
from boanon.objectives import Objective
from boanon.runners import make_runner, run_trial
from boanon.space import Space
from boanon.synthetic import SyntheticSystem
from boanon.table import TrialRecord, Value

Evaluate = Callable[[dict[str, Value]], TrialRecord]
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Problem:
    """What a benchmark run needs: the space, the objective and how to evaluate a configuration.

    ``evaluate`` raises :class:`boanon.runners.base.TrialFailed` (or a
    :class:`boanon.errors.LogParseError`) when the system fails; the harness counts that as a spent
    evaluation. ``optimum`` is the known best objective value (synthetic problems only).
    ``knowledge`` names what an expert or an earlier run brings (``annotations``: a BoAnon
    annotations file; ``warm_start``: a dataset of the same system, or datasets of related tasks
    that measured the objective; ``related_tasks``: datasets for a multi-task model, which may
    have measured only ``related_outputs``, logged quantities to model jointly with the
    objective), for the tuners that use it.
    """

    name: str
    space: Space
    objective: Objective
    evaluate: Evaluate
    budget: int = 50
    optimum: float | None = None
    description: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    knowledge: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """Plain data for ``problems.json`` (read by the plots and the summary)."""
        return {"name": self.name, "objective": self.objective.name,
                "direction": self.objective.direction, "n_params": len(self.space),
                "budget": self.budget, "optimum": self.optimum, "description": self.description,
                **self.info, **{k: _plain(v) for k, v in self.knowledge.items()}}


def _plain(value: Any) -> Any:
    """Knowledge as plain data: paths relative to the repository, a network as its structure,
    annotations as their dict."""
    if isinstance(value, FunctionNetwork):
        return value.spec()
    if isinstance(value, Knowledge):
        return value.to_dict()
    if isinstance(value, list):
        return [str(_plain(v)) for v in value]
    return str(value.relative_to(ROOT)) if isinstance(value, Path) else value


def runner_evaluator(runner: str, options: dict[str, Any]) -> Evaluate:
    """Run a configuration with a registered runner and parse the trial with its adapter."""
    instance = make_runner(runner, **options)

    def evaluate(config: dict[str, Value]) -> TrialRecord:
        with tempfile.TemporaryDirectory(prefix=f"boanon-bench-{runner}-") as tmp:
            return run_trial(instance, config, Path(tmp) / "trial")

    return evaluate


def memoized(evaluate: Evaluate) -> Evaluate:
    """Evaluate each configuration once per process: for deterministic systems (ZigZag).

    A repeated configuration still costs the tuner an evaluation; only the wall time is saved
    (every run starts at the default, and model-based tuners re-propose their incumbents).
    Failures are not remembered: a timeout depends on the machine's load, not the design.
    """
    seen: dict[str, TrialRecord] = {}

    def cached(config: dict[str, Value]) -> TrialRecord:
        key = config_key(config)
        if key not in seen:
            seen[key] = evaluate(config)
        return copy.deepcopy(seen[key])

    return cached


def _counter() -> Callable[[], str]:
    """Trial ids t00000, t00001, ... for problems simulated in-process."""
    counter = iter(range(1 << 62))
    return lambda: f"t{next(counter):05d}"


def _function_network(name: str) -> Problem:
    network = NETWORKS[name]()
    trial_id = _counter()
    return Problem(name, network.space(), Objective(network.objective, network.direction),
                   lambda config: network.record(trial_id(), config), optimum=network.optimum,
                   description=network.description,
                   info={"n_nodes": len(network.nodes), "n_metrics": len(network.metrics)},
                   knowledge={"network": network, **({"annotations": Knowledge.from_dict(
                       network.calibration(), f"{name}'s calibration")} if network.target else {})})


def _pipeline() -> Problem:
    trial_id = _counter()
    return Problem("pipeline", pipeline.space(), Objective("job_time", "minimize"),
                   lambda config: pipeline.record(trial_id(), config),
                   description="simulated Spark-like 3-stage batch job on a 16-node cluster, seconds "
                               "(benchmarks.pipeline)")


def _synthetic(name: str, **kwargs: Any) -> Problem:
    system = SyntheticSystem(**kwargs)
    trial_id = _counter()

    def evaluate(config: dict[str, Value]) -> TrialRecord:
        # Noise is seeded by the configuration (SyntheticSystem's default), so every tuner sees
        # the same value for the same configuration.
        return system.record(trial_id(), dict(config))

    graph = system.true_graph()
    return Problem(name, system.space, Objective("cost", "minimize"), evaluate,
                   optimum=system.optimum()["cost"],
                   description=f"SyntheticSystem({', '.join(f'{k}={v}' for k, v in kwargs.items())})",
                   info={"n_metrics": sum(r == "metric" for r in graph.roles.values()),
                         "n_true_edges": len(graph.edges)})


def _sgd() -> Problem:
    from boanon.targets.sgd import default_constraints, default_space

    space = Space.from_dict(default_space(), default_constraints(), source="sgd.default_space()")
    options = {"network": "googlenet", "noise_seed": 0}
    return Problem("sgd", space, Objective("iteration_time", "minimize"),
                   runner_evaluator("sgd", options),
                   description="simulated 10-machine parameter-server SGD cluster (BOAT's case study), "
                               "GoogLeNet, seconds per iteration",
                   info={"runner_options": options},
                   knowledge={"annotations": ROOT / "examples" / "sgd-annotations.yaml",
                              "warm_start": ROOT / "datasets" / "sgd-googlenet"})


def _zigzag(objective: str) -> Problem:
    from boanon.targets.zigzag import default_space

    space = Space.from_dict(default_space(), source="zigzag.default_space()")
    # One ResNet-18 layer and a narrow mapping search keep an evaluation near 10 CPU-s; ZigZag's
    # own mapper minimises the same objective for each design.
    options = {"model": "resnet18", "layers": [11], "lpf_limit": 2,
               "opt": {"edp": "EDP"}.get(objective, objective), "timeout": 300}
    # What an architect knows of the energy-delay product; datasets/zigzag-resnet18 is a related
    # task (other layers, a wider mapping search).
    knowledge = {"annotations": ROOT / "examples" / "zigzag-edp-annotations.yaml",
                 "warm_start": ROOT / "datasets" / "zigzag-resnet18"} if objective == "edp" else {}
    return Problem(f"zigzag-{objective}", space, Objective(objective, "minimize"),
                   memoized(runner_evaluator("zigzag", options)),
                   description=f"ZigZag accelerator design, ResNet-18 conv layer 11 (14x14x256), {objective}",
                   info={"runner_options": options}, knowledge=knowledge)


ZIGZAG_AWAY = {"alexnet": [2], "mobilenetv2": [20]}
"""The layers of the other shipped networks in the suite (one conv layer each keeps an
evaluation within about 10 CPU-s)."""


def _zigzag_away(model: str) -> Problem:
    from boanon.targets.zigzag import default_space

    space = Space.from_dict(default_space(), source="zigzag.default_space()")
    options = {"model": model, "layers": ZIGZAG_AWAY[model], "lpf_limit": 2, "opt": "EDP", "timeout": 300}
    return Problem(f"zigzag-{model}", space, Objective("edp", "minimize"),
                   memoized(runner_evaluator("zigzag", options)),
                   description=f"ZigZag accelerator design, {model} conv layer {ZIGZAG_AWAY[model][0]}, edp",
                   info={"runner_options": options})


def _rocksdb() -> Problem:
    from boanon.targets.rocksdb import default_constraints, default_space

    space = Space.from_dict(default_space(), default_constraints(), source="rocksdb.default_space()")
    options = {"workload": "readrandom", "num": 200_000, "timeout": 60}
    return Problem("rocksdb", space, Objective("readrandom_ops_per_sec", "maximize"),
                   runner_evaluator("rocksdb", options), budget=20,
                   description="db_bench fillrandom+readrandom, 200k keys, ops/s of readrandom",
                   info={"runner_options": options})


MiB = 1 << 20
SCALED_SIZES = {"write_buffer_size": 1 * MiB, "target_file_size_base": 1 * MiB,
                "max_bytes_for_level_base": 4 * MiB}
"""The ``rocksdb-mixgraph`` problem's defaults for the LSM sizes: RocksDB's at 1/64 (also the
noise study's, :mod:`benchmarks.rocksdb_noise`)."""


ROCKSDB_ANNOTATIONS = ROOT / "examples" / "rocksdb-annotations.yaml"
"""What a RocksDB engineer knows of CPU time per operation (the ``boanon-expert`` rows)."""

ROCKSDB_KNOWLEDGE = {
    "annotations": ROCKSDB_ANNOTATIONS,
    "warm_start": [ROOT / "datasets" / "rocksdb-readrandomwriterandom"],
    "related_tasks": [ROOT / "datasets" / f"rocksdb-{workload}"
                      for workload in ("readrandomwriterandom", "readrandom", "mixgraph")],
    "related_outputs": ["mixgraph_ops_per_sec", "db_get_micros_p99", "write_amplification"],
}
"""What a user of the scaled RocksDB problems has besides the target: the expert's annotations, and
logs of other workloads (same space and sizes) for the warm and multi-task rows. Only the
readrandomwriterandom dataset recorded the objective (CPU time); the shipped readrandom and
mixgraph datasets (other sizes, no rusage) inform the multi-task model through the related
outputs."""


def _scaled_rocksdb_space() -> Space:
    """RocksDB's defaults with the LSM sizes at 1/64, so that a million keys or fewer build a tree
    of several levels."""
    from boanon.targets.rocksdb import default_constraints, default_space

    spec = {name: {**p, "default": SCALED_SIZES.get(name, p["default"])}
            for name, p in default_space().items()}
    return Space.from_dict(spec, default_constraints(), source="rocksdb.default_space()")


def _rocksdb_mixgraph() -> Problem:
    # CPU time per operation is the objective that survived the noise study (CV 3.7 % against
    # 27 % for throughput).
    space = _scaled_rocksdb_space()
    options = {"workload": "mixgraph", "num": 1_000_000, "reads": 400_000, "timeout": 300}
    return Problem("rocksdb-mixgraph", space, Objective("cpu_micros_per_op", "minimize"),
                   runner_evaluator("rocksdb", options), budget=10,
                   description="db_bench fillrandom+mixgraph (FAST'20 social graph), 1M keys + 400k "
                               "operations, LSM sizes' defaults at 1/64, CPU microseconds per operation",
                   info={"runner_options": options}, knowledge=ROCKSDB_KNOWLEDGE)


def _rocksdb_readwhilewriting() -> Problem:
    # A workload no one tuned the method on: one writer at full speed beside reads skewed towards
    # a small hot set (key = num * exp(-r), r uniform in [0, 5]: half the reads within the first
    # 8 % of the keys). Same space, sizes' defaults, objective and knowledge as rocksdb-mixgraph:
    # its warm start and related tasks are other workloads' logs, as a user would have.
    options = {"workload": "readwhilewriting", "num": 200_000, "reads": 50_000, "timeout": 300,
               "flags": {"read_random_exp_range": 5.0}}
    return Problem("rocksdb-readwhilewriting", _scaled_rocksdb_space(),
                   Objective("cpu_micros_per_op", "minimize"),
                   runner_evaluator("rocksdb", options), budget=10,
                   description="db_bench fillrandom+readwhilewriting (1 writer unthrottled, reads skewed: "
                               "read_random_exp_range=5), 200k keys + 50k reads, LSM sizes' defaults at "
                               "1/64, CPU microseconds per operation",
                   info={"runner_options": options},
                   knowledge=ROCKSDB_KNOWLEDGE)


PROBLEMS: dict[str, Callable[[], Problem]] = {
    "synthetic": lambda: _synthetic("synthetic", n_params=12, n_groups=4, seed=0),
    "synthetic-40": lambda: _synthetic("synthetic-40", n_params=40, n_groups=8, n_inert=10,
                                       n_distractors=20, seed=1),
    "sgd": _sgd,
    "zigzag-energy": lambda: _zigzag("energy"),
    "zigzag-latency": lambda: _zigzag("latency"),
    "zigzag-edp": lambda: _zigzag("edp"),
    "rocksdb": _rocksdb,
    "rocksdb-mixgraph": _rocksdb_mixgraph,
    "rocksdb-readwhilewriting": _rocksdb_readwhilewriting,
    **{name: (lambda name=name: _function_network(name)) for name in NETWORKS},
    "pipeline": _pipeline,
    **{f"zigzag-{model}": (lambda model=model: _zigzag_away(model)) for model in ZIGZAG_AWAY},
}
"""Problem name -> factory. Factories import their target only when called."""


def make_problem(name: str) -> Problem:
    """The problem called ``name``; unknown names list the known ones."""
    try:
        factory = PROBLEMS[name]
    except KeyError:
        raise ValueError(f"unknown problem {name!r}; known: {', '.join(PROBLEMS)}") from None
    return factory()
