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
    """hlsgen_core's cycles for one word: one fetch, its steps, then its drain."""
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


def build_core(graph: Graph, sched: Schedule, device, outdir: Path) -> Dict:
    """Write the core's memory images into outdir; return the top's template context."""
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
    # operand ids -> base addresses in one memory
    base: Dict[int, int] = {}
    by_name: Dict[str, int] = {}
    layout: List[Dict] = []
    addr = 0
    for o in st["operands"]:
        name = o["store"].tensor
        if name in alias:
            continue
        base[o["id"]] = by_name[name] = addr
        layout.append({"tensor": name, "base": addr, "size": o["store"].size, "kind": o["store"].kind})
        addr += o["store"].size
    for o in st["operands"]:
        name = o["store"].tensor
        if name in alias:
            base[o["id"]] = by_name[name] = by_name[alias[name]]
            layout.append({"tensor": name, "base": by_name[name], "size": o["store"].size, "kind": "alias"})
    image = [0] * addr
    for c in st["consts"]:
        base[c["id"]] = len(image)
        image += c["values"]
    words, taps = [], []
    lanes = {"MV": 1, "MP": 1, "MS": 1, "ML": 1}
    last_word = {w["task"]: k for k, w in enumerate(program)}
    per_task: Dict[str, int] = {}
    for k, w in enumerate(program):
        t = tasks[w["task"]]
        plan = plans[t.name]
        vec, pe, simd = _lanes(t, graph, plan.folding)
        lat = depth_of(OPS[t.op].loops(t, graph), plan.folding) if last_word[t.name] == k else 0
        f = list(w["f"])
        tap_off = len(taps)
        if f[0] == KIND_WINDOW:
            taps += _taps(f)
            lanes.update(MV=max(lanes["MV"], vec), MP=max(lanes["MP"], pe), MS=max(lanes["MS"], simd))
        else:
            vec, pe, simd = 1, vec * pe, 1
            lanes["ML"] = max(lanes["ML"], pe)
        per_task[t.name] = per_task.get(t.name, 0) + word_cycles(f, vec, pe, simd, lat)
        f[1] = base[f[1]]
        if f[0] == KIND_WINDOW or f[0] in (KIND_MOVE, KIND_SCATTER):
            f[3] = base[f[3]]
        elif f[0] == KIND_ELTWISE:
            for t_ in range(f[3]):
                j = 6 + MAX_RANK + t_ * (2 + MAX_RANK)
                f[j] = base[f[j]]
        words += f + [vec, pe, simd, lat, tap_off]
    sb = st["sb"]
    pw = st["width"]
    rq = st["rq"]
    outdir.mkdir(parents=True, exist_ok=True)
    files = {
        "PROGRAM": write_mem(outdir / "program.mem", words or [0], 32),
        "MEM_INIT": write_mem(outdir / "mem.mem", image, sb),
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
    if st["nterms"] > 2:
        raise ValueError("hlsgen_core takes at most two elementwise terms")
    ports_in = [{"base": by_name[s.tensor], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw,
                 "label": s.label} for s in (kb.stores[n] for n in graph.inputs)]
    ports_out = [{"base": by_name[s.tensor], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw,
                  "label": s.label} for s in (kb.stores[n] for n in graph.outputs)]
    params = {"NT": len(program), "NF": st["nf"] + 5, "MEM_WORDS": max(1, len(image)), "SB": sb,
              "WROM_WORDS": len(st["wrom"]), "WB": st["wbits"], "TAP_WORDS": max(1, len(taps)), "RQ_ROWS": rq["size"],
              "PW": pw, **lanes}
    # the core's own cycle count: its words, plus the stream transfers and control around it
    io = sum(p["size"] for p in ports_in) + sum(p["size"] for p in ports_out)
    return {"params": params, "files": {k: f"../rtl/{p.name}" for k, p in files.items()}, "inputs": ports_in,
            "outputs": ports_out, "layout": layout, "words": len(program), "task_cycles": per_task,
            "core_cycles": sum(per_task.values()) + io + 6}
