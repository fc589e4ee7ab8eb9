"""One ask/tell wrapper per tuner, so the harness drives every tuner through the same loop.

A wrapper suggests one configuration at a time (``ask``) and learns the outcome of the last one
(``tell``, with the full trial record or ``None`` for a failed or infeasible configuration).
Generic tuners see only the objective value; BoAnon gets the record with every logged metric,
which is the point of the comparison. Every tuner runs with its library's defaults: these are
the settings a user who picks it would get. Every tuner's first evaluation is the system's default
configuration (``start``), as BoAnon's own :class:`~boanon.tuner.Tuner` does, so all of them know
the baseline and the comparison is about what they find beyond it.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from boanon.objectives import Objective
from boanon.space import Bool, Categorical, Int, Space
from boanon.table import TrialRecord, Value

if TYPE_CHECKING:
    from benchmarks.function_networks import FunctionNetwork
    from boanon.annotations import Knowledge


class BenchTuner(ABC):
    """A tuner as the harness sees it: one pending configuration at a time."""

    name: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()
    """Entries of the problem's ``knowledge`` passed to the constructor as keyword arguments."""

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None):
        self.space, self.objective, self.seed, self.budget = space, objective, seed, budget
        self.start = start

    @abstractmethod
    def ask(self) -> dict[str, Value]:
        """The next configuration to evaluate."""

    @abstractmethod
    def tell(self, record: TrialRecord | None) -> None:
        """The outcome of the last configuration asked: its trial, or ``None`` when it failed."""

    def value(self, record: TrialRecord | None) -> float | None:
        """The objective value of ``record`` (``None`` when failed or missing or not finite)."""
        if record is None:
            return None
        value = record.objectives.get(self.objective.name)
        return float(value) if value is not None and math.isfinite(value) else None


class RandomSearch(BenchTuner):
    """Uniform random configurations (the space's constraints are respected)."""

    name = "random"

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None):
        super().__init__(space, objective, seed, budget, start)
        self._rng = np.random.default_rng(seed)

    def ask(self) -> dict[str, Value]:
        if self.start is not None:
            config, self.start = self.start, None
            return config
        return self.space.sample(1, self._rng, sobol=False)[0]

    def tell(self, record: TrialRecord | None) -> None:
        pass


class _Optuna(BenchTuner):
    """An Optuna study driven by ``study.ask(distributions)`` / ``study.tell``."""

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None):
        super().__init__(space, objective, seed, budget, start)
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self._optuna = optuna
        self._study = optuna.create_study(direction=objective.direction, sampler=self.sampler())
        if start is not None:
            self._study.enqueue_trial(start)
        self._distributions = optuna_distributions(space)
        self._trial: Any = None

    @abstractmethod
    def sampler(self) -> Any:
        """The Optuna sampler, seeded with ``self.seed``."""

    def ask(self) -> dict[str, Value]:
        self._trial = self._study.ask(self._distributions)
        return {name: _plain(self._trial.params[name]) for name in self.space.names}

    def tell(self, record: TrialRecord | None) -> None:
        value = self.value(record)
        if value is None:
            self._study.tell(self._trial, state=self._optuna.trial.TrialState.FAIL)
        else:
            self._study.tell(self._trial, value)


class OptunaTPE(_Optuna):
    """Optuna's default sampler, TPE, with its default settings."""

    name = "tpe"

    def sampler(self) -> Any:
        return self._optuna.samplers.TPESampler(seed=self.seed)


class OptunaGP(_Optuna):
    """Optuna's GP sampler (needs torch; runs on one thread so it does not starve the system)."""

    name = "optuna-gp"

    def sampler(self) -> Any:
        import torch

        torch.set_num_threads(1)
        return self._optuna.samplers.GPSampler(seed=self.seed)


