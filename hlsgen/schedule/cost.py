"""The cost model: cycles and resources of one task under one folding, and of on-chip storage.

Each op kind describes its loop nest in `OpKind.loops` (hlsgen/ops); this module turns a loop
nest plus a folding (vec, pe, simd) into figures, the same way for every op. The constants
below are the model's assumptions; docs/performance.md explains each and what it was checked
against. Every figure produced here is *modeled*, never measured.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..ops.base import LoopNest
from .device import RESOURCES, Device

# BRAM18 aspect ratios (depth, width) and the URAM block (depth, width)
BRAM18_SHAPES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))
URAM_SHAPE = (4096, 72)
BRAM18_BITS = 18 * 1024
URAM_BITS = 288 * 1024
LUTRAM_MAX_BITS = 2048          # smaller memories become distributed RAM / SRLs
PIPELINE_BASE_DEPTH = 8         # read, multiply, register stages of one lane
REQUANT_DEPTH = 6               # multiply by M0, add bias, shift, round, clamp
TASK_BASE_LUT, TASK_BASE_FF = 250, 300     # loop counters, stream handshakes, control
MAX_VEC = 64                    # widest pixel unroll considered
MAX_LANES = 16384               # widest datapath considered for one task


@dataclass(frozen=True)
class Resources:
    dsp: int = 0
    bram18: int = 0
    uram: int = 0
    lut: int = 0
    ff: int = 0

    def __add__(self, o: "Resources") -> "Resources":
        return Resources(self.dsp + o.dsp, self.bram18 + o.bram18, self.uram + o.uram, self.lut + o.lut, self.ff + o.ff)

    def plus(self, parts) -> "Resources":
        """self + every one of `parts`, with one object at the end instead of one per term."""
        d, b, u, l, f = self.dsp, self.bram18, self.uram, self.lut, self.ff
        for r in parts:
            d += r.dsp
            b += r.bram18
            u += r.uram
            l += r.lut
            f += r.ff
        return Resources(d, b, u, l, f)

    def times(self, n: int) -> "Resources":
        """n of these."""
        return Resources(*(v * n for v in self.as_tuple()))

    def max(self, o: "Resources") -> "Resources":
        return Resources(max(self.dsp, o.dsp), max(self.bram18, o.bram18), max(self.uram, o.uram),
                         max(self.lut, o.lut), max(self.ff, o.ff))

    def as_tuple(self):
        return (self.dsp, self.bram18, self.uram, self.lut, self.ff)

    def as_dict(self) -> Dict[str, int]:
        return {k: int(getattr(self, k)) for k in RESOURCES}


def budget(device: Device, cap: float) -> Resources:
    """What a design may use: `cap` of each of the device's resources (rounded down)."""
    return Resources(*(int(math.floor(device.resource(k) * cap)) for k in RESOURCES))


def over_cap(use: Resources, limit: Resources) -> List[str]:
    """The resources (RESOURCES' names) of which `use` needs more than `limit` allows."""
    return [k for k in RESOURCES if getattr(use, k) > getattr(limit, k)]


def shortfall(use: Resources, limit: Resources) -> List[str]:
    """Human-readable list of resources over the limit, worst first."""
    out = []
    for k in over_cap(use, limit):
        u, l = getattr(use, k), getattr(limit, k)
        out.append((u / max(l, 1), f"{k}: needs {u}, cap allows {l} (short by {u - l})"))
    return [m for _, m in sorted(out, key=lambda x: -x[0])]


def fits(use: Resources, limit: Resources) -> bool:
    return (use.dsp <= limit.dsp and use.bram18 <= limit.bram18 and use.uram <= limit.uram and use.lut <= limit.lut
            and use.ff <= limit.ff)


# ----------------------------------------------------------------------------- storage

