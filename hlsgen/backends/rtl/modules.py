"""Module parameters and $readmemh images for IR tasks."""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import numpy as np

from ...errors import HlsgenError
from ...ops import OPS
from ...ops.base import pad_amounts, zero_point
from ..vitis.cpp import requant_width
from ..vitis.tasks import per_channel

RTL_DIR = Path(__file__).resolve().parents[3] / "templates" / "rtl"


def mem_text(values, bits: int) -> str:
    """One two's-complement hex word of `bits` bits per line, as $readmemh reads it. Python ints
    stay Python ints: numpy would turn a list of them above 2**63 into uint64 or, mixed with
    negatives, into float64, and lose the low bits of a wide row."""
    mask = (1 << bits) - 1
    digits = -(-bits // 4)
    flat = values.reshape(-1).tolist() if isinstance(values, np.ndarray) else list(values)
    return "".join(f"{int(v) & mask:0{digits}x}\n" for v in flat)


def write_mem(path: Path, values, bits: int) -> Path:
    """`values` into `path` as mem_text writes them."""
    path.write_text(mem_text(values, bits))
    return path


def linear_params(task, graph, pe: int, simd: int, outdir: Path) -> Dict[str, object]:
    """hlsgen_linear's parameters for a linear task at folding (pe, simd); writes its tables."""
    if task.op != "linear":
        raise HlsgenError(f"task {task.name!r}: hlsgen_linear realizes linear tasks, not {task.op}")
    w = graph.tensors[task.inputs[1]]
    n, k = w.shape
    if n % pe or k % simd:
        raise HlsgenError(f"task {task.name!r}: folding pe={pe}, simd={simd} must divide N={n}, K={k}")
    acc_w = OPS["linear"].loops(task, graph).acc_bits + 1
    params = {"K": k, "N": n, "PE": pe, "SIMD": simd, "W_W": w.dtype.bits, "ACC_W": acc_w,
              **_requant_tables(task, graph, n, outdir, "hlsgen_linear")}
    params["WEIGHTS"] = _file(write_mem(outdir / "weights.mem", w.data, w.dtype.bits))
    return params


def _file(path: Path) -> str:
    return f'"{path}"'


def _requant_tables(task, graph, channels: int, outdir: Path, module: str) -> Dict[str, object]:
    """The per-channel requantization tables (RQ_*) and the input/output parameters a streaming
    module with one requantization term takes."""
    x = graph.tensors[task.inputs[0]]
    out = graph.tensors[task.outputs[0]]
    rq = task.attrs.get("requant")
    if rq is None or len(rq.multipliers) != 1:
        raise HlsgenError(f"task {task.name!r}: {module} takes a one-term requantization")
    pw = requant_width(rq)
    outdir.mkdir(parents=True, exist_ok=True)
    files = {
        "RQ_MULT": write_mem(outdir / "rq_mult.mem", per_channel(rq.multipliers[0], channels), 32),
        "RQ_BIAS": write_mem(outdir / "rq_bias.mem", per_channel(rq.bias, channels), pw),
        "RQ_SHIFT": write_mem(outdir / "rq_shift.mem", per_channel(rq.shift, channels), 7),
        "RQ_LO": write_mem(outdir / "rq_lo.mem", per_channel(rq.lo, channels), out.dtype.bits + 1),
        "RQ_HI": write_mem(outdir / "rq_hi.mem", per_channel(rq.hi, channels), out.dtype.bits + 1),
    }
    params = {"A_W": x.dtype.bits, "A_SIGNED": int(x.dtype.signed), "ZP_IN": zero_point(graph, task.inputs[0]),
              "PW": pw, "OUT_W": out.dtype.bits, "ZP_OUT": int(rq.zero_point),
              "HALF_EVEN": int(rq.rounding == "half_even")}
    params.update({key: _file(p) for key, p in files.items()})
    return params


def window_geometry(task, graph, channel_outer: bool) -> Dict[str, object]:
    """hlsgen_sliding_window's parameters for a conv or pooling task (padding value included)."""
    x = graph.tensors[task.inputs[0]]
    _, c, h, w = x.shape
    oh, ow = graph.tensors[task.outputs[0]].shape[2:]
    a = task.attrs
    if task.op == "conv":
        kh, kw = graph.tensors[task.inputs[1]].shape[2:]
    elif a.get("global"):
        kh, kw = h, w
    else:
        kh, kw = a["kernel"]
    strides = a.get("strides", (1, 1)) if not a.get("global") else (1, 1)
    dil = a.get("dilations", (1, 1)) or (1, 1)
    (pt, _), (pl, _) = pad_amounts(a.get("pads"), 2)
    padv = x.dtype.min if task.op == "maxpool" else zero_point(graph, task.inputs[0])
    return {"C": int(c), "H": int(h), "W": int(w), "KH": int(kh), "KW": int(kw), "SH": int(strides[0]),
            "SW": int(strides[1]), "DH": int(dil[0]), "DW": int(dil[1]), "PT": int(pt), "PL": int(pl), "OH": int(oh),
            "OW": int(ow), "A_W": x.dtype.bits, "PADV": int(padv) & ((1 << x.dtype.bits) - 1),
            "CHANNEL_OUTER": int(channel_outer)}


def conv_params(task, graph, pe: int, simd: int, outdir: Path) -> Dict[str, object]:
    """hlsgen_conv's parameters for a conv task (groups = 1) at folding (pe, simd): the window
    geometry, and the weights laid out [o][ky][kx][c] to match the window's tap order."""
    if task.op != "conv" or task.attrs["groups"] != 1:
        raise HlsgenError(f"task {task.name!r}: hlsgen_conv realizes convolutions with groups = 1")
    w = graph.tensors[task.inputs[1]]
    o, c, kh, kw = w.shape
    k = kh * kw * c
    if o % pe or k % simd:
        raise HlsgenError(f"task {task.name!r}: folding pe={pe}, simd={simd} must divide O={o}, KH*KW*C={k}")
    geom = window_geometry(task, graph, channel_outer=False)
    params = {k_: v for k_, v in geom.items() if k_ not in ("PADV", "CHANNEL_OUTER")}
    params.update(O=int(o), PE=pe, SIMD=simd, W_W=w.dtype.bits, ACC_W=OPS["conv"].loops(task, graph).acc_bits + 1,
                  **_requant_tables(task, graph, int(o), outdir, "hlsgen_conv"))
    params["WEIGHTS"] = _file(write_mem(outdir / "weights.mem", np.transpose(w.data, (0, 2, 3, 1)), w.dtype.bits))
    return params


def window_reduce_params(task, graph, outdir: Path) -> Dict[str, object]:
    """hlsgen_window_reduce's parameters for a depthwise conv (MODE 0), max pool (1) or average
    pool (2) task; pair it with hlsgen_sliding_window at window_geometry(task, graph, True)."""
    geom = window_geometry(task, graph, channel_outer=True)
    c, kk = geom["C"], geom["KH"] * geom["KW"]
    x = graph.tensors[task.inputs[0]]
    # pools have no weights; Yosys reads a $readmemh file even in a branch the mode leaves out
    outdir.mkdir(parents=True, exist_ok=True)
    none = {"W_W": 2, "WEIGHTS": _file(write_mem(outdir / "weights.mem", [0] * (c * kk), 2))}
    if task.op == "maxpool":
        out = graph.tensors[task.outputs[0]]
        return {"C": c, "KK": kk, "MODE": 1, "A_W": x.dtype.bits, "A_SIGNED": int(x.dtype.signed), "ACC_W": x.dtype.bits + 2,
                "OUT_W": out.dtype.bits, **none}
    if task.op == "avgpool":
        return {"C": c, "KK": kk, "MODE": 2, "ACC_W": x.dtype.bits + 2 + kk.bit_length(),
                **_requant_tables(task, graph, c, outdir, "hlsgen_window_reduce"), **none}
    if task.op == "conv" and task.attrs["groups"] == c and tuple(graph.tensors[task.inputs[1]].shape[:2]) == (c, 1):
        w = graph.tensors[task.inputs[1]]
        params = {"C": c, "KK": kk, "MODE": 0, "W_W": w.dtype.bits, "ACC_W": OPS["conv"].loops(task, graph).acc_bits + 1,
                  **_requant_tables(task, graph, c, outdir, "hlsgen_window_reduce")}
        params["WEIGHTS"] = _file(write_mem(outdir / "weights.mem", w.data, w.dtype.bits))
        return params
    raise HlsgenError(f"task {task.name!r}: hlsgen_window_reduce realizes depthwise conv, max and average pooling, "
                      f"not this {task.op}")


def split_params(graph, tasks) -> Dict[str, object]:
    """hlsgen_split's parameters for one or two slice tasks reading the same 4-D tensor (output
    j realizes tasks[j]; a missing second output takes nothing)."""
    x = graph.tensors[tasks[0].inputs[0]]
    _, c, h, w = x.shape
    params: Dict[str, object] = {"A_W": x.dtype.bits, "H": int(h), "W": int(w), "C": int(c)}
    for j in range(2):
        if j < len(tasks):
            t = tasks[j]
            if t.op != "slice" or t.inputs[0] != tasks[0].inputs[0]:
                raise HlsgenError(f"task {t.name!r}: hlsgen_split realizes slices of one tensor")
            sl = t.attrs["slices"]
            if tuple(sl[0]) != (0, int(x.shape[0]), 1) or any(s[2] < 1 for s in sl):
                raise HlsgenError(f"task {t.name!r}: hlsgen_split slices H, W and C with positive steps")
        else:
            sl = [(0, 0, 1)] * 4
        for axis, name in ((2, "H"), (3, "W"), (1, "C")):
            lo, hi, step = sl[axis]
            params.update({f"{name}{j}0": int(lo), f"{name}{j}1": int(hi), f"{name}{j}S": int(step)})
    return params


def layout_params(task, graph) -> Dict[str, object]:
    """Parameters of the layout modules: hlsgen_concat (channel concat of two inputs),
    hlsgen_channel_shuffle and hlsgen_upsample (nearest resize by integer H, W factors)."""
    x = graph.tensors[task.inputs[0]]
    if len(x.shape) != 4:
        raise HlsgenError(f"task {task.name!r}: the streaming layout modules take 4-D (NCHW) tensors")
    _, c, h, w = x.shape
    if task.op == "concat" and task.attrs["axis"] == 1 and len(task.inputs) == 2:
        return {"A_W": x.dtype.bits, "CA": int(c), "CB": int(graph.tensors[task.inputs[1]].shape[1])}
    if task.op == "channel_shuffle":
        return {"A_W": x.dtype.bits, "C": int(c), "G": int(task.attrs["groups"])}
    if task.op == "resize" and tuple(task.attrs["factors"][:2]) == (1, 1):
        return {"A_W": x.dtype.bits, "W": int(w), "C": int(c), "FH": int(task.attrs["factors"][2]),
                "FW": int(task.attrs["factors"][3])}
    raise HlsgenError(f"task {task.name!r}: no streaming layout module for this {task.op}")


def window_reduce_top(geom, red) -> str:
    """A two-module pipeline (window, then reduction) with the element-stream ports."""
    gp = ", ".join(f".{k}({v})" for k, v in geom.items())
    rp = ", ".join(f".{k}({v})" for k, v in red.items())
    return f"""module window_op (input logic clk, input logic rst_n,
    input logic [{geom['A_W'] - 1}:0] s_data, input logic s_valid, output logic s_ready,
    output logic [{red.get('OUT_W', 8) - 1}:0] m_data, output logic m_valid, input logic m_ready);
    logic [{geom['A_W'] - 1}:0] d; logic v, r;
    hlsgen_sliding_window #({gp}) win (.clk(clk), .rst_n(rst_n), .s_data(s_data), .s_valid(s_valid),
        .s_ready(s_ready), .m_data(d), .m_valid(v), .m_ready(r));
    hlsgen_window_reduce #({rp}) red (.clk(clk), .rst_n(rst_n), .s_data(d), .s_valid(v), .s_ready(r),
        .m_data(m_data), .m_valid(m_valid), .m_ready(m_ready));
endmodule
"""
