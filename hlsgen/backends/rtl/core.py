"""The RTL realization of a design on hlsgen_core: every task of the schedule becomes
configuration words (the HLS core's words, with operand ids replaced by memory addresses) run
by one core; the top (templates/rtl/top.sv.j2) moves the graph's inputs in and outputs out on
AXI4-Stream ports and the AXI4-Lite control port (hlsgen_axilite_ctrl.sv).

This first realization runs every stage on the core, dataflow stages included: its cycle
counts measure this core, not the schedule's dataflow pipelines (docs/hls.md, RTL status)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from ...ir.graph import Graph
from ...ops import OPS
from ...schedule.cost import depth_of
from ...schedule.schedule import Schedule
from ..vitis.kernel import KIND_ELTWISE, KIND_MOVE, KIND_SCATTER, KIND_WINDOW, MAX_RANK, KernelBuilder, Store, container_bits
from ..vitis.tasks import ctype
from .modules import write_mem


@dataclass
class _Stage:
    index: int = 0


class _AllStored(KernelBuilder):
    """Every tensor is stored (the core reads and writes them all); weights are on chip."""

    def _stores(self):
        super()._stores()
        for t in self.g.tasks:
            for o in t.outputs:
                if o not in self.stores:
                    tt = self.g.tensors[o]
                    k = sum(1 for s in self.stores.values() if s.kind == "scratchpad")
                    self.stores[o] = Store(o, f"spad{k}", "scratchpad", ctype(tt.dtype), tt.size, tt.dtype.bits,
                                           tt.dtype.signed, container_bits(tt.dtype.bits))


def _onchip(sched: Schedule) -> Schedule:
    s = copy.deepcopy(sched)
    for st in s.stages:
        for t in st.tasks:
            if t.weights == "offchip":
                t.weights = "bram"
    return s


def _lanes(task, graph, folding) -> Tuple[int, int, int]:
    """The core's (VEC, PE, SIMD) for a task at the schedule's folding. A global average pool
    is a window over the whole input: the model's pixel lanes (vec) reduce its taps."""
    v, p, s = folding.as_list()
    if task.op == "avgpool" and task.attrs.get("global"):
        return 1, p, v * s
    return v, p, s


def _taps(f: List[int]) -> List[int]:
    """A window word's tap table: per reduction index r = (ci * KH + ky) * KW + kx, the input
    channel, row offset ky * DH and column offset kx * DW, packed 16 bits each."""
    cg, kh, kw, dh, dw = f[14], f[15], f[16], f[21], f[22]
    out = []
    for ci in range(cg):
        for ky in range(kh):
            for kx in range(kw):
                if max(ci, ky * dh, kx * dw) >= 1 << 15:
                    raise ValueError("hlsgen_core's tap table holds 16-bit offsets")
                out.append((ci << 32) | ((ky * dh) << 16) | (kx * dw))
    return out