def bram18_blocks(bits: int, width: int) -> int:
    """BRAM18s for a memory of `bits` read `width` bits per cycle (best aspect ratio)."""
    if bits <= 0:
        return 0
    width = max(1, min(width, bits))
    depth = -(-bits // width)
    return min(-(-width // w) * -(-depth // d) for d, w in BRAM18_SHAPES)


def uram_blocks(bits: int, width: int) -> int:
    if bits <= 0:
        return 0
    width = max(1, min(width, bits))
    depth = -(-bits // width)
    return -(-width // URAM_SHAPE[1]) * -(-depth // URAM_SHAPE[0])


def storage(bits: int, width: int, device: Device) -> Resources:
    """Place one memory: LUTRAM when tiny, URAM when large and the device has it, else BRAM.
    The choice is the one using the smaller fraction of the device's memory of that kind."""
    if bits <= 0:
        return Resources()
    if bits <= LUTRAM_MAX_BITS:
        return Resources(lut=-(-bits // 64), ff=0)
    b = bram18_blocks(bits, width)
    if device.uram > 0 and bits >= URAM_BITS // 2:
        u = uram_blocks(bits, width)
        if u / device.uram < b / max(device.bram18, 1):
            return Resources(uram=u)
    return Resources(bram18=b)


def fifo(depth: int, width: int, device: Device) -> Resources:
    """A FIFO: shift registers (SRL32) up to depth 32, block memory beyond."""
    depth = max(2, depth)
    if depth <= 32 or depth * width <= LUTRAM_MAX_BITS:
        return Resources(lut=width * -(-depth // 32) + 8, ff=width + 16)
    return storage(depth * width, width, device) + Resources(lut=24, ff=32)


def onchip_bits(device: Device, cap: float) -> int:
    return int(cap * (device.bram18 * BRAM18_BITS + device.uram * URAM_BITS))


# ----------------------------------------------------------------------------- compute

def _tiles(a_bits: int, b_bits: int) -> int:
    """DSP48E2/DSP58 multipliers (27 x 18 signed) for a signed a x b product, split as Yosys's
    mul2dsp splits it: the wider operand on the 27-bit port, the other on the 18-bit one; on
    each, the top piece is signed (the port's full width) and the lower pieces unsigned (one bit
    less). An 18 x 32 product is 2 tiles (32 = 27 + 5 on A, 18 whole on B); Yosys counts 2 where
    the earlier rule (26 x 17 magnitude bits everywhere) said 4."""
    a, b = sorted((max(a_bits, 1), max(b_bits, 1)), reverse=True)

    def pieces(w: int, port: int) -> int:
        return 1 if w <= port else 1 + -(-(w - port) // (port - 1))
    return pieces(a, 27) * pieces(b, 18)


def macs_per_dsp(nest: LoopNest, device: Device) -> int:
    """Multiplies one DSP does per cycle. DSP48E2: two int4 x int8 products packed into one
    27-bit operand (as InTAR's W4A8 GPT-2 and Xilinx WP521 do). DSP58: its INT8 vector mode
    computes three int8 x int8 products. Otherwise one product (if it fits one DSP)."""
    w, a = nest.weight_bits, nest.act_bits
    if device.dsp_type == "DSP58" and w <= 8 and a <= 8:
        return 3
    if w <= 4 and a <= 8:
        return 2
    return 1


def packing(f: "Folding", per_dsp: int, pe_shares_input: bool = True) -> Tuple[int, int]:
    """(multipliers, pairing) for a folding's lanes when one multiplier does `per_dsp` products.
    Packed products share an operand, so they group along PE (pairing 1: the same activation,
    different output channels; not for a grouped or depthwise conv, whose channels read
    different inputs) or along VEC (pairing 2: the same weight, different pixels), never along
    SIMD; pairing 0 is one lane per multiplier. The fewest multipliers win, the lower pairing
    on a tie. hlsgen_core_dp builds its MAC units from this (backends/rtl/core.py _units)."""
    opts = [(f.lanes, 0)]
    if per_dsp > 1 and pe_shares_input and f.pe > 1:
        opts.append((-(-f.pe // per_dsp) * f.vec * f.simd, 1))
    if per_dsp > 1 and f.vec > 1:
        opts.append((f.pe * -(-f.vec // per_dsp) * f.simd, 2))
    return min(opts)


@dataclass(frozen=True)
class Folding:
    vec: int = 1
    pe: int = 1
    simd: int = 1

    @property
    def lanes(self) -> int:
        return self.vec * self.pe * self.simd

    def as_list(self) -> List[int]:
        return [self.vec, self.pe, self.simd]


@dataclass(frozen=True)
class TaskOption:
    folding: Folding
    cycles: int          # compute cycles for one input (pipeline depth included)
    depth: int           # pipeline depth (latency of one lane)
    res: Resources       # datapath resources (DSP, LUT, FF; line buffers come from the stage)
    # res.dsp as three pools (core_dsp), each a product of factors: MAC (units, DSPs per unit),
    # window requantizers (outputs, DSPs per output), elementwise (lanes, terms, DSPs per term)
    roles: Tuple[int, ...] = (0,) * 7


def depth_of(nest: LoopNest, f: Folding) -> int:
    d = PIPELINE_BASE_DEPTH + max(0, (f.simd - 1).bit_length())
    return d + (REQUANT_DEPTH if nest.requant_terms else 0)


def evaluate(nest: LoopNest, f: Folding, device: Device) -> TaskOption:
    """Cycles and datapath resources of one folding of one loop nest."""
    if nest.free:
        return TaskOption(f, 0, 0, Resources())
    iters = (nest.vectors // f.vec) * -(-nest.pe_bound // f.pe) * -(-nest.simd_bound // f.simd)
    d = depth_of(nest, f)
    lanes = f.lanes
    roles = [0] * 7
    lut = ff = 0
    if nest.multiply:
        roles[0:2] = (packing(f, macs_per_dsp(nest, device), nest.pe_shares_input)[0],
                      _tiles(nest.act_bits, nest.weight_bits))
        # adder tree over simd lanes and the accumulator of every output lane
        lut += lanes * (nest.acc_bits // 2 + 4) + f.vec * f.pe * nest.acc_bits
        ff += lanes * (nest.act_bits + nest.weight_bits) + f.vec * f.pe * nest.acc_bits * 2
    else:
        # compare / add / mux per lane
        lut += lanes * max(nest.act_bits, nest.acc_bits)
        ff += lanes * max(nest.act_bits, nest.acc_bits)
    if nest.requant_terms:
        out_lanes = f.vec * f.pe
        tiles = _tiles(max(nest.acc_bits, 8), 32)
        if nest.elementwise:
            roles[4:7] = out_lanes, nest.requant_terms, tiles
        else:
            roles[2:4] = out_lanes * nest.requant_terms, tiles
        lut += out_lanes * requantizer_lut(nest.acc_bits)
        ff += out_lanes * (nest.acc_bits + 32) * 2
    lut += TASK_BASE_LUT
    ff += TASK_BASE_FF
    return TaskOption(f, iters + d, d, Resources(dsp=pools_dsp(roles), lut=lut, ff=ff), tuple(roles))


def requantizer_lut(acc_bits: int) -> int:
    """LUTs the model charges one requantizer of an accumulator of acc_bits (its rounding shift,
    zero point and clamp): a coarse figure; benchmarks/rq_tail.py sets it beside the synthesized
    tail, which is far larger where a core's rows differ."""
    return acc_bits + 16


def pools_dsp(r) -> int:
    """DSPs of the three pools of `roles` factors (TaskOption.roles, or their maxima)."""
    return r[0] * r[1] + r[2] * r[3] + r[4] * r[5] * r[6]


def core_dsp(options: List[TaskOption]) -> int:
    """DSPs of one core time-shared by tasks at these options (a sequential stage). Its MAC
    units, window requantizers and elementwise multipliers are three pools that hlsgen_core_dp
    routes every task's lanes onto, each built for its largest user in every factor (as many
    units as the most any task uses, each as wide as the widest product), so the core is the sum
    of the pools at the maxima, not the largest task."""
    return pools_dsp([max((o.roles[r] for o in options), default=0) for r in range(7)])


def _divisors(n: int, limit: int) -> List[int]:
    n = max(1, int(n))
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    out = sorted(set(small + [n // d for d in small]))
    return [d for d in out if d <= limit]


def foldings(nest: LoopNest, device: Device) -> List[Folding]:
    """Every folding the model considers: factors that divide their loop bounds exactly.
    Pixel unrolling (vec) is only considered when channel parallelism alone is narrow."""
    if nest.free:
        return [Folding()]
    pes = _divisors(nest.pe_bound, MAX_LANES)
    simds = _divisors(nest.simd_bound, MAX_LANES)
    vecs = [1]
    if nest.pe_bound * nest.simd_bound < 64 and nest.vec_bound > 1:
        vecs = [v for v in _divisors(nest.vec_bound, MAX_VEC) if nest.vectors % v == 0]
    out = []
    for v in vecs:
        for p in pes:
            for s in simds:
                if v * p * s <= MAX_LANES:
                    out.append(Folding(v, p, s))
    return out


def pareto(options: List[TaskOption]) -> List[TaskOption]:
    """The options no faster-or-equal option beats in every resource (DSP, LUT, BRAM18,
    URAM), sorted by cycles ascending (ties broken deterministically)."""
    opts = sorted(options, key=lambda o: (o.cycles, o.res.dsp, o.res.lut, o.res.bram18, o.res.uram,
                                          o.folding.lanes, o.folding.as_list()))
    kept: List[TaskOption] = []
    for o in opts:
        if any(k.res.dsp <= o.res.dsp and k.res.lut <= o.res.lut and k.res.bram18 <= o.res.bram18
               and k.res.uram <= o.res.uram for k in kept):
            continue
        kept.append(o)
    return kept


def pareto_options(nest: LoopNest, device: Device) -> List[TaskOption]:
    """The non-dominated foldings of one loop nest."""
    return pareto([evaluate(nest, f, device) for f in foldings(nest, device)])


def default_port_bits(device: Device, clock_mhz: float) -> int:
    """The AXI port width a schedule takes where --port-bits does not say: the device file's,
    but no wider than the narrowest power of two that carries one memory channel's bandwidth at
    this clock. A wider port moves no more data off chip (port_bytes_per_cycle), and every
    word of its beat is a lane of the RTL's activation memory, so its beats need more banks
    and routes (docs/rtl.md, stop 49). Only the small test FPGA narrows (4 GB/s at 200 MHz:
    20 bytes a cycle, 256 bits where the default is 512); every shipped device file's width is
    what its memory needs or a port limit of its own (the Zynq boards' 128)."""
    mem = device.main_memory
    need = mem.bandwidth_gbs * 1e9 / (clock_mhz * 1e6) / max(1, mem.channels) * 8
    return min(device.port_bits, 1 << max(3, math.ceil(math.log2(max(need, 1)))))


def port_bytes_per_cycle(device: Device, clock_mhz: float, port_bits: int) -> float:
    """What one AXI port moves per kernel cycle: at most its width, and at most one memory
    channel's share of the bandwidth (a bundle per channel). The scheduler charges transfers at
    this rate, and the RTL testbench's memory runs at it."""
    mem = device.main_memory
    total = mem.bandwidth_gbs * 1e9 / (clock_mhz * 1e6)
    return min(port_bits / 8, total / max(1, mem.channels))


def beat_lanes(beat: int, max_lanes: Optional[int]) -> int:
    """The elements of an off-chip beat (`beat` of them) that a transfer of activations moves
    into or out of the RTL's activation memory a cycle under --max-lanes (None: no limit): the
    most that divide the beat and are at most max_lanes, so that a beat is whole steps. Each is
    a port of the memory, which banks for every port of a client at once; so a beat no wider
    than the cores' lanes asks for no more banks than they do, and a transfer moves
    lanes x its container's bytes a cycle at most (Problem._traffic)."""
    if not max_lanes or beat <= max_lanes:
        return beat
    return max(d for d in range(1, max_lanes + 1) if beat % d == 0)


def transfer_cycles(nbytes: float, bytes_per_cycle: float) -> int:
    return int(math.ceil(nbytes / bytes_per_cycle)) if nbytes > 0 else 0
