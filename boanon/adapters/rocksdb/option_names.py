"""One name map for RocksDB: db_bench flags, OPTIONS-file / LOG option names, and their units.

A search space for the ``rocksdb`` target names db_bench flags (the runner passes them as
``--<name>=<value>``), while RocksDB's own files name the options in force: most share the flag's
name, a few do not (``--compression_type=snappy`` is ``compression=kSnappyCompression``,
``--bloom_bits=10`` is ``filter_policy=bloomfilter:10:false``, ``--cache_size`` is the LOG's
``block_cache_capacity``, ``--open_files`` is ``max_open_files``). The adapter reads the files
through this table so that a trial without the runner's ``config.json`` (a user's own runs)
gives the values under the names its space uses; the exporter writes OPTIONS files through it.
RocksDB has no machine-readable list of which section holds an option, hence the sections here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from boanon.table import Value

DB, CF, TABLE, LOG = "DBOptions", 'CFOptions "default"', 'TableOptions/BlockBasedTable "default"', "LOG"
"""Where RocksDB states an option: an OPTIONS file section, or only the LOG (the block cache)."""

COMPRESSION = {"none": "kNoCompression", "snappy": "kSnappyCompression", "zlib": "kZlibCompression",
               "bzip2": "kBZip2Compression", "lz4": "kLZ4Compression", "lz4hc": "kLZ4HCCompression",
               "xpress": "kXpressCompression", "zstd": "kZSTD"}
"""db_bench's ``--compression_type`` names -> RocksDB's ``CompressionType`` names."""
_COMPRESSION_FLAG = {enum: name for name, enum in COMPRESSION.items()}
_BLOOM = re.compile(r"^bloomfilter:(?P<bits>\d+(?:\.\d+)?):(?:true|false)$")
NO_FILTER = "nullptr"


def _same(value: Value) -> Value:
    return value


def option_text(value: Value) -> str:
    """A value as an OPTIONS file writes it (booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _bytes(value: Value) -> Value:
    """A byte count the LOG states as a number (``capacity : 8388608``), as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _compression_flag(value: Value) -> Value:
    if value not in _COMPRESSION_FLAG:
        raise ValueError(f"unknown compression {value!r} (expected one of {', '.join(COMPRESSION.values())})")
    return _COMPRESSION_FLAG[str(value)]


def _compression_option(value: Value) -> str:
    if value not in COMPRESSION:
        raise ValueError(f"compression_type {value!r}: expected one of {sorted(COMPRESSION)}")
    return COMPRESSION[str(value)]


def _bloom_bits(value: Value) -> Value:
    """``bloomfilter:10:false`` -> 10 bits per key; ``nullptr`` (no filter) -> 0. Other filters
    (Ribbon, a custom policy) have no bits-per-key flag in db_bench's sense: ValueError."""
    if value == NO_FILTER:
        return 0
    m = _BLOOM.match(str(value))
    if m is None:
        raise ValueError(f"filter_policy {value!r} is not a Bloom filter (bloomfilter:<bits>:<bool>) "
                         f"nor {NO_FILTER}")
    bits = float(m["bits"])
    return int(bits) if bits.is_integer() else bits


def _filter_policy(value: Value) -> str:
    return f"bloomfilter:{value}:false" if value else NO_FILTER


@dataclass(frozen=True)
class OptionName:
    """One tunable: its db_bench flag (the name in a search space), the name RocksDB's files give
    it and where, and the value conversions both ways (file value as the OPTIONS parser returns
    it -> flag value, and flag value -> OPTIONS text)."""

    flag: str
    option: str
    section: str
    to_flag: Callable[[Value], Value] = _same
    to_option: Callable[[Value], str] = option_text


def _same_name(section: str, *names: str) -> list[OptionName]:
    return [OptionName(name, name, section) for name in names]


OPTION_NAMES: tuple[OptionName, ...] = (
    OptionName("compression_type", "compression", CF, _compression_flag, _compression_option),
    OptionName("bloom_bits", "filter_policy", TABLE, _bloom_bits, _filter_policy),
    OptionName("cache_size", "block_cache_capacity", LOG, _bytes),
    OptionName("open_files", "max_open_files", DB),
    *_same_name(DB, "max_background_jobs", "max_background_compactions", "max_background_flushes",
                "bytes_per_sync", "wal_bytes_per_sync", "max_total_wal_size", "max_subcompactions",
                "delayed_write_rate", "enable_pipelined_write", "allow_concurrent_memtable_write",
                "use_direct_reads", "use_direct_io_for_flush_and_compaction", "compaction_readahead_size",
                "stats_dump_period_sec", "db_write_buffer_size", "writable_file_max_buffer_size"),
    *_same_name(CF, "write_buffer_size", "max_write_buffer_number", "min_write_buffer_number_to_merge",
                "level0_file_num_compaction_trigger", "level0_slowdown_writes_trigger",
                "level0_stop_writes_trigger", "target_file_size_base", "target_file_size_multiplier",
                "max_bytes_for_level_base", "max_bytes_for_level_multiplier", "num_levels",
                "max_compaction_bytes", "soft_pending_compaction_bytes_limit",
                "hard_pending_compaction_bytes_limit", "level_compaction_dynamic_level_bytes",
                "arena_block_size", "disable_auto_compactions", "max_sequential_skip_in_iterations",
                "memtable_prefix_bloom_size_ratio", "bloom_locality", "optimize_filters_for_hits",
                "paranoid_file_checks", "report_bg_io_stats"),
    *_same_name(TABLE, "block_size", "block_restart_interval", "cache_index_and_filter_blocks",
                "metadata_block_size", "partition_filters", "pin_l0_filter_and_index_blocks_in_cache",
                "format_version", "optimize_filters_for_memory", "index_shortening"),
)
"""Every db_bench flag BoAnon knows as a RocksDB option; a flag not listed is no OPTIONS field."""

BY_FLAG: dict[str, OptionName] = {o.flag: o for o in OPTION_NAMES}
BY_OPTION: dict[str, OptionName] = {o.option: o for o in OPTION_NAMES}


def flag_params(params: Mapping[str, Value]) -> dict[str, Value]:
    """The options read from OPTIONS and LOG, renamed and converted to db_bench's flags where the
    map knows them (``compression=kZSTD`` -> ``compression_type=zstd``). A value the map cannot
    convert (a Ribbon filter, an unknown compression) keeps its file name and value, so it is
    still seen (and reported when a search space cannot use it) rather than read wrong."""
    out: dict[str, Value] = {}
    for name, value in params.items():
        entry = BY_OPTION.get(name)
        if entry is None or entry.flag == name:
            out[name] = value
            continue
        try:
            out[entry.flag] = entry.to_flag(value)
        except ValueError:
            out[name] = value
    return out
