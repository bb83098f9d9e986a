"""The kernel's structure, decided from the Schedule: where every tensor lives, how each stage
runs, and every number the templates print (templates/hls/kernel.cpp.j2 only renders).

The top function `hlsgen_kernel` runs the schedule's stages one after another:

- graph inputs arrive on AXI4-Stream ports and are buffered on chip; graph outputs leave on
  AXI4-Stream ports. Every other tensor stored between tasks is a scratchpad array (BRAM or
  URAM, as the schedule placed it) or, when the schedule spills it, a region of off-chip
  memory behind its own `m_axi` port (bundles spread over the device's memory channels).
- a dataflow stage is a `#pragma HLS DATAFLOW` region: loaders stream stored tensors in,
  one process per task (its folded loop nest from tasks.cpp.j2) and storers stream results
  out, all connected by `hls::stream` FIFOs.
- a sequential stage is one reconfigurable compute core (InTAR): a controller pushes one
  configuration word per task (operation class, loop bounds, operand sources, result sink,
  table offsets) into a FIFO; the core pops them and muxes its datapath accordingly. Its
  datapaths: a window/MAC engine (conv, linear, pooling), an elementwise requantizer
  (requant, add, clip) and a data mover (layout ops).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from ...errors import HlsgenError
from ...ir.graph import Graph
from ...ir.types import container_bits
from ...schedule.schedule import Schedule
from ...schedule.scheduler import WINDOW_OPS
from .cpp import c_int_type, int_literal, requant_width
from .cpp import label as _label
from ...ops.base import zero_point as _zp
from .tasks import _layout, _strides, ctype, graph_task_contexts, per_channel

MAX_RANK = 6
# configuration word layout of the sequential core (one int32 field each)
KIND_WINDOW, KIND_ELTWISE, KIND_MOVE, KIND_SCATTER = 0, 1, 2, 3
WINDOW_FIELDS = ("KIND", "DST", "RQ", "SRC", "ZP", "WSRC", "WOFF", "MAX", "INIT", "N", "C", "H", "W", "O", "CG", "KH", "KW",
                 "OH", "OW", "SH", "SW", "DH", "DW", "PT", "PL", "OG")


def _word_fields(rank: int = MAX_RANK) -> Dict[str, int]:
    """Field offsets of every word kind: the one table the words are built from (here and in
    backends/rtl/core.py) and read by (kernel.cpp.j2, and hlsgen_word_pkg.sv for the RTL core).
      window:  the WINDOW_FIELDS
      eltwise: KIND DST RQ NT INNER CHANS dims[rank] then NT terms of (SRC ZP strides[rank])
      move:    KIND DST - SRC dims[rank] mul[rank] div[rank] add[rank] stride[rank]
      scatter: KIND DST - SRC dims[rank] offset[rank] out_strides[rank]"""
    f = {f"W_{n}": k for k, n in enumerate(WINDOW_FIELDS)}
    f.update(KIND=0, DST=1, RQ=2, SRC=3,
             E_NT=3, E_INNER=4, E_CHANS=5, E_DIMS=6, E_TERMS=6 + rank, E_TERM=2 + rank, E_ZP=1, E_STRIDES=2,
             M_DIMS=4, M_MUL=4 + rank, M_DIV=4 + 2 * rank, M_ADD=4 + 3 * rank, M_STRIDE=4 + 4 * rank,
             S_OFFSET=4 + rank, S_OSTRIDE=4 + 2 * rank)
    return f


WORD = _word_fields()
WEIGHT_ALIGN = 4096             # bytes: each task's off-chip weights start on a 4 KiB boundary


@dataclass
class Store:
    """A tensor stored between tasks (not a FIFO)."""
    tensor: str
    var: str              # C++ identifier
    kind: str             # "input" | "output" | "scratchpad" | "offchip"
    ctype: str
    size: int
    bits: int
    signed: bool
    cw: int               # container width (streams, memory, files)
    impl: str = ""        # bram | uram | lutram for scratchpads
    bundle: str = ""      # m_axi bundle for off-chip tensors
    label: str = ""       # a printable, sanitized form of the ONNX name
    beat: int = 1         # graph inputs and outputs: elements per AXI4-Stream beat
    io: str = ""          # "input" / "output": the graph's, in off-chip memory (var is in<k> / out<k>,
                          # the pointer argument and the stem of its data file)
    port: str = ""        # a graph input or output: in<k> / out<k> by its place in the graph, the name
                          # of its AXI4-Stream port or pointer, its movers and its data file

    @property
    def beats(self) -> int:
        return -(-self.size // self.beat)

    @property
    def tw(self) -> int:
        """TDATA width of a graph input or output stream."""
        return self.cw * self.beat

    def param(self) -> str:
        if self.kind == "offchip":
            return f"ap_int<{self.cw}> *{self.var}"
        return f"{self.ctype} {self.var}[{self.size}]"

    def load(self, idx: str) -> str:
        """Read element idx as the tensor's own type."""
        if self.kind == "offchip":
            return f"{self.ctype}({self.var}[{idx}])"
        return f"{self.var}[{idx}]"

    def store(self, idx: str, value: str) -> str:
        if self.kind == "offchip":
            return f"{self.var}[{idx}] = ap_int<{self.cw}>({self.ctype}({value}));"
        return f"{self.var}[{idx}] = {self.ctype}({value});"


