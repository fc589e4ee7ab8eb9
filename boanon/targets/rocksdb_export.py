"""A RocksDB configuration as RocksDB reads it: an ``OPTIONS`` file and ``db_bench`` flags.

The ``rocksdb`` target tunes db_bench flags (:func:`boanon.targets.rocksdb.default_space`).
Most are RocksDB options of the same name; three are db_bench's own spelling of one
(``compression_type``, ``bloom_bits``) or not an option at all (``cache_size``: the block
cache is an object the application creates, its capacity is no OPTIONS field). An application
loads the file with ``rocksdb::LoadOptionsFromFile`` (or db_bench with ``--options_file``);
options the file does not name keep RocksDB's defaults. The mapping is written out here
because RocksDB has no machine-readable list of which section an option belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping

from boanon.best import ExportFormat, register_export_format
from boanon.table import Value
from boanon.targets.rocksdb import flag

DB_OPTIONS = frozenset({
    "max_background_jobs", "max_background_compactions", "max_background_flushes", "max_open_files",
    "bytes_per_sync", "wal_bytes_per_sync", "max_total_wal_size", "max_subcompactions",
    "delayed_write_rate", "enable_pipelined_write", "allow_concurrent_memtable_write",
    "use_direct_reads", "use_direct_io_for_flush_and_compaction", "compaction_readahead_size",
    "stats_dump_period_sec", "db_write_buffer_size", "writable_file_max_buffer_size",
})
"""db_bench flags that are ``[DBOptions]`` of the same name."""
TABLE_OPTIONS = frozenset({
    "block_size", "block_restart_interval", "cache_index_and_filter_blocks", "metadata_block_size",
    "partition_filters", "pin_l0_filter_and_index_blocks_in_cache", "format_version",
    "optimize_filters_for_memory", "index_shortening",
})
"""db_bench flags that are ``[TableOptions/BlockBasedTable]`` options of the same name."""
CF_OPTIONS = frozenset({
    "write_buffer_size", "max_write_buffer_number", "min_write_buffer_number_to_merge",
    "level0_file_num_compaction_trigger", "level0_slowdown_writes_trigger", "level0_stop_writes_trigger",
    "target_file_size_base", "target_file_size_multiplier", "max_bytes_for_level_base",
    "max_bytes_for_level_multiplier", "num_levels", "max_compaction_bytes",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit", "level_compaction_dynamic_level_bytes", "arena_block_size",
    "disable_auto_compactions", "max_sequential_skip_in_iterations", "memtable_prefix_bloom_size_ratio",
    "bloom_locality", "optimize_filters_for_hits", "paranoid_file_checks", "report_bg_io_stats",
})
"""db_bench flags that are ``[CFOptions "default"]`` options of the same name."""
COMPRESSION = {"none": "kNoCompression", "snappy": "kSnappyCompression", "zlib": "kZlibCompression",
               "bzip2": "kBZip2Compression", "lz4": "kLZ4Compression", "lz4hc": "kLZ4HCCompression",
               "xpress": "kXpressCompression", "zstd": "kZSTD"}
"""db_bench's ``--compression_type`` names -> RocksDB's ``CompressionType`` names."""
VERSION = "7.8.3"
"""The RocksDB version the file states (Debian's rocksdb-tools, which the target runs)."""


def options_sections(config: Mapping[str, Value]) -> tuple[dict[str, dict[str, str]], dict[str, Value]]:
    """``{section: {option: text}}`` for the parameters RocksDB's OPTIONS file can hold, and the
    parameters it cannot (to be set elsewhere, e.g. the block cache's capacity)."""
    sections: dict[str, dict[str, str]] = {"DBOptions": {}, 'CFOptions "default"': {},
                                           'TableOptions/BlockBasedTable "default"': {}}
    db, cf, table = sections.values()
    elsewhere: dict[str, Value] = {}
    for name, value in config.items():
        if name == "compression_type":
            if value not in COMPRESSION:
                raise ValueError(f"compression_type {value!r}: expected one of {sorted(COMPRESSION)}")
            cf["compression"] = COMPRESSION[str(value)]
        elif name == "bloom_bits":
            table["filter_policy"] = f"bloomfilter:{value}:false" if value else "nullptr"
        elif name in DB_OPTIONS or name in CF_OPTIONS or name in TABLE_OPTIONS:
            section = db if name in DB_OPTIONS else cf if name in CF_OPTIONS else table
            section[name] = _text(value)
        else:
            elsewhere[name] = value
    return sections, elsewhere


def options_file(config: Mapping[str, Value], header: str = "") -> str:
    """The text of an ``OPTIONS`` file setting ``config``; parameters that are no OPTIONS field
    are listed in comments (``#`` lines, which RocksDB's parser skips)."""
    sections, elsewhere = options_sections(config)
    lines = [f"# {line}" for line in header.splitlines()]
    for name, value in elsewhere.items():
        what = "the block cache's capacity: create the cache with it (NewLRUCache)" \
            if name == "cache_size" else "not an OPTIONS field (a db_bench flag)"
        lines.append(f"# {name}={_text(value)}: {what}")
    lines += ["", "[Version]", f"  rocksdb_version={VERSION}", "  options_file_version=1.1"]
    for section, options in sections.items():
        lines += ["", f"[{section}]", *(f"  {k}={v}" for k, v in options.items())]
    return "\n".join(lines) + "\n"


def db_bench_flags(config: Mapping[str, Value]) -> list[str]:
    """``config`` as db_bench flags, exactly as the ``rocksdb`` runner passes them."""
    return [flag(k, v) for k, v in config.items()]


def _text(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _db_bench_text(config: Mapping[str, Value], header: str = "") -> str:
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + " ".join(db_bench_flags(config)) + "\n"


register_export_format(ExportFormat(
    "options", options_file, "a RocksDB OPTIONS file",
    matches=lambda name: name.startswith("OPTIONS") or name.endswith(".ini")))
register_export_format(ExportFormat("db_bench", _db_bench_text,
                                    "db_bench flags, as the rocksdb runner passes them"))
