"""BoAnon's one expression language: parsed once with :mod:`ast`, checked, evaluated safely.

Users write expressions in YAML, so they must never reach ``eval``: the text is parsed with
:mod:`ast`, checked against a whitelist and bounded in size, and evaluated by walking the tree.
One parser and one tree walker serve two modes:

- ``"array"``: node models' formulas and functions (``"a * load / speed + b"``,
  ``"energy * latency"``). Numbers only, numpy functions, and every value broadcasts, so one
  call evaluates a formula for thousands of Monte-Carlo samples at once; ``pi`` and ``e`` are
  constants.
- ``"scalar"``: search-space constraints (``"min_merge < max_buffers"``,
  ``"codec in ('lz4', 'zstd') or level == 0"``). Python values (numbers, strings, booleans),
  tuples and ``in``; ``and``/``or`` short-circuit and the result is a bool.

Limits against pathological input: at most :data:`MAX_LENGTH` characters and :data:`MAX_DEPTH`
levels of nesting, and a literal exponent of ``**`` (and in scalar mode, where Python integers are
unbounded, any exponent) at most :data:`MAX_EXPONENT` in size. Written here rather than taken from
simpleeval/asteval because both modes share BoAnon's whitelist, its error messages and the
vectorised reading of the operators.
"""

from __future__ import annotations

import ast
import numbers
import operator
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

MAX_LENGTH = 2000
MAX_DEPTH = 100
MAX_EXPONENT = 1000
MAX_INTEGER_BITS = 100_000  # a scalar integer power larger than this is refused (10**30000 is fine)

Mode = Literal["array", "scalar"]


def _fold(ufunc: np.ufunc) -> Callable[..., np.ndarray]:
    """``min(a, b, c)`` as an element-wise fold (the vectorised reading of Python's min/max)."""
    def apply(*args: Any) -> np.ndarray:
        if len(args) < 2:
            raise ValueError(f"{ufunc.__name__} needs at least two arguments")
        out = np.asarray(args[0], dtype=float)
        for a in args[1:]:
            out = ufunc(out, a)
        return out
    return apply


def _mean(*args: Any) -> np.ndarray:
    return _fold(np.add)(*args) / len(args)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil,
    "min": _fold(np.minimum), "max": _fold(np.maximum), "sum": _fold(np.add), "mean": _mean,
    "minimum": np.minimum, "maximum": np.maximum, "where": np.where,
}
CONSTANTS: dict[str, float] = {"pi": float(np.pi), "e": float(np.e)}


def _scalar_power(a: Any, b: Any) -> Any:
    """Python's ``**`` with the exponent bounded: ``10 ** 10 ** 10`` would run for hours."""
    if isinstance(b, numbers.Real) and abs(b) > MAX_EXPONENT:
        raise ValueError(f"exponent {b!r} is larger than {MAX_EXPONENT}")
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a).bit_length() * b > MAX_INTEGER_BITS:
        raise ValueError(f"{a!r} ** {b!r} would have more than {MAX_INTEGER_BITS} bits")
    return operator.pow(a, b)


