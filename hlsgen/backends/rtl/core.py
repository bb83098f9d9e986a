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
from typing import Dict, List

from ...ir.graph import Graph
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


def build_core(graph: Graph, sched: Schedule, device, outdir: Path) -> Dict:
    """Write the core's memory images into outdir; return the top's template context."""
    kb = _AllStored(graph, _onchip(sched), device)
    st = kb._sequential(_Stage(), list(range(len(graph.tasks))))
    # operand ids -> base addresses in one memory
    base: Dict[int, int] = {}
    layout: List[Dict] = []
    addr = 0
    for o in st["operands"]:
        base[o["id"]] = addr
        layout.append({"tensor": o["store"].tensor, "base": addr, "size": o["store"].size, "kind": o["store"].kind})
        addr += o["store"].size
    image = [0] * addr
    for c in st["consts"]:
        base[c["id"]] = len(image)
        image += c["values"]
    words = []
    for w in st["program"]:
        f = list(w["f"])
        f[1] = base[f[1]]
        if f[0] == KIND_WINDOW or f[0] in (KIND_MOVE, KIND_SCATTER):
            f[3] = base[f[3]]
        elif f[0] == KIND_ELTWISE:
            for t in range(f[3]):
                k = 6 + MAX_RANK + t * (2 + MAX_RANK)
                f[k] = base[f[k]]
        words += f
    sb = st["sb"]
    pw = st["width"]
    rq = st["rq"]
    outdir.mkdir(parents=True, exist_ok=True)
    files = {
        "PROGRAM": write_mem(outdir / "program.mem", words, 32),
        "MEM_INIT": write_mem(outdir / "mem.mem", image, sb),
        "WROM": write_mem(outdir / "wrom.mem", st["wrom"], st["wbits"]),
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
    by_tensor = {ly["tensor"]: ly for ly in layout}
    ports_in = [{"base": by_tensor[s.tensor]["base"], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw,
                 "label": s.label} for s in (kb.stores[n] for n in graph.inputs)]
    ports_out = [{"base": by_tensor[s.tensor]["base"], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw,
                  "label": s.label} for s in (kb.stores[n] for n in graph.outputs)]
    params = {"NT": len(st["program"]), "NF": st["nf"], "MEM_WORDS": max(1, len(image)), "SB": sb,
              "WROM_WORDS": len(st["wrom"]), "WB": st["wbits"], "RQ_ROWS": rq["size"], "PW": pw}
    # the core's own cycle count: one per fetch, one per tap and one per output of a window
    # word, one per element otherwise; plus the stream transfers and control around it
    core = 0
    for w in st["program"]:
        f = w["f"]
        core += 1
        if f[0] == KIND_WINDOW:
            outs = f[9] * f[13] * f[17] * f[18]
            core += outs * (f[14] * f[15] * f[16] + 1)
        else:
            d0 = 6 if f[0] == KIND_ELTWISE else 4
            n = 1
            for v in f[d0:d0 + MAX_RANK]:
                n *= v
            core += n
    io = sum(p["size"] for p in ports_in) + sum(p["size"] for p in ports_out)
    return {"params": params, "files": {k: f"../rtl/{p.name}" for k, p in files.items()}, "inputs": ports_in,
            "outputs": ports_out, "layout": layout, "words": len(st["program"]), "core_cycles": core + io + 6}
