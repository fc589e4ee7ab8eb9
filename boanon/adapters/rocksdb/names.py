"""Turning RocksDB's names (``rocksdb.block.cache.miss``, ``W-Amp``, ``Rd(MB/s)``) into column names."""

from __future__ import annotations

import re

_NOT_WORD = re.compile(r"[^0-9a-z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def clean_name(raw: str) -> str:
    """``"rocksdb.db.get.micros"`` -> ``"db_get_micros"``; ``"KeyIn"`` -> ``"key_in"``;
    ``"Rd(MB/s)"`` -> ``"rd_mb_per_s"``."""
    name = _CAMEL.sub("_", raw.strip()).lower()
    name = name.removeprefix("rocksdb.")
    name = name.replace("/s", "_per_s").replace(".", "_")
    return _NOT_WORD.sub("_", name).strip("_")