def _impl(res) -> str:
    if res.uram:
        return "uram"
    if res.bram18:
        return "bram"
    return "lutram"


class KernelBuilder:
    def __init__(self, graph: Graph, sched: Schedule, device):
        self.g, self.s, self.dev = graph, sched, device
        plans = {t.name: t for st in sched.stages for t in st.tasks}
        self.task_index = {t.name: k for k, t in enumerate(graph.tasks)}
        if set(plans) != set(self.task_index):
            raise HlsgenError("the schedule does not cover the model's tasks; schedule and build the same model")
        self.plans = plans
        self.ctxs = graph_task_contexts(graph, plans)
        self.prod = {o: k for k, t in enumerate(graph.tasks) for o in t.outputs}
        self.consumers: Dict[str, List[Tuple[int, int]]] = {}
        for k, t in enumerate(graph.tasks):
            for j, n in enumerate(self._acts(t)):
                self.consumers.setdefault(n, []).append((k, j))
        self._weights()
        self._stores()

    # ------------------------------------------------------------------ tensors
    def _acts(self, task) -> List[str]:
        return [n for n in task.inputs if not self.g.tensors[n].is_const]

    def _stores(self):
        g = self.g
        kind: Dict[str, str] = {}
        impl: Dict[str, str] = {}
        for st in self.s.stages:
            for b in st.buffers:
                if b.kind != "fifo":
                    kind[b.tensor] = b.kind
                    impl[b.tensor] = _impl(b.resources)
        # the graph's inputs and outputs: AXI4-Stream ports into on-chip arrays, or (the schedule's
        # io_offchip_tensors: all inputs, all outputs or both) host buffers like the spills,
        # pointer arguments named in<k> / out<k>
        io_name, io_role = {}, {}
        off = set(self.s.io_offchip_tensors)
        for k, n in enumerate(g.inputs):
            kind[n] = "offchip" if n in off else "input"
            io_name[n], io_role[n] = f"in{k}", "input"
        for k, n in enumerate(g.outputs):
            kind[n] = "offchip" if n in off else "output"
            io_name.setdefault(n, f"out{k}")
            io_role.setdefault(n, "output")
        self.stores: Dict[str, Store] = {}
        channels = max(1, min(self.dev.main_memory.channels, 32))
        used = set()
        n_off = 0
        for n in list(g.inputs) + [o for t in g.tasks for o in t.outputs]:
            if n not in kind or n in self.stores:
                continue
            t = g.tensors[n]
            base = {"input": "xin", "output": "yout", "scratchpad": "spad", "offchip": "spill"}[kind[n]]
            k = sum(1 for s in self.stores.values() if s.kind == kind[n] and not s.io)
            var = io_name[n] if kind[n] == "offchip" and n in io_name else f"{base}{k}"
            assert var not in used
            used.add(var)
            bundle = ""
            if kind[n] == "offchip":
                bundle = f"gmem{n_off % channels}"
                n_off += 1
            cw = container_bits(t.dtype.bits)
            # a graph input or output streams port_bits per beat (the cost model's port width)
            beat = max(1, self.s.port_bits // cw) if kind[n] in ("input", "output") else 1
            self.stores[n] = Store(n, var, kind[n], ctype(t.dtype), t.size, t.dtype.bits, t.dtype.signed, cw,
                                   impl.get(n, ""), bundle, _label(n), beat,
                                   io_role[n] if kind[n] == "offchip" and n in io_role else "", io_name.get(n, ""))

    def _weights(self):
        """Off-chip weights: one memory image (data/weights.bin), each task's array at an offset
        aligned to WEIGHT_ALIGN bytes, so that its bursts start on a 4 KiB boundary (an AXI4 burst
        may not cross one) and the RTL's m_axi channels can read it in whole beats."""
        self.woff: Dict[str, int] = {}
        arrays = [(t.name, c["weight"]["values"]) for t, c in zip(self.g.tasks, self.ctxs)
                  if c.get("weight") is not None and c["weight"]["param"]]
        lo = min((min(v) for _, v in arrays if v), default=0)
        hi = max((max(v) for _, v in arrays if v), default=0)
        self.wcw = next(cw for cw in (8, 16, 32, 64) if -(1 << (cw - 1)) <= lo and hi < (1 << (cw - 1)))
        align = WEIGHT_ALIGN * 8 // self.wcw
        image: List[int] = []
        for name, values in arrays:
            image += [0] * (-len(image) % align)
            self.woff[name] = len(image)
            image += values
        self.weight_image = np.asarray(image, dtype=np.int64)

    # ------------------------------------------------------------------ stages
    def context(self) -> Dict:
        stages = []
        for st in self.s.stages:
            ks = [self.task_index[p.name] for p in st.tasks]
            if st.mode == "dataflow":
                stages.append(self._dataflow(st, ks))
            else:
                stages.append(self._sequential(st, ks))
        # the AXI4-Stream ports, in graph order (each named by its place among all the graph's
        # inputs or outputs, its `port`, whether the others are on or off chip)
        ins = [self.stores[n] for n in self.g.inputs if self.stores[n].kind == "input"]
        outs = [self.stores[n] for n in self.g.outputs if self.stores[n].kind == "output"]
        spills = [s for s in self.stores.values() if s.kind == "offchip"]
        spads = [s for s in self.stores.values() if s.kind == "scratchpad"]
        bundles = sorted({s.bundle for s in spills} | ({"gmem0"} if self.woff else set()), key=lambda b: int(b[4:]))
        io_in = [self.stores[n] for n in self.g.inputs if self.stores[n].io]
        io_out = [self.stores[n] for n in self.g.outputs if self.stores[n].io]
        return {"stages": stages, "inputs": ins, "outputs": outs, "spills": spills, "spads": spads,
                "io_inputs": io_in, "io_outputs": io_out,
                "weights_offchip": bool(self.woff), "wcw": self.wcw, "weight_words": int(self.weight_image.size),
                "bundles": bundles, "model": _label(self.g.name)}

    def _task_ports(self, k: int) -> List[str]:
        t = self.g.tasks[k]
        return [self.stores[n].var for n in self._acts(t) + list(t.outputs) if n in self.stores]

    def _dataflow(self, st, ks: List[int]) -> Dict:
        g = self.g
        inside = set(ks)
        fifo_depth = {b.tensor: b.depth for b in st.buffers if b.kind == "fifo"}
        streams = []          # {name, ctype, depth, why}
        # every (consumer task, input slot) gets its own stream; producers and loaders fan out
        src_of: Dict[Tuple[int, int], str] = {}
        fan: Dict[str, List[str]] = {}           # tensor -> its streams, in order
        for k in ks:
            for j, n in enumerate(self._acts(g.tasks[k])):
                s = f"s{k}_{j}"
                src_of[(k, j)] = s
                fan.setdefault(n, []).append(s)
        stored_out = []
        for k in ks:
            for o in g.tasks[k].outputs:
                if o in self.stores:
                    s = f"st_{self.stores[o].var}"
                    fan.setdefault(o, []).append(s)
                    stored_out.append((o, s))
        loaders, storers = [], []
        for n, ss in fan.items():
            t = g.tensors[n]
            produced_here = self.prod.get(n, -1) in inside
            # a process here reads or writes a whole tensor before moving on, so a stream
            # that shares its producer with another must hold the whole tensor (else the
            # producer could block on it while the other consumer waits): no deadlock
            whole = len(ss) > 1
            for s in ss:
                sched_d = max(2, int(fifo_depth.get(n, 2)))
                d = max(sched_d, t.size) if whole else sched_d
                streams.append({"name": s, "ctype": ctype(t.dtype), "depth": d, "scheduled": sched_d,
                                "label": _label(n), "whole": whole and d > sched_d})
            if not produced_here:
                st_ = self.stores[n]
                loaders.append({"fn": f"load_{st_.var}", "store": st_, "streams": ss, "size": t.size,
                                "ctype": ctype(t.dtype)})
        for o, s in stored_out:
            st_ = self.stores[o]
            storers.append({"fn": f"store_{st_.var}", "store": st_, "stream": s, "size": st_.size})
        procs = []
        for k in ks:
            t, c = g.tasks[k], self.ctxs[k]
            outs = []
            for o in t.outputs:
                outs.append({"ctype": ctype(g.tensors[o].dtype), "size": g.tensors[o].size, "streams": fan.get(o, [])})
            procs.append({"task": c, "inputs": [src_of[(k, j)] for j in range(len(self._acts(t)))],
                          "in_specs": [i for i in c["inputs"] if i.get("const") is None], "outputs": outs,
                          "woff": self.woff.get(t.name)})
        ext = {x["store"].var: x["store"] for x in loaders + storers}
        ext = [ext[v] for v in sorted(ext)]
        return {"mode": "dataflow", "index": st.index, "fn": f"stage{st.index}", "streams": streams,
                "loaders": loaders, "storers": storers, "procs": procs, "params": ext,
                "weights": any(p["woff"] is not None for p in procs), "tasks": [self.g.tasks[k].name for k in ks]}

    def _sequential(self, st, ks: List[int]) -> Dict:
        g = self.g
        ops: List[Store] = []
        consts = []
        opid: Dict[str, int] = {}

        def operand(n: str) -> int:
            if n not in opid:
                opid[n] = len(ops) + len(consts)
                if g.tensors[n].is_const:
                    t = g.tensors[n]
                    consts.append({"id": opid[n], "var": f"c{st.index}_{len(consts)}", "ctype": ctype(t.dtype),
                                   "plain": c_int_type(t.data),
                                   "values": [int(v) for v in np.asarray(t.data).reshape(-1)], "size": t.size})
                else:
                    ops.append(self.stores[n])
            return opid[n]

        program: List[Dict] = []
        rq_rows: List[Dict] = []       # one row per channel entry: m (per term), bias, shift, lo, hi, zp, rounding
        rq_spans: Dict[str, Tuple[int, int]] = {}    # per task, its rows [lo, hi) (the RTL's cores keep their own)
        wrom: List[int] = []
        nterms = 1
        pe = 1
        for k in ks:
            t, c = g.tasks[k], self.ctxs[k]
            acts = self._acts(t)
            rq = t.attrs.get("requant")
            rq_off = len(rq_rows)
            if rq is not None:
                rq_rows += _rq_rows(rq, c["rq"]["channels"])
            if t.op in WINDOW_OPS:
                if t.op in ("conv", "linear"):
                    cv = c["conv"]
                    if t.name in self.woff:
                        w_src, w_off = 1, self.woff[t.name]
                    else:
                        w_src, w_off = 0, len(wrom)
                        wrom += c["weight"]["values"]
                    init = 0
                    pe = max(pe, cv["PE"])
                else:
                    p = c["pool"]
                    cv = dict(N=p["N"], C=p["C"], H=p["H"], W=p["W"], O=p["C"], CG=1, KH=p["KH"], KW=p["KW"], OH=p["OH"],
                              OW=p["OW"], SH=p["SH"], SW=p["SW"], DH=p["DH"], DW=p["DW"], PT=p["PT"], PL=p["PL"], OG=1)
                    w_src, w_off, init = -1, 0, (p["min"] if t.op == "maxpool" else 0)
                vals = dict(cv, KIND=KIND_WINDOW, DST=operand(t.outputs[0]), RQ=rq_off, SRC=operand(acts[0]),
                            ZP=c["inputs"][0]["zp"], WSRC=w_src, WOFF=w_off, MAX=1 if t.op == "maxpool" else 0, INIT=init)
                f = [vals[key] for key in WINDOW_FIELDS]
                program.append({"task": t.name, "op": t.op, "f": f})
            elif t.op in ("requant", "add", "clip"):
                out_shape = list(g.tensors[t.outputs[0]].shape)
                if len(out_shape) > MAX_RANK:
                    raise HlsgenError(f"task {t.name!r}: rank {len(out_shape)} exceeds the core's {MAX_RANK}")
                dims = [1] * (MAX_RANK - len(out_shape)) + out_shape
                terms = []
                if t.op == "add":
                    for n, strides in zip(t.inputs, c["add"]["terms"]):
                        terms.append((operand(n), _zp(g, n), [0] * (MAX_RANK - len(strides)) + list(strides)))
                    inner, chans = c["rq"]["inner"], c["rq"]["channels"]
                else:
                    st_ = [0] * (MAX_RANK - len(out_shape)) + _strides(out_shape)
                    terms.append((operand(acts[0]), _zp(g, acts[0]) if t.op == "requant" else 0, st_))
                    if t.op == "clip":
                        rq_rows.append({"m": [1], "bias": 0, "shift": 0, "lo": int(t.attrs["lo"]), "hi": int(t.attrs["hi"]),
                                        "zp": 0, "round": "FLOOR"})
                        inner, chans = 1, 1
                    else:
                        inner, chans = c["rq"]["inner"], c["rq"]["channels"]
                nterms = max(nterms, len(terms))
                f = [KIND_ELTWISE, operand(t.outputs[0]), rq_off, len(terms), inner, chans] + dims
                for src, zp, strides in terms:
                    f += [src, zp] + strides
                program.append({"task": t.name, "op": t.op, "f": f, "terms": len(terms)})
            else:
                for e in _layout(t, g):
                    program.append({"task": t.name, "op": t.op, "f": self._move(e, t, operand, acts)})
            rq_spans[t.name] = (rq_off, len(rq_rows))
        width = max([requant_width(g.tasks[k].attrs["requant"]) for k in ks if "requant" in g.tasks[k].attrs] + [34])
        # the core's operand width: every stored tensor and constant, signed
        sb = max([s.bits for s in ops] + [g.tensors[n].dtype.bits for n in opid if g.tensors[n].is_const]) + 1
        nf_elt = WORD["E_TERMS"] + nterms * WORD["E_TERM"]
        nf = max([len(p["f"]) for p in program] + [nf_elt])
        for p in program:
            p["f"] = p["f"] + [0] * (nf - len(p["f"]))
        wvals = wrom or [0]
        wbits = max(1, max(int(abs(v)).bit_length() for v in wvals) + 1)
        wplain = c_int_type(wvals)
        uses_woff = any(p["f"][WORD["KIND"]] == KIND_WINDOW and p["f"][WORD["W_WSRC"]] == 1 for p in program)
        return {"mode": "sequential", "index": st.index, "fn": f"stage{st.index}", "program": program, "nf": nf,
                "operands": [{"id": opid[s.tensor], "store": s} for s in ops], "consts": consts,
                "params": sorted(ops, key=lambda s: s.var), "weights": uses_woff,
                "rq": _rq_table(rq_rows, width, nterms), "rq_spans": rq_spans, "width": width, "sb": sb, "nterms": nterms, "pe": pe,
                "wrom": wvals, "wbits": wbits, "wplain": wplain, "tasks": [g.tasks[k].name for k in ks],
                "kinds": sorted({p["f"][0] for p in program})}

    def _move(self, e: Dict, t, operand, acts) -> List[int]:
        src = operand(acts[e["in"]])
        dst = operand(t.outputs[e["out"]])
        pad = lambda v, fill: [fill] * (MAX_RANK - len(v)) + list(v)   # noqa: E731
        if e["kind"] == "flat":
            return [KIND_MOVE, dst, 0, src] + pad([e["size"]], 1) + pad([1], 1) + pad([1], 1) + pad([0], 0) + pad([1], 0)
        if e["kind"] == "shuffle":
            # dims (N, C/G, G, INNER/W, W): a 4-D tensor's rows and columns as dims of their own, so
            # that the row an element is in is a sum of its coordinates (the RTL's row checks)
            n, c, gr, inner, w = e["N"], e["C"], e["G"], e["INNER"], e["W"]
            dims = [n, c // gr, gr, inner // w, w]
            stride = [c * inner, inner, (c // gr) * inner, w, 1]
            return [KIND_MOVE, dst, 0, src] + pad(dims, 1) + pad([1] * 5, 1) + pad([1] * 5, 1) + pad([0] * 5, 0) + pad(stride, 0)
        if e["kind"] == "scatter":
            if len(e["dims"]) > MAX_RANK:
                raise HlsgenError(f"task {t.name!r}: rank {len(e['dims'])} exceeds the core's {MAX_RANK}")
            return [KIND_SCATTER, dst, 0, src] + pad(e["dims"], 1) + pad(e["offset"], 0) + pad(e["out_strides"], 0)
        rank = len(e["dims"])
        if rank > MAX_RANK:
            raise HlsgenError(f"task {t.name!r}: rank {rank} exceeds the core's {MAX_RANK}")
        mul, div, add, stride = [1] * rank, [1] * rank, [0] * rank, [0] * rank
        for d, o in enumerate(e["src"]):
            mul[o], div[o], add[o], stride[o] = e["mul"][d], e["div"][d], e["add"][d], e["in_strides"][d]
        return [KIND_MOVE, dst, 0, src] + pad(e["dims"], 1) + pad(mul, 1) + pad(div, 1) + pad(add, 0) + pad(stride, 0)


def _rq_rows(rq, channels: int) -> List[Dict]:
    mults = [per_channel(m, channels) for m in rq.multipliers]
    bias, shift = per_channel(rq.bias, channels), per_channel(rq.shift, channels)
    lo, hi = per_channel(rq.lo, channels), per_channel(rq.hi, channels)
    rnd = "HALF_EVEN" if rq.rounding == "half_even" else "FLOOR"
    return [{"m": [m[c] for m in mults], "bias": bias[c], "shift": shift[c], "lo": lo[c], "hi": hi[c],
             "zp": int(rq.zero_point), "round": rnd} for c in range(channels)]


def _rq_table(rows: List[Dict], width: int, nterms: int) -> Dict:
    rows = rows or [{"m": [0], "bias": 0, "shift": 0, "lo": 0, "hi": 0, "zp": 0, "round": "FLOOR"}]
    return {"size": len(rows),
            "m": [[(r["m"][t] if t < len(r["m"]) else 0) for r in rows] for t in range(nterms)],
            "bias": [int_literal(r["bias"], width) for r in rows], "bias_values": [int(r["bias"]) for r in rows],
            "shift": [r["shift"] for r in rows],
            "lo": [r["lo"] for r in rows], "hi": [r["hi"] for r in rows], "zp": [r["zp"] for r in rows],
            "round": [r["round"] for r in rows]}
