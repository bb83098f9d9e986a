"""Python -> C++ literals and the tool paths the emitted HLS code needs. Every number a
template prints is made here (templates render, Python decides)."""
from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

import numpy as np

from ...errors import HlsgenError

TEMPLATE_DIR = Path(__file__).resolve().parents[3] / "templates" / "hls"


def ap_types_dir() -> Path:
    """Xilinx's Apache-2.0 ap_types headers, used from the installed hls4ml package (never copied)."""
    try:
        p = Path(str(importlib.resources.files("hls4ml") / "templates" / "vivado" / "ap_types"))
    except ModuleNotFoundError:
        raise HlsgenError("C simulation needs Xilinx's ap_types headers from the hls4ml package; pip install hls4ml") from None
    if not (p / "ap_int.h").is_file():
        raise HlsgenError(f"hls4ml is installed but {p}/ap_int.h is missing; reinstall hls4ml")
    return p


def int_literal(value: int, bits: int) -> str:
    """A C++ expression for an integer constant of up to `bits` signed bits: a long long
    literal when it fits 64 bits, otherwise an ap_int built from its decimal string."""
    value = int(value)
    if -(1 << 63) < value < (1 << 63):
        return f"{value}LL"
    return f'ap_int<{bits}>("{value}", 10)'


_IDENT = re.compile(r"[^A-Za-z0-9_]")


def identifier(name: str, prefix: str = "t") -> str:
    """A C++/Tcl/make-safe identifier from any ONNX name: non [A-Za-z0-9_] characters become
    '_', a prefix keeps it from starting with a digit or clashing with keywords. Callers make
    the result unique."""
    return f"{prefix}_{_IDENT.sub('_', str(name))[:48]}"


def label(name: str, length: int = 60) -> str:
    """An ONNX name made safe for C++ comments, string literals, reports and SystemVerilog:
    ASCII letters, digits and _./-: only, every other character becomes '_'."""
    return "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "_./-:")) else "_" for ch in str(name))[:length]


def requant_width(rq) -> int:
    """Working width of the C++ requantizer: the Python product width, and room to shift a
    negative value left by the largest shift (round_shift computes floor << shift)."""
    max_shift = int(np.max(np.asarray(rq.shift).astype(np.int64)))
    return max(int(rq.product_bits), max_shift + 2) + 1


def c_int_type(values) -> str:
    """The smallest plain C integer type holding every value: constant tables are stored in it
    in C simulation (g++ needs gigabytes to compile large ap_int initializer lists); synthesis
    uses the exact ap_int type (HLSGEN_ROM in hlsgen_requant.h)."""
    a = np.asarray(values, dtype=np.int64)
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    for name, bits in (("signed char", 8), ("short", 16), ("int", 32)):
        if -(1 << (bits - 1)) <= lo and hi < (1 << (bits - 1)):
            return name
    return "long long"