class BoAnonOptuna(_Optuna):
    """BoAnon's sampler inside Optuna (:class:`boanon.optuna.BoAnonSampler`): the objective
    function logs the trial's metrics as a user attribute, so it learns from what the Tuner
    learns from; same seed, same proposals machinery, stateless across calls."""

    name = "boanon-optuna"

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None):
        super().__init__(space, objective, seed, budget, start)
        self._study.set_metric_names([objective.name])  # the objective named as the Tuner names it

    def sampler(self) -> Any:
        from boanon.optuna import BoAnonSampler

        return BoAnonSampler(seed=self.seed, budget=self.budget)  # Optuna never tells it n_trials

    def tell(self, record: TrialRecord | None) -> None:
        if record is not None:
            others = {k: v for k, v in record.objectives.items() if k != self.objective.name}
            logged = {**record.metrics, **others}
            self._trial.set_user_attr("metrics", logged)
        super().tell(record)


def optuna_distributions(space: Space) -> dict[str, Any]:
    """The space as Optuna distributions (booleans as a two-choice categorical)."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out: dict[str, Any] = {}
    for name, p in space.params.items():
        if isinstance(p, Categorical):
            out[name] = CategoricalDistribution(list(p.choices))
        elif isinstance(p, Bool):
            out[name] = CategoricalDistribution([False, True])
        elif isinstance(p, Int):
            out[name] = IntDistribution(p.low, p.high, log=p.log)
        else:
            out[name] = FloatDistribution(p.low, p.high, log=p.log)
    return out


HASH_SEED = "0"


def with_fixed_hash_seed() -> None:
    """Re-run this process under ``PYTHONHASHSEED=0`` unless it already runs so. SMAC's proposals
    depend on Python's string-hash seed, which each process draws at random unless told, so a
    seeded SMAC run did not repeat; every other tuner here repeats under any hash seed."""
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        os.environ["PYTHONHASHSEED"] = HASH_SEED
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


class SMAC(BenchTuner):
    """SMAC3's hyperparameter-optimisation facade (random forest + EI), with its defaults."""

    name = "smac"

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None):
        super().__init__(space, objective, seed, budget, start)
        from smac import HyperparameterOptimizationFacade as Facade
        from smac import Scenario

        self._configspace, self._decode = smac_space(space, seed)
        self._encode = {name: _label if isinstance(p, (Categorical, Bool)) else _plain
                        for name, p in space.params.items()}
        self._outdir = tempfile.TemporaryDirectory(prefix="boanon-bench-smac-")
        scenario = Scenario(self._configspace, deterministic=True, n_trials=budget, seed=seed,
                            output_directory=self._outdir.name)
        self._smac = Facade(scenario, _never_called, overwrite=True, logging_level=40)
        self._info: Any = None
        self._worst: float | None = None

    def ask(self) -> dict[str, Value]:
        if self.start is not None:
            # SMAC's initial design puts additional configurations last: tell it the start instead.
            from ConfigSpace import Configuration
            from smac.runhistory.dataclasses import TrialInfo

            values = {name: self._encode[name](v) for name, v in self.start.items()}
            self._info = TrialInfo(Configuration(self._configspace, values=values), seed=self.seed)
            config, self.start = self.start, None
            return config
        self._info = self._smac.ask()
        values = dict(self._info.config)
        return {name: self._decode[name](values[name]) for name in self.space.names}

    def tell(self, record: TrialRecord | None) -> None:
        from smac.runhistory.dataclasses import TrialValue
        from smac.runhistory.enumerations import StatusType

        value = self.value(record)
        if value is None:
            # An infinite crash cost turns into NaN in SMAC's random-forest targets ("Input y
            # contains NaN"): a failure costs the worst value seen so far, SMAC's crash-cost idea.
            cost = math.inf if self._worst is None else self._worst
            self._smac.tell(self._info, TrialValue(cost=cost, status=StatusType.CRASHED))
        else:
            cost = self.objective.to_minimize(value)
            self._worst = cost if self._worst is None else max(self._worst, cost)
            self._smac.tell(self._info, TrialValue(cost=cost))


def _never_called(config: Any, seed: int = 0) -> float:
    """SMAC's facade wants a target function; the harness evaluates through ask/tell instead."""
    raise RuntimeError("the benchmark harness evaluates configurations itself")


