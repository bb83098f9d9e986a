"""Template contexts of the HLS task functions: every number the C++ needs, computed here.

One function per task, over whole-tensor arrays in row-major order:

    void <name>(const in0_t in0[N0], ..., out_t out0[M0], ...)

The arithmetic of every Foundation op in C++, checked bit for bit against the golden task by
task (tests/test_hls_tasks.py). A task's folding (vec, pe, simd) from the Schedule shapes its
loops: convolutions and linear layers pipeline their reduction loop at II=1 with vec x pe x
simd lanes unrolled and the weight array partitioned to feed them. The kernel (project.py)
wraps each task for a DATAFLOW stage or runs it on a sequential stage's core.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from ...errors import HlsgenError
from ...ir.graph import Graph, Task
from ...ir.types import IntType
from ...ops.base import zero_point as _zp
from .cpp import c_int_type, identifier, int_literal, label, requant_width

SUPPORTED = ("conv", "linear", "requant", "add", "clip", "maxpool", "avgpool", "reshape", "transpose",
             "channel_shuffle", "concat", "split", "slice", "resize")


def ctype(t: IntType) -> str:
    return f"ap_int<{t.bits}>" if t.signed else f"ap_uint<{t.bits}>"


def _strides(shape) -> List[int]:
    out, acc = [], 1
    for d in reversed(tuple(shape)):
        out.append(acc)
        acc *= int(d)
    return list(reversed(out))


def per_channel(arr, channels: int) -> List[int]:
    """A per-tensor (one value) or per-channel table as `channels` Python ints."""
    a = np.asarray(arr).reshape(-1)
    return [int(v) for v in (np.broadcast_to(a, (channels,)) if a.size == 1 else a)]


def requant_context(task: Task, graph: Graph, shape) -> Dict:
    rq = task.attrs["requant"]
    axis = rq.channel_axis if len(shape) > 1 else 0
    channels = int(shape[axis]) if shape else 1
    width = requant_width(rq)
    return {
        "width": width, "channels": channels, "inner": int(np.prod(shape[axis + 1:], dtype=np.int64)),
        "mult": [per_channel(m, channels) for m in rq.multipliers],
        "bias": [int_literal(b, width) for b in per_channel(rq.bias, channels)],   # may exceed 64 bits
        "shift": per_channel(rq.shift, channels), "lo": per_channel(rq.lo, channels), "hi": per_channel(rq.hi, channels),
        "zp": int(rq.zero_point), "rounding": "HALF_EVEN" if rq.rounding == "half_even" else "FLOOR",
    }


def task_context(task: Task, graph: Graph, fn_name: str, folding=(1, 1, 1), weights: str = "bram") -> Dict:
    """`folding` = (vec, pe, simd) from the schedule; `weights` = its placement: "offchip" makes
    the weight array a parameter (the caller loads it from memory), otherwise a constant ROM
    ("registers": fully partitioned; "bram"/"uram": block ROM)."""
    if task.op not in SUPPORTED:
        raise HlsgenError(f"task {task.name!r}: op {task.op} has no HLS template yet, so `hlsgen build` cannot emit "
                          f"this model (`hlsgen inspect`, `run` and `schedule` take it); the build realizes "
                          f"{', '.join(SUPPORTED)}")
    acts = [n for n in task.inputs if not graph.tensors[n].is_const]
    consts = [n for n in task.inputs if graph.tensors[n].is_const]
    t_out = [graph.tensors[o] for o in task.outputs]
    ctx: Dict = {
        "op": task.op, "fn": fn_name, "comment": label(task.name, 80),
        "inputs": [{"ctype": ctype(graph.tensors[n].dtype), "size": graph.tensors[n].size,
                    "shape": list(graph.tensors[n].shape), "zp": _zp(graph, n)} for n in acts],
        "outputs": [{"ctype": ctype(t.dtype), "size": t.size, "shape": list(t.shape)} for t in t_out],
    }
    out_shape = tuple(t_out[0].shape)
    a = task.attrs
    if "requant" in a:
        ctx["rq"] = requant_context(task, graph, out_shape)
    vec, pe, simd = (int(f) for f in folding)
    if task.op in ("conv", "linear"):
        w = graph.tensors[consts[0]]
        if task.op == "conv":
            (ph, pw) = ((a["pads"][0], a["pads"][2]), (a["pads"][1], a["pads"][3])) if a["pads"] else ((0, 0), (0, 0))
            n, c, h, wd = graph.tensors[acts[0]].shape
            o, cg, kh, kw = w.shape
            conv = dict(N=n, C=c, H=h, W=wd, O=o, CG=cg, KH=kh, KW=kw, OH=out_shape[2], OW=out_shape[3],
                        SH=a["strides"][0], SW=a["strides"][1], DH=a["dilations"][0], DW=a["dilations"][1],
                        PT=ph[0], PL=pw[0], G=a["groups"], OG=o // a["groups"])
        else:
            # a linear layer is a 1x1 convolution over rows: [ROWS, K] x [N, K]^T
            k = graph.tensors[acts[0]].shape[-1]
            rows = int(np.prod(out_shape[:-1], dtype=np.int64))
            conv = dict(N=rows, C=k, H=1, W=1, O=out_shape[-1], CG=k, KH=1, KW=1, OH=1, OW=1, SH=1, SW=1, DH=1, DW=1,
                        PT=0, PL=0, G=1, OG=out_shape[-1])
        conv["RED"] = conv["CG"] * conv["KH"] * conv["KW"]
        for name, f, bound in (("vec", vec, conv["OW"]), ("pe", pe, conv["O"]), ("simd", simd, conv["RED"])):
            if bound % f:
                raise HlsgenError(f"task {task.name!r}: folding {name}={f} does not divide {bound}")
        conv.update(VEC=vec, PE=pe, SIMD=simd)
        ctx["conv"] = conv
        ctx["weight"] = {"ctype": ctype(w.dtype), "plain": c_int_type(w.data), "bits": w.dtype.bits, "size": w.size, "rows": conv["O"],
                         "cols": conv["RED"], "place": weights, "param": weights == "offchip",
                         "values": [int(v) for v in np.asarray(w.data).reshape(-1)]}
    elif task.op == "add":
        rank = len(out_shape)
        terms = []
        for n in task.inputs:
            shp = (1,) * (rank - len(graph.tensors[n].shape)) + tuple(graph.tensors[n].shape)
            st = _strides(shp)
            terms.append([0 if shp[d] == 1 and out_shape[d] != 1 else st[d] for d in range(rank)])
        ctx["add"] = dict(dims=list(out_shape), terms=terms)
        ctx["inputs"] = [{"ctype": ctype(graph.tensors[n].dtype), "size": graph.tensors[n].size,
                          "shape": list(graph.tensors[n].shape), "zp": _zp(graph, n),
                          "plain": c_int_type(graph.tensors[n].data) if graph.tensors[n].is_const else None,
                          "const": [int(v) for v in np.asarray(graph.tensors[n].data).reshape(-1)]
                          if graph.tensors[n].is_const else None} for n in task.inputs]
    elif task.op == "requant":
        pass                                   # the requantization tables are all it needs
    elif task.op == "clip":
        ctx["clip"] = dict(lo=int(a["lo"]), hi=int(a["hi"]))
    elif task.op in ("maxpool", "avgpool"):
        n, c, h, wd = graph.tensors[acts[0]].shape
        if a.get("global"):
            ctx["pool"] = dict(N=n, C=c, H=h, W=wd, KH=h, KW=wd, SH=1, SW=1, DH=1, DW=1, PT=0, PL=0, OH=1, OW=1)
        else:
            (ph, pw) = ((a["pads"][0], a["pads"][2]), (a["pads"][1], a["pads"][3])) if a["pads"] else ((0, 0), (0, 0))
            dil = a.get("dilations", (1, 1))
            ctx["pool"] = dict(N=n, C=c, H=h, W=wd, KH=a["kernel"][0], KW=a["kernel"][1], SH=a["strides"][0],
                               SW=a["strides"][1], DH=dil[0], DW=dil[1], PT=ph[0], PL=pw[0], OH=out_shape[2], OW=out_shape[3])
        ctx["pool"]["min"] = graph.tensors[acts[0]].dtype.min
    else:
        ctx["gather"] = _with_sizes(_layout(task, graph))
    return ctx


def _layout(task: Task, graph: Graph) -> List[Dict]:
    """Data movement as affine gathers: for every output, out[i] = in[src(i)] where the input
    coordinate along each input dim d is (o[src_dim[d]] * mul[d]) / div[d] + add[d] over the
    output's coordinates o (channel shuffle and reshape are special cases)."""
    a = task.attrs
    x = graph.tensors[task.inputs[0]]
    outs = [graph.tensors[o] for o in task.outputs]
    res = []
    if task.op in ("reshape",):
        return [{"kind": "flat", "out": 0, "in": 0, "size": outs[0].size}]
    if task.op == "channel_shuffle":
        n, c = x.shape[:2]
        inner = int(np.prod(x.shape[2:], dtype=np.int64))
        last = int(x.shape[-1]) if len(x.shape) > 2 else 1
        return [{"kind": "shuffle", "out": 0, "in": 0, "N": n, "C": c, "G": a["groups"], "INNER": inner, "W": last}]
    if task.op == "concat":
        ax = a["axis"]
        out = outs[0]
        offset = 0
        for k, name in enumerate(task.inputs):
            t = graph.tensors[name]
            res.append({"kind": "scatter", "in": k, "out": 0, "dims": list(t.shape), "out_strides": _strides(out.shape),
                        "offset": [offset if d == ax else 0 for d in range(len(t.shape))]})
            offset += t.shape[ax]
        return res
    rank = len(x.shape)
    in_strides = _strides(x.shape)
    if task.op == "split":
        ax = a["axis"]
        offset = 0
        for k, t in enumerate(outs):
            res.append({"kind": "affine", "out": k, "in": 0, "dims": list(t.shape), "in_strides": in_strides,
                        "src": list(range(rank)), "mul": [1] * rank, "div": [1] * rank,
                        "add": [offset if d == ax else 0 for d in range(rank)]})
            offset += t.shape[ax]
        return res
    out = outs[0]
    if task.op == "transpose":
        perm = list(a["perm"])
        src = [perm.index(d) for d in range(rank)]
        return [{"kind": "affine", "out": 0, "in": 0, "dims": list(out.shape), "in_strides": in_strides, "src": src,
                 "mul": [1] * rank, "div": [1] * rank, "add": [0] * rank}]
    if task.op == "slice":
        sl = a["slices"]
        return [{"kind": "affine", "out": 0, "in": 0, "dims": list(out.shape), "in_strides": in_strides,
                 "src": list(range(rank)), "mul": [int(s[2]) for s in sl], "div": [1] * rank, "add": [int(s[0]) for s in sl]}]
    if task.op == "resize":
        return [{"kind": "affine", "out": 0, "in": 0, "dims": list(out.shape), "in_strides": in_strides,
                 "src": list(range(rank)), "mul": [1] * rank, "div": [int(f) for f in a["factors"]], "add": [0] * rank}]
    raise HlsgenError(f"task {task.name!r}: no HLS layout for {task.op}")


