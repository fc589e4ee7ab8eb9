"""Errors that point at the input that caused them."""

from __future__ import annotations

import difflib
import inspect
import numbers
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_MESSAGE = 600
"""The longest an error message gets: a value quoted in it (a user's, a runner's) is cut."""


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters, saying how much was left out."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters)"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` with the known name closest to ``name``, or nothing: a typo's
    error points at the fix."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key(key: str, known: Iterable[str]) -> str:
    """``unknown key (did you mean 'x'?); expected one of [...]``: the error text for a key a
    mapping may not hold, with the fix for a typo first (``budgte``, ``forbidd``, ``residul``)."""
    known = sorted(known)
    return f"unknown key{did_you_mean(key, known)}; expected one of {known}"


def refuse_unknown_keys(keys: Iterable[object], known: Collection[str], source: str | Path,
                        where: str = "") -> None:
    """Raise :class:`ConfigError` for the first of ``keys`` (sorted as text: a YAML key may be a
    number) that is not ``known``, naming it as the field (under ``where``) with
    :func:`unknown_key`'s text: every mapping of a configuration refuses a key so (a list of
    "unknown key(s)" under the mapping's name was a second wording)."""
    unknown = sorted((k for k in keys if k not in known), key=str)
    if unknown:
        first = str(unknown[0])
        raise ConfigError(source, f"{where}.{first}" if where else first, unknown_key(first, known))


class Once:
    """The texts already told a run, so that each is told once per run, not at every proposal
    or retry: Python's own "once" forgets at every ``catch_warnings`` (the model fits use it),
    and a process-wide memory never warns a second run of the same process."""

    def __init__(self) -> None:
        self._told: set[str] = set()

    def first(self, text: str) -> bool:
        """Whether ``text`` is told now for the first time (it is remembered as told)."""
        if text in self._told:
            return False
        self._told.add(text)
        return True


def from_cwd(path: str | Path) -> str:
    """`` (relative to the current directory <cwd>)`` for a relative ``path``, else nothing: a
    path that is there from where a file lies may be missing from where the command runs."""
    return "" if Path(path).is_absolute() else f" (relative to the current directory {Path.cwd()})"


_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def check_options(function: Any, options: Mapping[str, Any], label: str, skip: int = 0) -> None:
    """Refuse an option ``function`` has no parameter for (after its first ``skip`` ones), naming
    it and the closest name, before any trial: Python's own error ("__init__() got an unexpected
    keyword argument 'netwrok'") came from every trial's runner, its constructor or a learner
    (after the work before it), without a suggestion. A function taking ``**kwargs`` takes anything."""
    try:
        params = list(inspect.signature(function).parameters.values())[skip:]
    except (TypeError, ValueError):  # no signature to read (a builtin): its call will say
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    refuse_unknown_options(options, [p.name for p in params if p.kind in _NAMED], label)


class InvalidOption(ValueError):
    """An option refused (a value it cannot take, or left out), carrying its name (``option``)
    and why (``reason``): a configuration's error then names the option's full field once
    (``runner.options.model: expected one of [...]``). A runner knows its options, not the file
    or mapping they came from: its own ``ConfigError("runner.options", "model", ...)`` was
    filed again under ``runner`` (``t.yaml: runner: runner.options: model: ...``)."""

    def __init__(self, option: str, reason: str):
        self.option = option
        self.reason = reason
        super().__init__(self.text())

    def text(self) -> str:
        """The error where no field names the option (a runner made in Python, ``boanon generate``)."""
        return f"option {self.option!r}: {self.reason}"

    def __reduce__(self) -> tuple[type[InvalidOption], tuple[str, str]]:
        """Pickled by its option and reason: an exception is rebuilt from its ``args`` (the text
        alone), and this one raised in a trial process reached the loop as a TrialFailed."""
        return type(self), (self.option, self.reason)


class UnknownOption(InvalidOption):
    """An option no parameter takes: its reason names it and the closest name (a configuration's
    error names the option's full field, ``runner.options.timout``, not only its mapping's owner)."""

    def text(self) -> str:
        return self.reason


def refuse_unknown_options(options: Iterable[str], names: Sequence[str], label: str) -> None:
    """Raise :class:`UnknownOption` for the first of ``options`` not among ``names``: ``label
    has no option 'eta'; its options: ...``, with the closest name (one wording for every option
    a function, a runner or a rule takes)."""
    for key in options:
        if key not in names:
            raise UnknownOption(key, f"{label} has no option {key!r}{did_you_mean(key, names)}; "
                                f"its options: {', '.join(names) or 'none'}")


def check_required(function: Any, options: Mapping[str, Any], label: str) -> None:
    """Refuse options that leave out a parameter ``function`` requires, as an
    :class:`InvalidOption` naming it: Python's own error ("__init__() missing 1 required
    positional argument: 'function'") did not say that the option given as ``functon`` was
    meant for it."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return
    for p in params:
        if p.kind in _NAMED and p.default is inspect.Parameter.empty and p.name not in options:
            given = sorted(map(str, options))
            hint = difflib.get_close_matches(p.name, given, n=1)
            shown = f" (given as {hint[0]!r}?)" if hint else f"; given: {', '.join(given) or 'none'}"
            raise InvalidOption(p.name, f"missing (required by {label}){shown}")


class _Kind(typing.NamedTuple):
    """One simple annotation's values: what a YAML value of it is called, whether a value is one,
    and the value as the constructor takes it."""

    word: str
    accepts: Callable[[Any], bool]
    read: Callable[[Any], Any] = lambda v: v


def is_whole(value: Any) -> bool:
    """An integer, or a float with no fraction (YAML reads ``num: 1e6`` as 1000000.0)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())


_KINDS: dict[Any, _Kind] = {
    int: _Kind("an integer", is_whole, int),
    float: _Kind("a number", lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)),
    bool: _Kind("true or false", lambda v: isinstance(v, bool)),
    str: _Kind("a string", lambda v: isinstance(v, str)),
    Mapping: _Kind("a mapping", lambda v: isinstance(v, Mapping)),
    Sequence: _Kind("a list", lambda v: isinstance(v, Sequence) and not isinstance(v, (str, bytes))),
    type(None): _Kind("null", lambda v: v is None),
}
"""The simple annotations :func:`check_types` checks a value against. A bool is no number here
(YAML's ``true`` is no count), an integer is a float's number, a whole float is an integer (the
runners took ``num: 1e6`` as ``int(num)`` before any check: a fraction is refused, not cut), and
a string is no list (``command: "prog --x"``)."""


def _kinds(annotation: Any) -> list[_Kind]:
    """The kinds of :data:`_KINDS` a value annotated ``annotation`` may be (each member of a
    union); none where one member is none of them (``Callable``, ``Any``, a class): such an
    annotation is left unchecked."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    members = typing.get_args(annotation) if union else (annotation,)
    kinds = [_KINDS.get(typing.get_origin(m) or m) for m in members]
    return [] if None in kinds else [k for k in kinds if k is not None]


def _type_hints(function: Any) -> dict[str, Any]:
    """The annotations of ``function``'s parameters (a class's constructor's), resolved: under
    ``from __future__ import annotations`` they are strings. One that does not resolve (a name
    imported only for type checkers): none are checked."""
    try:
        hints = typing.get_type_hints(function.__init__ if isinstance(function, type) else function)
    except (NameError, TypeError, AttributeError, SyntaxError):
        return {}
    hints.pop("return", None)
    return hints


def check_types(function: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as ``function`` takes them: each checked against its parameter's simple
    annotated type (int, float, bool, str, a mapping, a list, or a union of them such as
    ``int | None``), a whole float for an integer read as that integer. One of another type is
    refused as an :class:`InvalidOption` saying what was expected and what was given: the runner
    compared or converted it first, in Python's bare words (``'<=' not supported between
    instances of 'str' and 'int'``), which named no option. Other annotations are the
    constructor's to check."""
    hints = _type_hints(function)
    return {name: _typed(name, value, _kinds(hints[name]) if name in hints else [])
            for name, value in options.items()}


def _typed(name: str, value: Any, kinds: Sequence[_Kind]) -> Any:
    """``value`` read by the first of ``kinds`` that accepts it (any value where there are none)."""
    if not kinds:
        return value
    kind = next((k for k in kinds if k.accepts(value)), None)
    if kind is None:
        words = [k.word for k in kinds]
        expected = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        raise InvalidOption(name, f"expected {expected}, got {bounded(repr(value), 80)} "
                            f"({type(value).__name__})")
    return kind.read(value)


class LogParseError(ValueError):
    """A log file could not be read: names the file and, where known, the line."""

    def __init__(self, path: str | Path, message: str, line: int | None = None):
        self.path = Path(path)
        self.line = line
        self.reason = message = bounded(message)
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {message}")


class ConfigError(ValueError):
    """A user-written configuration (YAML, annotations) is invalid: names the file and field."""

    def __init__(self, source: str | Path, field: str, message: str):
        self.source = str(source)
        self.field = field
        self.reason = message
        super().__init__(f"{source}: {field}: {bounded(message)}")


class MissingFile(ConfigError):
    """A file the configuration names is not there. ``path`` is as written: a relative one was
    looked for from the current directory, which a caller may know to be the wrong one."""

    def __init__(self, source: str | Path, field: str, path: Path, what: str = "file"):
        self.path = path
        super().__init__(source, field, f"no such {what}: {path}{from_cwd(path)}")


class StoreError(ConfigError):
    """A run's store cannot be read as one: not a BoAnon store, damaged, or a row that does not
    decode. Names the store and, where one is to blame, the row."""


class StorageUnreachable(ValueError):
    """An Optuna storage URL names a database that cannot be opened (no driver for it, a server
    that does not answer, a file that is not a database): names the URL, its password hidden,
    and the database's reason, not the SQLAlchemy traceback the attempt ends in."""

    def __init__(self, url: str, reason: str):
        self.url = hide_password(url)
        self.reason = bounded(reason)
        super().__init__(f"cannot open the Optuna storage {self.url}: {self.reason}")


def hide_password(url: str) -> str:
    """``url`` with the password of its ``user:password@`` part, if any, as ``***``."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
