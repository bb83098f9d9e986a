"""Off-chip traffic of the RTL realization (docs/rtl.md, "Off-chip memory"): the transfers the
cost model charges a task (`scheduler._traffic`) become m_axi channels of the top, on the HLS
kernel's bundles and pointer arguments.

- A spilled 4-D tensor is pixel-major (NHWC) off chip, so that a beat holds whole pixels and rows
  complete beat by beat in both directions (on chip it is NCHW, as the cores address it); the
  channel permutes as it moves. That is what lets the transfers overlap the task's compute.
- A spilled tensor (buffer kind "offchip") is written out by its producer's task: a write
  channel sends its beats from the activation memory to the tensor's pointer as the producer
  publishes the rows they hold, and the task does not end until every beat is answered.
- A task that reads a spilled tensor gets a read channel: it loads the tensor from off-chip
  memory into a staging region of its own and publishes the rows as beats arrive, so the
  task's row check waits for them as it waits for a producer core. The data the task reads has
  really been through the memory.
- Streamed weights (`--weights offchip`): a read channel loads the task's array from `wmem`
  (data/weights.bin) into the WROM of the core that runs it, a beat to a row (the task's array
  starts on a row, `weight_beat`), and the core reads a weight only once it has arrived. That
  region of the WROM image is left zero.
A channel starts when its task's first word starts (the trigger), as the model overlaps a
task's transfers with its compute. A channel of activations whose beat holds more elements
than --max-lanes moves it in steps (`Channel.lanes` elements a cycle, `cost.beat_lanes`;
hlsgen_m_axi's CH_STEPS): it then takes as many of the activation memory's ports, and its
regions need no more banks, as a core of that many lanes; its write bursts are shorter, so
that a burst waits for about as many elements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np

from ...ir.graph import Graph
from ...schedule.cost import beat_lanes
from ...schedule.schedule import Schedule

MAXB = 16          # beats per burst (16 beats of 512 bits = 1 KiB: bursts never cross 4 KiB)
OUTST = 16         # read bursts in flight per bundle (covers 100 cycles of latency at full rate)
ALIGN = 4096       # bytes: every off-chip array starts on a 4 KiB boundary

# One bundle's engine (hlsgen_m_axi) as Yosys synth_xilinx builds it, LUT sites and FF: a fit
# on the engines of benchmarks/m_axi_points.json (`benchmarks/m_axi_fit.py` synthesizes and
# refits them, and prints each engine's error) over m_axi_inputs: its read path (where a channel
# reads), its write path (where one writes), per channel, and per channel and bit of its beat
# counters (BB).
M_AXI_FIT = {"beat_bits": 5.75, "channels": 39.99, "reads": 158.78, "writes": 249.18}
M_AXI_FF_FIT = {"beat_bits": 0.7, "channels": 21.93, "reads": 125.75, "writes": 195.86}


def m_axi_inputs(channels: int, writes: int, beats) -> Dict[str, int]:
    """What M_AXI_FIT prices, for an engine of `channels` channels, `writes` of them writing, of
    these beats each (hlsgen_m_axi's BB: the bits of the most beats and a burst)."""
    bb = (max(beats or [0]) + MAXB).bit_length()
    return {"reads": int(channels > writes), "writes": int(writes > 0), "channels": channels,
            "beat_bits": channels * bb}


def m_axi_logic(bundles: List[Dict]) -> Dict[str, int]:
    """The top's m_axi engines (one a bundle: the build's bundles, each with its channels), MODELED."""
    lut = ff = 0.0
    for b in bundles:
        chans = b["channels"]
        x = m_axi_inputs(len(chans), sum(1 for c in chans if c["write"]), [c["beats"] for c in chans])
        lut += sum(M_AXI_FIT[k] * v for k, v in x.items())
        ff += sum(M_AXI_FF_FIT[k] * v for k, v in x.items())
    return {"lut": int(round(lut)), "ff": int(round(ff)), "bundles": len(bundles)}


# the AXI4 master port of a bundle as Vitis HLS names it (m_axi_<bundle>_<NAME>): name, direction
# from the kernel's side, width ("D": the data width, "S": its byte strobes)
AXI_PORTS = [("AWVALID", "output", 1), ("AWREADY", "input", 1), ("AWADDR", "output", 64), ("AWID", "output", 1),
             ("AWLEN", "output", 8), ("AWSIZE", "output", 3), ("AWBURST", "output", 2), ("AWLOCK", "output", 2),
             ("AWCACHE", "output", 4), ("AWPROT", "output", 3), ("AWQOS", "output", 4), ("AWREGION", "output", 4),
             ("WVALID", "output", 1), ("WREADY", "input", 1), ("WDATA", "output", "D"), ("WSTRB", "output", "S"),
             ("WLAST", "output", 1), ("BVALID", "input", 1), ("BREADY", "output", 1), ("BRESP", "input", 2),
             ("BID", "input", 1), ("ARVALID", "output", 1), ("ARREADY", "input", 1), ("ARADDR", "output", 64),
             ("ARID", "output", 1), ("ARLEN", "output", 8), ("ARSIZE", "output", 3), ("ARBURST", "output", 2),
             ("ARLOCK", "output", 2), ("ARCACHE", "output", 4), ("ARPROT", "output", 3), ("ARQOS", "output", 4),
             ("ARREGION", "output", 4), ("RVALID", "input", 1), ("RREADY", "output", 1), ("RDATA", "input", "D"),
             ("RLAST", "input", 1), ("RRESP", "input", 2), ("RID", "input", 1)]


@dataclass
class Channel:
    task: str
    core: int
    write: bool
    what: str                 # "weights" | "input" | "output"
    tensor: str               # the tensor as the task names it
    root: str                 # the stored tensor it is an alias of (or itself)
    bundle: str
    ptr: int                  # pointer argument (s_axi_control 0x10 + 12 ptr)
    off: int                  # byte offset from the pointer
    count: int                # elements
    cw: int                   # container bits in memory
    bits: int                 # bits of the element on chip
    signed: bool
    beat: int                 # elements per beat
    base: int = 0             # on chip: staging region / source region / WROM address
    ctr: int = -1             # row counter published (read into memory) or watched (write)
    table: List[int] = field(default_factory=list)   # per beat: rows complete after it / needed before it
    word: int = 0             # the word whose start triggers the channel
    tab_bits: int = 0         # bits of its table's ROM (dma<k>.mem): its largest row count's (0: no table)
    c: int = 0                # a 4-D tensor is pixel-major (NHWC) off chip: its C and H*W (0: as on chip)
    hw: int = 0
    epc: int = 0              # elements moved into or out of the activation memory a cycle (0: the beat)

    @property
    def beats(self) -> int:
        return -(-self.count // self.beat)

    @property
    def lanes(self) -> int:
        """Elements a cycle between the beat and the chip: the memory ports the channel takes."""
        return self.epc or self.beat

    @property
    def steps(self) -> int:
        """Cycles a beat takes on the chip's side (hlsgen_m_axi's CH_STEPS)."""
        return self.beat // self.lanes


def onchip_form(c: int, hw: int, count: int, beat: int) -> Dict:
    """How the top computes the on-chip (NCHW) offset of element e of beat b of a channel whose
    tensor (`count` elements) is pixel-major off chip (C = c channels, hw pixels an image; c = 0:
    the same order on chip), so that it divides once a beat, in as few bits as the beat numbers
    need, or not at all, where x = b * beat + e divided and took remainders per element (32-bit
    dividers: 1,968 LUT of the capped maxpool's top, C = 8, H x W = 144; stop 53).

    Returns {"per_beat": [(name, divided, op, divisor)], "element": expression}: signals computed
    once a beat from b (or an earlier signal), op "/" or "%", and the element's offset from b, e
    and them. Division is written DIV: "/" in SystemVerilog, "//" in Python (`onchip_eval`).
    - c = 0: b * beat + e;
    - a pixel a beat (C = beat) of one image: e x hw + b;
    - a beat within one pixel's channels (C a multiple of the beat, k = C / beat beats a pixel):
      pixel q = b / k, channel group r = b % k; per image n = q / hw, p = q % hw
      (one image: q itself);
    - whole pixels a beat (the beat a multiple of C, m = beat / C pixels) and whole beats an
      image (hw a multiple of m): image n = b / (hw / m), its first pixel (b % (hw / m)) x m;
    - else per element, as onchip_index: x / (C hw), x % C and (x / C) % hw."""
    if not c:
        return {"per_beat": [], "element": f"b * {beat} + e"}
    images = count // (c * hw)
    if count % (c * hw):
        images = 0                                    # (not whole images: per element)
    if c == beat and images == 1:                      # a pixel a beat
        return {"per_beat": [], "element": f"e * {hw} + b"}
    if c % beat == 0 and images:
        k = c // beat
        steps = [("q", "b", "/", k), ("r", "b", "%", k)]
        if images > 1:
            steps += [("n", "q", "/", hw), ("p", "q", "%", hw)]
            return {"per_beat": steps, "element": f"n * {c * hw} + r * {beat * hw} + e * {hw} + p"}
        return {"per_beat": steps, "element": f"r * {beat * hw} + e * {hw} + q"}
    if beat % c == 0 and hw % (beat // c) == 0 and images:
        m = beat // c
        if images > 1:
            return {"per_beat": [("n", "b", "/", hw // m), ("r", "b", "%", hw // m)],
                    "element": f"n * {c * hw} + (e % {c}) * {hw} + r * {m} + e DIV {c}"}
        return {"per_beat": [], "element": f"(e % {c}) * {hw} + b * {m} + e DIV {c}"}
    x = f"(b * {beat} + e)"
    return {"per_beat": [], "element": f"({x} DIV {c * hw}) * {c * hw} + ({x} % {c}) * {hw} + ({x} DIV {c}) % {hw}"}


def onchip_eval(form: Dict, b: int, e: int) -> int:
    """onchip_form's offset of element e of beat b, computed as the top computes it."""
    env = {"b": b, "e": e}
    for name, arg, op, k in form["per_beat"]:
        env[name] = env[arg] // k if op == "/" else env[arg] % k
    return int(eval(form["element"].replace("DIV", "//"), {"__builtins__": {}}, env))


def onchip_sv(form: Dict, beat_var: str, prefix: str, beats: int) -> Dict:
    """onchip_form in SystemVerilog for the top (templates/rtl/top.sv.j2): the once-a-beat
    signals, prefix_<name>, each as wide as the beat numbers and its divisor need, as (signal,
    its source, op, divisor, bits), and the element's offset (e: the beat's element loop)."""
    names = {"b": beat_var, **{n: f"{prefix}_{n}" for n, _, _, _ in form["per_beat"]}}
    bits = max(1, (beats - 1).bit_length())
    steps = [(names[n], names[arg], op, k, max(bits, k.bit_length())) for n, arg, op, k in form["per_beat"]]
    element = re.sub(r"\b([bqrnp])\b", lambda m: names[m.group(1)], form["element"]).replace("DIV", "/")
    return {"steps": steps, "element": element}


def onchip_index(ch: "Channel", count: int) -> np.ndarray:
    """The on-chip (row-major, NCHW) index of every element in its off-chip order (NHWC for 4-D)."""
    i = np.arange(count, dtype=np.int64)
    if not ch.c:
        return i
    chw = ch.c * ch.hw
    return (i // chw) * chw + (i % ch.c) * ch.hw + (i // ch.c) % ch.hw


def _row_of(geom: List[int], j: np.ndarray) -> np.ndarray:
    """The row of on-chip elements j as hlsgen_core's row check counts it (geometry C*H*W, H, W, ALL)."""
    chw, h, w, _ = geom
    return (j // chw) * h + (j // w) % h


def read_table(geom: List[int], order: np.ndarray, beat: int) -> List[int]:
    """Rows complete (all their elements loaded) after each beat, loading in off-chip order."""
    count = len(order)
    nb = -(-count // beat)
    if geom[3] > 0:                                   # wait-for-all source: everything at the end
        return [0] * (nb - 1) + [geom[3]]
    row = _row_of(geom, order)
    nrows = int(row.max()) + 1 if count else 0
    lastpos = np.zeros(nrows, dtype=np.int64)
    np.maximum.at(lastpos, row, np.arange(count, dtype=np.int64))
    ready = np.maximum.accumulate(lastpos)            # row q complete (with all before it) once loaded past this
    loaded = np.minimum(count, (np.arange(nb, dtype=np.int64) + 1) * beat)
    return [int(v) for v in np.searchsorted(ready, loaded, side="left")]


def write_table(geom: List[int], order: np.ndarray, beat: int) -> List[int]:
    """Rows that must be published before each beat (and all before it) can be written out."""
    count = len(order)
    row = _row_of(geom, order) + 1
    nb = -(-count // beat)
    need = np.zeros(nb, dtype=np.int64)
    np.maximum.at(need, np.arange(count, dtype=np.int64) // beat, row)
    return [int(v) for v in np.maximum.accumulate(need)]


def _pixel_major(graph: Graph, name: str) -> Dict[str, int]:
    shape = graph.tensors[name].shape
    if len(shape) != 4 or shape[1] == 1 or shape[2] * shape[3] == 1:
        return {}
    return {"c": int(shape[1]), "hw": int(shape[2] * shape[3])}


def _layout(graph: Graph, store) -> Dict[str, int]:
    """A spill is pixel-major off chip; the graph's own inputs and outputs (--io offchip) are
    host buffers, row-major as the data files and the HLS kernel have them."""
    return {} if store.io else _pixel_major(graph, store.tensor)


def weight_beat(sched: Schedule, real) -> int:
    """Weights per beat of a streamed-weight channel, and so per row of a core's WROM (1 when no
    weight is streamed). A power of two: the core splits a weight's index into row and place."""
    if not real.woff:
        return 1
    beat = max(1, sched.port_bits // real.wcw)
    if beat & (beat - 1):
        raise ValueError(f"an m_axi beat of {sched.port_bits} bits holds {beat} weights of {real.wcw} bits, "
                         "not a power of two")
    return beat


def plan(graph: Graph, sched: Schedule, real, root, core_of: Dict[str, int], stage_of: Dict[str, int],
         weights_per_task: Dict[str, int]) -> (List[Channel], List[Dict]):
    """The channels (without on-chip addresses, counters, tables and triggers) and the pointer
    arguments, in the HLS kernel's argument order: its spills, then wmem."""
    spills = [s for s in real.stores.values() if s.kind == "offchip"]
    # a graph input in off-chip memory (--io offchip) is loaded from its data file, a graph
    # output is compared with its golden file after the run
    pointers = [{"name": s.var, "label": s.label, "bytes": s.size * s.cw // 8,
                 "file": f"{s.var}.bin" if s.io == "input" else None,
                 "golden": f"{s.var}.bin" if s.io == "output" else None,
                 "cw": s.cw, "size": s.size} for s in spills]
    ptr_of = {s.tensor: k for k, s in enumerate(spills)}
    bundle_of = {s.tensor: s.bundle for s in spills}
    if real.woff:
        pointers.append({"name": "wmem", "label": "weights", "bytes": int(real.weight_image.size) * real.wcw // 8,
                         "file": "weights.bin", "golden": None, "cw": real.wcw, "size": int(real.weight_image.size)})
    plans = {p.name: p for s in sched.stages for p in s.tasks}
    tasks = {t.name: t for t in graph.tasks}
    prod_stage = {o: stage_of[t.name] for t in graph.tasks if t.name in stage_of for o in t.outputs}
    port_bits = sched.port_bits
    out: List[Channel] = []
    for s in sched.stages:
        stored = {b.tensor for b in s.buffers if b.kind == "offchip"}     # the schedule's off-chip buffers here
        for p in s.tasks:
            if p.name not in core_of:
                continue                                   # a free task: no word, no traffic (as the model)
            t, c = tasks[p.name], core_of[p.name]
            reads = []
            for n in t.inputs:
                r = root(n)
                if n not in stored or r not in ptr_of:
                    continue
                # produced in this dataflow stage (and stored for a later one): read on chip
                if s.mode == "dataflow" and prod_stage.get(r) == s.index:
                    continue
                st = real.stores[r]
                beat = max(1, port_bits // st.cw)
                reads.append(Channel(p.name, c, False, "input", n, r, bundle_of[r], ptr_of[r], 0, st.size, st.cw,
                                     st.bits, st.signed, beat, **_layout(graph, st),
                                     epc=beat_lanes(beat, sched.max_beat_lanes)))
            if plans[p.name].weights == "offchip" and p.name in real.woff:
                n = weights_per_task[p.name]
                w = Channel(p.name, c, False, "weights", p.name, p.name, "gmem0", len(pointers) - 1,
                            real.woff[p.name] * real.wcw // 8, n, real.wcw, real.wcw, True, weight_beat(sched, real))
                # a bundle issues its channels' bursts lowest channel first and the memory answers
                # in order: a graph input smaller than the task's weights goes first, so the task
                # does not wait for all its weights before its input's first beat
                small = any(real.stores[ch.root].io and ch.count * ch.cw < n * real.wcw for ch in reads)
                reads = reads + [w] if small else [w] + reads
            out += reads
            for o in t.outputs:
                if o in stored and o in ptr_of:
                    st = real.stores[o]
                    beat = max(1, port_bits // st.cw)
                    out.append(Channel(p.name, c, True, "output", o, o, bundle_of[o], ptr_of[o], 0, st.size, st.cw,
                                       st.bits, st.signed, beat, **_layout(graph, st),
                                       epc=beat_lanes(beat, sched.max_beat_lanes)))
    for ch in out:
        if ch.off % ALIGN:
            raise ValueError(f"m_axi channel of {ch.task}: offset {ch.off} is not {ALIGN}-byte aligned")
    return out, pointers