def smac_space(space: Space, seed: int) -> tuple[Any, dict[str, Callable[[Any], Value]]]:
    """The space as a ConfigSpace, plus per-parameter decoders back to BoAnon's values.

    Categorical choices travel as strings (ConfigSpace's safe common ground) and booleans as
    ``"false"``/``"true"``; constraints are left to the harness, as for every generic tuner.
    """
    from ConfigSpace import Categorical as CsCategorical
    from ConfigSpace import ConfigurationSpace
    from ConfigSpace import Float as CsFloat
    from ConfigSpace import Integer as CsInteger

    cs = ConfigurationSpace(seed=seed)
    decode: dict[str, Callable[[Any], Value]] = {}
    for name, p in space.params.items():
        if isinstance(p, (Categorical, Bool)):
            choices = p.choices if isinstance(p, Categorical) else (False, True)
            by_label = {_label(c): c for c in choices}
            cs.add(CsCategorical(name, list(by_label)))
            decode[name] = by_label.__getitem__
        elif isinstance(p, Int):
            cs.add(CsInteger(name, (p.low, p.high), log=p.log))
            decode[name] = int
        else:
            cs.add(CsFloat(name, (p.low, p.high), log=p.log))
            decode[name] = float
    return cs, decode


def _label(value: Value) -> str:
    """A categorical choice as ConfigSpace sees it."""
    return str(value).lower() if isinstance(value, bool) else str(value)


class BoTorch(BenchTuner):
    """BoTorch's default single-task BO (:class:`benchmarks.bo_peers.SingleTaskBO`; needs torch)."""

    name = "botorch"

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None, **knowledge: Any):
        super().__init__(space, objective, seed, budget, start)
        self._bo = self.loop(**knowledge)

    def loop(self, **knowledge: Any) -> Any:
        from benchmarks.bo_peers import SingleTaskBO

        return SingleTaskBO(self.space, self.objective, self.seed, self.start)

    def ask(self) -> dict[str, Value]:
        return self._bo.ask()

    def tell(self, record: TrialRecord | None) -> None:
        self._bo.tell(record, self.value(record))


class BOFN(BoTorch):
    """BOFN given the problem's true function network: the ceiling for learning the structure."""

    name = "bofn"
    needs = ("network",)

    def loop(self, **knowledge: Any) -> Any:
        from benchmarks.bo_peers import NetworkBO

        return NetworkBO(self.space, self.objective, self.seed, self.start, knowledge["network"])


class BoAnon(BenchTuner):
    """BoAnon's :class:`boanon.tuner.Tuner`, told the full trial record (every logged metric)."""

    name = "boanon"
    strategy: ClassVar[str] = "structured"
    learn_options: ClassVar[Mapping[str, Any]] = {}
    """Options for :func:`boanon.learners.learn` (the Tuner's ``learn_options``); none: the defaults."""

    def __init__(self, space: Space, objective: Objective, seed: int, budget: int,
                 start: dict[str, Value] | None = None, annotations: Path | Knowledge | None = None,
                 warm_start: Path | Sequence[Path] = (), related_tasks: Sequence[Path] = (),
                 related_outputs: Sequence[str] = (), network: FunctionNetwork | None = None):
        super().__init__(space, objective, seed, budget, start)
        from boanon.annotations import Knowledge
        from boanon.multitask.warmstart import load_related
        from boanon.tuner import Tuner

        # The Tuner itself starts from the space's default when it is feasible, as ``start`` is.
        knowledge = Knowledge.from_yaml(annotations) if isinstance(annotations, Path) else annotations
        sources = [*([warm_start] if isinstance(warm_start, Path) else warm_start), *related_tasks]
        self._tuner = Tuner(space, [objective], knowledge=knowledge,
                            warm_start=[load_related(p) for p in sources], strategy=self.strategy,
                            seed=seed, related_outputs=related_outputs, budget=budget,
                            learn_options=self.learn_options,
                            graph=network.graph() if network is not None else None)
        self._trial: Any = None

    @property
    def last_trial(self) -> Any:
        """The BoAnon trial of the latest ask: its surrogate, reason and details."""
        return self._trial

    def table(self) -> Any:
        """The run's finished trials as BoAnon's tidy table (what its models are fitted on)."""
        return self._tuner.table()

    @property
    def graph(self) -> Any:
        """The causal graph the Tuner proposes with now (None before it has learned one)."""
        return self._tuner.graph

    def ask(self) -> dict[str, Value]:
        self._trial = self._tuner.ask()
        return dict(self._trial.config)

    def tell(self, record: TrialRecord | None) -> None:
        if self.value(record) is None:
            self._tuner.tell(self._trial.id, failure="failed or infeasible in the benchmark")
        else:
            self._tuner.tell(self._trial.id, record)


