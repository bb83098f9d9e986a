"""Module parameters and $readmemh images for IR tasks."""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import numpy as np

from ...errors import HlsgenError
from ...ops import OPS
from ...ops.base import zero_point
from ..vitis.cpp import requant_width
from ..vitis.tasks import per_channel

RTL_DIR = Path(__file__).resolve().parents[3] / "templates" / "rtl"


def write_mem(path: Path, values, bits: int) -> Path:
    """One two's-complement hex word of `bits` bits per line, as $readmemh reads it."""
    mask = (1 << bits) - 1
    digits = -(-bits // 4)
    path.write_text("".join(f"{int(v) & mask:0{digits}x}\n" for v in np.asarray(values).reshape(-1)))
    return path


def linear_params(task, graph, pe: int, simd: int, outdir: Path) -> Dict[str, object]:
    """hlsgen_linear's parameters for a linear task at folding (pe, simd); writes its tables."""
    if task.op != "linear":
        raise HlsgenError(f"task {task.name!r}: hlsgen_linear realizes linear tasks, not {task.op}")
    x = graph.tensors[task.inputs[0]]
    w = graph.tensors[task.inputs[1]]
    out = graph.tensors[task.outputs[0]]
    n, k = w.shape
    if n % pe or k % simd:
        raise HlsgenError(f"task {task.name!r}: folding pe={pe}, simd={simd} must divide N={n}, K={k}")
    rq = task.attrs["requant"]
    if len(rq.multipliers) != 1:
        raise HlsgenError(f"task {task.name!r}: hlsgen_linear takes a one-term requantization")
    pw = requant_width(rq)
    acc_w = OPS["linear"].loops(task, graph).acc_bits + 1
    outdir.mkdir(parents=True, exist_ok=True)
    files = {
        "WEIGHTS": write_mem(outdir / "weights.mem", w.data, w.dtype.bits),
        "RQ_MULT": write_mem(outdir / "rq_mult.mem", per_channel(rq.multipliers[0], n), 32),
        "RQ_BIAS": write_mem(outdir / "rq_bias.mem", per_channel(rq.bias, n), pw),
        "RQ_SHIFT": write_mem(outdir / "rq_shift.mem", per_channel(rq.shift, n), 7),
        "RQ_LO": write_mem(outdir / "rq_lo.mem", per_channel(rq.lo, n), out.dtype.bits + 1),
        "RQ_HI": write_mem(outdir / "rq_hi.mem", per_channel(rq.hi, n), out.dtype.bits + 1),
    }
    zp_in = zero_point(graph, task.inputs[0])
    params = {"K": k, "N": n, "PE": pe, "SIMD": simd, "A_W": x.dtype.bits, "A_SIGNED": int(x.dtype.signed),
              "ZP_IN": zp_in, "W_W": w.dtype.bits, "ACC_W": acc_w, "PW": pw, "OUT_W": out.dtype.bits,
              "ZP_OUT": int(rq.zero_point), "HALF_EVEN": int(rq.rounding == "half_even")}
    params.update({key: f'"{p}"' for key, p in files.items()})
    return params
