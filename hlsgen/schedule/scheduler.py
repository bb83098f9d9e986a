"""The InTAR-style scheduler: split the task list into stages, run each stage as dataflow or
sequential, pick every task's folding, place every buffer, all from the cost model.

Execution model (docs/performance.md has the derivations):
- Stages run one after another. Each stage has its own cores in the emitted kernels (neither
  backend yet reuses one stage's datapaths in another, as InTAR's compute cores are reused),
  and its own FIFOs and line buffers, so resources add up over the stages. Resident weights
  and the graph's input and output arrays persist, so they are reserved for the whole design.
- dataflow stage: every task has its own datapath; tasks stream to each other through FIFOs.
  A task starts once its producers have emitted the blocks it needs (rows for convolutions);
  the stage takes (pipeline fill along the critical path) + (batch - 1) x (slowest task).
- sequential stage: one compute core time-shared by the tasks in order; each task gets the
  best folding whose DSPs fit the core; intermediates live in on-chip scratchpads.
- A tensor that is not a FIFO inside a dataflow stage is stored, in an array of its own for
  the whole run (counted with the stage that produces it): on chip for the smallest tensors
  while together they take at most `scratch_fraction` of the capped on-chip memory,
  otherwise off-chip (written once, read by each consumer). The rule depends on the tensors
  only, so every segmentation places a tensor the same way.
- Weights are resident on chip when all of them fit in half of the capped on-chip memory,
  otherwise every task streams its weights from off-chip memory for every input.
- Off-chip traffic runs on AXI ports of `port_bits`, limited by the memory channel bandwidth;
  a task's streams share the memory's channels (all of them on one channel of a single-channel
  memory) and overlap its compute. Reads wait the memory latency before their first beat and
  the last write waits it for its response, so a task takes
  latency x (reads? + writes?) + max(compute, transfer); the whole stage is limited by the
  memory's total bandwidth. (Measured against the RTL with its m_axi ports: docs/rtl.md.)

Search (`mode="auto"`): dynamic programming over segmentations of the task list into
contiguous stages of at most `max_segment` tasks, each stage dataflow or sequential with its
own allocation under one stage budget, plus the two single-stage designs (whole-graph
dataflow and whole-graph sequential). The DP is exact for that space at that budget because
a stage's cost and feasibility depend only on its first and last task. Its best segmentation
must also fit as emitted (the stages' compute added up). While it does not, the DP runs again
at the same stage budget with a price on every stage's resources (Lagrangian pricing, `_priced`:
it then trades cycles for fewer cores, and its best that fits is a candidate), and then the stage
budget shrinks by the overshoot and the DP runs again (at most FIT_ROUNDS passes). Auto picks the
fastest candidate, so it is never worse than either baseline, which are single stages at the full
budget. Pricing finds only designs on the lower convex hull of (resources, cycles), so after it an
exact search at the same budget (`_exact`: the shortest path under the cap, the stages' cycles and
resources adding up) finds the fastest segmentation that fits, where one is faster than the best
known; it gives up past EXACT_LABELS partial designs (docs/performance.md).
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field, replace
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

import numpy as np

from ..errors import HlsgenError
from ..ir.graph import Graph
from ..ir.types import container_bits
from ..ops import OPS
from .cost import (BRAM18_BITS, PIPELINE_BASE_DEPTH, URAM_BITS, Folding, Resources, TaskOption, beat_lanes, budget, core_dsp,
                   default_port_bits, evaluate, fifo, fits, onchip_bits, over_cap, pareto, pareto_options, pools_dsp,
                   port_bytes_per_cycle, shortfall, storage, transfer_cycles)
from .device import RESOURCES, Device, port_bits_ok
from .schedule import Buffer, Schedule, Stage, TaskPlan, format_segmentation, parse_segmentation

MODES = ("auto", "dataflow", "sequential")    # a Schedule's mode may also be "fixed" (--stages)
OBJECTIVES = ("latency", "throughput")
STAGE_SWITCH_CYCLES = 3      # the top sees the last core's done, starts the next stage's cores and
                             # they fetch their first word (hlsgen_top's WAIT -> RUN, the core's
                             # IDLE -> FETCH; pipelines drain inside their tasks, depth_of). Not
                             # before the first stage: segment costs include it, the schedule's
                             # total takes it back once
TASK_SWITCH_CYCLES = 1       # the core loads its next configuration word, one ROM row (InTAR
                             # quotes 10-20 ns for its FIFO read + mux; hlsgen_core measures 1)
MEMORY_LATENCY_CYCLES = 100  # first word of an off-chip burst
WINDOW_OPS = ("conv", "linear", "maxpool", "avgpool")    # the ops the cores run as window words
                             # (a step: VEC pixels of one row); the rest step through consecutive elements
KERNEL_CONTROL_CYCLES = 4    # ap_start to the first input beat, state changes around the stages, the
                             # last output beat to ap_done: an estimate of hlsgen_top's state changes,
                             # not measured on its own (docs/performance.md)
RECONF_LUT_PER_TASK = 64     # operand/result muxes of a core per extra configuration
WEIGHT_REGISTER_BITS = 16384  # weight arrays up to this size are fully partitioned into registers
GREEDY_STEPS = 24            # latency refinement of a dataflow allocation: at most this many upgrades,
GREEDY_TRIALS = 6            # each trying the slowest tasks
SEQ_GREEDY_STEPS = 256       # growth of a sequential core (pools): at most this many upgrades
# the graph's inputs and outputs: AXI4-Stream ports into on-chip arrays, or host buffers in off-chip
# memory; by group, or port by port with offchip:PORT,.. (in<k> / out<k>, the k-th graph input or
# output, which names its stream port or pointer either way); auto moves the group whose arrays
# are larger off chip first
IO_GROUPS = {"onchip": (), "offchip": ("inputs", "outputs"), "offchip-inputs": ("inputs",),
             "offchip-outputs": ("outputs",)}
IO_CHOICES = ("auto", *IO_GROUPS)
IO_PORTS = "offchip:"
FIT_ROUNDS = 8               # auto: DP passes at shrinking stage budgets until the stages' sum fits
PRICE_CEILING = 64           # auto, a round whose best does not fit: price resources at most 64 x the
PRICE_FLOOR = 32             # design's cycles per whole cap (the DP then all but minimizes them), at
                             # least 1/32 of them (about what the fastest designs trade)
PRICE_BISECTIONS = 3         # then narrow the price between the last that did not fit and the first that did
EXACT_LABELS = 4000          # then the exact search at that budget keeps at most this many partial designs


def io_ports(io: str) -> Optional[Tuple[Tuple[str, int], ...]]:
    """The ports of an `--io offchip:in1,out0` value as ("in" | "out", k) (None for the other
    choices); raises HlsgenError for a malformed list."""
    if not io.startswith(IO_PORTS):
        return None
    names = io[len(IO_PORTS):].split(",")
    found = [re.fullmatch(r"(in|out)(0|[1-9][0-9]*)", q) for q in names]
    if not all(found) or len(set(names)) != len(names):
        raise HlsgenError(f"--io {io!r}: list the ports to put off chip once each, e.g. offchip:in1,out0 "
                          "(in<k> / out<k>: the graph's k-th input / output)")
    return tuple((m.group(1), int(m.group(2))) for m in found)


def check_io(io: str) -> str:
    """An --io value: one of IO_CHOICES or offchip:PORT[,PORT...]."""
    if io not in IO_CHOICES and io_ports(io) is None:
        raise HlsgenError(f"--io {io!r}: choose {', '.join(IO_CHOICES)} or offchip:PORT[,PORT...] "
                          "(e.g. offchip:in1,out0)")
    return io


def _mem_bits(r: Resources) -> int:
    """The on-chip memory bits a placement takes (whole blocks; LUTRAM at 64 bits a LUT)."""
    return r.bram18 * BRAM18_BITS + r.uram * URAM_BITS + r.lut * 64


def _kib(bits: int) -> str:
    return f"{bits / 8192:,.1f} KiB"


def _core_need(core: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """Resources (Resources.as_tuple order) of sequential cores given as the maxima of their
    tasks' option rows (columns 1-5 resources, 6-12 TaskOption.roles; any leading axes): each
    resource at its largest user plus `extra` (scratchpads, muxes), but DSPs as the three pools
    hlsgen_core_dp builds (cost.core_dsp)."""
    nd = core[..., 1:6] + extra
    nd[..., 0] = pools_dsp([core[..., 6 + r] for r in range(7)]) + extra[0]    # column views, no copy
    return nd


@dataclass(frozen=True)
class ScheduleOptions:
    mode: str = "auto"
    clock_mhz: Optional[float] = None
    resource_cap: float = 0.8
    objective: str = "latency"
    batch: int = 1
    port_bits: Optional[int] = None          # None: the device's (Device.port_bits)
    max_segment: int = 24
    weights: str = "auto"                     # auto | onchip | offchip
    io: str = "auto"                          # the graph's inputs and outputs: IO_CHOICES | offchip:PORT,..
    scratch_fraction: float = 0.25           # of the capped on-chip memory, for all on-chip tensors together
    folding: Tuple[Tuple[str, Tuple[int, int, int]], ...] = ()   # fixed foldings (validation)
    stages: str = ""                          # a fixed segmentation, e.g. "S3 D7" (the reports' notation)
    max_lanes: Optional[int] = None          # no task folded wider than this many lanes (VEC x PE x SIMD)
    max_beat_lanes: Optional[int] = None     # no beat of activations (AXI4-Stream or m_axi) moved more elements
                                             # a cycle on chip (cost.beat_lanes); None: max_lanes's limit

    def check(self):
        if self.mode not in MODES:
            raise HlsgenError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        if self.objective not in OBJECTIVES:
            raise HlsgenError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if not (0 < self.resource_cap <= 1):
            raise HlsgenError(f"--resource-cap {self.resource_cap} must be in (0, 1], e.g. 0.8")
        if self.clock_mhz is not None and not (1 <= self.clock_mhz <= 2000):
            raise HlsgenError(f"--clock {self.clock_mhz} MHz is not a plausible FPGA clock; pass e.g. 300")
        if self.batch < 1:
            raise HlsgenError(f"--batch {self.batch} must be at least 1")
        if self.weights not in ("auto", "onchip", "offchip"):
            raise HlsgenError(f"weights placement {self.weights!r}: choose auto, onchip or offchip")
        check_io(self.io)
        if self.port_bits is not None and not port_bits_ok(self.port_bits):
            raise HlsgenError(f"port width {self.port_bits} bits: use a multiple of 8 up to 1024")
        if self.max_lanes is not None and (not isinstance(self.max_lanes, int) or self.max_lanes < 1):
            raise HlsgenError(f"--max-lanes {self.max_lanes} must be a whole number of lanes, at least 1")
        if self.max_beat_lanes is not None and (not isinstance(self.max_beat_lanes, int) or self.max_beat_lanes < 1):
            raise HlsgenError(f"--max-beat-lanes {self.max_beat_lanes} must be a whole number of elements, at least 1")
        if self.stages:
            self.segmentation()
            if self.mode != "auto":
                raise HlsgenError(f"--stages {self.stages!r} fixes every stage's mode; leave --mode at auto")

    @property
    def beat_limit(self) -> Optional[int]:
        """The most elements of a beat moved a cycle on chip: --max-beat-lanes, else --max-lanes."""
        return self.max_beat_lanes if self.max_beat_lanes is not None else self.max_lanes

    def segmentation(self) -> List[Tuple[str, int]]:
        """The fixed segmentation of `stages`: (mode, tasks) per stage."""
        return parse_segmentation(self.stages)


class _Traffic(NamedTuple):
    """A task's off-chip transfers in one stage, for one input."""
    nbytes: int                       # read and written
    cycles: int                       # transferring them (overlaps the task's compute)
    latency: int                      # the memory's latency the task waits (does not overlap)
    reads: bool
    writes: bool
    serial: int = 0                   # transfers of the graph's own off-chip inputs and outputs that
                                      # cannot overlap the compute (Problem._streams)
    tail: int = 0                     # a writer's: what follows its last row in a dataflow stage (its
                                      # serial write part and the last write response's latency)
    port: Tuple[int, int, int, int] = (0, 0, 0, 0)  # the cycles its reads and its writes hold their
                                      # side of a port (R, W; serial parts included) and how many
                                      # streams each side has
    serial_of: Tuple[Tuple[str, int], ...] = ()     # its serial reads: (tensor, cycles) each