class BoAnonNetwork(BoAnon):
    """Structured BoAnon given the function network's true graph instead of learning one (as
    BOFN is given it): what BoAnon's node models and acquisition reach when learning costs nothing."""

    name = "boanon-network"
    needs = ("network",)


class BoAnonGP(BoAnon):
    """BoAnon's plain-GP strategy (no structure): isolates what the learned graph adds."""

    name = "boanon-gp"
    strategy = "gp"


class BoAnonPredictive(BoAnon):
    """Structured BoAnon with the predictive parent search from every objective
    (``learn(predictive=True)``), which finds node -> node relations that leave no correlation."""

    name = "boanon-predictive"
    learn_options = {"predictive": True}


class BoAnonPredictiveAuto(BoAnon):
    """Structured BoAnon searching predictive parents only for an objective the independence tests
    left without a metric parent (``learn(predictive="auto")``): the same runs as ``boanon`` since
    that became the default; kept so the rows that decided it reproduce."""

    name = "boanon-predictive-auto"
    learn_options = {"predictive": "auto"}


class BoAnonTestsOnly(BoAnon):
    """Structured BoAnon whose graph comes from the independence tests alone
    (``learn(predictive=False)``, the default before ``"auto"``): what the search adds."""

    name = "boanon-tests-only"
    learn_options = {"predictive": False}


class BoAnonWarm(BoAnon):
    """BoAnon started warm from the problem's dataset of the same system, without annotations:
    structure and relations come from the logs alone (the way the README tells users to start)."""

    name = "boanon-warm"
    needs = ("warm_start",)


class BoAnonMultiTask(BoAnon):
    """BoAnon's multi-task strategy: the coregionalised GP over the objective and the problem's
    related outputs, on the problem's datasets as related tasks (as in multi-task BO studies)."""

    name = "boanon-multitask"
    strategy = "multitask"
    needs = ("related_tasks", "related_outputs")


class BoAnonExpert(BoAnon):
    """BoAnon told the problem's annotations (an expert's structure and node models, as in BOAT)."""

    name = "boanon-expert"
    needs = ("annotations",)


class BoAnonExpertWarm(BoAnon):
    """BoAnon with the annotations, started warm from the problem's dataset of the same system."""

    name = "boanon-expert-warm"
    needs = ("annotations", "warm_start")


def _plain(v: Any) -> Value:
    """numpy scalars to Python scalars (the space checks types strictly)."""
    return v.item() if isinstance(v, np.generic) else v


TUNERS: dict[str, type[BenchTuner]] = {t.name: t for t in (
    RandomSearch, OptunaTPE, OptunaGP, SMAC, BoTorch, BOFN, BoAnon, BoAnonNetwork, BoAnonOptuna, BoAnonGP,
    BoAnonPredictive, BoAnonPredictiveAuto, BoAnonTestsOnly, BoAnonWarm, BoAnonMultiTask,
    BoAnonExpert, BoAnonExpertWarm)}
"""Tuner name -> wrapper class, in the order results are shown."""


def make_tuner(name: str, space: Space, objective: Objective, seed: int, budget: int,
               start: dict[str, Value] | None = None,
               knowledge: Mapping[str, Any] | None = None) -> BenchTuner:
    """The tuner called ``name``, seeded; unknown names list the known ones.

    ``knowledge`` is the problem's (:attr:`Problem.knowledge`); a tuner that ``needs`` an entry
    the problem lacks cannot run on it.
    """
    try:
        cls = TUNERS[name]
    except KeyError:
        raise ValueError(f"unknown tuner {name!r}; known: {', '.join(TUNERS)}") from None
    knowledge = knowledge or {}
    missing = [k for k in cls.needs if k not in knowledge]
    if missing:
        raise ValueError(f"tuner {name!r} needs the problem's {', '.join(missing)}; it has none")
    return cls(space, objective, seed, budget, start, **{k: knowledge[k] for k in cls.needs})
