"""The RTL realization of a schedule on hlsgen_core (docs/rtl.md): every task becomes
configuration words (the HLS core's words, with operand ids replaced by addresses in one
activation memory, extended by the task's folding, drain, iteration order and row counters).
A sequential stage is one core running its tasks' words in order; a dataflow stage is one core
per task, all started together and synchronized by row counters. The top
(templates/rtl/top.sv.j2) holds the memory and the counters, moves the graph's inputs in and
outputs out on AXI4-Stream ports of the schedule's port width, and has Vitis's AXI4-Lite
control port (hlsgen_axilite_ctrl.sv)."""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from ...ir.graph import Graph
from ...ops import OPS
from ...schedule.cost import (Folding, Resources, beat_lanes, core_dsp, depth_of, evaluate, packing,
                              port_bytes_per_cycle)
from ...schedule.scheduler import MEMORY_LATENCY_CYCLES
from ...schedule.schedule import Schedule
from ...ir.types import container_bits
from ..vitis.cpp import label
from ..vitis.kernel import KIND_ELTWISE, KIND_MOVE, KIND_SCATTER, KIND_WINDOW, MAX_RANK, WORD, KernelBuilder, Store
from ..vitis.tasks import ctype
from . import banking, offchip
from .act_mem import address_bits
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


TAP_BITS = 80
RQ_ROW_BITS = 6 * 32 + 7 + 1             # a requantization row beside its bias (PW bits): M0, M1, LO, HI, ZP, shift, half-even


# A whole hlsgen_core as Yosys synth_xilinx maps it (LUT sites, distributed RAM at its sites): a
# fit on the cores of benchmarks/core_points.json (`benchmarks/core_fit.py` refits it and prints
# each core's error; `make synth-yosys SCOPE=core` synthesizes a project's). The cost model
# prices a core's datapath only (hlsgen.schedule.cost.evaluate, `datapath`); around it the
# control keeps per read lane its tap, bounds, address and row checks in CB bits (`read_bits`).
# A core of one word keeps its fields as constants, which synthesis folds into the control; a
# core of several words reads them from its program, NF fields of CB bits (`word_fields`).
# Streamed weights are a table that the m_axi channel writes a beat at a time, one copy per PE
# lane, which reads two rows of it (hlsgen_core.sv): Yosys builds each copy in LUT RAM
# (`weight_lutram`, its sites by `weight_table_sites`) and registers what a lane reads
# (`weight_read_bits`). Per write lane, per element lane, per table bit (program, taps,
# requantization rows, on-chip weights as a ROM), the multiplexers that shift a lane's weights
# out of its rows and a constant were tried too and took no weight in the fit (docs/rtl.md,
# "The whole cores priced as synthesized" and stop 45's section). Every lane (VEC x PE x SIMD,
# read or not) keeps its own address and row and padding checks in CB bits (`lane_bits`, stop
# 53: with the steered capped cores among the points, each design left out priced within
# -36%..+38% with it, -58%..+84% without). Every task of a core's program costs CB bits more
# (`task_bits`, stop 54: the capped demo_cnn's core of 9 tasks built at 4, 12 and 32 lanes was
# priced -30%, -20%, +3% without it; a design left out with its other widths, -27%..+36% with it,
# -34%..+41% without; per counter, per requantization row, per tap word, per lane and task and a
# constant were tried and not kept).
CORE_FIT = {"datapath": 1.51, "read_bits": 0.37, "weight_lutram": 1.07, "word_fields": 0.35, "lane_bits": 2.17,
            "task_bits": 15.67}
CORE_FF_FIT = {"datapath_ff": 0.91, "write_bits": 5.3, "weight_read_bits": 1.13, "lane_bits": 0.48}
# how far CORE_FIT prices a design left out of it (`benchmarks/core_fit.py`, stop 54), as the
# build's notes quote it where a design near the edge of the device may not fit as synthesized
CORE_FIT_LEFT_OUT = "-27% to +36%"
# A core whose one-group words read through PE lane 0's ports (SSH, stop 49) picks each other PE
# lane's word from its own port or lane 0's: MV x (MP - 1) x MS lanes of SB bits
# (`shared_pick_bits`), at LUTs a bit MEASURED, not fitted: capped maxpool's sequential core
# (at 512-bit ports) synthesized with and without SSH, 7,685 against 7,018 LUT for 567 bits
# (docs/rtl.md, stop 49).
# Two cores of the fit's points have such a pick; core_fit.py fits CORE_FIT on the rest of
# each core's LUTs.
SHARED_PICK_LUT = 1.18