def word_cycles(f: List[int], vec: int, pe: int, simd: int, lat: int) -> int:
    """hlsgen_core's cycles for one word: one fetch (none for a core's first word), its steps,
    then its drain."""
    if f[0] == KIND_WINDOW:
        red = f[14] * f[15] * f[16]
        steps = f[9] * f[17] * -(-f[18] // vec) * -(-f[13] // pe) * -(-red // simd)
    else:
        d0 = 6 if f[0] == KIND_ELTWISE else 4
        n = 1
        for v in f[d0:d0 + MAX_RANK]:
            n *= v
        steps = -(-n // (vec * pe))
    return 1 + steps + lat


NX = 25          # fields hlsgen_core adds to the HLS core's words (templates/rtl/hlsgen_core.sv)
PIXEL_MAJOR = [0, 1, 2, 4, 5, 3]     # rank-6 order N, H, W, C of a 4-D tensor padded to six dims
NATURAL = [0, 1, 2, 3, 4, 5]


def _geometry(graph: Graph, name: str, root: str) -> List[int]:
    """A source's (C*H*W, H, W, ALL) as hlsgen_core's row check reads it. Rows are N x H of a 4-D
    tensor and the last dimension's runs otherwise; an alias of another shape waits for all."""
    shape = graph.tensors[root].shape
    rows = _rows(shape)
    if name != root and tuple(graph.tensors[name].shape) != tuple(shape):
        return [1, 1, 1, rows]
    if len(shape) == 4:
        return [int(shape[1] * shape[2] * shape[3]), int(shape[2]), int(shape[3]), 0]
    last = int(shape[-1]) if len(shape) else 1
    return [last, 1, last, 0]


def _rows(shape) -> int:
    if len(shape) == 4:
        return int(shape[0] * shape[2])
    size = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    return max(1, size // max(1, int(shape[-1]) if len(shape) else 1))


def build_core(graph: Graph, sched: Schedule, device, outdir: Path) -> Dict:
    """Write the cores' memory images into outdir; return the top's template context."""
    kb = _AllStored(graph, _onchip(sched), device)
    st = kb._sequential(_Stage(), list(range(len(graph.tasks))))
    plans = {p.name: p for s in sched.stages for p in s.tasks}
    tasks = {t.name: t for t in graph.tasks}
    # a reshape is free in the model (the same elements, reinterpreted): here its output is an
    # alias of its input, and it has no word
    alias: Dict[str, str] = {}
    program = []
    for w in st["program"]:
        t = tasks[w["task"]]
        if OPS[t.op].loops(t, graph).free:
            alias[t.outputs[0]] = alias.get(t.inputs[0], t.inputs[0])
        else:
            program.append(w)
    root = lambda n: alias.get(n, n)   # noqa: E731
    # operand ids -> base addresses in one memory
    base: Dict[int, int] = {}
    tensor_of: Dict[int, str] = {}
    by_name: Dict[str, int] = {}
    layout: List[Dict] = []
    addr = 0
    for o in st["operands"]:
        name = o["store"].tensor
        tensor_of[o["id"]] = name
        if name in alias:
            continue
        base[o["id"]] = by_name[name] = addr
        layout.append({"tensor": name, "base": addr, "size": o["store"].size, "kind": o["store"].kind})
        addr += o["store"].size
    for o in st["operands"]:
        name = o["store"].tensor
        if name in alias:
            base[o["id"]] = by_name[name] = by_name[root(name)]
            layout.append({"tensor": name, "base": by_name[name], "size": o["store"].size, "kind": "alias"})
    image = [0] * addr
    for c in st["consts"]:
        base[c["id"]] = len(image)
        image += c["values"]
    # cores: one per sequential stage, one per task of a dataflow stage
    core_of: Dict[str, int] = {}
    stage_of: Dict[str, int] = {}
    stages = []
    ncores = 0
    for s in sched.stages:
        names = [p.name for p in s.tasks if not OPS[p.op].loops(tasks[p.name], graph).free]
        cores = []
        for k, name in enumerate(names):
            if s.mode == "dataflow" or k == 0:
                cores.append(ncores)
                ncores += 1
            core_of[name] = cores[-1]
            stage_of[name] = s.index
        stages.append({"index": s.index, "mode": s.mode, "cores": [f"core{c}" for c in cores], "set": cores})
    producer = {root(o): t.name for t in graph.tasks if t.name in core_of for o in t.outputs}
    counter = {n: k for k, n in enumerate(sorted(producer, key=lambda n: (stage_of[producer[n]], n)))}
    last_word = {}
    for k, w in enumerate(program):
        last_word[w["task"]] = k
    words: Dict[int, List[int]] = {c: [] for c in range(ncores)}
    what: Dict[int, List[str]] = {c: [] for c in range(ncores)}
    taps: List[int] = []
    lanes = {c: {"MV": 1, "MP": 1, "MS": 1, "ML": 1} for c in range(ncores)}
    per_task: Dict[str, int] = {}
    depth = 1
    for k, w in enumerate(program):
        t = tasks[w["task"]]
        plan = plans[t.name]
        c = core_of[t.name]
        vec, pe, simd = _lanes(t, graph, plan.folding)
        last = last_word[t.name] == k
        lat = depth_of(OPS[t.op].loops(t, graph), plan.folding) if last else 0
        f = list(w["f"])
        tap_off = len(taps)
        out = root(tensor_of[f[1]])
        if f[0] == KIND_WINDOW:
            taps += _taps(f)
            lanes[c].update(MV=max(lanes[c]["MV"], vec), MP=max(lanes[c]["MP"], pe), MS=max(lanes[c]["MS"], simd))
            srcs = [tensor_of[f[3]]]
            order, pdiv, pid = NATURAL, 0, counter[out]
        else:
            vec, pe, simd = 1, vec * pe, 1
            lanes[c]["ML"] = max(lanes[c]["ML"], pe)
            oshape = graph.tensors[out].shape
            if f[0] == KIND_ELTWISE:
                srcs = [tensor_of.get(f[6 + MAX_RANK + j * (2 + MAX_RANK)]) for j in range(f[3])]
            else:
                srcs = [tensor_of[f[3]]]
            order, pdiv, pid = NATURAL, 0, counter[out]
            four = len(oshape) == 4
            if f[0] == KIND_MOVE and t.op == "channel_shuffle":
                if four:
                    order, pdiv = [0, 1, 2, 5, 3, 4], int(oshape[1] * oshape[3])
            elif f[0] == KIND_SCATTER:
                ishape = graph.tensors[srcs[0]].shape
                if len(ishape) == 4:
                    order = PIXEL_MAJOR
                if not last:
                    pid = -1
                elif four and len(ishape) == 4 and t.attrs.get("axis") == 1:
                    pdiv = int(ishape[1] * ishape[3])
            elif four:
                order, pdiv = PIXEL_MAJOR, int(oshape[1] * oshape[3])
            else:
                pdiv = int(oshape[-1]) if len(oshape) else 0
        first_of_core = not words[c]
        per_task[t.name] = per_task.get(t.name, 0) + word_cycles(f, vec, pe, simd, lat) - (1 if first_of_core else 0)
        f[1] = base[f[1]]
        if f[0] == KIND_WINDOW or f[0] in (KIND_MOVE, KIND_SCATTER):
            f[3] = base[f[3]]
        elif f[0] == KIND_ELTWISE:
            for t_ in range(f[3]):
                j = 6 + MAX_RANK + t_ * (2 + MAX_RANK)
                f[j] = base[f[j]]
        src_fields = []
        for j in range(2):
            n = srcs[j] if j < len(srcs) else None
            r = root(n) if n is not None else None
            p = producer.get(r) if r is not None else None
            if p is None or stage_of[p] != stage_of[t.name] or core_of[p] == c or sched.stages[stage_of[t.name]].mode != "dataflow":
                src_fields += [-1, 1, 1, 1, 0]
            else:
                src_fields += [counter[r]] + _geometry(graph, n, r)
        plat = depth_of(OPS[t.op].loops(t, graph), plan.folding)
        depth = max(depth, plat)
        words[c] += (f + [vec, pe, simd, lat, tap_off] + list(order) + [pid, pdiv, _rows(graph.tensors[out].shape)]
                     + src_fields + [plat])
        if t.name not in what[c]:
            what[c].append(t.name)
    sb = st["sb"]
    pw = st["width"]
    rq = st["rq"]
    nf = st["nf"] + NX
    outdir.mkdir(parents=True, exist_ok=True)
    shared = {
        "WROM": write_mem(outdir / "wrom.mem", st["wrom"], st["wbits"]),
        "TAP": write_mem(outdir / "tap.mem", taps or [0], 48),
        "RQ_BIAS": write_mem(outdir / "rq_bias.mem", rq["bias_values"], pw),
        "RQ_M0": write_mem(outdir / "rq_m0.mem", rq["m"][0], 32),
        "RQ_M1": write_mem(outdir / "rq_m1.mem", rq["m"][1] if len(rq["m"]) > 1 else [0] * rq["size"], 32),
        "RQ_SHIFT": write_mem(outdir / "rq_shift.mem", rq["shift"], 7),
        "RQ_LO": write_mem(outdir / "rq_lo.mem", rq["lo"], 32),
        "RQ_HI": write_mem(outdir / "rq_hi.mem", rq["hi"], 32),
        "RQ_ZP": write_mem(outdir / "rq_zp.mem", rq["zp"], 32),
        "RQ_HALF_EVEN": write_mem(outdir / "rq_half_even.mem", [int(r == "HALF_EVEN") for r in rq["round"]], 1),
    }
    mem_file = write_mem(outdir / "mem.mem", image or [0], sb)
    if st["nterms"] > 2:
        raise ValueError("hlsgen_core takes at most two elementwise terms")
    # one program for all cores, and one parameter set: the widest lanes of any core
    allw: List[int] = []
    cores = []
    for c in range(ncores):
        first = len(allw) // nf
        allw += words[c]
        cores.append({"index": c, "stage": next(s["index"] for s in stages if c in s["set"]), "first": first,
                      "last": len(allw) // nf, "what": ", ".join(_label_task(n) for n in what[c])})
    ln = {k: max(lanes[c][k] for c in range(ncores)) for k in ("MV", "MP", "MS", "ML")} if ncores else \
        {"MV": 1, "MP": 1, "MS": 1, "ML": 1}
    prog = write_mem(outdir / "program.mem", allw or [0], 32)
    core_params = {"NT": max(1, len(allw) // nf), "NF": nf, "SB": sb, "WROM_WORDS": len(st["wrom"]), "WB": st["wbits"],
                   "TAP_WORDS": max(1, len(taps)), "RQ_ROWS": rq["size"], "PW": pw, **ln, "NC": max(1, len(counter)),
                   "NR": max(ln["MV"] * ln["MP"] * ln["MS"], 2 * ln["ML"]), "NW": max(ln["MV"] * ln["MP"], ln["ML"]),
                   "MD": depth}
    core_files = {"PROGRAM": f"../rtl/{prog.name}", **{k: f"../rtl/{p.name}" for k, p in shared.items()}}
    for s in stages:
        bits = ["1" if c in s["set"] else "0" for c in reversed(range(ncores))]
        s["mask"] = f"{ncores}'b{''.join(bits)}"
    ports_in = [_port(s, by_name) for s in (kb.stores[n] for n in graph.inputs)]
    ports_out = [_port(s, by_name) for s in (kb.stores[n] for n in graph.outputs)]
    io = sum(p["beats"] for p in ports_in) + sum(p["beats"] for p in ports_out)
    return {"cores": cores, "core_params": core_params, "core_files": core_files, "stages": stages, "sb": sb, "counters": max(1, len(counter)), "mem_words": max(1, len(image)),
            "mem_file": f"../rtl/{mem_file.name}", "inputs": ports_in, "outputs": ports_out, "layout": layout,
            "words": len(program), "task_cycles": per_task,
            # no core waits and nothing overlaps: an upper bound of the simulated cycles
            "serial_cycles": sum(per_task.values()) + io + 3 * len(stages) + 4}


def _port(s, by_name: Dict[str, int]) -> Dict:
    return {"base": by_name[s.tensor], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw, "label": s.label,
            "beat": s.beat, "beats": s.beats}


def _label_task(name: str) -> str:
    from ..vitis.cpp import label
    return label(name, 40)
