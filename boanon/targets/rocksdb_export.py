"""A RocksDB configuration as RocksDB reads it: an ``OPTIONS`` file and ``db_bench`` flags.

The ``rocksdb`` target tunes db_bench flags (:func:`boanon.targets.rocksdb.default_space`).
Most are RocksDB options of the same name; three are db_bench's own spelling of one
(``compression_type``, ``bloom_bits``) or not an option at all (``cache_size``: the block
cache is an object the application creates, its capacity is no OPTIONS field). An application
loads the file with ``rocksdb::LoadOptionsFromFile`` (or db_bench with ``--options_file``);
options the file does not name keep RocksDB's defaults. The names, sections and
conversions come from the adapter's one name map (:mod:`boanon.adapters.rocksdb.option_names`).
"""

from __future__ import annotations

from collections.abc import Mapping

from boanon.adapters.rocksdb.option_names import BY_FLAG, CF, DB, LOG, TABLE, option_text
from boanon.best import ExportFormat, register_export_format
from boanon.table import Value
from boanon.targets.rocksdb import flag

VERSION = "7.8.3"
"""The RocksDB version the file states (Debian's rocksdb-tools, which the target runs)."""


def options_sections(config: Mapping[str, Value]) -> tuple[dict[str, dict[str, str]], dict[str, Value]]:
    """``{section: {option: text}}`` for the parameters RocksDB's OPTIONS file can hold, and the
    parameters it cannot (to be set elsewhere, e.g. the block cache's capacity)."""
    sections: dict[str, dict[str, str]] = {DB: {}, CF: {}, TABLE: {}}
    elsewhere: dict[str, Value] = {}
    for name, value in config.items():
        entry = BY_FLAG.get(name)
        if entry is None or entry.section == LOG:
            elsewhere[name] = value
        else:
            sections[entry.section][entry.option] = entry.to_option(value)
    return sections, elsewhere


def options_file(config: Mapping[str, Value], header: str = "") -> str:
    """The text of an ``OPTIONS`` file setting ``config``; parameters that are no OPTIONS field
    are listed in comments (``#`` lines, which RocksDB's parser skips). A configuration with no
    RocksDB option at all (another target's run, exported to ``best.ini``) is a ValueError: it
    was an empty OPTIONS file, every value in a comment."""
    if config and not any(name in BY_FLAG for name in config):
        shown = ", ".join(list(config)[:4]) + (", ..." if len(config) > 4 else "")
        raise ValueError(f"none of the run's parameters ({shown}) is a RocksDB option: it is no "
                         "OPTIONS file; write YAML (a name ending in .yaml, or --format yaml)")
    sections, elsewhere = options_sections(config)
    lines = [f"# {line}" for line in header.splitlines()]
    for name, value in elsewhere.items():
        what = "the block cache's capacity: create the cache with it (NewLRUCache)" \
            if name == "cache_size" else "not an OPTIONS field (a db_bench flag)"
        lines.append(f"# {name}={option_text(value)}: {what}")
    lines += ["", "[Version]", f"  rocksdb_version={VERSION}", "  options_file_version=1.1"]
    for section, options in sections.items():
        lines += ["", f"[{section}]", *(f"  {k}={v}" for k, v in options.items())]
    return "\n".join(lines) + "\n"


def db_bench_flags(config: Mapping[str, Value]) -> list[str]:
    """``config`` as db_bench flags, exactly as the ``rocksdb`` runner passes them."""
    return [flag(k, v) for k, v in config.items()]


def _db_bench_text(config: Mapping[str, Value], header: str = "") -> str:
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + " ".join(db_bench_flags(config)) + "\n"


register_export_format(ExportFormat(
    "options", options_file, "a RocksDB OPTIONS file",
    matches=lambda name: name.startswith("OPTIONS") or name.endswith(".ini")))
register_export_format(ExportFormat("db_bench", _db_bench_text,
                                    "db_bench flags, as the rocksdb runner passes them"))
