"""Search spaces: typed parameters, constraints between them, and their encoding for models.

Integers stay integers, log ranges are searched on a log scale, booleans are 0/1 and categoricals
are one-hot: nothing is a rounded float. Constraints are small Python-like predicates
(``"min_write_buffer_number_to_merge < max_write_buffer_number"``) parsed once, evaluated safely.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from boanon.errors import ConfigError, refuse_unknown_keys
from boanon.expressions import Expression
from boanon.table import Value
from boanon.units import check as check_unit
from boanon.yamlfile import load_yaml

SOBOL_MAX_DIMENSIONS = 21201
"""The most dimensions scipy's Sobol engine draws (``scipy.stats.qmc.Sobol.MAXDIM``, written out:
importing scipy.stats takes ~0.9 s, and reading a space needs none of it)."""


class InvalidSpace(ValueError):
    """The parameters together make no space (too many, a name twice, a name no column can hold):
    a configuration files it under ``space``, its constraints' errors under ``constraints``."""


class SpaceTooLarge(InvalidSpace):
    """More parameters than a Sobol design has dimensions (one per parameter, a categorical one
    too): every search draws one (the initial design, each proposal's candidates), and the first
    draw ended in scipy's "Maximum supported dimensionality is 21201.", which named neither the
    space nor its size (with ``n_init: 1``, after the default configuration's trial)."""

    def __init__(self, n_params: int):
        self.n_params = n_params
        super().__init__(f"{n_params} parameters, more than the {SOBOL_MAX_DIMENSIONS} a search can "
                         f"draw (its Sobol design has one dimension per parameter): tune at most "
                         f"{SOBOL_MAX_DIMENSIONS} and leave the others out of the space")


class ParamError(ValueError):
    """One key of a parameter's spec (``default``, ``log``, ``choices``...) holds a value the
    parameter cannot take: :meth:`Space.from_dict` names it ``space.<name>.<key>``."""

    def __init__(self, key: str, reason: str):
        self.key, self.reason = key, reason
        super().__init__(f"{key}: {reason}")


