"""Small arithmetic expressions over named arrays, parsed once and evaluated safely and vectorised.

Node models (``"a * load / speed + b"``, ``"energy * latency"``) are written by users in YAML, so
they must never reach ``eval``: the text is parsed with :mod:`ast`, checked against a whitelist
of operators and functions, and evaluated by walking the tree with numpy. Every value broadcasts,
so one call evaluates a formula for thousands of Monte-Carlo samples at once.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide, ast.Mod: np.mod, ast.Pow: np.power,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
    ast.Eq: np.equal, ast.NotEq: np.not_equal,
}


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

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name,
            ast.Constant, ast.Load, ast.IfExp, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
            *_BINOPS, *_CMPOPS)


@dataclass(frozen=True)
class Expression:
    """A parsed expression; ``names`` are the variables it reads (functions and constants excluded)."""

    text: str
    names: frozenset[str]
    tree: ast.Expression = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> Expression:
        """Parse and check ``text``; raises ValueError naming the offending part."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"expected a non-empty expression, got {text!r}")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"cannot parse {text!r}: {exc.msg}") from None
        calls = set()
        for node in ast.walk(tree):
            if not isinstance(node, _ALLOWED):
                raise ValueError(f"{text!r}: {type(node).__name__} is not allowed in an expression")
            if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
                raise ValueError(f"{text!r}: only numeric constants are allowed, got {node.value!r}")
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                    name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                    raise ValueError(f"{text!r}: unknown function {name!r}; "
                                     f"allowed: {', '.join(sorted(FUNCTIONS))}")
                if node.keywords:
                    raise ValueError(f"{text!r}: keyword arguments are not allowed")
                calls.add(id(node.func))
        names = frozenset(n.id for n in ast.walk(tree)
                          if isinstance(n, ast.Name) and id(n) not in calls and n.id not in CONSTANTS)
        return cls(text.strip(), names, tree)

    def evaluate(self, env: Mapping[str, np.ndarray | float]) -> np.ndarray:
        """Evaluate with ``env`` giving every name; arrays broadcast (numpy rules)."""
        missing = self.names - set(env)
        if missing:
            raise KeyError(f"{self.text!r} needs value(s) for {sorted(missing)}")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(_eval(self.tree.body, env), dtype=float)

    def __str__(self) -> str:
        return self.text


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return CONSTANTS[node.id] if node.id in CONSTANTS else np.asarray(env[node.id], dtype=float)
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return np.logical_not(v)
        return operator.neg(v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BoolOp):
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        out = _eval(node.values[0], env)
        for v in node.values[1:]:
            out = combine(out, _eval(v, env))
        return out
    if isinstance(node, ast.Compare):
        out, left = True, _eval(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, env)
            out = np.logical_and(out, _CMPOPS[type(op)](left, right))
            left = right
        return out
    if isinstance(node, ast.IfExp):
        return np.where(_eval(node.test, env), _eval(node.body, env), _eval(node.orelse, env))
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(_eval(a, env) for a in node.args))  # type: ignore[attr-defined]
    raise ValueError(f"unsupported expression node {type(node).__name__}")
