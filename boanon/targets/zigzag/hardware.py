"""A parametric accelerator: design parameters -> ZigZag accelerator and mapping documents.

The template is a 2-D array of MAC units, each with three private register files (weights,
inputs, partial sums), under one shared global buffer and DRAM. ZigZag needs a read/write
energy and an area for every memory; they come from :func:`sram_costs`, a power law fitted to
the CACTI 7 SRAM results that ship with ZigZag, so a bigger or wider memory costs more per
access and more area. ZigZag reports no area for the MAC array; :func:`design_summary` adds it
from a per-MAC model (see ``docs/zigzag.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DATAFLOWS: dict[str, tuple[str, str]] = {
    "weight_stationary": ("K", "C"),
    "output_stationary": ("K", "OX"),
    "pixel_parallel": ("OX", "OY"),
}
"""Dataflow name -> the layer dimensions unrolled over the array's rows (D1) and columns (D2).

``weight_stationary`` (TPU-like): output channels x input channels, each PE keeps a weight;
``output_stationary``: output channels x output columns, each PE accumulates one output;
``pixel_parallel`` (ShiDianNao-like): a tile of output pixels, weights broadcast.
"""

SRAM_FIT = {
    "read_pj": (-8.88442854, 0.55432022, 0.96969968),
    "write_pj": (-8.35992763, 0.51160201, 1.02671498),
    "area_mm2": (-14.84956521, 0.8884509, 0.38400607),
}
"""``ln(cost) = a + b ln(size_bits) + c ln(word_bits)``: least squares over the 9 on-chip-sized
(<= 2^28 bits) 22 nm SRAM entries of ZigZag's ``cacti/cacti_master/example_mem_pool.yaml``, the
node ZigZag's own CACTI hook defaults to. RMS error in ln units 0.46 (read), 0.46 (write), 0.52
(area): a trend, not a memory compiler. :func:`fit_sram_costs` recomputes it from that file."""

FIT_TECHNOLOGY = 0.022
FIT_MAX_BITS = 2**28


@dataclass(frozen=True)
class CostModel:
    """Energies and areas the generated accelerator is built from (runner options)."""

    mac_energy_pj: float = 0.15
    """Energy of one 8-bit multiply-accumulate. Horowitz (ISSCC 2014, 45 nm): 8-bit multiply
    0.2 pJ + 32-bit add 0.1 pJ, scaled to 22 nm with energy proportional to feature size."""
    mac_area_um2: float = 100.0
    """Area of one MAC unit (um^2). Horowitz (45 nm): 8-bit multiplier 282 um^2 + 32-bit adder
    137 um^2, scaled to 22 nm with area proportional to feature size squared."""
    dram_pj_per_bit: float = 12.5
    """Off-chip access energy; ZigZag's examples charge 700-1000 pJ per 64-bit DRAM word."""


def sram_costs(size_bits: int, word_bits: int) -> tuple[float, float, float]:
    """Read energy (pJ/word), write energy (pJ/word) and area (mm^2) of one SRAM instance."""
    ls, lw = math.log(size_bits), math.log(word_bits)
    r, w, a = (math.exp(c0 + c1 * ls + c2 * lw) for c0, c1, c2 in SRAM_FIT.values())
    return r, w, a


def fit_sram_costs(pool: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[float, float, float]]:
    """Refit :data:`SRAM_FIT` from a CACTI memory pool mapping (ZigZag's ``mem_pool.yaml``)."""
    import numpy as np

    rows = [v for v in pool.values() if v["memory_type"] == "sram"
            and float(v.get("technology", -1)) == FIT_TECHNOLOGY and v["size_bit"] <= FIT_MAX_BITS]
    x = np.array([[1.0, math.log(v["size_bit"]), math.log(v["IO_bus_width"])] for v in rows])
    y = np.log([[v["cost"]["read_word"] * 1000, v["cost"]["write_word"] * 1000, v["area"]]
                for v in rows])
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    return {key: tuple(float(c) for c in coef[:, i]) for i, key in enumerate(SRAM_FIT)}


def _port(name: str, kind: str, bandwidth: int, allocation: list[str]) -> dict[str, Any]:
    return {"name": name, "type": kind, "bandwidth_min": bandwidth, "bandwidth_max": bandwidth,
            "allocation": allocation}


def _sram(size_bytes: int, word_bits: int, operands: list[str], ports: list[dict[str, Any]],
          served: list[str]) -> dict[str, Any]:
    r, w, a = sram_costs(8 * size_bytes, word_bits)
    return {"size": 8 * size_bytes, "r_cost": round(r, 6), "w_cost": round(w, 6),
            "area": round(a, 8), "latency": 1, "operands": operands, "ports": ports,
            "served_dimensions": served}