@dataclass(frozen=True)
class Float:
    name: str
    low: float
    high: float
    log: bool = False
    default: float | None = None
    unit: str | None = None
    """What the value measures in (``s``, ``MB``), shown beside it; None: read off the name."""

    def __post_init__(self) -> None:
        _check_range(self)
        _check_default(self)
        object.__setattr__(self, "unit", check_unit(self.unit, self.name))

    def from_unit(self, u: float) -> float:
        """The value at ``u`` of [0, 1], clamped to the range: ``exp``/``log`` and ``low + u * width``
        can land a last bit outside it at the ends (8.0 came back as 7.999999999999998), and
        ``check`` would then refuse the proposal; the ends themselves give the bounds exactly."""
        if u <= 0.0 or u >= 1.0:
            return float(self.low if u <= 0.0 else self.high)
        if self.log:
            x = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            x = self.low + u * (self.high - self.low)
        return float(min(self.high, max(self.low, x)))

    def to_unit(self, v: Any) -> Any:
        """``v`` on [0, 1] (log-scaled with ``log``); an array of values gives an array."""
        x = np.asarray(v, dtype=float)
        if self.log:
            u = (np.log(x) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        else:
            u = (x - self.low) / (self.high - self.low)
        return u if u.ndim else float(u)

    def check(self, v: Any) -> float:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not self.low <= v <= self.high:
            raise ValueError(f"expected a number in [{self.low}, {self.high}], got {v!r}")
        return float(v)

    def neighbour(self, v: Any, rng: np.random.Generator, scale: float) -> float:
        return self.from_unit(float(np.clip(self.to_unit(v) + rng.normal(0, scale), 0.0, 1.0)))

    @property
    def width(self) -> int:
        return 1


@dataclass(frozen=True)
class Int(Float):
    low: int  # type: ignore[assignment]
    high: int  # type: ignore[assignment]
    default: int | None = None

    def _unit_range(self) -> tuple[float, float]:
        """The range [0, 1] spans: widened by half a step on both ends so every integer gets its
        fair share of [0, 1] (a log range's lower end only to half of ``low``, which stays > 0)."""
        lo, hi = self.low - 0.5, self.high + 0.5
        return (max(lo, self.low / 2), hi) if self.log else (lo, hi)

    def from_unit(self, u: float) -> int:  # type: ignore[override]
        lo, hi = self._unit_range()
        if self.log:
            x = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        else:
            x = lo + u * (hi - lo)
        return int(min(self.high, max(self.low, round(x))))

    def _widened_unit(self, v: Any) -> float:
        """Where :meth:`from_unit` reads ``v`` back: a local step starts here, so a step of zero stays
        on ``v``. The inherited ``to_unit`` (the models' encoding) spans ``[low, high]`` and is not
        this point: stepping from it drifted a log range's values down (10 of 2..96 became 8)."""
        lo, hi = self._unit_range()
        if self.log:
            return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (v - lo) / (hi - lo)

    def check(self, v: Any) -> int:  # type: ignore[override]
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not self.low <= v <= self.high:
            raise ValueError(f"expected an integer in [{self.low}, {self.high}], got {v!r}")
        return int(v)

    def neighbour(self, v: Any, rng: np.random.Generator, scale: float) -> int:  # type: ignore[override]
        step = self.from_unit(float(np.clip(self._widened_unit(v) + rng.normal(0, scale), 0.0, 1.0)))
        if step == v:  # always move at least one step so local search explores integers
            step = int(v) + (1 if rng.random() < 0.5 else -1)
        return int(min(self.high, max(self.low, step)))


@dataclass(frozen=True)
class Categorical:
    name: str
    choices: tuple[Value, ...]
    default: Value | None = None

    def __post_init__(self) -> None:
        _check_choices(self.choices)
        if len(self.choices) < 2 or len(set(self.choices)) != len(self.choices):
            raise ValueError("needs at least two distinct choices")
        _check_default(self)

    def from_unit(self, u: float) -> Value:
        return self.choices[min(max(int(u * len(self.choices)), 0), len(self.choices) - 1)]

    def check(self, v: Any) -> Value:
        if v not in self.choices:
            raise ValueError(f"expected one of {list(self.choices)}, got {v!r}")
        return v

    def neighbour(self, v: Any, rng: np.random.Generator, scale: float) -> Value:
        others = [c for c in self.choices if c != v]
        return others[int(rng.integers(len(others)))]

    @property
    def width(self) -> int:
        return len(self.choices)


@dataclass(frozen=True)
class Bool:
    name: str
    default: bool | None = None

    def __post_init__(self) -> None:
        _check_default(self)

    def from_unit(self, u: float) -> bool:
        return bool(u > 0.5)

    def check(self, v: Any) -> bool:
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if v in (0, 1):
            return bool(v)
        raise ValueError(f"expected a boolean, got {v!r}")

    def neighbour(self, v: Any, rng: np.random.Generator, scale: float) -> bool:
        return not bool(v)

    @property
    def width(self) -> int:
        return 1


Param = Float | Int | Categorical | Bool


def _check_range(p: Float) -> None:
    """Bounds a search can use: finite, ordered, and a width that is a finite float (``-1e308 ..
    1e308`` overflows to inf when a point is sampled), positive on a log scale."""
    for name in ("low", "high"):
        value = getattr(p, name)
        if not _finite(value):
            raise ValueError(f"{name} ({_shown(value)}) must be a finite number")
    if not p.low < p.high:
        raise ValueError(f"low ({p.low}) must be below high ({p.high})")
    if not _finite(p.high - p.low):
        raise ValueError(f"the range [{p.low}, {p.high}] is too wide: its width overflows a float")
    if p.log and p.low <= 0:
        raise ValueError("a log-scale range needs low > 0")


def _check_choices(choices: tuple[Any, ...]) -> None:
    """Refuse a choice that is a list or a mapping, naming it: choices are compared and looked up
    as values (Python's own error said only "unhashable type: 'list'", not which key or value).
    Refuse two choices written alike (``1`` and ``"1"``): a table, a log or an exported CSV could
    not tell which ran."""
    written: dict[str, Any] = {}
    for choice in choices:
        try:
            hash(choice)
        except TypeError:
            raise ParamError("choices", "each choice must be a scalar (a string, number or boolean), "
                             f"got {choice!r}") from None
        twin = written.setdefault(str(choice), choice)
        if twin is not choice and twin != choice:
            raise ParamError("choices", f"{twin!r} and {choice!r} are written alike ({choice}) in tables "
                             "and logs: make them differ as text")
    equal = equal_choices(choices)
    if equal:
        raise ParamError("choices", f"{equal[0]!r} and {equal[1]!r} are one value to Python "
                         f"({equal[0]!r} == {equal[1]!r}): a choice is looked up by value, so one of them "
                         "could never run; make them differ (as strings, say)")


def equal_choices(choices: Iterable[Any]) -> tuple[Any, Any] | None:
    """The first two choices that differ (in type) yet are equal to Python, as ``True == 1`` and
    ``1 == 1.0``, or None: a lookup by value (``in``, ``index``, a mapping) takes one for the other."""
    seen: dict[Any, Any] = {}
    for choice in choices:
        twin = seen.setdefault(choice, choice)
        if type(twin) is not type(choice):
            return twin, choice
    return None


def _check_default(p: Param) -> None:
    """Keep ``p.default`` as ``p.check`` reads it (3.0 becomes 3 for an int): one of the wrong
    type or out of range is refused when the space is read, not by the first trial (the
    default), which failed after the run's store was made."""
    if p.default is None:
        return
    try:
        object.__setattr__(p, "default", p.check(p.default))
    except ValueError as exc:
        raise ParamError("default", str(exc)) from None


def _finite(x: float) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int beyond any float
        return False


def _shown(bound: float) -> object:
    """A bound beyond any float as an error shows it: an integer by its size (its hundreds of
    digits are no help, and past 4300 Python refuses to print them)."""
    return f"an integer of {bound.bit_length()} bits" if isinstance(bound, int) else bound


_NUMBER_KEYS = frozenset({"type", "low", "high", "log", "default", "unit"})
_KEYS_OF_TYPE: dict[str, frozenset[str]] = {
    **dict.fromkeys(("int", "integer", "float"), _NUMBER_KEYS),
    **dict.fromkeys(("categorical", "cat", "choice"), frozenset({"type", "choices", "default"})),
    **dict.fromkeys(("bool", "boolean"), frozenset({"type", "default"})),
}
"""The keys each parameter type reads (by every name of the type)."""
_KEYS = frozenset().union(*_KEYS_OF_TYPE.values())


def config_number(value: Any, kind: type[int] | type[float] = float) -> int | float:
    """``value`` as a config file's number of ``kind`` (a bound of the space or of an output, a
    reference point), else a ValueError saying why. Text that reads as a number is one (a spec
    built in Python or read from JSON may hold ``"1e-3"``; YAML files read it as a number
    already); a boolean (``true`` is no 1.0) or anything else is refused, as are a NaN or an
    infinity (no bound, and ``int(.inf)`` would be an OverflowError), a fraction for an int
    (``int(0.5)`` was a silent 0) and an integer beyond a float's range for a float."""
    number = value
    if isinstance(number, str):
        with suppress(ValueError):
            number = float(number)
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {value!r}")
    if kind is int and isinstance(number, float) and not number.is_integer():
        raise ValueError(f"expected an integer, got {value!r}")
    try:
        return kind(number)
    except OverflowError:
        raise ValueError(f"{_shown(number)} does not fit in a float") from None


def _bound(spec: Mapping[str, Any], key: str, kind: type[int] | type[float]) -> int | float:
    """``spec[key]`` as :func:`config_number` reads it, the key named when refused."""
    try:
        return config_number(spec[key], kind)
    except ValueError as exc:
        raise ParamError(key, str(exc)) from None


def _flag(spec: Mapping[str, Any], key: str) -> bool:
    """``spec[key]`` (absent: false) if it is a boolean: ``bool("no")`` is True."""
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise ParamError(key, f"expected true or false, got {value!r}")
    return value


def _choices(spec: Mapping[str, Any]) -> tuple[Value, ...]:
    """``spec["choices"]`` if it is a list: ``tuple("lz4")`` is ``('l', 'z', '4')``."""
    value = spec["choices"]
    if not isinstance(value, (list, tuple)):
        raise ParamError("choices", f"expected a list of the values, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Constraint:
    """A predicate over parameters, e.g. ``"a < b"``, ``"not use_x or b >= 2"`` (the scalar mode of
    :mod:`boanon.expressions`)."""

    expression: str
    parsed: Expression = field(compare=False, repr=False)

    @classmethod
    def parse(cls, expression: str, known: Sequence[str]) -> Constraint:
        return cls(expression, Expression.parse(expression, mode="scalar", known=known))

    @property
    def names(self) -> frozenset[str]:
        return self.parsed.names

    def holds(self, config: Mapping[str, Any]) -> bool:
        return bool(self.parsed.evaluate(config))


class Space:
    """An ordered set of parameters plus constraints."""

    def __init__(self, params: Sequence[Param], constraints: Sequence[str] = ()):
        if len(params) > SOBOL_MAX_DIMENSIONS:
            raise SpaceTooLarge(len(params))
        names = [p.name for p in params]
        untyped = [n for n in names if not isinstance(n, str)]
        if untyped:  # a YAML key read as a number or a boolean (`1:`, `yes:`), which no constraint can name
            raise InvalidSpace(f"parameter name {untyped[0]!r}: a name must be a string, got "
                               f"{type(untyped[0]).__name__}")
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InvalidSpace(f"parameter names must be unique: {', '.join(map(repr, twice))} more "
                               "than once")
        unnamed = [n for n in names if not n or n != n.strip()]
        if unnamed:  # a table's column 'param:' (or 'param: x') that no config key can match
            raise InvalidSpace(f"parameter name {unnamed[0]!r}: a name must be non-empty, without "
                               "leading or trailing spaces")
        self.params: dict[str, Param] = {p.name: p for p in params}
        self.constraints = [Constraint.parse(c, names) for c in constraints]

    @property
    def names(self) -> list[str]:
        return list(self.params)

    def __len__(self) -> int:
        return len(self.params)

    # --- reading -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], constraints: Sequence[str] = (),
                  source: str = "space") -> Space:
        """Build from the YAML mapping ``name -> {type, low, high, log, choices, default}``."""
        params: list[Param] = []
        for name, p in spec.items():
            field_name = f"space.{name}"
            if not isinstance(p, Mapping) or "type" not in p:
                raise ConfigError(source, field_name, "needs a mapping with a 'type'")
            kind = str(p["type"]).lower()
            refuse_unknown_keys(p, _KEYS, source, field_name)
            foreign = sorted(set(p) - _KEYS_OF_TYPE.get(kind, _KEYS) - {"unit"})  # unit: said below
            if foreign:  # `low` on a bool, `log` on a categorical: said, not silently ignored
                raise ConfigError(source, f"{field_name}.{foreign[0]}", f"does not apply to a parameter "
                                  f"of type {kind} (it takes {', '.join(sorted(_KEYS_OF_TYPE[kind]))})")
            try:
                if kind in ("int", "integer"):
                    params.append(Int(name, _bound(p, "low", int), _bound(p, "high", int),
                                      _flag(p, "log"), p.get("default"), p.get("unit")))
                elif kind == "float":
                    params.append(Float(name, _bound(p, "low", float), _bound(p, "high", float),
                                        _flag(p, "log"), p.get("default"), p.get("unit")))
                elif "unit" in p:
                    raise ValueError(f"a {kind} parameter has no unit (int and float ones do)")
                elif kind in ("categorical", "cat", "choice"):
                    params.append(Categorical(name, _choices(p), p.get("default")))
                elif kind in ("bool", "boolean"):
                    params.append(Bool(name, p.get("default")))
                else:
                    raise ValueError(f"unknown type {kind!r}; expected int, float, categorical, bool")
            except KeyError as exc:
                raise ConfigError(source, field_name, f"missing {exc.args[0]!r}") from None
            except ParamError as exc:
                raise ConfigError(source, f"{field_name}.{exc.key}", exc.reason) from None
            except (TypeError, ValueError) as exc:
                raise ConfigError(source, field_name, str(exc)) from None
        if not params:
            raise ConfigError(source, "space", "defines no parameters")
        try:
            return cls(params, list(constraints))
        except InvalidSpace as exc:  # the parameters' fault, not a constraint's
            raise ConfigError(source, "space", str(exc)) from None
        except ValueError as exc:
            raise ConfigError(source, "constraints", str(exc)) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> Space:
        """Read a YAML file holding ``space:`` (and optionally ``constraints:``)."""
        spec, constraints = read_space_file(path)
        return cls.from_dict(spec, constraints, source=str(path))

    def to_dict(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for p in self.params.values():
            if isinstance(p, Categorical):
                d: dict[str, Any] = {"type": "categorical", "choices": list(p.choices)}
            elif isinstance(p, Bool):
                d = {"type": "bool"}
            else:
                d = {"type": "int" if isinstance(p, Int) else "float", "low": p.low, "high": p.high,
                     "log": p.log}
            if p.default is not None:
                d["default"] = p.default
            if getattr(p, "unit", None):
                d["unit"] = p.unit
            out[p.name] = d
        return out

    # --- configurations --------------------------------------------------------------------
    def default(self) -> dict[str, Value]:
        """The default configuration (a parameter without default takes its midpoint)."""
        return {n: p.default if p.default is not None else p.from_unit(0.5)
                for n, p in self.params.items()}

    def is_feasible(self, config: Mapping[str, Any]) -> bool:
        return all(c.holds(config) for c in self.constraints)

    def validate(self, config: Mapping[str, Any], source: str = "configuration") -> dict[str, Value]:
        """Check every value's type and range and the constraints; errors name the parameter."""
        missing = set(self.params) - set(config)
        if missing:
            raise ConfigError(source, sorted(missing)[0], "missing")
        out: dict[str, Value] = {}
        for name, p in self.params.items():
            try:
                out[name] = p.check(config[name])
            except ValueError as exc:
                raise ConfigError(source, name, str(exc)) from None
        for c in self.constraints:
            if not c.holds(out):
                values = ", ".join(f"{n}={out[n]!r}" for n in sorted(c.names))
                raise ConfigError(source, "constraints", f"violates {c.expression!r} ({values})")
        return out

    def from_unit(self, u: np.ndarray) -> dict[str, Value]:
        """Map a point of the unit cube (one coordinate per parameter) to a configuration."""
        return {n: p.from_unit(float(x)) for (n, p), x in zip(self.params.items(), u, strict=True)}

    def sample(self, n: int, rng: np.random.Generator, sobol: bool = True,
               max_tries: int = 100) -> list[dict[str, Value]]:
        """``n`` feasible configurations, space-filling (scrambled Sobol) unless ``sobol=False``."""
        from scipy.stats import qmc  # here: scipy.stats takes ~0.9 s to import, reading a space needs none

        out: list[dict[str, Value]] = []
        sampler = qmc.Sobol(len(self), scramble=True, seed=rng) if sobol else None
        for _ in range(max_tries):
            need = n - len(out)
            if need <= 0:
                break
            m = max(need, 2) if sampler is None else 2 ** math.ceil(math.log2(max(need, 2)))
            points = sampler.random(m) if sampler is not None else rng.random((m, len(self)))
            out += [c for c in map(self.from_unit, points) if self.is_feasible(c)][:need]
        if len(out) < n:
            raise ValueError(f"could only find {len(out)} of {n} feasible configurations: "
                             "are the constraints satisfiable?")
        return out

    def neighbours(self, config: Mapping[str, Value], n: int, rng: np.random.Generator,
                   scale: float = 0.1, names: Sequence[str] | None = None,
                   max_changes: int = 3) -> list[dict[str, Value]]:
        """Feasible configurations near ``config``, each changing one to ``max_changes`` of
        ``names`` (all)."""
        names = list(names) if names is not None else self.names
        out = []
        for _ in range(n * 5):
            new = dict(config)
            changes = min(len(names), int(rng.integers(1, max_changes + 1)))
            for name in rng.choice(names, size=changes, replace=False):
                new[name] = self.params[name].neighbour(config[name], rng, scale)
            if self.is_feasible(new):
                out.append(new)
                if len(out) == n:
                    break
        return out

    @property
    def switch_names(self) -> list[str]:
        """The booleans and categoricals: a change of one is a jump across its whole range."""
        return [n for n, p in self.params.items() if isinstance(p, (Bool, Categorical))]

    @property
    def numeric_names(self) -> list[str]:
        """The integer and float parameters: the ones a small step can move by a little."""
        switches = set(self.switch_names)
        return [n for n in self.names if n not in switches]

    # --- encoding for models ---------------------------------------------------------------
    def encoded_width(self, names: Sequence[str] | None = None) -> int:
        return sum(self.params[n].width for n in (names or self.names))

    def encode(self, configs: Sequence[Mapping[str, Any]], names: Sequence[str] | None = None) -> np.ndarray:
        """Rows of configurations -> a float matrix in [0, 1]; categoricals one-hot."""
        names = list(names or self.names)
        out = np.zeros((len(configs), self.encoded_width(names)))
        j = 0
        for name in names:  # column by column: vectorised over configurations
            p = self.params[name]
            values = [c[name] for c in configs]
            if isinstance(p, Categorical):
                index = {c: k for k, c in enumerate(p.choices)}
                out[np.arange(len(values)), j + np.array([index[v] for v in values], dtype=int)] = 1.0
            elif isinstance(p, Bool):
                out[:, j] = [float(bool(v)) for v in values]
            else:
                out[:, j] = p.to_unit(values)
            j += p.width
        return out


def require_space(space: Any, where: str) -> Space:
    """``space`` if it is a :class:`Space`; a mapping (a target's ``default_space()``, a YAML's
    ``space:``) is refused pointing at :meth:`Space.from_dict`, not met later as an
    AttributeError from deep inside the models."""
    if isinstance(space, Space):
        return space
    hint = ": Space.from_dict(mapping) builds one" if isinstance(space, Mapping) else ""
    raise ConfigError(where, "space", f"expected a Space, got {type(space).__name__}{hint}")


def read_space_file(path: str | Path) -> tuple[dict[str, Any], list[str]]:
    """The ``space:`` mapping and ``constraints:`` list of a YAML file, unvalidated."""
    data = load_yaml(path) or {}
    if not isinstance(data, Mapping):
        raise ConfigError(path, "file", "expected a mapping with space: and constraints:")
    spec, constraints = data.get("space") or {}, data.get("constraints") or []
    if not isinstance(spec, Mapping):
        raise ConfigError(path, "space", "expected a mapping of parameter name -> spec")
    if not isinstance(constraints, list):
        raise ConfigError(path, "constraints", "expected a list of predicates")
    return dict(spec), list(constraints)
