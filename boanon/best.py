"""The tuned configuration as a file a person or a system reads: values as their parameters mean them.

A trial's configuration is stored exactly as proposed (``m0_share=0.3999720746651292``). The
file rounds a float to the fewest decimal places that stay within a thousandth of its range
(on a log range: the fewest significant digits within a thousandth of its value) and inside the
range, so the rounding changes nothing a model could tell apart; integers stay integers and
booleans booleans. Sizes in bytes get their binary size as a comment. Formats: YAML (any
run) and those a target registers (:data:`EXPORT_FORMATS`: a target's module, or a plug-in's
``boanon.export_formats`` entry point), so a new system's file format needs no change here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import yaml

from boanon.registry import Registry
from boanon.space import Bool, Categorical, Float, Int, Param, Space
from boanon.table import Value

_SIZE_NAME = re.compile(r"(size|bytes|capacity|_base)$")
"""Parameter names read as sizes in bytes (``write_buffer_size``, ``max_bytes_for_level_base``)."""


def plain_value(param: Param, value: Value) -> Value:
    """``value`` as ``param`` means it (see the module docstring)."""
    if isinstance(param, Bool):
        return bool(value)
    if isinstance(param, Categorical):
        return value
    if isinstance(param, Int):
        return int(value)
    assert isinstance(param, Float)
    value = float(value)
    tolerance = 1e-3 * (abs(value) if param.log else param.high - param.low)
    for digits in range(17):  # log range: significant digits; linear range: decimal places
        rounded = float(f"{value:.{digits + 1}g}") if param.log else round(value, digits)
        if abs(rounded - value) <= tolerance and param.low <= rounded <= param.high:
            return rounded
    return value


def plain_config(space: Space, config: Mapping[str, Value]) -> dict[str, Value]:
    """Every parameter of ``config`` as :func:`plain_value` gives it, in the space's order. A
    rounding that breaks a constraint of the space the exact values meet (a share of 0.0004
    shown as 0.0 where the constraint asks for a share above 0) would export another, perhaps
    infeasible, configuration: the parameters that constraint reads keep their exact values."""
    out = {name: plain_value(p, config[name]) for name, p in space.params.items() if name in config}
    while broken := [c for c in space.constraints  # each pass restores a rounded value: it ends
                     if c.names <= set(out) and c.holds(config) and not c.holds(out)]:
        for c in broken:
            out.update({name: config[name] for name in c.names})
    return out


def config_line(space: Space, config: Mapping[str, Value]) -> str:
    """``a=1 b=0.25 c=true`` with the values of :func:`plain_config`, for one-line summaries."""
    values = plain_config(space, config)
    return " ".join(f"{k}={yaml.safe_dump(v).splitlines()[0]}" for k, v in values.items())


def human_size(n: int) -> str:
    """``67108864`` -> ``64 MiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.3g} {unit}"
    return f"{n} B"


def to_yaml(config: Mapping[str, Value], header: str = "") -> str:
    """``name: value`` lines (YAML), sizes in bytes with a ``# 64 MiB`` comment."""
    lines = [f"# {line}" for line in header.splitlines()]
    for name, value in config.items():
        text = yaml.safe_dump({name: value}, default_flow_style=False).strip()
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1024 \
                and _SIZE_NAME.search(name):
            text += f"  # {human_size(value)}"
        lines.append(text)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ExportFormat:
    """A file format for one configuration: ``render(config, header)`` gives its text (the header
    as comments); ``matches(file name)`` says an output named so asks for it (``OPTIONS*``)."""

    name: str
    render: Callable[[Mapping[str, Value], str], str]
    description: str
    matches: Callable[[str], bool] = lambda name: False


EXPORT_FORMATS: Registry[ExportFormat] = Registry(  # entries are ExportFormat objects (of this module)
    "export format", "boanon.export_formats", builtins=("boanon.best", "boanon.targets.rocksdb_export"))
"""Export formats by name: YAML here, the rest registered by the targets that read them."""


def register_export_format(fmt: ExportFormat) -> ExportFormat:
    """Make ``fmt`` available to :func:`render_config` and ``boanon export --format``."""
    return EXPORT_FORMATS.register(fmt.name, fmt)


register_export_format(ExportFormat("yaml", to_yaml, "name: value lines (any run)"))


def render_config(config: Mapping[str, Value], fmt: str, header: str = "") -> str:
    """``config`` in the registered format ``fmt`` (an unknown name is a ValueError listing them)."""
    return EXPORT_FORMATS.get(fmt).render(config, header)


def format_for(path: str) -> str:
    """The format a file name asks for (the first registered one that claims it), else YAML."""
    name = path.rsplit("/", 1)[-1]
    return next((n for n in EXPORT_FORMATS.names() if EXPORT_FORMATS.get(n).matches(name)), "yaml")