def _register_file(size_bytes: int, bandwidth: int, operand: str) -> dict[str, Any]:
    """A per-PE register file: written from above, read by the MAC (and, for psums, both ways)."""
    if operand == "O":
        ports = [_port("r_port_1", "read", bandwidth, ["O, tl", "O, th"]),
                 _port("w_port_1", "write", bandwidth, ["O, fh", "O, fl"])]
    else:
        ports = [_port("r_port_1", "read", bandwidth, [f"{operand}, tl"]),
                 _port("w_port_1", "write", bandwidth, [f"{operand}, fh"])]
    return _sram(size_bytes, bandwidth, [operand], ports, [])


def _shared_allocation() -> list[list[str]]:
    """Read- and write-port allocations of a memory holding all three operands."""
    reads = ["I1, tl", "I2, tl", "O, tl", "O, th"]
    writes = ["I1, fh", "I2, fh", "O, fh", "O, fl"]
    return [reads, writes]


def accelerator(design: Mapping[str, Any], costs: CostModel, name: str = "boanon_zigzag") -> dict:
    """The ZigZag accelerator document (what ``accelerator.yaml`` holds) for one design."""
    rf_bw = int(design["rf_bandwidth"])
    gb_bw = int(design["gb_bandwidth"])
    dram_bw = int(design["dram_bandwidth"])
    reads, writes = _shared_allocation()
    dram_cost = round(costs.dram_pj_per_bit * dram_bw, 6)
    return {
        "name": name,
        "memories": {
            "rf_w": _register_file(int(design["rf_weight_bytes"]), rf_bw, "I2"),
            "rf_i": _register_file(int(design["rf_input_bytes"]), rf_bw, "I1"),
            # partial sums are twice as wide as weights and inputs: give their RF twice the port
            "rf_o": _register_file(int(design["rf_output_bytes"]), 2 * rf_bw, "O"),
            "gb": _sram(int(design["gb_kib"]) * 1024, gb_bw, ["I1", "I2", "O"],
                        [_port("r_port_1", "read", gb_bw, reads),
                         _port("w_port_1", "write", gb_bw, writes)], ["D1", "D2"]),
            "dram": {"size": 10**10, "r_cost": dram_cost, "w_cost": dram_cost, "area": 0.0,
                     "latency": 1, "operands": ["I1", "I2", "O"],
                     "ports": [_port("rw_port_1", "read_write", dram_bw, reads + writes)],
                     "served_dimensions": ["D1", "D2"]},
        },
        "operational_array": {
            "unit_energy": costs.mac_energy_pj,
            "unit_area": costs.mac_area_um2 * 1e-6,
            "dimensions": ["D1", "D2"],
            "sizes": [int(design["pe_rows"]), int(design["pe_cols"])],
        },
    }


def mapping(design: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ZigZag mapping document: the dataflow's spatial unrolling for every layer."""
    try:
        d1, d2 = DATAFLOWS[str(design["dataflow"])]
    except KeyError:
        raise ValueError(f"unknown dataflow {design['dataflow']!r}; expected one of "
                         f"{sorted(DATAFLOWS)}") from None
    return [{"name": "default",
             "spatial_mapping": {"D1": [f"{d1}, {int(design['pe_rows'])}"],
                                 "D2": [f"{d2}, {int(design['pe_cols'])}"]},
             "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}}]


def design_summary(design: Mapping[str, Any], accel: Mapping[str, Any]) -> dict[str, float]:
    """Derived quantities of a design: PE count, on-chip memory and the area breakdown (mm^2).

    Register files with no served dimension are private to a PE, so their area counts once per
    PE; the global buffer and the MAC array once. DRAM is off chip and has no area.
    """
    array = accel["operational_array"]
    pe_count = math.prod(array["sizes"])
    area_mac = pe_count * array["unit_area"]
    area_rf = area_gb = 0.0
    rf_bytes = 0
    for name, mem in accel["memories"].items():
        if name == "dram":
            continue
        if mem["served_dimensions"]:
            area_gb += mem["area"]
        else:
            area_rf += pe_count * mem["area"]
            rf_bytes += mem["size"] // 8
    gb_bytes = int(design["gb_kib"]) * 1024
    return {
        "pe_count": pe_count,
        "rf_bytes_per_pe": rf_bytes,
        "onchip_bytes": pe_count * rf_bytes + gb_bytes,
        "area_mac_array": area_mac,
        "area_rf": area_rf,
        "area_gb": area_gb,
        "area_memory": area_rf + area_gb,
        "area": area_mac + area_rf + area_gb,
    }