@dataclass
class _SegResult:
    cycles: int                       # for the batch, stage switch included
    res: Resources
    choice: Dict                      # mode-specific: chosen options, T or core DSP
    feasible: bool
    short: List[str] = field(default_factory=list)


class Problem:
    """Everything about a graph on a device that does not depend on the segmentation."""

    def __init__(self, graph: Graph, device: Device, opts: ScheduleOptions):
        opts.check()
        self.clock = float(opts.clock_mhz or device.clock_mhz)
        if opts.port_bits is None:
            opts = replace(opts, port_bits=default_port_bits(device, self.clock))
        self.g, self.dev, self.opts = graph, device, opts
        self.tasks = list(graph.tasks)
        if not self.tasks:
            raise HlsgenError(f"model {graph.name!r} has no tasks to schedule")
        self.n = len(self.tasks)
        self.pos = {t.name: k for k, t in enumerate(self.tasks)}
        self.nests = []
        for t in self.tasks:
            try:
                self.nests.append(OPS[t.op].loops(t, graph))
            except NotImplementedError:
                raise HlsgenError(f"task {t.name!r}: op {t.op!r} has no cost model yet; it cannot be scheduled") from None
        self.macs = [int(OPS[t.op].macs(t, graph)) for t in self.tasks]
        self._mac_prefix = np.concatenate([[0], np.cumsum([m if nest.multiply else 0
                                                           for m, nest in zip(self.macs, self.nests)])])
        # what a task needs in a dataflow stage besides its datapath: line buffer, whole-tensor buffer
        self.stream_buffers = [storage(n.window_bits, max(1, n.act_bits * 8), device) +
                               storage(n.full_buffer_bits, max(1, n.act_bits), device) for n in self.nests]
        self.budget = budget(device, opts.resource_cap)
        mem = device.main_memory
        self.total_bpc = mem.bandwidth_gbs * 1e9 / (self.clock * 1e6)
        self.port_bpc = port_bytes_per_cycle(device, self.clock, opts.port_bits)
        self.mem_channels = max(1, mem.channels)
        self._weights()
        fixed = dict(opts.folding)
        unknown = sorted(set(fixed) - set(self.pos))
        if unknown:
            raise HlsgenError(f"fixed folding names unknown task {unknown[0]!r}; task names are listed by `hlsgen inspect`")
        self.options: List[List[TaskOption]] = []
        for t, nest in zip(self.tasks, self.nests):
            if t.name in fixed:
                v, p, s = fixed[t.name]
                if nest.pe_bound % p or nest.simd_bound % s or (nest.vectors and nest.vectors % v):
                    raise HlsgenError(f"task {t.name!r}: folding vec={v} pe={p} simd={s} does not divide its loop bounds "
                                      f"(vectors {nest.vectors}, pe {nest.pe_bound}, simd {nest.simd_bound})")
                self.options.append([evaluate(nest, Folding(v, p, s), device)])
            else:
                k = len(self.options)
                ol = pareto_options(nest, device)
                if opts.max_lanes:      # the narrowest option where none is as narrow
                    ol = [o for o in ol if o.folding.lanes <= opts.max_lanes] or [min(ol, key=lambda o: o.folding.lanes)]
                if nest.multiply and self.weight_read_bits[k] != float("inf"):
                    ol = self._banked(k, nest, ol)
                self.options.append(ol)
        # each option's place in its task's list (the dataflow refinement steps to the next faster one)
        self._opt_pos = [{id(o): p for p, o in enumerate(ol)} for ol in self.options]
        # for sequential cores, each task's options as two chains of ever faster picks, as arrays:
        # by DSP (each option's entry the fastest of those with as many DSPs or fewer; the core
        # size search and the greedy growth start there), and by DSP then LUT, from the cheapest
        # option (a second greedy growth: a task without multipliers, whose options differ in LUTs
        # alone, may then stay narrower where its fastest would not fit the LUT cap)
        self._by_dsp = [self._chain(ol, lambda o: (o.res.dsp, o.cycles, o.res.lut)) for ol in self.options]
        self._by_lut = [self._chain(ol, lambda o: (o.res.dsp, o.res.lut, o.cycles)) for ol in self.options]
        self._cache: Dict = {}
        self._fifos: Dict[Tuple[int, int], Resources] = {}
        self._arange: Dict[Tuple[int, int], np.ndarray] = {}
        self._need_idx: Dict[Tuple[float, int, int], np.ndarray] = {}
        self.cache_hits = 0
        # tasks with the same loop nest, options and weight placement cost the same
        interned: Dict = {}
        self._task_sig = [interned.setdefault((t.op, nest, self.weight_place[k],
                                               tuple(tuple(o.folding.as_list()) for o in self.options[k])), len(interned))
                          for k, (t, nest) in enumerate(zip(self.tasks, self.nests))]
        self._tensor_facts()
        self._check_io_offchip()
        # what the stages share: the resident weights and the graph's input and output arrays
        self.fixed = self.reserved + self.io_mem
        if not fits(self.fixed, self.budget) and self.io:
            big = max((n for n in self.io if n in self.bits), key=lambda n: self.bits[n])
            raise HlsgenError(f"model {graph.name!r} does not fit {device.name} under --resource-cap {opts.resource_cap}: "
                              f"the kernel holds its inputs and outputs on chip ({_kib(self.bits[big])} for "
                              f"{big!r} alone){' beside the resident weights' if self.resident else ''}: "
                              f"{shortfall(self.fixed, self.budget)[0]}; pass --io offchip (or auto), pick a larger "
                              f"device or a larger --resource-cap")
        self.stage_budget = Resources(*(max(0, getattr(self.budget, f) - getattr(self.fixed, f)) for f in RESOURCES))

    @staticmethod
    def _chain(options: List[TaskOption], key):
        """The options in `key` order, each replaced by the fastest of it and those before it:
        (their DSPs, those picks, the picks' rows as an array: cycles, resources, roles)."""
        best, dsps, picks = None, [], []
        for o in sorted(options, key=key):
            if best is None or o.cycles < best.cycles:
                best = o
            dsps.append(o.res.dsp)
            picks.append(best)
        arr = np.array([[p.cycles, p.res.dsp, p.res.bram18, p.res.uram, p.res.lut, p.res.ff, *p.roles] for p in picks],
                       dtype=np.int64)
        return np.array(dsps, dtype=np.int64), picks, arr, np.array([p.folding.pe for p in picks], dtype=np.int64)

    # ------------------------------------------------------------------ facts
    def _tensor_facts(self):
        g = self.g
        self.prod: Dict[str, int] = {n: -1 for n in g.inputs}
        self.cons: Dict[str, List[int]] = {}
        for k, t in enumerate(self.tasks):
            for o in t.outputs:
                self.prod[o] = k
            for i in t.inputs:
                if not g.tensors[i].is_const:
                    self.cons.setdefault(i, []).append(k)
        self.act = [n for n in self.prod]
        self.size = {n: g.tensors[n].size for n in self.act}
        self.bits = {n: self.size[n] * g.tensors[n].dtype.bits for n in self.act}
        outs = set(g.outputs)
        # the graph's inputs and outputs on chip are AXI4-Stream ports of port_bits: both kernels
        # read the inputs into on-chip arrays before the first stage and write the outputs after
        # the last (in row-major order, which a producer completes only at its end), so those
        # transfers are serial, not overlapped with any task (a beat a cycle, or in steps under
        # --max-lanes: _stream_cycles). Off chip (--io), they are host buffers, read and written
        # by their tasks as they run, like any off-chip tensor
        self.io = set(self.io_array)
        self.stream_in = sum(self._stream_cycles(n) for n in g.inputs if n in self.io) * self.opts.batch
        self.stream_out = sum(self._stream_cycles(n) for n in g.outputs if n in self.io) * self.opts.batch
        self.io_bytes = sum(self.size[n] * container_bits(g.tensors[n].dtype.bits) // 8
                            for n in self.io if n in self.size) * self.opts.batch
        self.last = {n: (self.n if n in outs else max(self.cons.get(n, [self.prod[n]]))) for n in self.act}
        # every stored tensor is its own array for the whole run too (a static scratchpad of the
        # HLS kernel, nothing reuses it). On chip go the smallest first, while together they take
        # at most scratch_fraction of the capped on-chip memory; the others are stored off-chip.
        # Tensors of one size go on chip all together or not at all, so the repeated layers of a
        # stack stay identical (and are costed once). The rule depends on the tensors only, so
        # every segmentation places a tensor the same way
        self.scratch_limit = self.opts.scratch_fraction * onchip_bits(self.dev, self.opts.resource_cap)
        self.mem = {n: storage(self.bits[n], 64, self.dev) for n in self.act if n not in self.io and n not in self.io_off}
        self.offchip = {n: True for n in self.act}
        by_size: Dict[int, List[str]] = {}
        for n in self.mem:
            by_size.setdefault(self.bits[n], []).append(n)
        taken = 0
        for bits in sorted(by_size):
            need = sum(_mem_bits(self.mem[n]) for n in by_size[bits])
            if taken + need <= self.scratch_limit:
                taken += need
                for n in by_size[bits]:
                    self.offchip[n] = False
        names = [n for n in self.act if not self.offchip[n]]
        self._on_prod = np.array([self.prod[n] for n in names], dtype=np.int64)
        self._on_last = np.array([self.last[n] for n in names], dtype=np.int64)
        self._on_mem = np.array([self.mem[n].as_tuple() for n in names], dtype=np.int64).reshape(-1, 5)

    def _check_io_offchip(self):
        """An off-chip graph input or output needs a task with a datapath at its end: both
        kernels alias a free task's output (a reshape) to its input, so an input reshaped
        first, or an output made by a reshape, would never cross the memory."""
        for n in sorted(self.io_off):
            free = self._free_end(n)
            if free is not None:
                why = " (chosen because their on-chip arrays do not fit)" if self.opts.io == "auto" else ""
                raise HlsgenError(f"model {self.g.name!r}: the graph's {'output' if n in self.g.outputs else 'input'} "
                                  f"{n!r} cannot be an off-chip buffer{why}: task {self.tasks[free].name!r} "
                                  f"({self.tasks[free].op}) moves no data for it to cross the memory; pass --io "
                                  f"onchip (with a larger device or --resource-cap if the arrays do not fit)")

    def _free_end(self, n: str) -> Optional[int]:
        """The first free task (no datapath: a reshape) that makes or reads tensor n, if any."""
        return next((k for k, t in enumerate(self.tasks) if self.nests[k].free and (n in t.inputs or n in t.outputs)),
                    None)

    def _stream_cycles(self, n: str) -> int:
        """The cycles a graph input or output on chip takes on its AXI4-Stream port: its beats,
        each in steps where --max-beat-lanes (else --max-lanes) moves fewer of a beat's elements a
        cycle into or out of the RTL's activation memory (cost.beat_lanes)."""
        t = self.g.tensors[n]
        beat = max(1, self.opts.port_bits // container_bits(t.dtype.bits))
        return -(-t.size // beat) * (beat // beat_lanes(beat, self.opts.beat_limit))

    def mac_bound(self, i: int, j: int) -> int:
        """A lower bound on the cycles of tasks [i, j) in one stage at the stage budget: every
        multiply of the batch at most 3 products per DSP per cycle (cost.macs_per_dsp's best)."""
        return self.opts.batch * int(self._mac_prefix[j] - self._mac_prefix[i]) // (3 * max(1, self.stage_budget.dsp))

    def outside_cycles(self) -> int:
        """What a schedule's total adds to the sum of its stages: the input and output streams
        and the kernel's start/done control, less the switch-in of the first stage (nothing to
        drain before it)."""
        return self.stream_in + self.stream_out + KERNEL_CONTROL_CYCLES - STAGE_SWITCH_CYCLES

    def _io_request(self) -> Set[str]:
        """The graph inputs and outputs --io puts off chip (none for auto, which decides later)."""
        g = self.g
        ports = io_ports(self.opts.io)
        if ports is None:
            groups = IO_GROUPS.get(self.opts.io, ())
            return (set(g.inputs) if "inputs" in groups else set()) | (set(g.outputs) if "outputs" in groups else set())
        off = set()
        for kind, k in ports:
            names = g.inputs if kind == "in" else g.outputs
            if k >= len(names):
                have = ", ".join([f"in{i}" for i in range(len(g.inputs))] + [f"out{i}" for i in range(len(g.outputs))])
                raise HlsgenError(f"--io {self.opts.io!r}: model {g.name!r} has no port {kind}{k}; its ports are {have}")
            off.add(names[k])
        return off

    def _io_arrays(self, off: Set[str]):
        """On chip, both kernels hold every graph input and output in an array for the whole run
        (xin/yout in the HLS kernel): reserved beside the weights, which must know it first. Off
        chip (the tensors in `off`), they are host buffers."""
        g = self.g
        names = list(dict.fromkeys(list(g.inputs) + list(g.outputs)))
        self.io_off = set(off)
        self.io_array = {n: storage(g.tensors[n].size * g.tensors[n].dtype.bits, 64, self.dev)
                         for n in names if n not in off}
        self.io_mem = Resources()
        for r in self.io_array.values():
            self.io_mem = self.io_mem + r

    def _io_auto(self) -> None:
        """auto: the inputs or the outputs off chip, the group whose arrays are larger first,
        until the arrays fit beside the weights. A group that a free task begins or ends (a
        reshape: nothing would cross the memory, _check_io_offchip) stays on chip."""
        g = self.g

        size = {grp: sum(g.tensors[n].size * g.tensors[n].dtype.bits for n in names)
                for grp, names in (("inputs", g.inputs), ("outputs", g.outputs))}
        off: Set[str] = set()
        for grp in sorted(size, key=lambda x: (-size[x], x)):
            if fits(self.reserved + self.io_mem, self.budget):
                break
            names = g.inputs if grp == "inputs" else g.outputs
            if not any(self._free_end(n) is not None for n in names):
                off |= set(names)
                self._io_arrays(off)

    def _weights(self):
        self._io_arrays(self._io_request())
        self.weight_bits = [n.weights * n.weight_bits for n in self.nests]
        total = sum(self.weight_bits)
        usable = onchip_bits(self.dev, self.opts.resource_cap)
        want = self.opts.weights
        self.resident = (want == "onchip") or (want == "auto" and total <= usable / 2)
        self._place_weights()
        if self.resident and want == "auto" and not fits(self.reserved, self.budget):
            self.resident = False          # they do not fit even alone: stream them
            self._place_weights()
        # auto: the graph's inputs and outputs go off chip before the weights do (they cross
        # the memory once per input either way, streamed weights once per task and input)
        if self.opts.io == "auto" and not fits(self.reserved + self.io_mem, self.budget):
            self._io_auto()
        if self.resident and want == "auto" and not fits(self.reserved + self.io_mem, self.budget):
            self.resident = False          # they do not fit after all: stream them
            self._place_weights()

    def _place_weights(self):
        g = self.g
        reserved = Resources()
        self.weight_place = []
        # weight bits the lanes may read per cycle: resident weights are stored densely (72-bit
        # words) and each block has two read ports, so wide foldings need proportionally
        # many blocks; LUTRAM/register weights and streamed weights do not limit the folding
        self.weight_read_bits = []
        self.weight_dense = []
        for k, wb in enumerate(self.weight_bits):
            self.weight_dense.append(Resources())
            if wb == 0 or not self.resident:
                self.weight_place.append("none" if wb == 0 else "offchip")
                self.weight_read_bits.append(float("inf"))
                continue
            if wb <= WEIGHT_REGISTER_BITS:
                # small weight arrays are partitioned completely: registers, any read width
                reserved = reserved + Resources(ff=wb, lut=wb // 4)
                self.weight_place.append("registers")
                self.weight_read_bits.append(float("inf"))
                continue
            r = storage(wb, 72, self.dev)
            reserved = reserved + r
            self.weight_dense[k] = r
            self.weight_place.append("uram" if r.uram else "bram")
            self.weight_read_bits.append(2 * 72 * r.uram if r.uram else 2 * 36 * r.bram18)
        self.reserved = reserved
        if self.resident and self.opts.weights == "onchip" and not fits(reserved, self.budget):
            raise HlsgenError(f"model {g.name!r}: the weights do not fit on chip under --resource-cap "
                              f"{self.opts.resource_cap} ({shortfall(reserved, self.budget)[0]}); "
                              f"pass --weights offchip or a larger --resource-cap")

    def _banked(self, k: int, nest, ol: List[TaskOption]) -> List[TaskOption]:
        """Resident weights are reserved densely for the whole design; a folding that reads
        more weight bits per cycle than those blocks' ports deliver needs the array split over
        more blocks: the extra blocks are charged to the folding (so to its stage)."""
        dense = self.weight_dense[k]
        out = []
        for o in ol:
            width = o.folding.lanes * nest.weight_bits
            if width <= self.weight_read_bits[k]:
                out.append(o)
                continue
            wide = storage(self.weight_bits[k], -(-width // 2), self.dev)   # two read ports per block
            extra = Resources(bram18=max(0, wide.bram18 - dense.bram18), uram=max(0, wide.uram - dense.uram))
            out.append(replace(o, res=o.res + extra))
        return pareto(out)

    # ------------------------------------------------------------------ traffic
    def _stored(self, name: str, i: int, j: int, mode: str) -> bool:
        """Is this activation stored (not a FIFO) when tasks [i, j) form a stage of `mode`?"""
        if mode == "sequential":
            return True
        p = self.prod[name]
        return not (i <= p and self.last[name] < j)

    def _streams(self, k: int, i: int, j: int, mode: str) -> Tuple[List[Tuple], ...]:
        """The off-chip reads and writes of task k (bytes each, for one input) in stage [i, j) that
        overlap its compute, each as (bytes, the port's bytes of the cycles it takes), and the
        reads and writes that do not (serial), each as (bytes, port bytes, its tensor). An activation transfer whose beat is wider than
        --max-lanes moves fewer of its elements a cycle on chip (cost.beat_lanes), so it holds
        the port for more cycles than its bytes."""
        t = self.tasks[k]
        reads, writes, serial_r, serial_w = [], [], [], []
        if self.nests[k].free:
            return reads, writes, serial_r, serial_w
        if self.weight_place[k] == "offchip":    # in containers of 8/16/32 bits, as both kernels read them
            nest = self.nests[k]
            wbytes = nest.weights * container_bits(nest.weight_bits) / 8
            reads.append((wbytes, wbytes))
        for n, out in [(n, False) for n in t.inputs] + [(n, True) for n in t.outputs]:
            if n not in self.prod or not self.offchip[n] or n in self.io or not self._stored(n, i, j, mode):
                continue
            if not out and mode == "dataflow" and i <= self.prod[n] < j:
                continue        # made in this dataflow stage: read from its FIFO (both kernels), only stored
            # off chip, an activation is in containers of 8/16/32 bits (both kernels' m_axi
            # pointers, the RTL's beats): those are the bytes that move, not its packed bits
            cw = container_bits(self.g.tensors[n].dtype.bits)
            b = self.size[n] * cw / 8
            beat = max(1, self.opts.port_bits // cw)
            slow = max(1.0, self.port_bpc / (beat_lanes(beat, self.opts.beat_limit) * cw / 8))
            # the graph's own inputs and outputs off chip (--io offchip) are row-major host
            # buffers: a task that reads rows of all channels waits for the last channel, and
            # a producer completes all but its first channel's rows at its end, so (C-1)/C of
            # such a 4-D tensor moves before or after the compute, not beside it
            shape = self.g.tensors[n].shape
            if n in self.io_off and len(shape) == 4 and shape[1] > 1 and shape[2] * shape[3] > 1:
                part = b * (shape[1] - 1) / shape[1]
                (serial_w if out else serial_r).append((part, part * slow, n))
                b = b / shape[1]
            elif slow > 1 and len(shape) == 4 and shape[1] > 1 and shape[2] * shape[3] > 1:
                # a spill is pixel-major off chip: its on-chip rows complete a pixel row of every
                # channel (C x W elements) at a time, so the first such row a stepped stream reads,
                # or the last it writes, waits beside the compute, not under it (at the port's rate
                # that wait is within a burst's rounding)
                (serial_w if out else serial_r).append((0.0, shape[1] * shape[3] * cw / 8 * slow, n))
            (writes if out else reads).append((b, b * slow))
        return reads, writes, serial_r, serial_w

    def _traffic(self, k: int, i: int, j: int, mode: str) -> _Traffic:
        """Task k's off-chip transfers for one input. Its streams share the memory's channels
        (port_bpc each): the transfer overlaps the task's compute; the latency does not (the
        first read's, the last write response's), nor the serial part of the graph's own
        off-chip inputs and outputs."""
        reads, writes, serial_r, serial_w = self._streams(k, i, j, mode)
        if not reads + writes:
            return _Traffic(0, 0, 0, False, False)
        lanes = min(len(reads + writes), self.mem_channels)
        # each stream for its cycles, all of them for the memory's bandwidth; streams that move
        # slower than the port (--max-lanes) hold the chip's side of it (R for reads, W for
        # writes, which run at once) for their cycles, the other streams of that side after them
        cyc = max(max(transfer_cycles(p, self.port_bpc) for _, p in reads + writes),
                  transfer_cycles(sum(b for b, _ in reads + writes), self.port_bpc * lanes),
                  *(transfer_cycles(sum(p for _, p in side), self.port_bpc) for side in (reads, writes)
                    if any(p > b for b, p in side)))
        serial_of = tuple((n, transfer_cycles(p, self.port_bpc)) for _, p, n in serial_r)
        sr = sum(c for _, c in serial_of)
        sw = sum(transfer_cycles(p, self.port_bpc) for _, p, _ in serial_w)
        nbytes = sum(b for b, _ in reads + writes) + sum(b for b, _, _ in serial_r) + sum(b for b, _, _ in serial_w)
        port = (sum(transfer_cycles(p, self.port_bpc) for _, p in reads) + sr,
                sum(transfer_cycles(p, self.port_bpc) for _, p in writes) + sw, len(reads), len(writes))
        return _Traffic(int(nbytes), cyc, MEMORY_LATENCY_CYCLES * (bool(reads) + bool(writes)),
                        bool(reads), bool(writes), sr + sw, (MEMORY_LATENCY_CYCLES + sw) if writes else 0, port,
                        serial_of)

    def _scratch(self, i: int, j: int, mode: str) -> Resources:
        """The on-chip arrays a stage of tasks [i, j) adds to the design: each stored tensor is
        counted once, with the stage that produces it (a sequential stage stores all its
        outputs; a dataflow stage those a later stage reads)."""
        p, l = self._on_prod, self._on_last
        mine = (p >= i) & (p < j)
        if mode == "dataflow":
            mine &= l >= j
        return Resources(*(int(v) for v in self._on_mem[mine].sum(axis=0)))

    # ------------------------------------------------------------------ dataflow
    def _df_structure(self, i: int, j: int):
        """The FIFO edges of tasks [i, j) as one dataflow stage, with everything timing needs
        that does not depend on the foldings: per task (relative index) its FIFO inputs as
        (tensor, producer relative index, blocks the consumer waits for / producer blocks)."""
        edges = []
        for k in range(i, j):
            t, nest = self.tasks[k], self.nests[k]
            row = []
            for n in t.inputs:
                p = self.prod.get(n)
                # a producer in this stage feeds its consumer through a FIFO even when the tensor
                # is also stored for a later stage (the kernel fans it out to a storer)
                if p is None or not (i <= p < k):
                    continue
                blocks = max(1, self.nests[p].blocks)
                need = min(blocks, max(1, nest.lookahead))
                # an element word's step is its lanes' consecutive elements (pixel-major), which
                # may span several rows: a consumer's first step waits for all of them, and a
                # producer publishes the rows its step completes (a concat: its last input's)
                src = self.tasks[p].inputs[-1] if self.nests[p].parts == "inputs" else n
                rows_of = (max(1.0, self.size[n] / blocks) if t.op not in WINDOW_OPS else 0.0,
                           max(1.0, self.size[src] / blocks) if self.tasks[p].op not in WINDOW_OPS else 0.0, blocks)
                row.append((n, p - i, need / blocks, 1.0 / blocks, self.size[n], self.g.tensors[n].dtype.bits, rows_of))
            # a global pool reduces one group of PE channels over all its rows, then the next
            # (the cores' window words): only its first group follows its producer's rows
            groups_of = nest.pe_bound if nest.group_passes and row else 0
            edges.append((row, max(1, nest.drain_blocks or nest.blocks), self._df_parts(k), groups_of, max(1, nest.blocks)))
        return edges

    def _df_parts(self, k: int) -> Optional[Tuple[str, List[Tuple[str, float]], str]]:
        """A task whose loop nest has `parts` (a concat, a split) moves its tensors one after another
        (one configuration word each, in both kernels' cores): ("inputs" or "outputs", [(tensor,
        share of the elements)], the task's first output), the tensors its inputs or its outputs;
        None for other tasks. A concat's output rows complete during its last input, a split's
        output k during its k-th part."""
        t, parts = self.tasks[k], self.nests[k].parts
        if not parts:
            return None
        names = list(t.inputs if parts == "inputs" else t.outputs)
        sizes = [max(1, self.g.tensors[n].size) for n in names]
        return (parts, [(n, sz / sum(sizes)) for n, sz in zip(names, sizes)], t.outputs[0]) if len(names) > 1 else None

    def _df_timing(self, edges, eff: List[int], lanes: List[int], want_depths: bool = True,
                   pipe: Optional[List[int]] = None, tail: Optional[List[int]] = None,
                   pes: Optional[List[int]] = None):
        """Pipeline timing of a dataflow stage for one input: (latency, fifo depths, bottleneck
        relative index, start cycles). A task works through its blocks (rows) in order, each in
        an equal share of its work; it starts a block once each FIFO producer has published the
        blocks that block needs (the first: its lookahead; block b of B: b/B further into the
        producer's), so a task fed by a slower one publishes at that one's pace, and so do the
        tasks after it. A block leaves the task `pipe` cycles (its pipeline depth) after its last
        step. The stage ends when its last task does, or `tail` cycles after a task that writes off
        chip (its last write response), whichever is later: the tasks after a writer run while its
        response is on the way. A concat or split moves its parts one after another (_df_parts),
        each at its own pace; a global pool of C channels at `pes` lanes reduces ceil(C / PE)
        groups one after another, only the first beside its producer."""
        m = len(eff)
        d = [min(eff[k], pipe[k]) if pipe else 0 for k in range(m)]
        start = [0.0] * m
        end = [0.0] * m
        # per (task, tensor it makes; None: all a task's outputs): when each of its blocks has been
        # published, as a line (a, c, blocks: block j of them at a + c j / blocks, a task at its
        # own pace) or an array over its blocks (a task held back by a slower producer), with the
        # cycle its last block has left (a consumer's last block waits for it); and the line its
        # blocks would leave on at the task's own pace (start, span), that FIFO depths are sized by
        curve: Dict[Tuple[int, Optional[str]], Tuple[object, float]] = {}
        line: Dict[Tuple[int, Optional[str]], Tuple[float, float]] = {}
        depths: Dict[str, Tuple[int, int]] = {}

        def published(p: int, n: str):
            c = curve.get((p, n))
            return curve[(p, None)] if c is None else c

        def at(pub, frac: float) -> float:
            """When the first `frac` of a curve's blocks have been published."""
            if pub.__class__ is tuple:
                a, c, nb = pub
                return a + c * min(nb, max(1, math.ceil(frac * nb - 1e-9))) / nb if frac < 1 else a + c
            return float(pub[min(len(pub), max(1, math.ceil(frac * len(pub) - 1e-9))) - 1]) if frac < 1 else float(pub[-1])

        def as_array(pub) -> np.ndarray:
            if pub.__class__ is tuple:
                a, c, nb = pub
                return a + c * self._blocks_of(nb, 1)
            return pub

        for k in range(m):
            row, work_blocks, parts, groups_of, out_blocks = edges[k]
            g = -(-groups_of // max(1, pes[k])) if groups_of and pes else 1
            s = 0.0
            e_in = 0.0
            needs = []
            for n, p, need_frac, first_frac, size, bits, (row_k, row_p, blocks) in row:
                pub, last = published(p, n)
                chunk = max(math.ceil(lanes[k] / row_k) if row_k else 1, math.ceil(lanes[p] / row_p) if row_p else 1)
                if chunk > 1:
                    need_frac = max(need_frac, min(1.0, chunk / blocks))
                needs.append((n, pub, need_frac, last))
                ready = at(pub, need_frac)
                if ready > s:
                    s = ready
                if last > e_in:
                    e_in = last
            work = eff[k] - d[k]
            if parts is None and work <= 0:
                # a free task (a reshape) passes its producer's blocks on as they come: ready at its
                # start, done when its producer is
                start[k] = s
                end[k] = max(s, e_in)
                curve[(k, None)] = ((s, 0.0, out_blocks), end[k])
                line[(k, None)] = (s, 0.0)
            elif parts is None:
                bw = work_blocks
                w = work / g / bw
                # at its own pace unless a producer publishes slower than it works (a steeper
                # line, or one already held back) or ends later than its own last block
                own = all(pub.__class__ is tuple and pub[1] <= work / g + 1e-9 for _, pub, _, _ in needs) \
                    and e_in + w <= s + bw * w + 1e-9
                if own:
                    T = None
                else:
                    # block b (0-based) of the first group's pass waits for the producers' blocks
                    # its rows need, then takes w: T[b] = max(T[b-1], R[b]) + w, a running maximum
                    b = self._blocks_of(bw)
                    R = None
                    for n, pub, need_frac, last in needs:
                        arr = as_array(pub)
                        got = arr[self._needed(need_frac, bw, len(arr))]
                        got[-1] = max(got[-1], last)        # the last block waits for all of it
                        R = got if R is None else np.maximum(R, got)
                    bwk = b * w
                    T = bwk + w + np.maximum.accumulate(np.maximum(R, s) - bwk)
                    if T[-1] <= s + bw * w + 1e-9:
                        T = None        # held back nowhere after all
                rest = work * (g - 1) / g
                start[k] = s
                if T is None:
                    end[k] = s + work / g + rest + d[k]
                    curve[(k, None)] = ((s + d[k], work, out_blocks), end[k])
                else:
                    end[k] = float(T[-1]) + rest + d[k]
                    if out_blocks == bw and not rest:
                        out = T + d[k]
                    else:
                        j = np.arange(1, out_blocks + 1, dtype=np.float64)
                        out = T[np.clip(np.ceil(j / out_blocks * bw - 1e-9).astype(np.int64) - 1, 0, bw - 1)] + d[k]
                        out[-1] = end[k]
                    curve[(k, None)] = (out, end[k])
                line[(k, None)] = (start[k], work)
            else:
                # one part after another on the task's core, each drained only into the next
                # part's time (its last block leaves d cycles after its last step); a concat's
                # part waits for its own input alone
                inv_blocks = 1.0 / work_blocks
                kind, shares, out_name = parts
                ready_of = {n: (at(pub, nf), last) for n, pub, nf, last in needs}
                t = 0.0 if kind == "inputs" else s
                for q, (n, share) in enumerate(shares):
                    ready, p_end = ready_of.get(n, (0.0, 0.0)) if kind == "inputs" else (s, e_in)
                    t0 = max(t, ready)
                    if q == 0:
                        start[k] = t0
                    pw = work * share
                    done = max(t0 + pw + d[k], p_end + pw * inv_blocks + d[k])
                    t = done - d[k]
                    if kind == "outputs" or q == len(shares) - 1:
                        key = (k, n if kind == "outputs" else out_name)
                        # its own line, and its last block when the part is done
                        curve[key] = ((t0 + d[k], pw, out_blocks), done)
                        line[key] = (t0, pw)
                end[k] = t + d[k]
            if want_depths:
                # FIFO depth: what a producer emits between its first output and the consumer starting
                for n, p, need_frac, first_frac, size, bits, _ in row:
                    p0, span = line.get((p, n)) or line[(p, None)]
                    first = p0 + d[p] + span * first_frac
                    words = max(1, size // max(1, lanes[p]))
                    rate = words / max(1.0, eff[p])
                    depth = int(min(words, max(2, math.ceil((s - first) * rate) + 2)))
                    depths[n] = (depth, lanes[p] * bits)
        lat = int(math.ceil(max(end[k] + (tail[k] if tail else 0) for k in range(m)))) if m else 0
        bott = max(range(m), key=lambda k: (eff[k], -k))
        return lat, depths, bott, start

    def _blocks_of(self, n: int, scale: int = 0) -> np.ndarray:
        """0, 1, .., n - 1 as floats (scale 0), or 1/n, 2/n, .., 1 (scale 1): cached for _df_timing."""
        key = (n, scale)
        a = self._arange.get(key)
        if a is None:
            a = self._arange[key] = np.arange(1, n + 1, dtype=np.float64) / n if scale else np.arange(n, dtype=np.float64)
        return a

    def _needed(self, need_frac: float, bw: int, blocks: int) -> np.ndarray:
        """For each of a task's bw blocks (0-based b), the index of the last of a producer's
        `blocks` blocks it needs: the first `need_frac` of them, then b / bw further, up to all (the
        last block all of them)."""
        key = (need_frac, bw, blocks)
        idx = self._need_idx.get(key)
        if idx is None:
            h = np.minimum(1.0, need_frac + np.arange(bw, dtype=np.float64) / bw)
            h[-1] = 1.0            # its last block needs all of them
            idx = self._need_idx[key] = np.clip(np.ceil(h * blocks - 1e-9).astype(np.int64) - 1, 0, blocks - 1)
        return idx

    def _fifo(self, depth: int, width: int) -> Resources:
        key = (depth, width)
        r = self._fifos.get(key)
        if r is None:
            r = self._fifos[key] = fifo(depth, width, self.dev)
        return r

    def _dataflow(self, i: int, j: int) -> _SegResult:
        B = self.opts.batch
        traffic = [self._traffic(k, i, j, "dataflow") for k in range(i, j)]
        tmin = max((tr.cycles for tr in traffic), default=0)
        fixed = Resources()
        for k in range(i, j):
            fixed = fixed + self.stream_buffers[k]
        scratch = self._scratch(i, j, "dataflow")
        fixed = fixed + scratch
        fifo_guess = Resources(lut=40 * (j - i), ff=60 * (j - i))
        opts = self.options[i:j]
        cand = sorted({o.cycles for ol in opts for o in ol if o.cycles >= tmin} | {tmin})
        # per task: options by cycles ascending and the min-(dsp, lut) pick among the prefix
        pref = []
        for ol in opts:
            cyc, picks, best = [], [], None
            for o in ol:  # sorted by cycles ascending
                if best is None or (o.res.dsp, o.res.lut) < (best.res.dsp, best.res.lut):
                    best = o
                cyc.append(o.cycles)
                picks.append(best)
            pref.append((cyc, picks))

        def pick(T):
            chosen = []
            for cyc, picks in pref:
                idx = bisect.bisect_right(cyc, T) - 1
                if idx < 0:
                    return None
                chosen.append(picks[idx])
            return chosen

        def total(chosen):
            return (fixed + fifo_guess).plus([o.res for o in chosen])

        lo, hi = 0, len(cand) - 1
        if pick(cand[hi]) is None or not fits(total(pick(cand[hi])), self.stage_budget):
            chosen = pick(cand[hi]) or [ol[-1] for ol in opts]
            return _SegResult(0, total(chosen), {}, False, shortfall(total(chosen), self.stage_budget))
        while lo < hi:
            mid = (lo + hi) // 2
            ch = pick(cand[mid])
            if ch is not None and fits(total(ch), self.stage_budget):
                hi = mid
            else:
                lo = mid + 1
        edges = self._df_structure(i, j)
        tails = [tr.tail for tr in traffic]

        def timed(chosen, want_depths=True):
            lanes = [o.folding.vec * o.folding.pe for o in chosen]
            eff = [max(o.cycles, tr.cycles) for o, tr in zip(chosen, traffic)]
            lat, depths, bott, starts = self._df_timing(edges, eff, lanes, want_depths, [o.depth for o in chosen], tails,
                                                        [o.folding.pe for o in chosen])
            res = fixed.plus([self._fifo(d, w) for d, w in depths.values()] + [o.res for o in chosen])
            cycles = lat + (B - 1) * eff[bott]
            return cycles, res, eff, depths, bott, lat, starts

        # exact FIFOs: step to the next target if they break the budget
        for T in cand[lo:]:
            chosen = pick(T)
            if chosen is None:
                continue
            cycles, res, eff, depths, bott, lat, starts = timed(chosen)
            if fits(res, self.stage_budget):
                break
        else:
            return _SegResult(0, res, {}, False, shortfall(res, self.stage_budget))
        # the target T balances the slowest task; when tasks cannot overlap (one block, e.g. a
        # single vector through an MLP) latency is a sum, so spend what budget is left on the
        # upgrade that shortens the stage most per extra DSP (then LUT), while any helps
        # (trials are timed without FIFO sizing and costed by the datapath difference; the
        # accepted upgrade is re-timed in full and kept only if the FIFOs still fit)
        lanes = [o.folding.vec * o.folding.pe for o in chosen]
        for _ in range(min(4 * (j - i), GREEDY_STEPS)):
            best_up = None
            slowest = sorted(range(j - i), key=lambda x: -eff[x])[:GREEDY_TRIALS]
            for idx in slowest:
                ol = opts[idx]
                pos = self._opt_pos[i + idx][id(chosen[idx])]
                if pos == 0:
                    continue
                new_o = ol[pos - 1]
                d_dsp = new_o.res.dsp - chosen[idx].res.dsp
                d_lut = new_o.res.lut - chosen[idx].res.lut
                d_ff = new_o.res.ff - chosen[idx].res.ff
                if (res.dsp + d_dsp > self.stage_budget.dsp or res.lut + d_lut > self.stage_budget.lut
                        or res.ff + d_ff > self.stage_budget.ff):
                    continue
                eff2 = list(eff)
                eff2[idx] = max(new_o.cycles, traffic[idx].cycles)
                lanes2 = list(lanes)
                lanes2[idx] = new_o.folding.vec * new_o.folding.pe
                pipe2 = [o.depth for o in chosen]
                pipe2[idx] = new_o.depth
                pes2 = [o.folding.pe for o in chosen]
                pes2[idx] = new_o.folding.pe
                lat2, _, bott2, _ = self._df_timing(edges, eff2, lanes2, want_depths=False, pipe=pipe2, tail=tails,
                                                    pes=pes2)
                c2 = lat2 + (B - 1) * eff2[bott2]
                if c2 >= cycles:
                    continue
                gain = cycles - c2
                key = (gain / max(1, d_dsp) if d_dsp > 0 else gain * 1e6, gain)
                if best_up is None or key > best_up[0]:
                    best_up = (key, idx, new_o)
            if best_up is None:
                break
            trial = list(chosen)
            trial[best_up[1]] = best_up[2]
            full = timed(trial)
            if not fits(full[1], self.stage_budget):
                break
            chosen = trial
            lanes = [o.folding.vec * o.folding.pe for o in chosen]
            cycles, res, eff, depths, bott, lat, starts = full
        bytes_in = sum(tr.nbytes for tr in traffic)
        serial_in = self._df_serial_in(traffic)
        cycles = max(cycles, math.ceil(B * bytes_in / self.total_bpc), self._df_port_bound(traffic, starts, serial_in)) \
            + STAGE_SWITCH_CYCLES
        # the first read's memory latency, once, before the pipeline fills, and the serial part of
        # the graph's own off-chip inputs; each writer's last response and serial part follow
        # its own end (tails, in the latency: the tasks after it overlap them)
        cycles += MEMORY_LATENCY_CYCLES * any(tr.reads for tr in traffic)
        cycles += serial_in
        choice = {"chosen": chosen, "eff": eff, "traffic": traffic, "depths": depths, "bottleneck": i + bott,
                  "latency": lat, "scratch": scratch, "steady": eff[bott],
                  "starts": {i + k: v for k, v in enumerate(starts)}}
        return _SegResult(int(cycles), res, choice, True)

    def _df_serial_in(self, traffic: List[_Traffic]) -> int:
        """The serial part of a dataflow stage's reads (of the graph's own row-major inputs off
        chip, and a stepped spill's first row), before its pipeline starts. Both kernels give each
        off-chip tensor its own bundle (gmem<k mod channels>): the readers of one tensor share its
        bundle, one after another, and different tensors' run side by side where the memory has a
        channel for each. (Until stop 63 all one after another: random graph 38 on the U280, its
        two inputs on two bundles, was modeled 7.4% slow.)"""
        per: Dict[str, int] = {}
        for tr in traffic:
            for n, c in tr.serial_of:
                per[n] = per.get(n, 0) + c
        if not per:
            return 0
        return max(max(per.values()), math.ceil(sum(per.values()) / min(len(per), self.mem_channels)))

    def _df_port_bound(self, traffic: List[_Traffic], starts: List[float], serial_in: int) -> int:
        """What the stage's transfers take on the ports they share, in the stage's pipeline time (after
        the first read's latency and the serial reads): the tasks' streams share the memory's
        channels (an m_axi bundle each in both kernels, all of them on one where the memory has one
        channel), and a bundle moves one read beat and one write beat a cycle, a beat moved in steps
        (--max-beat-lanes) holding its side for all of them. So the reads end no earlier than all
        of them one after another, and the writes no earlier than all of them after the first
        writer's start, and the last write's response after them."""
        B = self.opts.batch
        r_occ, w_occ = sum(tr.port[0] for tr in traffic), sum(tr.port[1] for tr in traffic)
        r_n, w_n = sum(tr.port[2] for tr in traffic), sum(tr.port[3] for tr in traffic)
        bound = 0.0
        if r_n:
            bound = B * r_occ / min(r_n, self.mem_channels) - serial_in
        if w_n:
            first = min(st for st, tr in zip(starts, traffic) if tr.writes)
            bound = max(bound, first + B * w_occ / min(w_n, self.mem_channels) + MEMORY_LATENCY_CYCLES)
        return int(math.ceil(bound))

    # ------------------------------------------------------------------ sequential
    def _sequential(self, i: int, j: int) -> _SegResult:
        B = self.opts.batch
        traffic = [self._traffic(k, i, j, "sequential") for k in range(i, j)]
        scratch = self._scratch(i, j, "sequential")
        ntask = sum(1 for k in range(i, j) if not self.nests[k].free)
        mux = Resources(lut=RECONF_LUT_PER_TASK * max(0, ntask - 1))
        cap = self.stage_budget
        cands = np.unique(np.concatenate([self._by_dsp[k][0] for k in range(i, j)]))
        cands = cands[cands <= cap.dsp]
        if len(cands) == 0:
            cands = np.array([0], dtype=np.int64)
        # per task and candidate core size D: the fastest option using at most D DSPs
        per = np.zeros((len(cands), 6), dtype=np.int64)
        core = np.zeros((len(cands), 13), dtype=np.int64)    # maxima over tasks (columns as arr)
        valid = np.ones(len(cands), dtype=bool)
        idxs = []
        for k, tr in zip(range(i, j), traffic):
            dsps, picks, arr, pes = self._by_dsp[k]
            idx = np.searchsorted(dsps, cands, side="right") - 1
            valid &= idx >= 0
            rows = arr[np.maximum(idx, 0)]
            per[:, 0] += self._seq_cycles(k, rows[:, 0], tr, pes[np.maximum(idx, 0)])
            core = np.maximum(core, rows)
            idxs.append(idx)
        ext = np.array((scratch + mux).as_tuple(), dtype=np.int64)
        need = _core_need(core, ext)
        capv = np.array(cap.as_tuple(), dtype=np.int64)
        ok = valid & np.all(need <= capv, axis=1)
        cycles_all = B * per[:, 0] + STAGE_SWITCH_CYCLES
        best = None
        if ok.any():
            order = np.lexsort((need[:, 3], need[:, 0], cycles_all))   # cycles, then DSP, then LUT
            c = int(order[np.argmax(ok[order])])                         # the best core size that fits
            best = (int(cycles_all[c]), int(need[c, 0]), [int(ix[c]) for ix in idxs], need[c], self._by_dsp)

        def grow(best, chains):
            grown = self._grow_core(i, j, traffic, ext, capv, chains)
            if grown is None:
                return best
            idx, per_input, nd = grown
            r = (int(B * per_input + STAGE_SWITCH_CYCLES), int(nd[0]), idx, nd, chains)
            return r if best is None or r[:2] < best[:2] else best
        # the three pools make one budget D a coarse search (a task may take more of a pool
        # another task already needs, for free): also grow the smallest core greedily
        best = grow(best, self._by_dsp)
        # and where LUTs bind (no core fits, or a core size faster than the best would fit but
        # for its LUTs), grow it again from every task's cheapest option
        rest = [0, 1, 2, 4]
        lut_bound = valid & np.all(need[:, rest] <= capv[rest], axis=1) & (need[:, 3] > capv[3])
        if best is None or np.any(lut_bound & (cycles_all < best[0])):
            best = grow(best, self._by_lut)
        if best is None:
            chosen = [self._by_lut[k][1][0] for k in range(i, j)]      # each task's cheapest: the least it needs
            core_r = Resources()
            for o in chosen:
                core_r = core_r.max(o.res)
            core_r = replace(core_r, dsp=core_dsp(chosen))
            return _SegResult(0, core_r + scratch + mux, {}, False, shortfall(core_r + scratch + mux, self.stage_budget))
        cycles, _, pick, nd, chains = best
        chosen = [chains[k][1][ix] for k, ix in zip(range(i, j), pick)]
        res = Resources(*(int(v) for v in nd))
        return _SegResult(cycles, res, {"chosen": chosen, "traffic": traffic, "scratch": scratch}, True)

    def _seq_cycles(self, k: int, compute, tr: _Traffic, pe):
        """Task k's cycles per input on a sequential core, at these compute cycles and PE lanes
        (arrays of options, or one each): its compute overlaps its off-chip transfer, not the
        memory latency or the switch to its configuration word. A global pool reduces one group of
        PE channels over all its input rows, then the next (LoopNest.group_passes): reading a
        spilled input (pixel-major off chip, its rows complete one after another) only the first
        group's pass runs beside the read, the others after it."""
        c = self._seq_compute(k, compute)
        nest = self.nests[k]
        n = self.tasks[k].inputs[0] if self.tasks[k].inputs else None
        if nest.group_passes and n is not None and n not in self.io_off and n not in self.io and self.offchip.get(n, False):
            g = -(-nest.pe_bound // np.maximum(1, np.asarray(pe)))
            after = np.asarray(c) * (g - 1) // g
            run = np.maximum(np.asarray(c) - after, tr.cycles) + after
        else:
            run = np.maximum(c, tr.cycles)
        return run + tr.latency + tr.serial + (TASK_SWITCH_CYCLES if not self.nests[k].free else 0)

    def _seq_compute(self, k: int, compute):
        """Task k's compute cycles on a sequential core: a task that gathers only its output
        (LoopNest.gather < 1, a slice) scales its steps by that share, not its pipeline depth (a
        data mover's is the base depth, cost.depth_of); one whose input is off chip waits for
        that tensor's beats whole, row by row, and does not."""
        share = self.nests[k].gather
        n = self.tasks[k].inputs[0] if self.tasks[k].inputs else None
        if share >= 1 or n in self.io_off or (n not in self.io and self.offchip.get(n, False)):
            return compute
        steps = np.maximum(np.asarray(compute) - PIPELINE_BASE_DEPTH, 0)
        return (np.ceil(steps * share) + np.minimum(np.asarray(compute), PIPELINE_BASE_DEPTH)).astype(np.int64)

    def _grow_core(self, i: int, j: int, traffic, extra, capv, chains):
        """A sequential core grown greedily along each task's chain of options (`chains`:
        _by_dsp or _by_lut): from every task at its chain's first, first every upgrade the core already has room
        for (a faster option that adds nothing to its maxima), then the one upgrade that gains
        the most cycles per DSP the core adds, repeated (at most SEQ_GREEDY_STEPS times) while
        the core fits. Returns the option indices, one pass's cycles and the core's resources,
        or None when the start does not fit."""
        n = j - i
        arrs = [chains[k][2] for k in range(i, j)]
        L = max(len(a) for a in arrs)
        lens = np.array([len(a) for a in arrs])
        rows_all = np.zeros((n, L, arrs[0].shape[1]), dtype=np.int64)   # padded with each task's last option
        eff = np.zeros((n, L), dtype=np.int64)
        for t, (a, k, tr) in enumerate(zip(arrs, range(i, j), traffic)):
            rows_all[t, :len(a)] = a
            rows_all[t, len(a):] = a[-1]
            e = self._seq_cycles(k, a[:, 0], tr, chains[k][3])
            eff[t, :len(a)] = e
            eff[t, len(a):] = e[-1]
        # each option's next strictly faster one (L: none); eff never rises along a task's
        # chain (each keeps the best cycles so far)
        nxt = np.full((n, L), L, dtype=np.int64)
        for x in range(L - 2, -1, -1):
            nxt[:, x] = np.where((eff[:, x + 1] < eff[:, x]) & (x + 1 < lens), x + 1, nxt[:, x + 1])
        ar = np.arange(n)
        idx = np.zeros(n, dtype=np.int64)

        rows = rows_all[ar, idx]
        core = rows.max(axis=0)
        cur = _core_need(core, extra)
        if np.any(cur > capv):
            return None
        pre = np.full(rows.shape, -1, dtype=np.int64)      # maxima of the tasks before t
        suf = np.full(rows.shape, -1, dtype=np.int64)      # and after t
        for _ in range(SEQ_GREEDY_STEPS):
            cand = nxt[ar, idx]
            has = cand < L
            cand_c = np.minimum(cand, L - 1)
            new_rows = rows_all[ar, cand_c]
            free = has & (new_rows[:, 1:] <= core[1:]).all(axis=1)
            if free.any():                   # upgrades inside the core as it is: all at once
                idx = np.where(free, cand, idx)
                rows = rows_all[ar, idx]
                continue
            if not has.any():
                break
            if n > 1:
                np.maximum.accumulate(rows[:-1], axis=0, out=pre[1:])
                np.maximum.accumulate(rows[:0:-1], axis=0, out=suf[-2::-1])
            cores = np.maximum(np.maximum(pre, suf), new_rows)
            nd = _core_need(cores, extra)
            gain = eff[ar, idx] - eff[ar, cand_c]
            fit = has & (gain > 0) & (nd <= capv).all(axis=1)
            if not fit.any():
                break
            added = nd[:, 0] - cur[0]
            key = np.where(fit, np.where(added > 0, gain / np.maximum(added, 1), gain * 1e6), -1.0)
            t = int(np.argmax(key))
            idx[t] = cand[t]
            rows[t] = new_rows[t]
            core, cur = cores[t], nd[t]
        return [int(x) for x in idx], int(eff[ar, idx].sum()), cur

    def _signature(self, i: int, j: int, mode: str):
        """Everything a segment's cost depends on, position-free: repeated layers (a transformer
        stack) share one evaluation. The stage budget is part of it: auto's fit rounds shrink
        it, and a segment costed at one budget is reused only at that budget."""
        parts = [mode, self.stage_budget.as_tuple(), self._scratch(i, j, mode).as_tuple()]
        for k in range(i, j):
            t = self.tasks[k]
            wiring = []
            for n in t.inputs:
                if n in self.prod:
                    p = self.prod[n]
                    wiring.append((p - i if i <= p < j else -1, self.offchip[n], self._stored(n, i, j, mode),
                                   n in self.io_off))
            for n in t.outputs:
                wiring.append((self.offchip[n], self._stored(n, i, j, mode), n in self.io_off))
            parts.append((self._task_sig[k], tuple(wiring)))
        return tuple(parts)

    def segment(self, i: int, j: int, mode: str, cached: bool = True) -> _SegResult:
        """Cost of tasks [i, j) as one stage. With `cached`, the result's cycles, resources and
        feasibility are exact but its `choice` may come from an identical segment elsewhere."""
        if not cached:
            return self._dataflow(i, j) if mode == "dataflow" else self._sequential(i, j)
        key = self._signature(i, j, mode)
        hit = self._cache.get(key)
        if hit is not None:
            self.cache_hits += 1
            return hit
        r = self._dataflow(i, j) if mode == "dataflow" else self._sequential(i, j)
        self._cache[key] = r
        return r

    # ------------------------------------------------------------------ building the Schedule
    def _stage(self, index: int, i: int, j: int, mode: str, seg: _SegResult, start: int) -> Stage:
        chosen, traffic = seg.choice["chosen"], seg.choice["traffic"]
        plans = []
        offset = 0
        for k, o, tr in zip(range(i, j), chosen, traffic):
            r = o.res
            if mode == "dataflow":
                r = r + self.stream_buffers[k]
            cycles = int(self._seq_compute(k, o.cycles)) if mode == "sequential" else o.cycles
            plans.append(TaskPlan(name=self.tasks[k].name, op=self.tasks[k].op, folding=o.folding, cycles=cycles,
                                  transfer_cycles=tr.cycles + tr.latency + tr.serial, macs=self.macs[k], resources=r, weights=self.weight_place[k],
                                  offchip_bytes=tr.nbytes * self.opts.batch,
                                  start=start + (int(seg.choice["starts"][k]) if mode == "dataflow" else offset)))
            if mode == "sequential":
                offset += self.opts.batch * int(self._seq_cycles(k, o.cycles, tr, o.folding.pe))
        buffers = []
        seen = set()
        for k in range(i, j):
            for n in list(self.tasks[k].inputs) + list(self.tasks[k].outputs):
                if n not in self.prod or n in seen:
                    continue
                seen.add(n)
                if mode == "dataflow" and not self._stored(n, i, j, mode):
                    d, w = seg.choice["depths"].get(n, (2, self.g.tensors[n].dtype.bits))
                    buffers.append(Buffer(n, "fifo", self.bits[n], depth=d, width=w, resources=fifo(d, w, self.dev)))
                elif n in self.io:                 # the kernel's xin / yout arrays (Problem._io_arrays)
                    kind = "input" if self.prod[n] == -1 else "output"
                    buffers.append(Buffer(n, kind, self.bits[n], resources=self.io_array[n]))
                else:
                    kind = "offchip" if self.offchip[n] else "scratchpad"
                    r = Resources() if self.offchip[n] else self.mem[n]
                    buffers.append(Buffer(n, kind, self.bits[n], resources=r))
        bott = None
        if mode == "dataflow":
            bott = self.tasks[seg.choice["bottleneck"]].name
        return Stage(index=index, mode=mode, tasks=plans, cycles=seg.cycles, start=start, resources=seg.res,
                     buffers=buffers, offchip_bytes=sum(p.offchip_bytes for p in plans), bottleneck=bott)

    def build(self, segs: List[Tuple[int, int, str, _SegResult]], mode: str, search: Dict) -> Schedule:
        # the DP may have costed a segment through an identical one elsewhere: redo the chosen
        # segments in place so the plan names its own tasks and tensors
        segs = [(i, j, m, self.segment(i, j, m, cached=False)) for i, j, m, _ in segs]
        stages, t = [], self.stream_in
        for idx, (i, j, m, seg) in enumerate(segs):
            st = self._stage(idx, i, j, m, seg, t)
            if idx == 0:
                st.cycles -= STAGE_SWITCH_CYCLES      # nothing to drain before the first stage
            stages.append(st)
            t += st.cycles
        total = t + self.stream_out + KERNEL_CONTROL_CYCLES
        if (self.opts.objective == "throughput" and len(segs) == 1 and segs[0][2] == "dataflow"):
            # successive batches overlap in a single dataflow pipeline: one batch per B x bottleneck
            total = self.opts.batch * segs[0][3].choice["steady"] + self.stream_in + self.stream_out + KERNEL_CONTROL_CYCLES
        return Schedule(model=self.g.name, device=self.dev.name, mode=mode, objective=self.opts.objective,
                        batch=self.opts.batch, clock_mhz=self.clock, resource_cap=self.opts.resource_cap,
                        stages=stages, total_cycles=int(total),
                        offchip_bytes=sum(s.offchip_bytes for s in stages) + self.io_bytes,
                        resources=self.emitted([s[3] for s in segs]), budget=self.budget, weights_resident=self.resident,
                        macs=sum(self.macs), search=search, port_bits=self.opts.port_bits, max_lanes=self.opts.max_lanes,
                        max_beat_lanes=self.opts.beat_limit,
                        stream_in_cycles=self.stream_in, stream_out_cycles=self.stream_out,
                        control_cycles=KERNEL_CONTROL_CYCLES,
                        io_offchip_tensors=tuple(n for n in dict.fromkeys(list(self.g.inputs) + list(self.g.outputs))
                                                 if n in self.io_off))

    def emitted(self, segs: List[_SegResult]) -> Resources:
        """The design as the kernels build it from these stages: every stage has its own cores,
        FIFOs and line buffers, and the arrays of the tensors it stores (each counted with the
        stage that produces it), so everything adds up over the stages; plus the resident
        weights and the graph's input and output arrays."""
        total = self.fixed
        for seg in segs:
            total = total + seg.res
        return total

    def objective_cycles(self, segs) -> int:
        if self.opts.objective == "throughput" and len(segs) == 1 and segs[0][2] == "dataflow":
            return self.opts.batch * segs[0][3].choice["steady"] + self.stream_in + self.stream_out + KERNEL_CONTROL_CYCLES
        return sum(s[3].cycles for s in segs) + self.outside_cycles()


def _infeasible(prob: Problem, what: str, seg: _SegResult, advice: str):
    short = seg.short or ["no folding fits"]
    raise HlsgenError(f"{what} does not fit {prob.dev.name} under --resource-cap {prob.opts.resource_cap}: "
                      f"{short[0]}; {advice}")


def _mode_advice(mode: str) -> str:
    """What to try when a single stage of `mode` (or auto's search) does not fit."""
    if mode == "dataflow":
        return "raise --resource-cap, pick a larger device or try --mode sequential (one shared core) or auto"
    return "raise --resource-cap or pick a larger device"


def _fit_round(prob: Problem, segs, log: List[Dict]) -> Tuple[bool, Resources]:
    """One round of the stage-budget search: build `segs` (every stage on its own cores), log
    the round (its stage budget, segmentation, cycles, resources as built, outcome, and the
    shortfall as data); (whether that fits the budget, what they use as built)."""
    use = prob.emitted([s[3] for s in segs])
    ok = fits(use, prob.budget)
    short = None if ok else shortfall(use, prob.budget)[0]
    log.append({"stage_budget": prob.stage_budget.as_dict(), "segmentation": _notation(segs),
                "cycles": int(prob.objective_cycles(segs)), "as_built": use.as_dict(), "short": short,
                "outcome": "fits as built" if ok else f"does not fit as built: {short}"})
    return ok, use


def _shrink(prob: Problem, use: Resources, full: Resources, stages: int) -> None:
    """The next stage budget when stages built at the current one use `use` in all: every
    resource they overshoot shrinks by the overshoot's ratio, by at least one and to at most
    an even share of the whole budget."""
    shrunk = {}
    for f in RESOURCES:
        total, allowed = getattr(use, f) - getattr(prob.fixed, f), getattr(full, f)
        cur = getattr(prob.stage_budget, f)
        shrunk[f] = min(cur - 1, cur * allowed // max(1, total), allowed // stages) if total > allowed else cur
    prob.stage_budget = replace(prob.stage_budget, **{f: max(0, v) for f, v in shrunk.items()})


def _priced(prob: Problem, segs, use: Resources, entry: Dict):
    """The DP's best at this stage budget does not fit as built (`use`, its stages added up):
    run the DP again with each stage's resources priced in cycles (a Lagrangian price on every
    resource a tried design overshot, per unit of what the cap leaves beside the fixed part).
    First at the ceiling price (PRICE_CEILING x the design's cycles per whole cap, where the DP
    all but minimizes those resources): if even that does not fit, it gives up. Otherwise the
    price is narrowed from 1/PRICE_FLOOR of the design's cycles by halving its ratio to the
    lowest that fit, then PRICE_BISECTIONS halvings of the gap, keeping the fastest design
    that fit. Every try is logged in `entry["priced"]`. (That design or None, segments
    evaluated, pruned.)"""
    base = prob.objective_cycles(segs)
    avail = {f: max(1, getattr(prob.budget, f) - getattr(prob.fixed, f)) for f in RESOURCES}
    over = set(over_cap(use, prob.budget))
    tried: List[Dict] = []
    entry["priced"] = tried
    best, evaluated, pruned = None, 0, 0

    def attempt(lam: float) -> Optional[bool]:
        nonlocal best, evaluated, pruned
        found, ev, pr, _ = _dp(prob, {f: lam / avail[f] for f in over})
        evaluated, pruned = evaluated + ev, pruned + pr
        if found is None:
            return None
        u = prob.emitted([s[3] for s in found])
        ok = fits(u, prob.budget)
        cycles = int(prob.objective_cycles(found))
        tried.append({"price": round(lam, 3), "segmentation": _notation(found), "cycles": cycles, "fits": ok})
        if ok and (best is None or cycles < prob.objective_cycles(best)):
            best = found
        over.update(over_cap(u, prob.budget))
        return ok

    hi, seen = base * PRICE_CEILING, len(over)
    ok = attempt(hi)
    if ok is False and len(over) > seen:      # it overshoots another resource: price that too
        ok = attempt(hi)
    if ok:
        lo = base / PRICE_FLOOR
        while hi > 2 * lo:                      # the ratio, halved in log
            mid = math.sqrt(lo * hi)
            if attempt(mid):
                hi = mid
            else:
                lo = mid
        for _ in range(PRICE_BISECTIONS):       # then the gap
            mid = (lo + hi) / 2
            if attempt(mid):
                hi = mid
            else:
                lo = mid
    return best, evaluated, pruned


def _fastest(prob: Problem) -> Tuple[List[int], List[int]]:
    """Each task's fastest folding's cycles, and their prefix sums: the lower bounds on a stage
    that the DP and the exact search prune with (a stage is never faster than its slowest task's
    fastest folding; a sequential stage never faster than their sum)."""
    fastest = [min(o.cycles for o in ol) for ol in prob.options]
    return fastest, np.concatenate([[0], np.cumsum(fastest)]).tolist()


def _exact(prob: Problem, bound: Optional[int], entry: Dict):
    """The fastest segmentation whose stages fit the cap together as built, at this stage
    budget, if one is faster than `bound` (objective cycles; None: no bound): a label-setting
    search for the shortest path under the cap (the stages' cycles and resources add up, so a
    partial design, tasks [0, j) in stages, is a label (cycles, resources); a label that another
    at the same j beats in cycles and every resource is dropped, as is one over the cap or whose
    cycles plus a lower bound on the rest reach `bound`). Exact where pricing reaches only the
    lower convex hull of (resources, cycles). It gives up when it holds more than EXACT_LABELS
    labels. Logged in `entry["exact"]`. (That design or None, segments evaluated, pruned.)"""
    n, L = prob.n, max(1, prob.opts.max_segment)
    fixed, cap = prob.fixed.as_tuple(), prob.budget.as_tuple()
    room = tuple(c - f for c, f in zip(cap, fixed))
    fastest, prefix = _fastest(prob)
    # the rest, tasks [j, n), in any stages: never faster than its slowest task's fastest folding
    # nor than its multiplies at the stage budget's DSPs (mac_bound adds up over stages)
    rest = [0] * (n + 1)
    slowest = 0
    for j in range(n - 1, -1, -1):
        slowest = max(slowest, fastest[j])
        rest[j] = max(slowest, prob.mac_bound(j, n)) + STAGE_SWITCH_CYCLES
    limit = float("inf") if bound is None else bound - prob.outside_cycles()
    # labels[j]: (cycles, resources beside the fixed part, back: (label, i, mode, segment))
    labels: List[List[Tuple[int, Tuple[int, ...], Optional[Tuple]]]] = [[] for _ in range(n + 1)]
    labels[0].append((0, (0,) * len(room), None))
    kept = evaluated = pruned = 0

    def search() -> bool:
        """Extend every label, task by task; False where it gives up."""
        nonlocal kept, evaluated, pruned, limit
        for i in range(n):
            if not labels[i]:
                continue
            quickest = min(lab[0] for lab in labels[i])
            slow = 0
            for j in range(i + 1, min(n, i + L) + 1):
                slow = max(slow, fastest[j - 1])
                for m in ("dataflow", "sequential"):
                    lb = max(slow, prob.mac_bound(i, j), prefix[j] - prefix[i] if m == "sequential" else 0)
                    if quickest + lb + STAGE_SWITCH_CYCLES + rest[j] >= limit:
                        pruned += 1
                        continue
                    seg = prob.segment(i, j, m)
                    evaluated += 1
                    if not seg.feasible:
                        continue
                    r = seg.res.as_tuple()
                    for lab in labels[i]:
                        c = lab[0] + seg.cycles
                        use = tuple(a + b for a, b in zip(lab[1], r))
                        if c + rest[j] >= limit or any(u > f for u, f in zip(use, room)):
                            continue
                        here = labels[j]
                        if any(o[0] <= c and all(a <= b for a, b in zip(o[1], use)) for o in here):
                            continue
                        kept -= len(here)
                        here[:] = [o for o in here if not (c <= o[0] and all(a <= b for a, b in zip(use, o[1])))]
                        here.append((c, use, (lab, i, m, seg)))
                        kept += len(here)
                        if j == n:
                            limit = min(limit, c)
                    if kept > EXACT_LABELS:
                        return False
        return True

    gave_up = not search()
    found = None
    if not gave_up and labels[n]:
        lab, j, found = min(labels[n], key=lambda x: x[0]), n, []
        while lab[2] is not None:
            prev, i, m, seg = lab[2]
            found.append((i, j, m, seg))
            lab, j = prev, i
        found.reverse()
    entry["exact"] = {"labels": kept, "segments": evaluated, "pruned": pruned,
                      "outcome": (f"gave up: more than {EXACT_LABELS:,} partial designs" if gave_up else
                                  f"{_notation(found)} fits ({int(prob.objective_cycles(found)):,d} cycles)" if found
                                  else "none fits faster" + (f" than {bound:,d} cycles" if bound is not None else ""))}
    return found, evaluated, pruned


def _fixed(prob: Problem) -> Schedule:
    """The segmentation the user gave (--stages), at the largest stage budget, shrunk as auto's
    is, at which its stages fit together as built."""
    plan = prob.opts.segmentation()
    n = prob.n
    if sum(k for _, k in plan) != n:
        raise HlsgenError(f"--stages {prob.opts.stages!r} covers {sum(k for _, k in plan)} tasks; the model has {n} "
                          f"(`hlsgen inspect` lists them)")
    full = prob.stage_budget
    log: List[Dict] = []
    while len(log) < FIT_ROUNDS:
        segs, i = [], 0
        for m, k in plan:
            segs.append((i, i + k, m, prob.segment(i, i + k, m)))
            i += k
        bad = next((s for s in segs if not s[3].feasible), None)
        if bad is not None:
            i, j, m, seg = bad
            if not log:
                _infeasible(prob, f"stage {segs.index(bad)} ({m}, tasks {i}-{j - 1}) of --stages {prob.opts.stages!r}",
                            seg, "split that stage, make it sequential, or raise --resource-cap")
            log.append({"stage_budget": prob.stage_budget.as_dict(), "segmentation": _notation(segs), "short": None,
                        "outcome": f"stage {segs.index(bad)} no longer fits the smaller stage budget"})
            break
        ok, use = _fit_round(prob, segs, log)
        if ok:
            search = {"space": f"the fixed segmentation {prob.opts.stages!r} (--stages)", "picked": "fixed",
                      "stage_budget": prob.stage_budget.as_dict(), "rounds": log}
            return prob.build(segs, "fixed", search)
        _shrink(prob, use, full, len(segs))
    raise HlsgenError(f"--stages {prob.opts.stages!r} does not fit {prob.dev.name} under --resource-cap "
                      f"{prob.opts.resource_cap}: its stages, each on its own cores, do not fit together "
                      f"({log[0]['short']}), and at {len(log) - 1} smaller stage budgets: {log[-1]['outcome']}; "
                      f"give fewer stages or raise --resource-cap")


def _notation(segs) -> str:
    """Segments (i, j, mode, result) in the reports' notation (schedule.format_segmentation)."""
    return format_segmentation([(m, j - i) for i, j, m, _ in segs])


def _dp(prob: Problem, price: Optional[Dict[str, float]] = None):
    """The best segmentation of the task list at the problem's stage budget: (stages or None,
    segments evaluated, segments pruned, the infeasible result of a single task if one was seen).
    With `price` (cycles per unit of a resource), the best by cycles plus the price of every
    stage's resources (Lagrangian pricing: steers the search to segmentations that use less)."""
    n, opts = prob.n, prob.opts
    rate = [(f, w) for f, w in (price or {}).items() if w > 0]
    L = max(1, opts.max_segment)
    INF = (float("inf"), 0)
    best: List[Tuple[float, int]] = [INF] * (n + 1)
    back: List[Optional[Tuple[int, str, _SegResult]]] = [None] * (n + 1)
    best[0] = (0, 0)
    evaluated = pruned = 0
    worst_short = None
    fastest, fastest_sum = _fastest(prob)
    for j in range(1, n + 1):
        lb = 0
        # shortest segments first: they set best[j] early, so longer ones can be pruned by a
        # lower bound (a stage never beats its slowest task's fastest folding)
        for i in range(j - 1, max(0, j - L) - 1, -1):
            lb = max(lb, fastest[i])
            if best[i][0] == float("inf"):
                continue
            bound = max(lb, prob.mac_bound(i, j))
            if best[i][0] + bound + STAGE_SWITCH_CYCLES > best[j][0]:
                pruned += 2
                continue
            for m in ("dataflow", "sequential"):
                # a sequential stage runs its tasks one after another: never faster than the sum
                # of their fastest foldings (a single task is always costed: its failure is the error)
                if (m == "sequential" and j - i > 1 and best[i][0] + max(bound, fastest_sum[j] - fastest_sum[i])
                        + STAGE_SWITCH_CYCLES > best[j][0]):
                    pruned += 1
                    continue
                seg = prob.segment(i, j, m)
                evaluated += 1
                if not seg.feasible:
                    if j - i == 1 and m == "sequential":
                        worst_short = seg
                    continue
                cost = seg.cycles + sum(w * getattr(seg.res, f) for f, w in rate) if rate else seg.cycles
                key = (best[i][0] + cost, best[i][1] + 1)
                if key < best[j]:
                    best[j] = key
                    back[j] = (i, m, seg)
    if best[n][0] == float("inf"):
        return None, evaluated, pruned, worst_short
    segs, j = [], n
    while j > 0:
        i, m, seg = back[j]
        segs.append((i, j, m, seg))
        j = i
    return segs[::-1], evaluated, pruned, worst_short


def folding_widths(graph: Graph, device: Device, opts: ScheduleOptions) -> Set[int]:
    """The lanes (VEC x PE x SIMD) of every folding some task may take under `opts` but for its
    --max-lanes (the widths between which a lane limit changes a schedule)."""
    prob = Problem(graph, device, replace(opts, max_lanes=None))
    return {o.folding.lanes for ol in prob.options for o in ol}


def schedule(graph: Graph, device: Device, opts: ScheduleOptions = ScheduleOptions()) -> Schedule:
    """Schedule `graph` on `device`. Deterministic: same inputs, same schedule."""
    prob = Problem(graph, device, opts)
    n = prob.n
    if opts.stages:
        return _fixed(prob)
    whole = {m: prob.segment(0, n, m) for m in ("dataflow", "sequential")}
    if opts.mode in ("dataflow", "sequential"):
        seg = whole[opts.mode]
        if not seg.feasible:
            _infeasible(prob, f"model {graph.name!r} as one {opts.mode} stage", seg, _mode_advice(opts.mode))
        return prob.build([(0, n, opts.mode, seg)], opts.mode, {"space": f"single {opts.mode} stage"})
    # auto: the DP over contiguous segments. Each stage of the emitted kernels has its own cores,
    # so a segmentation fits only if its stages' compute adds up within the cap: when the DP's
    # best does not, the DP prices the stages' resources at that budget, then the budget of one
    # stage shrinks by the overshoot and the DP runs again
    full = prob.stage_budget
    candidates = [(f"whole-{m}", [(0, n, m, whole[m])], full) for m in ("dataflow", "sequential") if whole[m].feasible]
    best_known = min((prob.objective_cycles(c[1]) for c in candidates), default=None)
    evaluated = pruned = 0
    worst_short = None
    log: List[Dict] = []                     # every round: its budget, the DP's best and that as built
    while len(log) < FIT_ROUNDS:
        segs, ev, pr, short = _dp(prob)
        evaluated, pruned, worst_short = evaluated + ev, pruned + pr, worst_short or short
        if segs is None:
            log.append({"stage_budget": prob.stage_budget.as_dict(), "segmentation": None, "short": None,
                        "outcome": "no segmentation fits one stage budget"})
            break
        ok, use = _fit_round(prob, segs, log)
        if ok:
            candidates.append(("dp", segs, prob.stage_budget))
            break
        if best_known is not None and log[-1]["cycles"] >= best_known:
            log[-1]["outcome"] += "; no faster than a design that fits, stop"
            break                            # a smaller stage budget only makes the DP's best slower
        # the stages the DP likes best overshoot together: price their resources, so that at this
        # budget it trades speed for fewer cores (a fitting design the budget shrink would pass over)
        found, ev, pr = _priced(prob, segs, use, log[-1])
        evaluated, pruned = evaluated + ev, pruned + pr
        if found is not None:
            cycles = prob.objective_cycles(found)
            candidates.append(("dp-priced", found, prob.stage_budget))
            log[-1]["outcome"] += f"; priced, {_notation(found)} fits ({cycles:,d} cycles)"
            best_known = cycles if best_known is None else min(best_known, cycles)
        elif log[-1].get("priced"):
            k = len(log[-1]["priced"])
            log[-1]["outcome"] += "; priced, none fits" + (" even at the ceiling price" if k == 1 else f" at {k} prices")
        # pricing reaches the lower convex hull of (resources, cycles): the exact search at this
        # budget finds a design off it that fits and is faster, where there is one
        found, ev, pr = _exact(prob, best_known, log[-1])
        evaluated, pruned = evaluated + ev, pruned + pr
        log[-1]["outcome"] += "; exact search, " + log[-1]["exact"]["outcome"]
        if found is not None:
            cycles = int(prob.objective_cycles(found))
            candidates.append(("dp-exact", found, prob.stage_budget))
            best_known = cycles if best_known is None else min(best_known, cycles)
        _shrink(prob, use, full, len(segs))
        if best_known is not None and prob.mac_bound(0, n) >= best_known:
            log[-1]["outcome"] += "; at the next budget even the bound loses to a design that fits, stop"
            break
    over = next((r["short"] for r in log if r["short"]), None)
    if not candidates and over:
        raise HlsgenError(f"model {graph.name!r} does not fit {prob.dev.name} under --resource-cap "
                          f"{prob.opts.resource_cap}: not as one stage ({(whole['sequential'].short or ['no folding fits'])[0]}), "
                          f"and its stages, each on its own cores, do not fit together ({over}); raise --resource-cap "
                          f"or pick a larger device")
    if not candidates:
        _infeasible(prob, f"model {graph.name!r} (some task even alone)", worst_short or whole["sequential"],
                    _mode_advice("auto"))
    ranked = sorted(candidates, key=lambda c: (prob.objective_cycles(c[1]), len(c[1])))
    name, segs, stage_budget = ranked[0]
    prob.stage_budget = stage_budget
    search = {"space": f"contiguous segments of at most {max(1, opts.max_segment)} tasks, each dataflow or sequential, "
                       f"plus the whole-graph dataflow and sequential designs",
              "segments_evaluated": evaluated, "segments_costed": evaluated - prob.cache_hits,
              "segments_pruned_by_bound": pruned, "tasks": n, "picked": name,
              "stage_budget": stage_budget.as_dict(), "rounds": log,
              # every design that fits which auto weighed, fastest first (the first is the one built)
              "candidates": [{"name": c[0], "segmentation": _notation(c[1]), "cycles": int(prob.objective_cycles(c[1]))}
                             for c in ranked]}
    return prob.build(segs, "auto", search)
