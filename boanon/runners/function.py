"""The ``callable`` runner: a Python function is the system.

The function takes the configuration dict (plus the runner's options as keyword arguments) and
returns its metric and objective values. The runner writes them as ``result.json`` in the
``table`` adapter's format, so they reach the model through the same adapter path as any log.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import sys
import sysconfig
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from boanon.adapters.table import RESULT_FILE
from boanon.errors import InvalidOption, check_options
from boanon.runners.base import Runner, TrialFailed, register_runner
from boanon.table import Value, measurement_problem

TRACEBACK_FILE = "traceback.txt"
"""Where the runner leaves the traceback of a function that raised."""


def load_callable(spec: str) -> Callable[..., Any]:
    """Resolve ``"package.module:function"`` or ``"path/to/file.py:function"``.

    A module is looked up on ``sys.path`` and then in the current directory (as ``python -m``
    would), so ``examples.synthetic_system:evaluate`` works from the repository root.
    """
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{spec!r}: expected 'module:function' or 'path/to/file.py:function'")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise ValueError(f"{spec!r}: no file {path}")
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ValueError(f"{spec!r}: cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # the user's module: any error is theirs to see, with its place
            raise ValueError(f"{spec!r}: importing {path} failed: {_where(exc)}") from exc
    else:
        module = _import(module_name, spec)
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ValueError(f"{spec!r}: {module_name} has no attribute {attr!r}")
    if not callable(target):
        raise ValueError(f"{spec!r}: {attr!r} is not callable")
    return target


def _import(module_name: str, spec: str) -> Any:
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.append(cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            raise ValueError(f"{spec!r}: importing {module_name!r} failed: {_where(exc)}") from exc
        raise ValueError(f"{spec!r}: cannot import {module_name!r} ({exc})") from exc
    except Exception as exc:  # the module exists but raised while importing
        raise ValueError(f"{spec!r}: importing {module_name!r} failed: {_where(exc)}") from exc
    finally:
        if added:
            sys.path.remove(cwd)


def _where(exc: BaseException) -> str:
    """The error and where it happened: the line of a syntax error, else the innermost frame of
    the user's code (not of a library it called: numpy's file names no line of the user's)."""
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} ({exc.filename}, line {exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    libraries = tuple(str(Path(p).resolve()) for key, p in sysconfig.get_paths().items()
                      if key in ("stdlib", "platstdlib", "purelib", "platlib"))
    own = [f for f in frames if not str(Path(f.filename).resolve()).startswith(libraries)
           and not f.filename.startswith("<frozen")]
    frame = (own or frames or [None])[-1]
    place = f" ({frame.filename}, line {frame.lineno})" if frame is not None else ""
    return f"{type(exc).__name__}: {exc}{place}"


def split_values(values: Mapping[str, Any], objectives: Sequence[str],
                 label: str) -> dict[str, dict[str, float]]:
    """A function's return value -> ``{"metrics": ..., "objectives": ...}``.

    Accepts that nested shape, or a flat mapping whose keys named in ``objectives`` are the
    objectives and the rest metrics. Values follow :func:`~boanon.table.measurement_problem`,
    as every runner's do.
    """
    if not isinstance(values, Mapping):
        raise TrialFailed(f"{label} returned {type(values).__name__}, expected a dict of values")
    if set(values) and set(values) <= {"metrics", "objectives"}:
        sections = {k: dict(values.get(k) or {}) for k in ("metrics", "objectives")}
    else:
        sections = {"metrics": {k: v for k, v in values.items() if k not in objectives},
                    "objectives": {k: v for k, v in values.items() if k in objectives}}
    for section in sections.values():
        for key, value in section.items():
            problem = measurement_problem(value)
            if problem:
                raise TrialFailed(f"{label} returned a value for {key!r} that {problem}")
            section[key] = float(value)
    return sections


def _function(function: str | Callable[..., Any]) -> Callable[..., Any]:
    """``function`` loaded (a ``module:function`` string) and callable, else refused as the
    runner's ``function`` option (``runner.options.function`` in a tuning YAML)."""
    try:
        target = load_callable(function) if isinstance(function, str) else function
    except ValueError as exc:  # its cause (the user's import error) stays chained
        raise InvalidOption("function", str(exc)) from exc
    if not callable(target):
        raise InvalidOption("function", f"{function!r} is not callable")
    return target


@register_runner
class CallableRunner(Runner):
    """Runs ``function(config, **options)`` in this process.

    ``function`` is a callable or a ``"module:function"`` string; ``objectives`` names the keys of
    a flat return value that are objectives (the tuner passes its objectives).
    """

    name = "callable"
    adapter = "table"

    def __init__(self, function: str | Callable[..., Any], objectives: Sequence[str] = (),
                 **options: Any):
        self.spec = function if isinstance(function, str) else getattr(function, "__qualname__",
                                                                           repr(function))
        self._source = function if isinstance(function, str) else None
        self.function = _function(function)
        check_options(self.function, options, self.spec, skip=1)  # its first parameter: the configuration
        self.objectives = list(objectives)
        self.options = options

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled by its ``module:function`` spec when it has one: a worker process or a Dask
        worker then loads the function as this process did (a ``file.py`` or a module found in
        the current directory is not importable by pickle)."""
        if self._source is None:
            return super().__reduce_ex__(protocol)
        return functools.partial(CallableRunner, **self.options), (self._source, self.objectives)

    def run(self, config: dict[str, Value], trial_dir: Path) -> None:
        try:
            values = self.function(dict(config), **self.options)
        except Exception as exc:
            (trial_dir / TRACEBACK_FILE).write_text(traceback.format_exc())
            raise TrialFailed(f"{self.spec} raised {type(exc).__name__}: {exc}") from exc
        sections = split_values(values, self.objectives, self.spec)
        (trial_dir / RESULT_FILE).write_text(json.dumps(sections, indent=2, sort_keys=True) + "\n")
