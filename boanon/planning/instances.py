"""The machines a tuning job may rent: the instances file of ``boanon plan``.

::

    instances:
      c5.xlarge:  {price_per_hour: 0.17, billing: 1s,  startup: 90s, speed: 1.0, max_count: 16}
      c5.4xlarge: {price_per_hour: 0.68, billing: 1m,  startup: 2m,  speed: 3.2, max_count: 4}

``speed`` is relative to the machine the trial durations were measured on (a trial lasting 60 s
there lasts 60/speed s here); ``billing`` is the granularity a machine's rented time is rounded
up to (1 s, 1 min, 1 h); ``startup`` is the time from asking for a machine to its worker taking
trials. Durations are seconds or strings such as ``90s``, ``2m``, ``1h30m``. Every error names
the file and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from boanon.errors import ConfigError, refuse_unknown_keys
from boanon.yamlfile import load_yaml

FIELDS = ("price_per_hour", "billing", "startup", "speed", "max_count")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smhd])")


def parse_duration(value: Any, source: str, field: str, positive: bool = False) -> float:
    """Seconds from a number or a string like ``2h``, ``90s``, ``1h30m`` (errors name ``field``);
    ``positive``: zero is refused too (a deadline; a start-up or billing step may be 0)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and value.strip():
        text = value.replace(" ", "").lower()
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            try:
                seconds = float(text)
            except ValueError:
                raise ConfigError(source, field, f"expected a duration such as 90s, 2m or 1h30m, "
                                  f"got {value!r}") from None
        else:
            seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    else:
        raise ConfigError(source, field, f"expected a duration such as 90s, 2m or 1h30m, got {value!r}")
    if not math.isfinite(seconds) or seconds < 0 or (positive and seconds == 0):
        raise ConfigError(source, field, f"expected a duration {'>' if positive else '>='} 0, got {value!r}")
    return seconds


@dataclass(frozen=True)
class InstanceType:
    """One kind of machine: what it costs, how it is billed, how soon it works and how fast."""

    name: str
    price_per_hour: float
    billing: float = 1.0
    startup: float = 0.0
    speed: float = 1.0
    max_count: int = 1

    def cost(self, seconds: float) -> float:
        """The bill of one machine rented for ``seconds`` (rounded up to the billing granularity)."""
        if seconds <= 0:
            return 0.0
        billed = math.ceil(seconds / self.billing - 1e-9) * self.billing if self.billing > 0 else seconds
        return billed * self.price_per_hour / 3600.0

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "name"}


def parse_instances(data: Any, source: str = "instances") -> dict[str, InstanceType]:
    """Validate the mapping of instance type -> fields (the file's ``instances:``, or a plan's)."""
    if not isinstance(data, Mapping) or not data:
        raise ConfigError(source, "instances", "expected a non-empty mapping of instance type -> "
                          f"{{{', '.join(FIELDS)}}}")
    out = {}
    for name, spec in data.items():
        where = f"instances.{name}"
        if not isinstance(spec, Mapping):
            raise ConfigError(source, where, f"expected a mapping with {', '.join(FIELDS)}")
        refuse_unknown_keys(spec, FIELDS, source, where)
        for key in ("price_per_hour", "max_count"):
            if key not in spec:
                raise ConfigError(source, f"{where}.{key}", "missing (required)")
        out[str(name)] = InstanceType(
            name=str(name), price_per_hour=_number(spec, "price_per_hour", source, where, 0.0),
            billing=parse_duration(spec.get("billing", 1.0), source, f"{where}.billing"),
            startup=parse_duration(spec.get("startup", 0.0), source, f"{where}.startup"),
            speed=_number(spec, "speed", source, where, 0.0, default=1.0, open_low=True),
            max_count=_count(spec, source, where))
    return out


def load_instances(path: str | Path) -> dict[str, InstanceType]:
    """Read and validate an instances file: its one top-level key is ``instances`` (a misspelt
    one, ``instance:``, was read as an instance type and refused as its fields'
    ``instances.instance.c5.xlarge: unknown key``)."""
    data, source = load_yaml(path), str(path)
    if isinstance(data, Mapping):
        refuse_unknown_keys(data, ("instances",), source)
    if not isinstance(data, Mapping) or "instances" not in data:
        raise ConfigError(source, "instances", "missing (required): the file is `instances:` and under "
                          f"it a mapping of instance type -> {{{', '.join(FIELDS)}}}")
    return parse_instances(data["instances"], source)


def _number(spec: Mapping[str, Any], key: str, source: str, where: str, low: float,
            default: float | None = None, open_low: bool = False) -> float:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < low or (open_low and value == low):
        bound = f"> {low:g}" if open_low else f">= {low:g}"
        raise ConfigError(source, f"{where}.{key}", f"expected a number {bound}, got {value!r}")
    return float(value)


def _count(spec: Mapping[str, Any], source: str, where: str) -> int:
    value = spec["max_count"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(source, f"{where}.max_count", f"expected an integer >= 1, got {value!r}")
    return value
