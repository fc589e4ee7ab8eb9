"""Single-threaded BLAS around model code.

The models factorise and multiply many small matrices; on a shared machine OpenBLAS threads
only contend (a 100x100 Cholesky was measured 20x slower with threads under load). The limit
is entered once, at the outermost decorated call: entering it costs milliseconds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

F = TypeVar("F", bound=Callable[..., Any])
_inside: ContextVar[bool] = ContextVar("boanon_single_blas_thread", default=False)


def single_blas_thread(fn: F) -> F:
    """Run ``fn`` with one BLAS thread (nested calls reuse the outer limit)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _inside.get():
            return fn(*args, **kwargs)
        token = _inside.set(True)
        try:
            with threadpool_limits(limits=1, user_api="blas"):
                return fn(*args, **kwargs)
        finally:
            _inside.reset(token)
    return wrapper  # type: ignore[return-value]
