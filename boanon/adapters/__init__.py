"""Adapters: parse what a system already writes into the tidy trial table.

Importing this package registers the built-in adapters.
"""

from boanon.adapters import (
    rocksdb,  # noqa: F401  (registers the adapter)
    sgd,  # noqa: F401  (registers the adapter)
    table,  # noqa: F401  (registers the adapter)
    zigzag,  # noqa: F401  (registers the adapter)
)
from boanon.adapters.base import Adapter, available_adapters, get_adapter, register_adapter
from boanon.adapters.ingest import IngestResult, ingest

__all__ = ["Adapter", "IngestResult", "available_adapters", "get_adapter", "ingest",
           "register_adapter"]