def _numeric(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A scalar arithmetic operator on numbers only (``"a" * 10 ** 9`` would fill the memory)."""
    def apply(a: Any, b: Any) -> Any:
        for v in (a, b):
            if not isinstance(v, (numbers.Number, np.bool_)):
                raise ValueError(f"arithmetic needs numbers, got {v!r}")
        return op(a, b)
    return apply


@dataclass(frozen=True)
class _Rules:
    """What one mode allows and how it reads each operator."""

    binops: dict[type, Callable[[Any, Any], Any]]
    cmpops: dict[type, Callable[[Any, Any], Any]]
    nodes: tuple[type, ...]
    constant_types: tuple[type, ...]
    constants: Mapping[str, Any]


_COMMON_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Name, ast.Constant,
                 ast.Load, ast.IfExp, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or)
_ARRAY_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
                 ast.FloorDiv: np.floor_divide, ast.Mod: np.mod, ast.Pow: np.power}
_ARRAY_CMPOPS = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
                 ast.Eq: np.equal, ast.NotEq: np.not_equal}
_SCALAR_BINOPS = {ast.Add: _numeric(operator.add), ast.Sub: _numeric(operator.sub),
                  ast.Mult: _numeric(operator.mul), ast.Div: _numeric(operator.truediv),
                  ast.FloorDiv: _numeric(operator.floordiv), ast.Mod: _numeric(operator.mod),
                  ast.Pow: _numeric(_scalar_power)}
_SCALAR_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                  ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.In: lambda a, b: a in b,
                  ast.NotIn: lambda a, b: a not in b}
_RULES: dict[str, _Rules] = {
    "array": _Rules(_ARRAY_BINOPS, _ARRAY_CMPOPS, (*_COMMON_NODES, ast.Call, *_ARRAY_BINOPS, *_ARRAY_CMPOPS),
                    (int, float), CONSTANTS),
    "scalar": _Rules(_SCALAR_BINOPS, _SCALAR_CMPOPS,
                     (*_COMMON_NODES, ast.Tuple, ast.List, *_SCALAR_BINOPS, *_SCALAR_CMPOPS),
                     (int, float, str, bool, type(None)), {}),
}


@dataclass(frozen=True)
class Expression:
    """A parsed expression; ``names`` are the variables it reads (functions and constants excluded)."""

    text: str
    names: frozenset[str]
    tree: ast.Expression = field(compare=False, repr=False)
    mode: Mode = "array"

    @classmethod
    def parse(cls, text: str, mode: Mode = "array", known: Collection[str] | None = None) -> Expression:
        """Parse and check ``text``; raises ValueError naming the offending part. With ``known``,
        a name outside it is an error (checked before the whitelist, so ``__import__('os')`` in
        a constraint reads as the unknown name it is)."""
        rules = _RULES[mode]
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"expected a non-empty expression, got {text!r}")
        text = text.strip()
        if len(text) > MAX_LENGTH:
            raise ValueError(f"{text[:40]!r}...: an expression may have at most {MAX_LENGTH} characters")
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"cannot parse {text!r}: {exc.msg}") from None
        except (RecursionError, MemoryError):
            raise ValueError(f"{text!r} is nested too deeply") from None
        _check_depth(tree, text)
        calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and mode == "array"}
        names = frozenset(n.id for n in ast.walk(tree)
                          if isinstance(n, ast.Name) and id(n) not in calls and n.id not in rules.constants)
        if known is not None and names - set(known):
            raise ValueError(f"{text!r} names unknown parameter(s) {sorted(names - set(known))}")
        for node in ast.walk(tree):
            _check_node(node, text, rules)
        return cls(text, names, tree, mode)

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Evaluate with ``env`` giving every name. Array mode: a float array (numpy broadcasting;
        division by zero gives inf, not an error); scalar mode: a Python value."""
        missing = self.names - set(env)
        if missing:
            raise KeyError(f"{self.text!r} needs value(s) for {sorted(missing)}")
        if self.mode == "scalar":
            return _eval(self.tree.body, env, _RULES["scalar"], vectorised=False)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(_eval(self.tree.body, env, _RULES["array"], vectorised=True), dtype=float)

    def __str__(self) -> str:
        return self.text


def _check_depth(tree: ast.AST, text: str) -> None:
    """Refuse trees deeper than :data:`MAX_DEPTH` (the evaluator recurses once per level)."""
    level = [tree]
    for _ in range(MAX_DEPTH):
        level = [child for node in level for child in ast.iter_child_nodes(node)]
        if not level:
            return
    raise ValueError(f"{text[:40]!r}...: an expression may nest at most {MAX_DEPTH} levels")


def _check_node(node: ast.AST, text: str, rules: _Rules) -> None:
    if not isinstance(node, rules.nodes):
        raise ValueError(f"{text!r}: {type(node).__name__} is not allowed in an expression")
    if isinstance(node, ast.Constant) and not isinstance(node.value, rules.constant_types):
        kinds = "numeric" if rules.constant_types == (int, float) else "number, string and boolean"
        raise ValueError(f"{text!r}: only {kinds} constants are allowed, got {node.value!r}")
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, (int, float)) and abs(node.right.value) > MAX_EXPONENT):
        raise ValueError(f"{text!r}: exponent {node.right.value!r} is larger than {MAX_EXPONENT}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise ValueError(f"{text!r}: unknown function {name!r}; allowed: {', '.join(sorted(FUNCTIONS))}")
        if node.keywords:
            raise ValueError(f"{text!r}: keyword arguments are not allowed")


def _eval(node: ast.AST, env: Mapping[str, Any], rules: _Rules, vectorised: bool) -> Any:
    """One tree walker for both modes: ``vectorised`` reads the logic element-wise."""
    def ev(n: ast.AST) -> Any:
        return _eval(n, env, rules, vectorised)

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in rules.constants:
            return rules.constants[node.id]
        return np.asarray(env[node.id], dtype=float) if vectorised else env[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(ev(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return rules.binops[type(node.op)](ev(node.left), ev(node.right))
    if isinstance(node, ast.UnaryOp):
        v = ev(node.operand)
        if isinstance(node.op, ast.Not):
            return np.logical_not(v) if vectorised else not v
        return operator.neg(v) if isinstance(node.op, ast.USub) else operator.pos(v)
    if isinstance(node, ast.BoolOp):
        if not vectorised:
            values = (ev(v) for v in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = ev(node.values[0])
        for v in node.values[1:]:
            out = combine(out, ev(v))
        return out
    if isinstance(node, ast.Compare):
        out, left = True, ev(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = ev(comparator)
            holds = rules.cmpops[type(op)](left, right)
            if not vectorised and not holds:
                return False
            out = np.logical_and(out, holds) if vectorised else True
            left = right
        return out
    if isinstance(node, ast.IfExp):
        if vectorised:
            return np.where(ev(node.test), ev(node.body), ev(node.orelse))
        return ev(node.body) if ev(node.test) else ev(node.orelse)
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(ev(a) for a in node.args))  # type: ignore[attr-defined]
    raise ValueError(f"unsupported expression node {type(node).__name__}")
