"""Units of a run's numbers: declared where a parameter or objective is defined, else read off
the name's ending (``busy_s``, ``latency_us``, ``write_bytes``, ``throughput_ops_per_sec``).

A value without its unit is half a fact: 13.4 of what? Systems name their measurements with a
unit suffix far more often than they declare one, so the name is the usual source; a space's
``unit:`` or an objective's ``unit:`` says it where the name does not (``iteration_time``), and
wins over the name. Every view (the dashboard, ``boanon plot``, ``status``) labels through
:func:`label`, so a unit is shown the same way everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

SUFFIXES: dict[str, str] = {
    "ops_per_sec": "ops/s", "ops_per_s": "ops/s", "ops_s": "ops/s", "qps": "queries/s",
    "mb_per_s": "MB/s", "mb_per_sec": "MB/s", "mb_s": "MB/s", "mbps": "MB/s", "kb_per_s": "KB/s",
    "kb_per_sec": "KB/s", "gb_per_s": "GB/s", "gb_per_sec": "GB/s",
    "bytes_per_sec": "B/s", "bytes_per_s": "B/s",
    "us_per_op": "µs/op", "ns_per_op": "ns/op", "ms_per_op": "ms/op", "per_sec": "/s", "per_s": "/s",
    "seconds": "s", "secs": "s", "sec": "s", "s": "s", "ms": "ms", "millis": "ms",
    "us": "µs", "micros": "µs", "ns": "ns", "nanos": "ns",
    "bytes": "B", "kb": "KB", "kib": "KiB", "mb": "MB", "mib": "MiB", "gb": "GB", "gib": "GiB",
    "pct": "%", "percent": "%", "hz": "Hz", "mhz": "MHz", "ghz": "GHz",
    "pj": "pJ", "nj": "nJ", "mj": "mJ", "joules": "J", "watts": "W", "mw": "mW",
    "mm2": "mm²", "um2": "µm²",
}
"""Name endings (after a ``_``, ``.`` or ``-``) and the unit they say; the longest ending wins."""
_SEPARATOR = r"[_.\-/]"
"""What separates the words of a name."""
_ENDING = re.compile(r"(?:^|" + _SEPARATOR + r")("
                     + "|".join(sorted(map(re.escape, SUFFIXES), key=len, reverse=True)) + r")$",
                     re.IGNORECASE)

QUANTITIES: dict[str, frozenset[str]] = {
    "area": frozenset({"mm²", "µm²"}), "count": frozenset(), "num": frozenset(),
}
"""Words that name the quantity itself, and the units it can have: the ending of ``area_gb``
(ZigZag's global buffer's area) or ``stall_count_..._bytes`` (a count of stalls) is a word of
the name, not its unit. A wrong unit misleads more than none."""


def infer(name: str) -> str | None:
    """The unit ``name``'s ending says (``m3_busy_s`` -> ``s``), None when it says none or an
    earlier word names a quantity that unit cannot measure (:data:`QUANTITIES`)."""
    found = _ENDING.search(name.replace(".", "_"))
    if found is None:
        return None
    unit = SUFFIXES[found[1].lower()]
    words = re.split(_SEPARATOR, name[:found.start()].lower())
    return None if any(w in QUANTITIES and unit not in QUANTITIES[w] for w in words) else unit


def of(name: str, declared_unit: str | None = None) -> str | None:
    """``name``'s unit: the declared one, else what its ending says."""
    return declared_unit or infer(name)


def objective_label(objective: Any) -> str:
    """An :class:`~boanon.objectives.Objective`'s name with its unit."""
    return label(objective.name, of(objective.name, objective.unit))


def check(unit: Any, where: str) -> str | None:
    """A declared unit: a short non-empty string (None: not declared)."""
    if unit is None:
        return None
    if not isinstance(unit, str) or not unit.strip() or len(unit) > 20:
        raise ValueError(f"{where}: a unit is a short text such as 's' or 'ops/s', got {unit!r}")
    return unit.strip()


def declared(study: Mapping[str, Any] | None) -> dict[str, str]:
    """The units a run's recorded specification declares: its parameters' and objectives'."""
    study = study or {}
    out = {name: p["unit"] for name, p in (study.get("space") or {}).items()
           if isinstance(p, Mapping) and p.get("unit")}
    out.update({o["name"]: o["unit"] for o in study.get("objectives") or []
                if isinstance(o, Mapping) and o.get("unit")})
    return out


def units(names: Iterable[str], declared_units: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{name: unit}`` for the ``names`` that have one, declared first, else from the name."""
    given = declared_units or {}
    out = {}
    for name in names:
        unit = given.get(name) or infer(name)
        if unit:
            out[name] = unit
    return out


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 lane``, ``3 lanes``: a number with what it counts, as every view writes one (the
    dashboard's ``count`` is its twin in the page; "1 lanes" and "trial(s)" were what they replace)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def exact(x: float) -> str:
    """``x`` as written: the shortest text that reads back as ``x`` (``2``, ``0.123456789``,
    ``2e+06``). A bound the trials are judged against is shown so; ``:g`` cut 0.123456789 to
    0.123457, a bound the reader could not tell from another."""
    x = float(x)
    written = repr(x).removesuffix(".0")
    short = f"{x:g}"
    return short if len(short) < len(written) and float(short) == x else written


def label(name: str, unit: str | None) -> str:
    """``name (unit)``, or the name alone when it has no unit."""
    return f"{name} ({unit})" if unit else name
