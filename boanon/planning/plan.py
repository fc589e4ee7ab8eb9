"""An allocation plan: how many workers of which instance type, stage by stage, and its JSON file.

A job of ``budget`` trials runs in stages. Stage ``k`` keeps ``workers`` trials in flight on
machines of type ``instance`` until ``until_ended`` trials of the job have ended (the last stage
until the budget); then the cluster is scaled to the next stage's size. Stages end on trials
*ended* rather than on time, because that is what the tuning loop observes and what the early-
stopping rungs advance with; shrinking stages release idle machines as trials end (the tail of a
job, when fewer trials remain than workers, is where machines would otherwise sit idle).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from boanon.errors import ConfigError
from boanon.planning.instances import InstanceType, parse_instances
from boanon.yamlfile import load_yaml

LOCAL = "local_without_startup"
"""The plan file's prediction for a local run: the plan's machines working as soon as asked for
(:meth:`~boanon.planning.simulator.Simulator.without_startup`)."""


@dataclass(frozen=True)
class Stage:
    """``workers`` trials in flight on ``instance`` machines until ``until_ended`` trials ended."""

    instance: str
    workers: int
    until_ended: int


@dataclass(frozen=True)
class Plan:
    """Stages in order; ``budget`` trials in all; ``early_stopping`` the rule's spec (or None) and
    ``steps`` the progress steps of a complete trial that its rungs are placed on."""

    stages: tuple[Stage, ...]
    budget: int
    early_stopping: str | None = None
    steps: int | None = None

    def key(self) -> tuple:
        return tuple((s.instance, s.workers) for s in self.stages)

    def with_stage(self, index: int, **changes: Any) -> Plan:
        stages = list(self.stages)
        stages[index] = replace(stages[index], **changes)
        return replace(self, stages=tuple(stages))

    def trimmed(self) -> Plan:
        """The plan with each stage's workers at most the trials left when it starts (the
        budget less the trials ended before it): at most that many are ever in flight, so more
        machines are never rented (or rented only to sit idle), and a plan listing them promised
        machines the run never asks for."""
        stages, ended = [], 0
        for stage in self.stages:
            stages.append(replace(stage, workers=max(1, min(stage.workers, self.budget - ended))))
            ended = stage.until_ended
        return replace(self, stages=tuple(stages))

    def describe(self) -> str:
        """``8 x c5.xlarge until 20 ended, 2 x c5.xlarge until 40 ended``."""
        return ", ".join(f"{s.workers} x {s.instance} until {s.until_ended} ended" for s in self.stages)

    def stage_of(self, ended: int) -> int:
        """The stage running while ``ended`` trials of the job have ended."""
        for i, stage in enumerate(self.stages):
            if ended < stage.until_ended:
                return i
        return len(self.stages) - 1


def even_stages(budget: int, n_stages: int, instance: str, workers: int) -> tuple[Stage, ...]:
    """``n_stages`` stages ending after equal shares of the budget, all alike."""
    n = max(1, min(n_stages, budget))
    ends = [round(budget * (i + 1) / n) for i in range(n)]
    return tuple(Stage(instance, workers, e) for e in ends)


def settings_sha256(config_file: str | Path) -> str:
    """The SHA-256 of a tuning YAML's settings: its parsed content, so that comments, layout and
    the order of keys do not count, and any value does."""
    return hashlib.sha256(json.dumps(_canonical(load_yaml(config_file)), default=repr).encode()).hexdigest()


def _canonical(value: Any) -> Any:
    """``value`` with every mapping as its ``[repr(key), value]`` pairs, sorted (keys of any type)."""
    if isinstance(value, Mapping):
        return sorted([repr(k), _canonical(v)] for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


@dataclass(frozen=True)
class MadeFor:
    """The tuning YAML a plan was made for: its path (for messages) and its settings' hash.

    A plan's stages come from that system's trial durations and the loop's time per trial (its
    runner and options, space, strategy, budget), so ``boanon tune`` refuses it for a YAML whose
    settings differ (another file, or this one changed since): a plan rents machines, and a
    plan for another job rents the wrong ones unseen until the bill or the deadline. A copy
    of the YAML elsewhere, or one whose comments changed, is the same job."""

    config: str
    sha256: str

    @classmethod
    def of(cls, config_file: str | Path) -> MadeFor:
        return cls(str(Path(config_file).resolve()), settings_sha256(config_file))

    def check(self, config_file: str | Path, plan_file: str | Path) -> None:
        """Refuse ``config_file`` unless its settings are the ones the plan was made for."""
        if settings_sha256(config_file) == self.sha256:
            return
        given = Path(config_file).resolve()
        which = "whose settings changed since" if str(given) == self.config else \
            f"not for {config_file}, whose settings differ"
        raise ConfigError(plan_file, "made_for", f"the plan was made for {self.config}, {which}: plan "
                          f"again for it (boanon plan {config_file} ... -o {plan_file})")


@dataclass
class PlanFile:
    """What ``boanon plan -o`` writes and ``boanon tune --plan`` reads: the plan, the instance
    types it uses, what was predicted (plain JSON-ready data) and the YAML it was made for (None
    in a plan written before plans recorded it)."""

    plan: Plan
    instances: dict[str, InstanceType]
    predicted: dict[str, Any] = field(default_factory=dict)
    made_for: MadeFor | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.plan.budget, "early_stopping": self.plan.early_stopping,
                "steps": self.plan.steps, "stages": [asdict(s) for s in self.plan.stages],
                "instances": {n: t.to_dict() for n, t in self.instances.items()},
                "predicted": self.predicted,
                **({"made_for": asdict(self.made_for)} if self.made_for else {})}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> PlanFile:
        source = str(path)
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise ConfigError(source, "file", f"cannot read a plan: {exc}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a YAML given for the plan
            where = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "file"
            raise ConfigError(source, where, "not a plan: a plan is the JSON file `boanon plan -o "
                              f"plan.json` writes ({getattr(exc, 'msg', None) or exc.reason})") from None
        if not isinstance(data, dict):
            raise ConfigError(source, "file", "expected a JSON object written by boanon plan -o")
        for key in ("budget", "stages", "instances"):
            if key not in data:
                raise ConfigError(source, key, "missing (required)")
        instances = parse_instances(data["instances"], source)
        budget = data["budget"]
        if not isinstance(budget, int) or budget < 1:
            raise ConfigError(source, "budget", f"expected an integer >= 1, got {budget!r}")
        if not isinstance(data["stages"], list) or not data["stages"]:
            raise ConfigError(source, "stages", "expected a non-empty list")
        stages, last = [], 0
        for i, spec in enumerate(data["stages"]):
            where = f"stages[{i}]"
            try:
                stage = Stage(str(spec["instance"]), int(spec["workers"]), int(spec["until_ended"]))
            except (KeyError, TypeError, ValueError):
                raise ConfigError(source, where, "expected {instance, workers, until_ended}") from None
            if stage.instance not in instances:
                raise ConfigError(source, f"{where}.instance", f"{stage.instance!r} is not in instances")
            if stage.workers < 1 or stage.until_ended <= last:
                raise ConfigError(source, where, "needs workers >= 1 and until_ended increasing")
            stages.append(stage)
            last = stage.until_ended
        if last != budget:
            raise ConfigError(source, "stages", f"the last stage must end at the budget ({budget}), "
                              f"not {last}")
        plan = Plan(tuple(stages), budget, data.get("early_stopping"), data.get("steps"))
        return cls(plan, instances, dict(data.get("predicted") or {}), _made_for(data, source))


def _made_for(data: Mapping[str, Any], source: str) -> MadeFor | None:
    """The plan's ``made_for`` (None when absent: a plan written before plans recorded it)."""
    if "made_for" not in data:
        return None
    spec = data["made_for"]
    if not isinstance(spec, Mapping) or set(spec) != {"config", "sha256"} \
            or not all(isinstance(v, str) for v in spec.values()):
        raise ConfigError(source, "made_for", "expected {config: the YAML's path, sha256: its "
                          f"settings' hash}}, got {spec!r}")
    return MadeFor(spec["config"], spec["sha256"])