def weight_table_sites(rows: int, row_bits: int, second_bits: int) -> int:
    """LUT sites of one copy of a streamed weight table as Yosys maps it: rows of `row_bits`
    written whole slot by slot through one port, read through a port of all of a row and one of
    its next row's low `second_bits` (0: none). A RAM64M8 (8 sites) holds 64 rows of 7 bits of
    the reads, a RAM32M16 32 rows of 14: 64-row blocks, then the rest in either."""
    def cells(per: int) -> int:
        return -(-row_bits // per) + (-(-second_bits // per) if second_bits else 0)
    full, rest = divmod(rows, 64)
    return 8 * (full * cells(7) + (cells(14 if rest <= 32 else 7) if rest else 0))


def core_inputs(p: Dict, model: Dict) -> Dict[str, float]:
    """What CORE_FIT and CORE_FF_FIT price, from a core's parameters (design.json's
    synth.cores[].core_params: the design's and the core's own) and the cost model's datapath
    figures for it (`model`)."""
    cb = int(p["CB"])
    rows, wr, wb, mp, ms = int(p["WROM_ROWS"]), int(p["WR"]), int(p["WB"]), int(p["MP"]), int(p["MS"])
    streamed = bool(p["WST"])
    second = 0 if p["WAL"] else (ms - 1) * wb        # the bits of a lane's second row it can take
    # every lane (VEC x PE x SIMD) keeps its own addresses, row and padding checks in CB bits: the
    # capped demo_cnn's core of 16 PE lanes had 7,289 LUT where the fit without them priced 5,414
    # (stop 53)
    lanes = int(p["MV"]) * mp * ms
    return {"datapath": int(model["lut"]), "datapath_ff": int(model["ff"]), "read_bits": int(p["NR"]) * cb,
            "lane_bits": lanes * cb, "task_bits": int(p["NT"]) * cb,
            "write_bits": int(p["NW"]) * cb, "word_fields": int(p["NF"]) * cb if int(p["NT"]) > 1 else 0,
            "weight_lutram": mp * weight_table_sites(rows, wr * wb, second) if streamed else 0,
            "weight_read_bits": mp * (wr * wb + second) if streamed else 0,
            "shared_pick_bits": int(p["MV"]) * (mp - 1) * ms * int(p["SB"]) if int(p.get("SSH", 0)) else 0}


def shared_pick_lut(inputs: Dict[str, float]) -> float:
    """The LUTs of a core's shared-read pick (SHARED_PICK_LUT, measured), apart from CORE_FIT."""
    return SHARED_PICK_LUT * inputs["shared_pick_bits"]


def core_logic(inputs: Dict[str, float]) -> Dict[str, int]:
    """A whole core's LUTs and flip-flops as synthesis builds it (the fits)."""
    return {"lut": int(round(sum(CORE_FIT[k] * inputs[k] for k in CORE_FIT) + shared_pick_lut(inputs))),
            "ff": int(round(sum(CORE_FF_FIT[k] * inputs[k] for k in CORE_FF_FIT)))}


def _taps(f: List[int]) -> List[int]:
    """A window word's tap table: per reduction index r = (ci * KH + ky) * KW + kx, the tap's
    offset in the input, ci * H * W + ky * DH * W + kx * DW (32 bits), then its row offset
    ky * DH and column offset kx * DW (16 bits each; the core checks the padding with them)."""
    cg, kh, kw, dh, dw, h, w = (f[WORD[k]] for k in ("W_CG", "W_KH", "W_KW", "W_DH", "W_DW", "W_H", "W_W"))
    out = []
    for ci in range(cg):
        for ky in range(kh):
            for kx in range(kw):
                lin = (ci * h + ky * dh) * w + kx * dw
                if max(ky * dh, kx * dw) >= 1 << 15 or lin >= 1 << 31:
                    raise ValueError("hlsgen_core's tap table holds 16-bit row and column offsets")
                out.append((lin << 32) | ((ky * dh) << 16) | (kx * dw))
    return out


def _window_steps(f: List[int], vec: int, pe: int, wstr: int, wrs: int) -> Dict[str, List[int]]:
    """A window word's address steps (WIN, RTL_FIELDS): what hlsgen_core adds to its address
    counters when an output group advances, so that no address is a run-time product. wstr and
    wrs: the weights an output channel and a reduction step take in its core's weight ROM (RED
    and SIMD when they lie as in the HLS kernel's array; a whole number of rows, and a row, when
    they lie aligned: _aligned). Element words carry zeros."""
    g = {k: f[WORD[f"W_{k}"]] for k in ("C", "H", "W", "O", "CG", "KH", "KW", "OH", "OW", "SH", "SW", "PT", "PL", "OG")}
    ghw = g["CG"] * g["H"] * g["W"]
    ohw = g["OH"] * g["OW"]
    steps = [g["C"] * g["H"] * g["W"],                 # ICHW: the next image of the input
             ghw,                                      # GHW: the next channel group
             (pe // g["OG"]) * ghw, pe % g["OG"],      # GQ, GR: PE outputs on, in groups and the rest
             g["SH"] * g["W"], -g["PT"] * g["W"],      # SHW, YOFF0: the next output row, the first's
             vec * g["SW"],                            # VSW: the next VEC output columns
             pe * wstr,                                # PRED: the next PE outputs' weights
             ohw, pe * ohw, g["O"] * ohw,              # OHW, POHW, OCHW: output plane, PE planes, image
             g["CG"] * g["KH"] * g["KW"],              # RED: the reduction's length
             wstr, wrs]                                # WSTR, WRS: an output channel's weights, a step's
    return {"WIN": steps}


def _aligned(task, array: List[int], red: int, simd: int, wr: int) -> List[int]:
    """A window task's weights (output channel o's reduction index r at o * red + r, the HLS
    kernel's order) laid out for an aligned core: each reduction step's SIMD weights in a row of
    wr of their own (output channel o's step j at row o * ceil(red / simd) + j), zeros after."""
    if len(array) % red:
        raise ValueError(f"task {label(task.name, 40)}: {len(array)} weights are not whole output channels of "
                         f"{red}")
    out: List[int] = []
    for o in range(0, len(array), red):
        for j in range(0, red, simd):
            step = array[o + j:o + min(j + simd, red)]
            out += step + [0] * (wr - len(step))
    return out


def _element_step(f: List[int], order: List[int], lanes: int) -> List[int]:
    """An element word's ESTEP fields: the lanes (VEC x PE elements per cycle) as digits of the
    word's mixed radix (its dims, iterated in `order`, outer first), per dimension. hlsgen_core
    adds them to each lane's coordinates with one carry per digit, so that no coordinate is a
    run-time divide."""
    d0 = WORD["E_DIMS"] if f[WORD["KIND"]] == KIND_ELTWISE else WORD["M_DIMS"]
    step = [0] * MAX_RANK
    rest = lanes
    for d in reversed(order):
        dim = f[d0 + d]
        step[d] = rest % dim if dim > 0 else 0
        rest = rest // dim if dim > 0 else 0
    return step


def _element_dims(f: List[int]) -> Tuple[List[int], List[int]]:
    """An element word's six dims and their row-major strides."""
    d0 = WORD["E_DIMS"] if f[WORD["KIND"]] == KIND_ELTWISE else WORD["M_DIMS"]
    dims = [int(v) for v in f[d0:d0 + MAX_RANK]]
    return dims, [math.prod(dims[d + 1:]) for d in range(MAX_RANK)]


def _row_of(j, geometry):
    """The row of offset j in a source of geometry (C*H*W, H, W, ALL), as the top's counters
    count rows: (j / CHW) * H + (j / W) % H (numpy arrays too)."""
    chw, h, w = geometry[:3]
    return (j // chw) * h + (j // w) % h


# an element word's linear maps are checked on every element up to this many, on a sample beyond
LINEAR_CHECK = 1 << 22


def _element_linear(task: str, f: List[int], geometries: List[List[int]], pdiv: int, lanes: int) -> Dict[str, List[int]]:
    """What spares hlsgen_core an element word's divides: its element count (ELEMS); the lanes
    (VEC x PE) as whole rows of publication and the rest (PQ, PR: the published row count is a
    counter with one carry); and, for _element_maps (not word fields), per dimension the
    requantization row one step of it moves (QW: the row is RQ + sum co[d] * QW[d] instead of
    (lin / INNER) % CHANS) and per source the source row one step moves (RW: an element's row
    check is sum c[d] * RW[d] instead of (j / CHW) * H + (j / W) % H of its offset j). The sums
    are exact only where the word's dimensions do not straddle the tensor's (channel, row)
    digits, which holds for the words hlsgen builds: this checks it, on every element (a sample
    of 2^22 and the corners beyond), and refuses the word otherwise. `geometries`: per source,
    its row geometry, or None where the core does not check rows."""
    kind = f[WORD["KIND"]]
    dims, rstride = _element_dims(f)
    elems = math.prod(dims)
    # coordinates to check: all, or a sample and the last element
    if elems <= LINEAR_CHECK:
        lin = np.arange(elems, dtype=np.int64)
    else:
        lin = np.unique(np.concatenate([np.random.default_rng(0).integers(0, elems, LINEAR_CHECK), [0, elems - 1]]))
    co = np.stack(np.unravel_index(lin, dims)).astype(np.int64) if elems else np.zeros((MAX_RANK, 0), np.int64)

    def refuse(what):
        raise ValueError(f"task {label(task, 40)}: hlsgen_core cannot compute its {what} as a sum of coordinates "
                         "times constants (its word's dimensions straddle the tensor's); please report this model")

    qw = [0] * MAX_RANK
    if kind == KIND_ELTWISE and f[WORD["E_CHANS"]] > 1:
        inner, chans = f[WORD["E_INNER"]], f[WORD["E_CHANS"]]
        qw = [(rstride[d] // inner) % chans for d in range(MAX_RANK)]
        if not np.array_equal((lin // inner) % chans, np.asarray(qw, np.int64) @ co):
            refuse("requantization rows")
    rw = []
    for t, geo in enumerate(geometries):
        if geo is None or t >= (f[WORD["E_NT"]] if kind == KIND_ELTWISE else 1):
            rw += [0] * MAX_RANK
            continue
        if kind == KIND_ELTWISE:
            unit = f[WORD["E_TERMS"] + t * WORD["E_TERM"] + WORD["E_STRIDES"]:][:MAX_RANK]
            src = co
        elif kind == KIND_MOVE:
            unit = f[WORD["M_STRIDE"]:WORD["M_STRIDE"] + MAX_RANK]
            mul, div, add = (np.asarray(f[WORD[k]:WORD[k] + MAX_RANK], np.int64)[:, None] for k in ("M_MUL", "M_DIV", "M_ADD"))
            src = co * mul // div + add
        else:
            unit, src = rstride, co
        unit = np.asarray(unit, np.int64)
        r = [int(_row_of(int(u), geo)) for u in unit]
        if not np.array_equal(_row_of(unit @ src, geo), np.asarray(r, np.int64) @ src):
            refuse(f"source {t}'s row checks")
        rw += r
    pq, pr = (lanes // pdiv, lanes % pdiv) if pdiv > 0 else (0, 0)
    return {"ELEMS": [elems], "PQ": [pq], "PR": [pr], "QW": qw, "RW": rw}


NMAP = 6      # an element word's linear maps: write address, read addresses 0 and 1, rows 0 and 1, rq row


def element_addresses(f: List[int]) -> List[Tuple[int, List[int]]]:
    """An element word's memory addresses as affine maps of its coordinates co (its six dims):
    (B, K) per map, the address B + sum co[d] * K[d], for its write and its reads of sources 0
    and 1 (a source it lacks: B = 0 and K = 0). hlsgen_core's lanes keep them as accumulators
    (_element_maps); the bank planner (banking.py) enumerates them."""
    kind = f[WORD["KIND"]]
    dims, rstride = _element_dims(f)
    zero = [0] * MAX_RANK
    col = lambda k: list(f[WORD[k]:WORD[k] + MAX_RANK])    # noqa: E731
    if kind == KIND_ELTWISE:
        nt = f[WORD["E_NT"]]
        term = lambda t: WORD["E_TERMS"] + t * WORD["E_TERM"]     # noqa: E731
        strides = [list(f[term(t) + WORD["E_STRIDES"]:][:MAX_RANK]) if t < nt else zero for t in range(2)]
        return [(f[WORD["DST"]], rstride), (f[term(0)], strides[0]), (f[term(1)] if nt > 1 else 0, strides[1])]
    if kind == KIND_MOVE:
        mul, add, stride = col("M_MUL"), col("M_ADD"), col("M_STRIDE")
        assert all(v == 1 for v in col("M_DIV")), "a move word with a divide (_split_divides splits them)"
        return [(f[WORD["DST"]], rstride),
                (f[WORD["SRC"]] + sum(a * s_ for a, s_ in zip(add, stride)), [m * s_ for m, s_ in zip(mul, stride)]),
                (0, zero)]
    off, ost = col("S_OFFSET"), col("S_OSTRIDE")
    return [(f[WORD["DST"]] + sum(o * s_ for o, s_ in zip(off, ost)), ost), (f[WORD["SRC"]], rstride), (0, zero)]


def _element_maps(f: List[int], order: List[int], lin: Dict[str, List[int]]) -> Dict[str, List[int]]:
    """An element word's address maps (MB, MONE, MSTEP, MADJ in RTL_FIELDS): the six values a
    lane needs per element, each B + sum co[d] * K[d] of its coordinates co (write address,
    read addresses of sources 0 and 1: element_addresses; the rows those reads wait for, the
    requantization row), as hlsgen_core keeps them: in per-lane accumulators, with no multiply.
    Lane l starts one step (MONE, plus the carries) after lane l - 1; each cycle every lane adds
    MSTEP (the ESTEP digits times K) and, for every digit that carries out, MADJ (the next outer
    digit's K less the digit's dim times its own K). `lin`: the word's ESTEP, and QW and RW
    (_element_linear)."""
    kind = f[WORD["KIND"]]
    dims, _ = _element_dims(f)
    zero = [0] * MAX_RANK
    rw0, rw1 = lin["RW"][:MAX_RANK], lin["RW"][MAX_RANK:]
    col = lambda k: list(f[WORD[k]:WORD[k] + MAX_RANK])    # noqa: E731
    rows = {KIND_ELTWISE: [(0, rw0), (0, rw1), (f[WORD["RQ"]], lin["QW"])],
            KIND_MOVE: [(sum(a * r for a, r in zip(col("M_ADD"), rw0)), [m * r for m, r in zip(col("M_MUL"), rw0)]),
                        (0, zero), (0, zero)]}.get(kind, [(0, rw0), (0, zero), (0, zero)])
    maps = element_addresses(f) + rows
    outer = {order[k]: (order[k - 1] if k > 0 else None) for k in range(MAX_RANK)}
    estep = lin["ESTEP"]
    mb, mone, mstep, madj = [], [], [], []
    for b, k in maps:
        mb.append(int(b))
        mone.append(int(k[order[-1]]))
        mstep.append(int(sum(e * kk for e, kk in zip(estep, k))))
        madj += [int((k[outer[d]] if outer[d] is not None else 0) - dims[d] * k[d]) for d in range(MAX_RANK)]
    return {"MB": mb, "MONE": mone, "MSTEP": mstep, "MADJ": madj}


WIN_FIELDS = ("ICHW", "GHW", "GQ", "GR", "SHW", "YOFF0", "VSW", "PRED", "OHW", "POHW", "OCHW", "RED", "WSTR",
              "WRS")


def word_cycles(f: List[int], vec: int, pe: int, simd: int, lat: int) -> int:
    """hlsgen_core's cycles for one word: one fetch (none for a core's first word), its steps,
    then its drain."""
    w = {k: f[WORD[f"W_{k}"]] for k in ("N", "O", "CG", "KH", "KW", "OH", "OW")}
    if f[WORD["KIND"]] == KIND_WINDOW:
        red = w["CG"] * w["KH"] * w["KW"]
        steps = w["N"] * w["OH"] * -(-w["OW"] // vec) * -(-w["O"] // pe) * -(-red // simd)
    else:
        d0 = WORD["E_DIMS"] if f[WORD["KIND"]] == KIND_ELTWISE else WORD["M_DIMS"]
        n = 1
        for v in f[d0:d0 + MAX_RANK]:
            n *= v
        steps = -(-n // (vec * pe))
    return 1 + steps + lat


# hlsgen_core: a step fires, and its outputs are written WRITE_DELAY cycles later (the read
# stage and hlsgen_core_dp's four); a task's rows are published, and its drain ends, PLAT cycles
# after its last step, so PLAT must be at least this. hlsgen_word_pkg passes it to the RTL.
WRITE_DELAY = 5
# the fields hlsgen_core adds after the HLS core's word (templates/rtl/hlsgen_core.sv), with their
# widths: the folding, the drain, the tap table offset, the element iteration order, the output's
# row counter (id, iterations per published row, rows), two sources (counter id, C*H*W, H, W, ALL),
# the publication delay, the off-chip waits (write-back at the task's end, streamed weights), the
# window words' address steps, and the element words' lane steps, element count, publication
# steps and address maps
RTL_FIELDS = (("VEC", 1), ("PE", 1), ("SIMD", 1), ("LAT", 1), ("TAP", 1), ("ORD", MAX_RANK), ("PID", 1), ("PDIV", 1),
              ("PTOT", 1), ("SRC0", 5), ("SRC1", 5), ("PLAT", 1), ("HOLD", 1), ("WWAIT", 1), ("WIN", len(WIN_FIELDS)),
              ("ESTEP", MAX_RANK), ("ELEMS", 1), ("PQ", 1), ("PR", 1), ("MB", NMAP), ("MONE", NMAP), ("MSTEP", NMAP),
              ("MADJ", NMAP * MAX_RANK))
SRC_FIELDS = ("ID", "CHW", "H", "W", "ALL")
NX = sum(w for _, w in RTL_FIELDS)


def _rtl_offsets() -> Dict[str, int]:
    out, k = {}, 0
    for name, width in RTL_FIELDS:
        out[name] = k
        k += width
    return out


X_FIELD = _rtl_offsets()


def word_package() -> str:
    """hlsgen_word_pkg.sv: the configuration word layout for hlsgen_core, from the same tables
    the words are built from (kernel.WORD, RTL_FIELDS)."""
    lines = ["// Generated by hlsgen from hlsgen/backends/vitis/kernel.py (WORD) and hlsgen/backends/rtl/core.py",
             "// (RTL_FIELDS): the configuration word layout hlsgen_core reads. Do not edit.",
             "package hlsgen_word_pkg;",
             "    // waiver: the layout names every field; the core reads some through others (dilations",
             "    // through the tap table, source 1 as SRC0 + S_WIDTH, the kind as F_KIND)",
             "    /* verilator lint_off UNUSEDPARAM */"]
    lines += [f"    localparam int F_{k} = {v};" for k, v in WORD.items()]
    lines += [f"    localparam int X_{k} = {v};      // from X = NF - NX" for k, v in X_FIELD.items()]
    lines += [f"    localparam int S_{k} = {i};" for i, k in enumerate(SRC_FIELDS)]
    lines += [f"    localparam int W_{k} = {i};      // from X + X_WIN" for i, k in enumerate(WIN_FIELDS)]
    lines += [f"    localparam int S_WIDTH = {len(SRC_FIELDS)};", f"    localparam int NX = {NX};",
              f"    localparam int NMAP = {NMAP};      // an element word's address maps (MB, MONE, MSTEP, MADJ)",
              f"    localparam int WRITE_DELAY = {WRITE_DELAY};      // a step fires, its writes land this many cycles later",
              "    /* verilator lint_on UNUSEDPARAM */", "endpackage", ""]
    return "\n".join(lines)


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


def _aliases(graph: Graph, program: List[Dict]):
    """A reshape is free in the model (the same elements, reinterpreted): its output becomes an
    alias of its input and it has no word. Returns (alias -> root, the remaining words)."""
    tasks = {t.name: t for t in graph.tasks}
    alias: Dict[str, str] = {}
    kept = []
    for w in program:
        t = tasks[w["task"]]
        if OPS[t.op].loops(t, graph).free:
            alias[t.outputs[0]] = alias.get(t.inputs[0], t.inputs[0])
        else:
            kept.append(w)
    return alias, kept


def _addresses(st: Dict, alias: Dict[str, str]):
    """Operand ids -> base addresses in one memory: stored tensors first (aliases share their
    root's), then the constants. Returns (base, tensor_of, by_name, layout, image)."""
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
            base[o["id"]] = by_name[name] = by_name[alias[name]]
            layout.append({"tensor": name, "base": by_name[name], "size": o["store"].size, "kind": "alias"})
    image = [0] * addr
    for c in st["consts"]:
        base[c["id"]] = len(image)
        image += c["values"]
    return base, tensor_of, by_name, layout, image


def _cores(graph: Graph, sched: Schedule):
    """One core per sequential stage, one per task of a dataflow stage (free tasks have none).
    Returns (core_of task, stage_of task, stages for the top, number of cores)."""
    tasks = {t.name: t for t in graph.tasks}
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
    return core_of, stage_of, stages, ncores


def _split_divides(task: str, f: List[int], order: List[int]) -> Tuple[List[int], List[int]]:
    """A move word whose coordinates divide (a nearest resize: co * MUL / DIV + ADD with DIV > 1)
    rewritten without divides: each such dim of size D becomes two, D / DIV quotients (the
    source coordinate, + ADD) and DIV remainders (which read nothing new: stride 0). The
    row-major index over the new dims is the old one, so writes and the iteration order (each
    dim's quotient then remainder where the dim was) are unchanged; dims of size 1 make room
    when there are more than MAX_RANK. Returns (word, order)."""
    at = {k: WORD[k] for k in ("M_DIMS", "M_MUL", "M_DIV", "M_ADD", "M_STRIDE")}
    cols = {k: list(f[v:v + MAX_RANK]) for k, v in at.items()}
    if all(v == 1 for v in cols["M_DIV"]):
        return f, order
    parts: Dict[int, List[Tuple[int, int, int, int]]] = {}     # old dim -> its new dims (size, mul, add, stride)
    for d in range(MAX_RANK):
        size, mul, div, add, stride = (cols[k][d] for k in ("M_DIMS", "M_MUL", "M_DIV", "M_ADD", "M_STRIDE"))
        if div == 1:
            parts[d] = [(size, mul, add, stride)]
        elif mul == 1 and size % div == 0:
            parts[d] = [(size // div, 1, add, stride), (div, 1, 0, 0)]
        else:
            raise ValueError(f"task {label(task, 40)}: hlsgen_core reads a resize as whole source pixels repeated; "
                             f"a dim of {size} at {mul}/{div} is not (the RTL backend supports integer nearest "
                             "upsampling of dims that are multiples of the factor)")
    keys = [(d, j) for d in range(MAX_RANK) for j in range(len(parts[d]))]     # row-major
    while len(keys) > MAX_RANK:                                # a dim of size 1 at offset 0 reads nothing
        ones = [k for k in keys if parts[k[0]][k[1]][0] == 1 and parts[k[0]][k[1]][2] == 0]
        if not ones:
            raise ValueError(f"task {label(task, 40)}: its resize needs more than {MAX_RANK} dims in hlsgen_core")
        keys.remove(ones[0])
    pad = MAX_RANK - len(keys)
    keys = [None] * pad + keys                                 # size-1 padding, outermost
    g = list(f)
    for k, key in enumerate(keys):
        size, mul, add, stride = parts[key[0]][key[1]] if key else (1, 1, 0, 0)
        g[at["M_DIMS"] + k], g[at["M_MUL"] + k], g[at["M_DIV"] + k] = size, mul, 1
        g[at["M_ADD"] + k], g[at["M_STRIDE"] + k] = add, stride
    pos = {key: k for k, key in enumerate(keys) if key}
    new_order = list(range(pad)) + [pos[(d, j)] for d in order for j in range(len(parts[d])) if (d, j) in pos]
    assert sorted(new_order) == list(range(MAX_RANK)), new_order
    return g, new_order


def _iteration(kind: int, task, out_shape, src_shape, last: bool, pid: int):
    """An element word's iteration order, and how it publishes its output's rows:
    (order, iterations per published row or 0 for the end only, counter id or -1). A scatter's
    dims are its source's (`src_shape`); the others iterate over their output."""
    four = len(out_shape) == 4
    if kind == KIND_MOVE and task.op == "channel_shuffle":
        # dims (N, C/G, G, H, W) (kernel.py's shuffle word): pixels before channels
        return ([0, 1, 4, 5, 2, 3], int(out_shape[1] * out_shape[3]), pid) if four else (NATURAL, 0, pid)
    if kind == KIND_SCATTER:
        order = PIXEL_MAJOR if len(src_shape) == 4 else NATURAL
        if not last:
            return order, 0, -1              # a concat's rows are complete only during its last input
        if four and len(src_shape) == 4 and task.attrs.get("axis") == 1:
            return order, int(src_shape[1] * src_shape[3]), pid
        return order, 0, pid
    if four:
        return PIXEL_MAJOR, int(out_shape[1] * out_shape[3]), pid
    return NATURAL, (int(out_shape[-1]) if len(out_shape) else 0), pid


def _stage_channels(graph: Graph, channels: List[offchip.Channel], image: List[int], counter: Dict[str, int],
                    by_name: Dict[str, int]) -> Dict[Tuple[str, str], offchip.Channel]:
    """The on-chip side of the m_axi channels (offchip.py): a read channel of a tensor gets a
    staging region at the end of the memory image and a row counter of its own (after the
    producers'), a write channel its tensor's region and producer's counter; each its per-beat
    row table. Returns (task, tensor) -> read channel (the words read the staging region)."""
    staged: Dict[Tuple[str, str], offchip.Channel] = {}
    for ch in channels:
        if ch.what == "input":
            ch.base, ch.ctr = len(image), len(counter) + len(staged)
            image += [0] * ch.count
            ch.table = offchip.read_table(_geometry(graph, ch.tensor, ch.root), offchip.onchip_index(ch, ch.count),
                                          ch.beat)
            staged[(ch.task, ch.tensor)] = ch
        elif ch.what == "output":
            ch.base, ch.ctr = by_name[ch.root], counter[ch.root]
            ch.table = offchip.write_table(_geometry(graph, ch.root, ch.root), offchip.onchip_index(ch, ch.count),
                                           ch.beat)
    return staged


def build_core(graph: Graph, sched: Schedule, device, outdir: Path, real: KernelBuilder) -> Dict:
    """Write the cores' memory images into outdir; return the top's template context. `real` is
    the HLS kernel's builder: its spills, bundles and weight image are the m_axi side's."""
    wbeat = offchip.weight_beat(sched, real)
    kb = _AllStored(graph, _onchip(sched), device)
    st = kb._sequential(_Stage(), list(range(len(graph.tasks))))
    plans = {p.name: p for s in sched.stages for p in s.tasks}
    tasks = {t.name: t for t in graph.tasks}
    alias, program = _aliases(graph, st["program"])
    root = lambda n: alias.get(n, n)   # noqa: E731
    base, tensor_of, by_name, layout, image = _addresses(st, alias)
    for r in layout:                  # the element order of each region (row-major, as ONNX's),
        r["shape"] = [int(d) for d in graph.tensors[r["tensor"]].shape]     # and its values' bits as signed words
        r["bits"] = graph.tensors[r["tensor"]].dtype.signed_bits
    core_of, stage_of, stages, ncores = _cores(graph, sched)
    producer = {root(o): t.name for t in graph.tasks if t.name in core_of for o in t.outputs}
    counter = {n: k for k, n in enumerate(sorted(producer, key=lambda n: (stage_of[producer[n]], n)))}
    nweights = {t.name: len(c["weight"]["values"]) for t, c in zip(graph.tasks, kb.ctxs) if c.get("weight")}
    channels, pointers = offchip.plan(graph, sched, real, root, core_of, stage_of, nweights)
    staged = _stage_channels(graph, channels, image, counter, by_name)
    for (task, tensor), ch in staged.items():   # each staging region holds its tensor's elements in order
        shape = [int(d) for d in graph.tensors[tensor].shape]
        layout.append({"tensor": f"{tensor} (staged for {task})", "base": ch.base, "size": ch.count, "kind": "staging",
                       "bits": graph.tensors[tensor].dtype.signed_bits,
                       "shape": shape if int(np.prod(shape, dtype=np.int64)) == ch.count else [ch.count]})
    writes_out = {ch.task for ch in channels if ch.write}
    streamed = {ch.task: ch for ch in channels if ch.what == "weights"}
    first_word: Dict[str, Tuple[int, int]] = {}
    last_word = {}
    for k, w in enumerate(program):
        last_word[w["task"]] = k
    words: Dict[int, List[int]] = {c: [] for c in range(ncores)}
    # each core's weight ROM holds only its own tasks' arrays, each starting on a row. A row is
    # wr[c] weights: a power of two, at least the core's widest SIMD (a PE lane's SIMD weights
    # are consecutive and lie in two rows, which it reads through one port each) and an m_axi
    # beat (a streamed beat is written into one row)
    wroms: Dict[int, List[int]] = {c: [] for c in range(ncores)}
    wr = {c: wbeat for c in range(ncores)}
    for w in program:
        if w["f"][WORD["KIND"]] == KIND_WINDOW:
            t = tasks[w["task"]]
            simd = _lanes(t, graph, plans[t.name].folding)[2]
            wr[core_of[t.name]] = max(wr[core_of[t.name]], 1 << (simd - 1).bit_length())
    # a core whose weights all lie in its ROM from the start (none streams in) lays every reduction
    # step's SIMD weights out as one row of their own (_aligned): a lane then reads one row and
    # takes its weight at a fixed place, where a step's weights in the HLS kernel's order lie
    # across two rows that each lane shifts its weight out of
    aligned = {c: not any(core_of[n] == c for n in streamed) for c in range(ncores)}
    wat: Dict[str, Tuple[int, int]] = {}     # task -> where its array starts: in st's WROM, in its core's
    what: Dict[int, List[str]] = {c: [] for c in range(ncores)}
    publishes: Dict[int, set] = {c: set() for c in range(ncores)}    # the row counters each core's words publish
    # and its own tap table and requantization rows: its window words' taps, its tasks' rows (a
    # task's word fields TAP and RQ are offsets into its core's tables)
    taps: Dict[int, List[int]] = {c: [] for c in range(ncores)}
    rqs: Dict[int, List[int]] = {c: [] for c in range(ncores)}      # rows of st's table, in order
    rqat: Dict[str, int] = {}
    lanes = {c: {"MV": 1, "MP": 1, "MS": 1, "ML": 1} for c in range(ncores)}
    arith = {c: {"CWB": 1, "XB": 1, "AW": st["sb"], "mac": {}, "rq": set(), "ET": 0, "EL": 1, "RAW": 0, "XSH": 1,
                 "shared_pe": 0, "uses": {"mac": set(), "avg": set(), "max": set()}}
             for c in range(ncores)}
    per_task: Dict[str, int] = {}
    accesses: List[Dict] = []
    written: Dict[str, set] = {}             # per task, the tensors its words so far write
    depth = 1
    for k, w in enumerate(program):
        t = tasks[w["task"]]
        plan = plans[t.name]
        c = core_of[t.name]
        vec, pe, simd = _lanes(t, graph, plan.folding)
        last = last_word[t.name] == k
        plat = depth_of(OPS[t.op].loops(t, graph), plan.folding)     # publication delay of every word
        lat = plat if last else 0                                    # drain after the task's last word
        if plat < WRITE_DELAY:
            raise ValueError(f"task {label(t.name, 40)}: pipeline depth {plat} is below hlsgen_core's write delay "
                             f"{WRITE_DELAY}: its rows would be published before they are written")
        f = list(w["f"])
        tap_off = len(taps[c])
        kind = f[WORD["KIND"]]
        if kind in (KIND_WINDOW, KIND_ELTWISE):
            lo, hi = st["rq_spans"][t.name]
            if t.name not in rqat:
                rqat[t.name] = len(rqs[c])
                rqs[c] += range(lo, hi)
            f[WORD["RQ"]] += rqat[t.name] - lo
        red = f[WORD["W_CG"]] * f[WORD["W_KH"]] * f[WORD["W_KW"]]
        wsteps = (red, simd)
        if kind == KIND_WINDOW and f[WORD["W_WSRC"]] >= 0:
            if t.name not in wat:
                at, n = f[WORD["W_WOFF"]], nweights[t.name]
                wroms[c] += [0] * (-len(wroms[c]) % wr[c])
                wat[t.name] = (at, len(wroms[c]))
                array = st["wrom"][at:at + n]
                wroms[c] += _aligned(t, array, red, simd, wr[c]) if aligned[c] else array
            off = f[WORD["W_WOFF"]] - wat[t.name][0]
            if aligned[c]:
                wsteps = (-(-red // simd) * wr[c], wr[c])
                if off % red:
                    raise ValueError(f"task {label(t.name, 40)}: a word's weights start inside an output channel's")
                off = off // red * wsteps[0]
            f[WORD["W_WOFF"]] = wat[t.name][1] + off
        out = root(tensor_of[f[WORD["DST"]]])
        _check_zero_points(t, f, st["sb"])
        _arith(arith[c], t, graph, f, vec, pe, simd)
        if kind == KIND_WINDOW:
            taps[c] += _taps(f)
            # its PE lanes read the same activations (one group: OG >= O) only if every window
            # word of the core's is so: then the core reads once per VEC x SIMD lane (XSH). Where
            # only some are (SSH, below: some such word has PE lanes beyond the first), those
            # read through PE lane 0's ports and the rest per lane
            shared = int(banking.one_group(f))
            arith[c]["XSH"] &= shared
            arith[c]["shared_pe"] |= int(shared and pe > 1)
            lanes[c].update(MV=max(lanes[c]["MV"], vec), MP=max(lanes[c]["MP"], pe), MS=max(lanes[c]["MS"], simd))
            srcs = [tensor_of[f[WORD["SRC"]]]]
            order, pdiv, pid = NATURAL, 0, counter[out]
        else:
            vec, pe, simd = 1, vec * pe, 1
            lanes[c]["ML"] = max(lanes[c]["ML"], pe)
            oshape = graph.tensors[out].shape
            if kind == KIND_ELTWISE:
                srcs = [tensor_of.get(f[WORD["E_TERMS"] + j * WORD["E_TERM"]]) for j in range(f[WORD["E_NT"]])]
            else:
                srcs = [tensor_of[f[WORD["SRC"]]]]
            sshape = graph.tensors[srcs[0]].shape if kind == KIND_SCATTER else ()
            order, pdiv, pid = _iteration(kind, t, oshape, sshape, last, counter[out])
            if kind == KIND_MOVE:
                f, order = _split_divides(t.name, f, order)
        arith[c]["XB"] = max([arith[c]["XB"]] + [graph.tensors[n].dtype.bits for n in srcs if n is not None])
        # a task's words follow each other without a drain: none may read what an earlier one
        # writes, whose last writes land WRITE_DELAY cycles after its last step
        if any(n is not None and root(n) in written.get(t.name, ()) for n in srcs):
            raise ValueError(f"task {label(t.name, 40)}: a word reads what an earlier word of the task writes")
        written.setdefault(t.name, set()).add(out)
        first_of_core = not words[c]
        per_task[t.name] = per_task.get(t.name, 0) + word_cycles(f, vec, pe, simd, lat) - (1 if first_of_core else 0)
        f[WORD["DST"]] = base[f[WORD["DST"]]]
        src_at = [WORD["SRC"]] if kind in (KIND_WINDOW, KIND_MOVE, KIND_SCATTER) else \
            [WORD["E_TERMS"] + j * WORD["E_TERM"] for j in range(f[WORD["E_NT"]])]
        for j in src_at:
            f[j] = base[f[j]]
        dataflow = sched.stages[stage_of[t.name]].mode == "dataflow"
        src_fields = []                      # per source: (counter, C*H*W, H, W, ALL), SRC_FIELDS
        for j in range(2):
            n = srcs[j] if j < len(srcs) else None
            r = root(n) if n is not None else None
            p = producer.get(r) if r is not None else None
            if (t.name, n) in staged:                        # loaded from off-chip memory as the task runs
                ch = staged[(t.name, n)]
                f[src_at[j]] = ch.base
                src_fields.append([ch.ctr] + _geometry(graph, n, r))
            elif p is None or not dataflow or stage_of[p] != stage_of[t.name] or core_of[p] == c:
                src_fields.append([-1, 1, 1, 1, 0])          # complete before this word starts
            else:
                src_fields.append([counter[r]] + _geometry(graph, n, r))
        if kind == KIND_WINDOW and src_fields[0][0] >= 0 and src_fields[0][4] == 0:
            # the core checks a window's input row as n * H + iy (its counters), where a source's
            # row is (j / CHW) * H + (j / W) % H of its offset j: the same when the geometries agree
            c_, h_, w_ = (f[WORD[k]] for k in ("W_C", "W_H", "W_W"))
            chw, sh, sw = src_fields[0][1:4]
            if chw != c_ * h_ * w_ or sh != h_ or (sw != w_ and h_ != 1):
                raise ValueError(f"{t.name}: its input's row geometry {(chw, sh, sw)} is not the window's "
                                 f"{(c_ * h_ * w_, h_, w_)}")
        if t.name in streamed and kind == KIND_WINDOW and t.name not in first_word:
            streamed[t.name].base = f[WORD["W_WOFF"]]
        depth = max(depth, plat)
        extra = {"VEC": [vec], "PE": [pe], "SIMD": [simd], "LAT": [lat], "TAP": [tap_off], "ORD": list(order),
                 "PID": [pid], "PDIV": [pdiv], "PTOT": [_rows(graph.tensors[out].shape)], "SRC0": src_fields[0],
                 "SRC1": src_fields[1], "PLAT": [plat], "HOLD": [int(last and t.name in writes_out)],
                 "WWAIT": [int(t.name in streamed)],
                 **(_window_steps(f, vec, pe, *wsteps) if kind == KIND_WINDOW else {"WIN": [0] * len(WIN_FIELDS)}),
                 "ESTEP": [0] * MAX_RANK if kind == KIND_WINDOW else _element_step(f, order, vec * pe)}
        if kind == KIND_WINDOW:
            extra.update(ELEMS=[0], PQ=[0], PR=[0], MB=[0] * NMAP, MONE=[0] * NMAP, MSTEP=[0] * NMAP,
                         MADJ=[0] * (NMAP * MAX_RANK))
        else:
            lin = _element_linear(t.name, f, [sf[1:] if sf[0] >= 0 and sf[4] == 0 else None for sf in src_fields],
                                  pdiv, vec * pe)
            lin["ESTEP"] = extra["ESTEP"]
            extra.update(ELEMS=lin["ELEMS"], PQ=lin["PQ"], PR=lin["PR"], **_element_maps(f, order, lin))
        # what the word reads and writes in the activation memory, for the bank planner (banking.py)
        accesses.append({"core": c, "task": t.name, "f": list(f), "order": list(order), "vec": vec, "pe": pe,
                         "simd": simd})
        first_word.setdefault(t.name, (c, len(words[c]) // (len(f) + NX)))
        words[c] += f + [v for name, _ in RTL_FIELDS for v in extra[name]]
        publishes[c].add(pid)
        if t.name not in what[c]:
            what[c].append(t.name)
    sb = st["sb"]
    pw = st["width"]
    rq = st["rq"]
    nf = st["nf"] + NX
    outdir.mkdir(parents=True, exist_ok=True)
    for ch in streamed.values():                         # streamed weights arrive through m_axi only
        wrom = wroms[ch.core]
        if wrom[ch.base:ch.base + ch.count] != [int(v) for v in real.weight_image[ch.off * 8 // ch.cw:][:ch.count]]:
            raise ValueError(f"task {label(ch.task, 40)}: the WROM and data/weights.bin disagree")
        if ch.base % wr[ch.core]:
            raise ValueError(f"task {label(ch.task, 40)}: its weights start at {ch.base}, not on a WROM row "
                             f"of {wr[ch.core]}")
        wrom[ch.base:ch.base + ch.count] = [0] * ch.count
    mem_file = write_mem(outdir / "mem.mem", image or [0], sb)
    if st["nterms"] > 2:
        raise ValueError("hlsgen_core takes at most two elementwise terms")
    # the requantization rows' columns: (parameter, file name, value per row, bits)
    rq_tables = (("RQ_BIAS", "rq_bias", rq["bias_values"], pw), ("RQ_M0", "rq_m0_", rq["m"][0], 32),
                 ("RQ_M1", "rq_m1_", rq["m"][1] if len(rq["m"]) > 1 else [0] * len(rq["m"][0]), 32),
                 ("RQ_SHIFT", "rq_shift", rq["shift"], 7), ("RQ_LO", "rq_lo", rq["lo"], 32),
                 ("RQ_HI", "rq_hi", rq["hi"], 32), ("RQ_ZP", "rq_zp", rq["zp"], 32),
                 ("RQ_HALF_EVEN", "rq_half_even", [int(r == "HALF_EVEN") for r in rq["round"]], 1))
    # each core's own program, weight ROM, tap table and requantization rows (words numbered from
    # 0 in each), one parameter set for the rest (the widest lanes of any core are each core's own, below)
    cores = []
    for c in range(ncores):
        n = len(words[c]) // nf
        if not n:                            # (a core is made for a task that has words)
            raise ValueError(f"core {c} has no configuration words")
        # a WROM row of wr[c] weights (the first in the low bits), and a row of zeros after the
        # last where a lane reads two rows (not aligned)
        wrom = wroms[c] + [0] * (-len(wroms[c]) % wr[c] + (wr[c] if not aligned[c] or not wroms[c] else 0))
        wmask = (1 << st["wbits"]) - 1
        wrows = [sum((wrom[r + e] & wmask) << (e * st["wbits"]) for e in range(wr[c])) for r in range(0, len(wrom), wr[c])]
        sel = rqs[c] or [0]                  # (a core without requantizing words: one row, unused)
        # the control's width (CB): signed, with room for a sum of two of the largest value it keeps or
        # compares: a field of its words, an address in the memory (every row count is below the memory's
        # size), a weight index, a tap or requantization row, a word number (addresses only need their
        # low AB bits, so they may wrap)
        largest = max([abs(v) for v in words[c]] + [len(image), len(wrom), len(taps[c]), len(sel), n])
        cb = min(32, largest.bit_length() + 2)
        # one row per word, field k at bits PFB k .. PFB k + PFB - 1 (two's complement), so that a
        # fetch is one read of one row; PFB = CB: every field fits the control's width
        rows = [sum((words[c][w * nf + k] & ((1 << cb) - 1)) << (cb * k) for k in range(nf)) for w in range(n)]
        files = {"PROGRAM": write_mem(outdir / f"program{c}.mem", rows, cb * nf),
                 "WROM": write_mem(outdir / f"wrom{c}.mem", wrows, wr[c] * st["wbits"]),
                 "TAP": write_mem(outdir / f"tap{c}.mem", taps[c] or [0], TAP_BITS)}
        for param, name, values, bits in rq_tables:
            files[param] = write_mem(outdir / f"{name}{c}.mem", [values[r] for r in sel], bits)
        cores.append({"index": c, "stage": next(s["index"] for s in stages if c in s["set"]),
                      "what": ", ".join(label(name, 40) for name in what[c]), "publishes": len(publishes[c]),
                      "tables": {"NT": n, "WROM_ROWS": len(wrows), "WR": wr[c], "TAP_WORDS": max(1, len(taps[c])),
                                 "RQ_ROWS": len(sel), "CB": cb, "PFB": cb},
                      "files": {k: f"../rtl/{p.name}" for k, p in files.items()}})
    for ch in channels:                      # triggered by its task's first word (a core's words count from 0)
        ch.word = first_word[ch.task][1]
    dma = _dma_context(channels, pointers, outdir, st["wbits"], sched.port_bits)
    core_params = {"NF": nf, "SB": sb, "WB": st["wbits"],
                   "PW": pw,
                   "NC": max(1, len(counter) + len(staged)), "MD": depth, "WBEAT": wbeat,
                   "AB": address_bits(len(image))}    # the activation memory's address bits
    for core in cores:                       # each core's lanes and arithmetic: what its own words use
        ln, ar = lanes[core["index"]], arith[core["index"]]
        # read ports: a window step's reads (one per VEC x SIMD lane when its PE lanes share them,
        # else one per lane), or two per element lane
        reads = ln["MV"] * (1 if ar["XSH"] else ln["MP"]) * ln["MS"]
        core["params"] = {**core.pop("tables"), **ln, "NR": max(reads, 2 * ln["ML"]),
                          "NW": max(ln["MV"] * ln["MP"], ln["ML"]),
                          **{k: ar[k] for k in ("CWB", "XB", "AW", "ET", "EL", "RAW", "XSH")},
                          "SSH": int(ar["shared_pe"] and not ar["XSH"]),
                          **_lane_uses(ar["uses"], ln),
                          # weights stream in (lanes wait for them) exactly where they do not lie aligned
                          "WST": int(not aligned[core["index"]]), "WAL": int(aligned[core["index"]]),
                          **_units(ar, device)}
        # the cost model's datapath for this core: a dataflow task's own, a sequential stage's
        # time-shared core (each pool of multipliers as large as its largest user: core_dsp)
        opts = [evaluate(OPS[tasks[n].op].loops(tasks[n], graph), plans[n].folding, device) for n in what[core["index"]]]
        res = Resources()
        for o in opts:
            res = res.max(o.res)
        core["model"] = {"dsp": core_dsp(opts), "lut": res.lut, "ff": res.ff}
        core["inputs"] = core_inputs({**core_params, **core["params"]}, core["model"])
        core["fitted"] = core_logic(core["inputs"])
        core["tasks"] = [label(n, 40) for n in what[core["index"]]]
    for s in stages:
        bits = ["1" if c in s["set"] else "0" for c in reversed(range(ncores))]
        s["mask"] = f"{ncores}'b{''.join(bits)}"
    # AXI4-Stream ports: none for the graph's inputs or outputs that are off chip (read and written
    # by their tasks' m_axi channels, at the pointers in0.. / out0..)
    off = set(sched.io_offchip_tensors)
    ports_in = [_port(s, by_name, sched.max_beat_lanes) for s in (kb.stores[n] for n in graph.inputs if n not in off)]
    ports_out = [_port(s, by_name, sched.max_beat_lanes) for s in (kb.stores[n] for n in graph.outputs if n not in off)]
    io = sum(p["beats"] * p["steps"] for p in ports_in + ports_out)
    bpc = port_bytes_per_cycle(device, sched.clock_mhz, sched.port_bits)
    # (a channel whose beat takes steps holds it on chip a cycle a step)
    traffic = sum(MEMORY_LATENCY_CYCLES + math.ceil(ch.beats * sched.port_bits / 8 / bpc) + ch.beats * ch.steps
                  for ch in channels)
    banks = banking.plan(layout, max(1, len(image)), sb, accesses, ports_in, ports_out, channels,
                         {n: (stage_of[n], n if sched.stages[stage_of[n]].mode == "sequential" else "")
                          for n in stage_of}, device,
                         {c: {**lanes[c], "XSH": arith[c]["XSH"]} for c in range(ncores)})
    return {"cores": cores, "core_params": core_params, "stages": stages, "sb": sb,
            "mem_words": max(1, len(image)), "mem_image": list(image) or [0],
            "mem_file": f"../rtl/{mem_file.name}", "inputs": ports_in, "outputs": ports_out, "layout": layout,
            "step_widths": _step_widths(ports_in, ports_out),
            "words": len(program), "task_cycles": per_task, **dma, "banking": banks,
            # no core waits and nothing overlaps: an upper bound of the simulated cycles
            "serial_cycles": sum(per_task.values()) + io + traffic + 3 * len(stages) + 4,
            "memory": {"latency": MEMORY_LATENCY_CYCLES, "bytes_per_cycle": bpc}}


def _dma_context(channels: List[offchip.Channel], pointers: List[Dict], outdir: Path, wb: int, dw: int) -> Dict:
    """The top's m_axi bundles and channels (offchip.py), and dma<k>.mem: channel k's per-beat row
    table (a staging read's or a write's; a weight read has none), each a ROM of its own, as wide
    as its largest row count (until stop 52 one ROM of 32-bit words held every channel's table,
    each read at its channel's offset: 84 LUT more in the capped demo_cnn's top, by Yosys)."""
    for k, ch in enumerate(channels):
        if ch.what != "weights":
            if len(ch.table) != ch.beats:
                raise ValueError(f"channel {k} ({ch.what} of {ch.task}): {len(ch.table)} rows in its table for "
                                 f"{ch.beats} beats")
            ch.tab_bits = max(1, max(ch.table or [0]).bit_length())
            write_mem(outdir / f"dma{k}.mem", ch.table or [0], ch.tab_bits)
    bundles = []
    for name in sorted({ch.bundle for ch in channels}, key=lambda b: int(b[4:])):
        mine = [ch for ch in channels if ch.bundle == name]
        # the top's bundle b<j> (its j-th), its channel k's on-chip offsets (offchip.onchip_form)
        var = f"b{len(bundles)}_wr_beat_next", f"b{len(bundles)}_rd_beat"
        # a stepped write channel's earlier steps wait in the bundle's gather register, its last
        # step's elements beside it (top.sv.j2's b<j>_wr_gather, b<j>_wr_stepd)
        stepped = [ch for ch in mine if ch.write and ch.steps > 1]
        bundles.append({"gather_bits": max([(ch.beat - ch.lanes) * ch.cw for ch in stepped], default=0),
                        "stepd_bits": max([ch.lanes * ch.cw for ch in stepped], default=0),
                        "name": name, "channels": [dict(vars(ch), beats=ch.beats, lanes=ch.lanes, steps=ch.steps,
                                                        index=channels.index(ch), local=k,
                                                        task_label=label(ch.task, 40),
                                                        onchip=offchip.onchip_sv(
                                                            offchip.onchip_form(ch.c, ch.hw, ch.count, ch.beat),
                                                            var[0] if ch.write else var[1], f"b{len(bundles)}_c{k}",
                                                            ch.beats))
                                                   for k, ch in enumerate(mine)]})
    cores = sorted({ch.core for ch in channels if ch.what == "weights"})
    return {"bundles": bundles, "pointers": pointers,
            "channels": [dict(vars(ch), beats=ch.beats, lanes=ch.lanes, steps=ch.steps, index=k)
                         for k, ch in enumerate(channels)],
            "weight_cores": cores, "wb": wb,
            "axi_ports": offchip.AXI_PORTS, "dw": dw, "maxb": offchip.MAXB, "outst": offchip.OUTST,
            "ctrl_addr_bits": max(6, (0x10 + 12 * len(pointers)).bit_length())}


def _arith(a: Dict, task, graph: Graph, f: List[int], vec: int, pe: int, simd: int) -> None:
    """Accumulate what a core's datapath (hlsgen_core_dp) needs for one of its words at its
    lanes (vec, pe, simd): weight and accumulator bits, the shapes of its weighted words (`mac`:
    folding -> whether every word of that folding is dense, i.e. reads the same activation for
    every output channel, so lanes along PE may share it) and of its requantizing window words
    (`rq`), the elementwise terms. A weighted folding's entry in `mac` is (dense, weight bits
    or None): the widest weight of its words while every one of them is small enough for int4 x
    int8 packing (weights <= 4 bits, activations <= 8, as the cost model's macs_per_dsp per
    task), None once one is not."""
    kind = f[WORD["KIND"]]
    rq = task.attrs.get("requant")
    if kind == KIND_ELTWISE:
        a["ET"] = max(a["ET"], f[WORD["E_NT"]], 1)
        a["EL"] = max(a["EL"], vec * pe)
        return
    if kind == KIND_WINDOW and f[WORD["W_WSRC"]] < 0:
        a["RAW"] = 1                         # a pool: its lanes' activations pass the multipliers by
    if kind == KIND_WINDOW:                  # which lanes multiply, sum their own values, take maxima
        use = "max" if f[WORD["W_MAX"]] else "mac" if f[WORD["W_WSRC"]] >= 0 else "avg"
        a["uses"][use].add((vec, pe, simd))
    if kind != KIND_WINDOW or f[WORD["W_MAX"]]:
        return
    a["rq"].add((vec, pe))
    a["AW"] = max(a["AW"], rq.term_bits if rq is not None and rq.term_bits else 64)
    if f[WORD["W_WSRC"]] >= 0:
        nest = OPS[task.op].loops(task, graph)
        dense, small = a["mac"].get((vec, pe, simd), (True, 1))
        small = max(small, nest.weight_bits) if small is not None and nest.weight_bits <= 4 and nest.act_bits <= 8 \
            else None
        a["mac"][(vec, pe, simd)] = (dense and f[WORD["W_OG"]] >= f[WORD["W_O"]], small)
        a["CWB"] = max(a["CWB"], graph.tensors[task.inputs[1]].dtype.bits)


def _lane_uses(uses: Dict[str, set], ln: Dict[str, int]) -> Dict[str, str]:
    """hlsgen_core_dp's lane masks: bit k = (v * MP + p) * MS + s of MACK, AVGK, MAXK is set where
    some window word of the core multiplies at that lane, sums its own x - zp there (an average
    pool) or takes its maximum there (a max pool), i.e. where the lane is inside the word's
    folding (a lane is live only there: hlsgen_core's w_live). A sequential core's lanes are the
    widest folding in each dimension, so a core whose max pool runs 8 x 9 lanes and whose conv
    runs 2 x 4 builds the sum path for the conv's 8 lanes only and the comparators for the pool's
    72, not both paths for all 72."""
    mv, mp, ms = ln["MV"], ln["MP"], ln["MS"]

    def mask(folds: set) -> str:
        bits = 0
        for v in range(mv):
            for p in range(mp):
                for s in range(ms):
                    if any(v < fv and p < fp and s < fs for fv, fp, fs in folds):
                        bits |= 1 << ((v * mp + p) * ms + s)
        return f"{mv * mp * ms}'h{bits:x}"
    return {"MACK": mask(uses["mac"]), "AVGK": mask(uses["avg"]), "MAXK": mask(uses["max"])}


def _vector(values: List[int]) -> str:
    """A SystemVerilog literal of 16-bit fields, entry i at bits [16 i +: 16]."""
    return f"{16 * len(values)}'h{sum(v << (16 * i) for i, v in enumerate(values)):x}"


def _shapes(a: Dict, device) -> Tuple[List[Tuple[int, int, int, int]], int, int]:
    """hlsgen_core_dp's MAC shapes for a core, (VEC, PE, SIMD, pairing) per weighted folding,
    its MAC units and PWB: per shape as cost.packing counts them (two int4 x int8 products per
    DSP48E2 unit when every word of that folding is that small, whatever the core's other words
    are, as the model packs each task on its own; pairing along PE only when every word of the
    folding is dense), as many units as the largest shape needs; PWB, the widest weight of the
    shapes that pair."""
    shapes, nu, pwb = [], 0, 1
    for (v, p, s), (dense, small) in sorted(a["mac"].items()):
        per_dsp = 2 if small is not None and device.dsp_type == "DSP48E2" else 1
        n, mode = packing(Folding(v, p, s), per_dsp, dense)
        shapes.append((v, p, s, mode))
        nu = max(nu, n)
        if mode:
            pwb = max(pwb, small)
    return shapes, nu, pwb


def _units(a: Dict, device) -> Dict:
    """hlsgen_core_dp's parameters for its multiplier pools: the MAC shapes and units (_shapes);
    requantizers, as many as the largest requantizing shape has outputs."""
    shapes, nu, pwb = _shapes(a, device)
    shapes = shapes or [(0, 0, 0, 0)]        # (no weighted word: a shape no word matches)
    rqs = sorted(a["rq"]) or [(0, 0)]
    return {"NU": nu, "PWB": pwb, "NSH": len(shapes), **{k: _vector([sh[i] for sh in shapes]) for i, k in enumerate(("SHV", "SHP", "SHS", "SHM"))},
            "NRQ": max(v * p for v, p in rqs), "NQS": len(rqs), "QSV": _vector([r[0] for r in rqs]),
            "QSP": _vector([r[1] for r in rqs])}


def _check_zero_points(task, f: List[int], sb: int) -> None:
    """hlsgen_core_dp subtracts zero points at SB + 1 bits: each must fit SB bits."""
    kind = f[WORD["KIND"]]
    zps = [f[WORD["W_ZP"]]] if kind == KIND_WINDOW else \
        [f[WORD["E_TERMS"] + j * WORD["E_TERM"] + WORD["E_ZP"]] for j in range(f[WORD["E_NT"]])] \
        if kind == KIND_ELTWISE else []
    for zp in zps:
        if not -(1 << (sb - 1)) <= zp < (1 << (sb - 1)):
            raise ValueError(f"task {label(task.name, 40)}: zero point {zp} does not fit the RTL's {sb}-bit "
                             "activations")


def _step_widths(ports_in: List[Dict], ports_out: List[Dict]) -> Dict:
    """What the top's streams that move their beats in steps are built of: the bits of its
    counters, an input's step (`in_step`) and an output's number, beat and step (`o_port`,
    `o_beat`, `o_step`); the outputs' gather register (`gw`: the widest beat) and a step's bits
    (`sw`: the widest output's), and whether every output's step has those bits (`one_sw`)."""
    def bits(n: int) -> int:
        return max(1, (n - 1).bit_length())
    steps = {p["step_bits"] for p in ports_out}
    return {"in_step": bits(max([p["steps"] for p in ports_in], default=1)),
            "o_port": bits(len(ports_out)), "o_beat": bits(max([p["beats"] for p in ports_out], default=1)),
            "o_step": bits(max([p["steps"] for p in ports_out], default=1)),
            "gw": max([p["tw"] for p in ports_out], default=0), "sw": max(steps, default=0), "one_sw": len(steps) <= 1}


def _port(s, by_name: Dict[str, int], max_lanes: Optional[int]) -> Dict:
    """An AXI4-Stream port of the top: its tensor's place in the activation memory, its beat, and
    the elements of a beat it moves into or out of the memory a cycle (`lanes`, in `steps` a
    beat: cost.beat_lanes under --max-lanes, as an m_axi channel's)."""
    lanes = beat_lanes(s.beat, max_lanes)
    return {"name": s.port, "base": by_name[s.tensor], "size": s.size, "bits": s.bits, "signed": s.signed, "cw": s.cw,
            "label": s.label, "beat": s.beat, "beats": s.beats, "tw": s.tw, "lanes": lanes, "steps": s.beat // lanes,
            "step_bits": lanes * s.cw}

