"""The ``zigzag`` target: accelerator design-space exploration with ZigZag (``zigzag-dse``).

Importing it registers the ``zigzag`` runner; ZigZag itself is imported only by the worker
process, so the package imports without the optional dependency installed.
"""

from boanon.targets.zigzag.runner import ZigZagRunner, default_space

__all__ = ["ZigZagRunner", "default_space"]