def _with_sizes(entries: List[Dict]) -> List[Dict]:
    for e in entries:
        if "dims" in e:
            e["size"] = int(np.prod(e["dims"], dtype=np.int64))
    return entries


def function_names(graph: Graph) -> List[str]:
    """Unique C++-safe function names, one per task, in task order."""
    seen = set()
    out = []
    for k, t in enumerate(graph.tasks):
        name = identifier(t.name, f"task{k}")
        while name in seen:
            name += "_"
        seen.add(name)
        out.append(name)
    return out


def graph_task_contexts(graph: Graph, plans: Dict = None) -> List[Dict]:
    """Contexts for every task; `plans` maps task name -> TaskPlan (folding, weight place)."""
    out = []
    for t, name in zip(graph.tasks, function_names(graph)):
        p = (plans or {}).get(t.name)
        fold = tuple(p.folding.as_list()) if p is not None else (1, 1, 1)
        place = p.weights if p is not None else "bram"
        out.append(task_context(t, graph, name, fold, place))
    return out


def render_tasks(contexts: List[Dict]) -> str:
    from ..jinja import environment
    from .cpp import TEMPLATE_DIR
    env = environment(str(TEMPLATE_DIR))
    mod = env.get_template("tasks.cpp.j2").module
    return "\n".join(str(mod.task(c)) for c in contexts)
