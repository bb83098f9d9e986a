"""The activation memory's banks, planned at build time from the configuration words
(docs/rtl.md, "Banks planned from the words").

The RTL's activation memory (hlsgen_top_mem.sv) is built in these banks, one hlsgen_bank_mem per
region and copy (hlsgen_top_mem_flat.sv is the same memory as one array, `make sim
SIM_ARGS=--flat-mem`). Each region of it (each stored tensor, each staging
region of an m_axi read, and the elementwise constants) is a memory of its own, split by
coordinates: of the region's last three dimensions (C, H, W of an NCHW tensor; 1, N, F of an
N x F one; 1, 1, words for the constants) element (c, h, w) lies in bank
(c mod Bc, h mod Bh, w mod Bw), with Bc, Bh, Bw powers of two. This module chooses them for each
region from what its clients access in one cycle, which the words and ports fix:

- a window word's step reads VEC output pixels x PE output channels x SIMD taps of the
  reduction (PE lanes that share an input channel read it once); a group's write is VEC x PE
  outputs;
- an element word's step is VEC x PE consecutive elements in its iteration order, each a write
  and up to two reads (core.element_addresses);
- a stream beat is consecutive elements; an m_axi beat is consecutive elements off chip (a
  spilled 4-D tensor is NHWC there, so a beat is a pixel's channels on chip).

A region's banks are the fewest (then the fewest words) for which no client puts two different
words into one bank in one cycle (reads of one word share a port).

The memory splits a lane's offset in a region into these coordinates by its bits where the sizes
are powers of two, and by constant divides where not (act_mem.coordinate_split), in every lane,
at about 1.14 LUTs an address bit a divide (act_mem.DECODE_FIT). A region that would divide is
therefore also banked in its merged views, those merges of adjacent dimensions of its
N x C x H x W that split by bits alone (8 x 14 x 16 as 1 x 112 x 16 or as 1 x 1 x 1792, its
words in a row banked by offset), and each view's banks are priced with their divides. The region then needs as
many ports per bank as it has clients that may run at once: those of one dataflow stage, or of
one task of a sequential stage (the input streams before the first, the output streams after
the last). Two is a true dual-port block
RAM. Where one client at a time may put two words into a bank, the fewest banks at two words a
bank and the fewest at one are both priced as synthesis builds them (bank_cost, route_logic:
banks that two writes reach are true dual ports, block RAM or registers, where banks of one
write may be LUT RAM), and the one taking the smaller share of the device is built. A window
word's patterns are taken at every output position up to PATTERN_ENUM read lanes; beyond, at a
sample: one position for each way the padding cuts its taps (_edge_positions), the first, the
second, the middle, the last two and three drawn at random, which is exact in the region's own
coordinates (a move of the window moves every lane alike) but not in a merged view. An element
word's or a channel's steps are all taken up to ENUM elements, and blocks at the start, middle
and end beyond.

Each region also gets its routes: per client port, the banks its accesses reach, every access of
every word enumerated (a word beyond ROUTE_ENUM accesses gives its ports every bank). The memory
wires a port only to those banks, so its crossbar is the routes, not every port to every bank.

The figures are planned (from the words, not simulated and not synthesized): `make sim` fails
if a bank misses an access, and `make sim SIM_ARGS=--banks` checks the
plan and the routes against the simulated access trace (sim/hlsgen_sim/banks.py).
"""
from __future__ import annotations

import itertools
import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...schedule.cost import LUTRAM_MAX_BITS, Resources, bram18_blocks, storage
from ..vitis.kernel import KIND_ELTWISE, KIND_WINDOW, MAX_RANK, WORD
from . import offchip
from .act_mem import DECODE_FIT, address_bits, coordinate_split

MAX_BANKS = 512          # banks of one region, at most
SKEWS = 8                # a bank shape's skews tried: 0 .. SKEWS - 1 each
ENUM = 1 << 21           # an element word's or channel's elements taken whole up to this many
PATTERN_ENUM = 1 << 22   # a window word's read lanes taken at every output position up to this many
ROUTE_ENUM = 1 << 24     # a word's accesses enumerated for its lanes' routes, at most (beyond: every bank)
ROUTE_CHUNK = 1 << 20    # accesses of a window word taken at a time
IN_PHASE, OUT_PHASE = (-1, ""), (1 << 30, "")      # the input streams' and output streams' phases

# What synthesis builds of a region in banks (Yosys 0.70 synth_xilinx -family xcup on
# hlsgen_bank_mem's generate form; docs/rtl.md, "The banks priced as synthesized (stop 40)"). A
# bank is a memory with a block RAM's two ports, both read every cycle (port A reads or writes,
# port B reads, and writes too where two writes may reach the bank):
# - written through both ports (a true dual port): registers below TDP_REG_DEPTH words, else
#   block RAM (distributed RAM has one write port);
# - else registers up to REG_DEPTH words, distributed RAM up to cost.LUTRAM_MAX_BITS bits (its
#   two read ports double the LUTs: a RAM64X1D, 2 LUT sites, per bit and 64 words; at most 32
#   words a RAM32M16, 8 LUT sites, per 8 bits), else the model's block RAM or URAM;
# - registers and distributed RAM register both ports' words in 2 x SB flip-flops (a block RAM
#   has them inside).
TDP_REG_DEPTH = 16
REG_DEPTH = 2
# The routing logic of a region, LUTs: per term of route_terms, a least-squares fit (no
# coefficient negative) on the synthesized regions in benchmarks/bank_fit_points.json (`benchmarks/bank_fit.py`
# refits them and scores each design left out of its own fit, docs/rtl.md): per read port-bank
# pair and in-bank address bit, where reads of one word share a port (a bank port's address
# mux, and the compares by which they share it: SHARE), and where none do (the mux alone); per
# write pair and address bit, and per write pair and data bit (a bank's write port's muxes);
# per bit of a bank held in registers (its write enables and read mux); and per read pair
# beyond a port's first and data bit (a read port's word picked among its banks). Its
# flip-flops: each read port's enable, port and bank, one cycle on.
ROUTE_FIT = {"read_addr_bits": 7.62, "unshared_read_addr_bits": 4.34, "write_addr_bits": 0.0, "write_data_bits": 1.35,
             "register_bits": 2.27, "extra_read_bits": 0.75}
# the fit's error on each design left out of it (its routing LUTs modeled / synthesized - 1), the
# lowest and the highest: what benchmarks/bank_fit.py prints, which the reports quote
# (test_the_routing_fit_is_the_fit_of_its_points holds the two)
ROUTE_FIT_LEFT_OUT = (-0.31, 0.23)


def in_registers(depth: int, two_writes: bool) -> bool:
    """Whether synthesis builds a bank of `depth` words in registers (the rules above)."""
    return depth < TDP_REG_DEPTH if two_writes else depth <= REG_DEPTH


def bank_cost(depth: int, sb: int, two_writes: bool, device, lutram: bool = False) -> Resources:
    """One bank of `depth` words of `sb` bits as synthesis builds it (the rules above); with
    `lutram` (hlsgen_bank_mem's LUTRAM: ram_style "distributed"), a bank written through one port
    is distributed RAM at any depth."""
    bits = depth * sb
    if bits <= 0:
        return Resources()
    if in_registers(depth, two_writes):
        return Resources(ff=bits + 2 * sb)
    if two_writes:
        st = storage(bits, sb, device)
        return st if st.uram else Resources(bram18=bram18_blocks(bits, sb))
    if bits <= LUTRAM_MAX_BITS or lutram:
        sites = 8 * -(-sb // 8) if depth <= 32 else 2 * sb * -(-depth // 64)
        return Resources(lut=sites, ff=2 * sb)
    return storage(bits, sb, device)


def route_terms(inputs: Dict) -> Dict[str, int]:
    """What the routing logic of a region's memory grows with (ROUTE_FIT's terms), from its
    route_inputs (a plan region's, _priced): nr read ports, pr read and pw write port-bank pairs,
    banks of `depth` words of sb bits, register_bits of them in registers."""
    db = max(1, (inputs["depth"] - 1).bit_length())
    share = inputs.get("share", 1)           # (points synthesized before SHARE compared always)
    return {"read_addr_bits": inputs["pr"] * db if share else 0,
            "unshared_read_addr_bits": 0 if share else inputs["pr"] * db,
            "write_addr_bits": inputs["pw"] * db, "write_data_bits": inputs["pw"] * inputs["sb"],
            "register_bits": inputs["register_bits"], "extra_read_bits": max(0, inputs["pr"] - inputs["nr"]) * inputs["sb"]}


def route_logic(inputs: Dict, nb: int) -> Resources:
    """The routing logic of a region's memory of nb banks: route_terms priced by ROUTE_FIT, and
    each read port's registers."""
    terms = route_terms(inputs)
    return Resources(lut=int(round(sum(ROUTE_FIT[k] * v for k, v in terms.items()))),
                     ff=inputs["nr"] * (2 + max(1, (nb - 1).bit_length())))


class _Regions:
    """The memory's regions: stored tensors and staging regions (core.py's layout, aliases
    dropped), then the words in none of them (the elementwise constants) as one more."""

    def __init__(self, layout: List[Dict], words: int):
        regs = sorted((r for r in layout if r["kind"] != "alias"), key=lambda r: r["base"])
        self.names = [r["tensor"] for r in regs]
        self.bases = [int(r["base"]) for r in regs]
        self.sizes = [int(r["size"]) for r in regs]
        self.shapes = [[int(d) for d in r["shape"]] for r in regs]
        # the bits a word of each region needs (its tensor's type, signed; 0: the memory's)
        self.bits = [int(r.get("bits", 0)) for r in regs]
        free = np.ones(words, dtype=bool)
        for b, n in zip(self.bases, self.sizes):
            free[b:b + n] = False
        idx = np.flatnonzero(free)
        if len(idx):
            lo, hi = int(idx[0]), int(idx[-1]) + 1
            self.names.append("(constants)")
            self.bases.append(lo)
            self.sizes.append(hi - lo)
            self.shapes.append([hi - lo])
            self.bits.append(0)
        self.dims = [tuple(([1, 1, 1] + s)[-3:]) for s in self.shapes]
        self.views = [_views(d, n) for d, n in zip(self.dims, self.sizes)]
        order = np.argsort(self.bases, kind="stable")
        self._starts = np.asarray(self.bases, dtype=np.int64)[order]
        self._ends = (np.asarray(self.bases, dtype=np.int64) + np.asarray(self.sizes, dtype=np.int64))[order]
        self._order = order

    def locate(self, addr: np.ndarray) -> np.ndarray:
        """Each address's region index (-1: no access, or an address in no region)."""
        k = np.searchsorted(self._starts, addr, side="right") - 1
        kk = np.maximum(k, 0)
        inside = (addr >= 0) & (k >= 0) & (addr < self._ends[kk])
        return np.where(inside, self._order[kk], -1)

    def coords(self, r: int, addr: np.ndarray, dims: Optional[Tuple[int, int, int]] = None
               ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The coordinates (c, h, w) of addresses in region r, in its dimensions or in `dims` (a view)."""
        c, h, w = dims or self.dims[r]
        off = addr - self.bases[r]
        return off // (h * w) % c, off // w % h, off % w


def _views(dims: Tuple[int, int, int], size: int) -> List[Tuple[int, int, int]]:
    """The views a region of these (last three) dimensions may be banked in: its own, and, where
    the memory would split an address into them by constant divides (_divides), each merge of
    adjacent dimensions of (N, C, H, W) that it splits by bits alone, its last three taken as
    (C, H, W): 8 x 14 x 16 as 1 x 112 x 16 (h' = 14 c + h), and every region as 1 x 1 x size (its
    words in a row, banked by offset)."""
    out = [tuple(int(d) for d in dims)]
    if not _divides(dims, size):
        return out
    full = (max(1, size // math.prod(dims)), *out[0])
    for cuts in itertools.product((False, True), repeat=3):        # a cut after entry k or not
        groups, run = [], full[0]
        for k in range(3):
            if cuts[k]:
                groups.append(run)
                run = full[k + 1]
            else:
                run *= full[k + 1]
        groups.append(run)
        view = tuple(([1, 1, 1] + groups)[-3:])
        if view not in out and not _divides(view, size):
            out.append(view)
    return out


def _divides(dims: Sequence[int], size: int) -> int:
    """The constant divides by which the memory splits a lane's offset into a region's
    coordinates in these (last three) dimensions (act_mem.coordinate_split): 0 where by bits alone."""
    c, h, w = (int(d) for d in dims)
    return int(coordinate_split("o", (max(1, size // (c * h * w)), c, h, w))["divides"])


def _pow2s(n: int) -> List[int]:
    out = [1]
    while out[-1] < min(int(n), MAX_BANKS):
        out.append(out[-1] * 2)
    return out


def _depth(dims: Sequence[int], b: Sequence[int], size: int) -> int:
    """A bank's words: its share of each of the three dimensions, times the leading indices."""
    share = 1
    for d, n in zip(dims, b):
        share *= -(-int(d) // int(n))
    return share * max(1, size // (dims[0] * dims[1] * dims[2]))


class _Patterns:
    """Per region and view of it, the distinct shapes of what one client accesses in one cycle:
    each row a cycle's distinct words as offsets (c, h, w) from its first, encoded in one integer each."""

    def __init__(self, regions: _Regions):
        self.reg = regions
        self.rows: Dict[Tuple[int, int], List[np.ndarray]] = {}
        self.phases: Dict[int, Dict[Tuple[int, str], set]] = {}
        self.sampled: Dict[int, bool] = {}
        self.shared_reads: Dict[int, bool] = {}   # a client read one word through two ports in a cycle

    def add(self, client: str, writes: bool, phase: Tuple[int, str], addr: np.ndarray, sampled: bool = False) -> None:
        """One client's accesses (writes, or reads, of the memory): addr[cycle, lane] (-1: none)."""
        if addr.size == 0:
            return
        addr = addr.reshape(len(addr), -1).astype(np.int64)
        region = self.reg.locate(addr)
        if ((addr >= 0) & (region < 0)).any():
            bad = int(addr[(addr >= 0) & (region < 0)][0])
            raise ValueError(f"{client}: address {bad:#x} is in no region of the activation memory")
        for r in np.unique(region[region >= 0]):
            r = int(r)
            sub = np.where(region == r, addr, -1)
            sub = sub[(sub >= 0).any(axis=1)]
            self.phases.setdefault(r, {}).setdefault(phase, set()).add((client, writes))
            self.sampled[r] = self.sampled.get(r, False) or sampled
            # a cycle's distinct words (sorted, each repeat -1): the banks serve a word once; a
            # client that read one word twice in a cycle makes the region's reads share ports
            a = np.sort(sub, axis=1)
            dup = np.zeros_like(a, dtype=bool)
            dup[:, 1:] = (a[:, 1:] == a[:, :-1]) & (a[:, 1:] >= 0)
            if not writes:
                self.shared_reads[r] = self.shared_reads.get(r, False) or bool(dup.any())
            a = np.where(dup, -1, a)
            for v, dims in enumerate(self.reg.views[r]):
                self.rows.setdefault((r, v), []).append(self._encode(r, a, dims))

    def _encode(self, r: int, a: np.ndarray, dims: Tuple[int, int, int]) -> np.ndarray:
        """A cycle's distinct words a[cycle, lane] (-1: none) as offsets from its first in `dims`."""
        valid = a >= 0
        c, h, w = self.reg.coords(r, np.maximum(a, 0), dims)
        first = np.argmax(valid, axis=1)
        rows = np.arange(len(a))
        C, H, W = dims
        code = (((c - c[rows, first][:, None]) + C) * (2 * H) + (h - h[rows, first][:, None]) + H) * (2 * W) \
            + (w - w[rows, first][:, None]) + W
        code = np.sort(np.where(valid, code, -1), axis=1)
        return np.unique(code, axis=0)

    def patterns(self, r: int, v: int = 0) -> np.ndarray:
        parts = self.rows.get((r, v), [])
        if not parts:
            return np.zeros((0, 1), dtype=np.int64)
        width = max(p.shape[1] for p in parts)
        full = [np.pad(p, ((0, 0), (width - p.shape[1], 0)), constant_values=-1) for p in parts]
        return np.unique(np.concatenate(full), axis=0)


Shape = Tuple[int, ...]      # (Bc, Bh, Bw), or (Bc, Bh, Bw, Kwh, Kch, Kcw) with its skews


def _nbanks(b: Shape) -> int:
    return b[0] * b[1] * b[2]


def _worst(codes: np.ndarray, dims: Tuple[int, int, int], b: Shape) -> int:
    """The most different words of one cycle of one client that fall into one bank."""
    return int(_worst_rows(codes, dims, b).max()) if codes.size else 0


def _offsets(k: np.ndarray, dims: Tuple[int, int, int]):
    """The offsets (dc, dh, dw) from a cycle's first word that codes `k` (_Patterns._encode) stand for."""
    C, H, W = dims
    return k // (4 * W * H) - C, k // (2 * W) % (2 * H) - H, k % (2 * W) - W


def _worst_rows(codes: np.ndarray, dims: Tuple[int, int, int], b: Shape) -> np.ndarray:
    """Per cycle (row of `codes`), the most of its different words that fall into one bank."""
    valid = codes >= 0
    # the banks are linear in the coordinates, so two words share a bank exactly when their
    # offsets from the cycle's first word map to the same bank
    bank = bank_of(*_offsets(np.maximum(codes, 0), dims), b)
    lanes = codes.shape[1]
    bank = np.where(valid, bank, -1 - np.arange(lanes)[None, :])
    s = np.sort(bank, axis=1)
    if not (s[:, 1:] == s[:, :-1]).any():
        return valid.any(axis=1).astype(np.int64)
    stride = MAX_BANKS + lanes + 1
    key = np.arange(len(s))[:, None] * stride + s + lanes + 1
    u, cnt = np.unique(key[s >= 0], return_counts=True)
    out = np.zeros(len(s), dtype=np.int64)
    np.maximum.at(out, u // stride, cnt)
    return out


def _busiest(pat: _Patterns, r: int) -> set:
    """Region r's clients that may run at once, the most of any phase: (client, writes)."""
    return max(pat.phases.get(r, {}).values(), key=lambda v: (len(v), sum(w for _, w in v)), default=set())


def _allowed(pat: _Patterns, r: int) -> int:
    """Words one client may put into one bank in one cycle: 2 (a true dual-port bank) where it is
    the region's only client at a time, 1 where more run at once."""
    return 2 if len(_busiest(pat, r)) <= 1 else 1


def _copies(pat: _Patterns, r: int, copies: int) -> Dict[str, int]:
    """Which copy of region r each reading client reads (every copy takes every write): the
    first copy on which, in every phase the client runs in, fewer of that phase's readers are
    than a bank's two ports leave beside that phase's writers."""
    readers = sorted({c for v in pat.phases.get(r, {}).values() for c, w in v if not w})
    out: Dict[str, int] = {}
    for client in readers:
        phases = [v for v in pat.phases[r].values() if (client, False) in v]
        for k in range(copies):
            if all(sum(1 for c, w in v if not w and out.get(c) == k) < 2 - sum(1 for _, w in v if w) for v in phases):
                out[client] = k
                break
        else:
            raise ValueError(f"{client}: no copy of region {pat.reg.names[r]} has a port free in every phase it runs in")
    return out


def _choose(codes: np.ndarray, dims: Tuple[int, int, int], size: int, allowed: int,
            skewed: bool = False) -> Tuple[Shape, int]:
    """(Bc, Bh, Bw, Kwh, Kch, Kcw) and the worst it leaves: the fewest banks, then the fewest
    words, then the fewest skews, that serve every pattern at `allowed` words a bank (skewed:
    skews tried, else none); where none does, the fewest such words."""
    cands = sorted(((bc, bh, bw) for bc in _pow2s(dims[0]) for bh in _pow2s(dims[1]) for bw in _pow2s(dims[2])
                    if bc * bh * bw <= MAX_BANKS),
                   key=lambda b: (_nbanks(b), _depth(dims, b, size) * _nbanks(b), b))
    # no skew serves a cycle of more distinct words than a shape's banks take
    most = int((codes >= 0).sum(axis=1).max()) if codes.size else 0
    shapes = np.array([(*b, *k) for b in cands
                       for k in (_skews(b) if skewed and most <= allowed * _nbanks(b) else [(0, 0, 0)])], dtype=np.int64)
    if codes.size == 0:
        return tuple(int(v) for v in shapes[0]), 0
    # Every shape is judged on every cycle, but quickly: each cycle that defeats a shape is judged
    # at once under every shape, which bounds every shape's worst from below (`low`); a shape
    # whose bound already fails (or, choosing the least bad, is no better) is passed over.
    low = np.zeros(len(shapes), dtype=np.int64)
    seen: Dict[int, int] = {}

    def worst(i: int, below: int) -> int:
        """Shape i's worst; where it fails, its worst cycle raises the bounds of the shapes after
        it still in question (bound below `below`)."""
        if i not in seen:
            rows = _worst_rows(codes, dims, tuple(shapes[i]))
            r = int(rows.argmax())
            seen[i] = int(rows[r])
            if seen[i] > allowed:
                rest = i + 1 + np.flatnonzero(low[i + 1:] < below)
                low[rest] = np.maximum(low[rest], _worst_shapes(codes[r], dims, shapes[rest]))
        return seen[i]

    def first(i: int, below: int) -> int:
        """The first shape from i on whose bound is below `below`, else -1."""
        ok = np.flatnonzero(low[i:] < below)
        return i + int(ok[0]) if ok.size else -1

    i = first(0, allowed + 1)
    while i >= 0:
        if worst(i, allowed + 1) <= allowed:
            return tuple(int(v) for v in shapes[i]), seen[i]
        i = first(i + 1, allowed + 1)
    # none serves: the first of the least bad (every bound is a worst of some cycle, so it holds)
    best = 0
    i = first(1, worst(0, 1 << 30))
    while i >= 0:
        if worst(i, seen[best]) < seen[best]:
            best = i
        i = first(i + 1, seen[best])
    return tuple(int(v) for v in shapes[best]), seen[best]


def _worst_shapes(row: np.ndarray, dims: Tuple[int, int, int], shapes: np.ndarray) -> np.ndarray:
    """Per bank shape (row of `shapes`), the most of one cycle's different words (`row`, its
    codes) that fall into one bank."""
    k = row[row >= 0]
    if k.size < 2:
        return np.full(len(shapes), k.size, dtype=np.int64)
    bank = np.sort(bank_of(*_offsets(k, dims), [shapes[:, j:j + 1] for j in range(6)]), axis=1)
    # the longest run of one bank in each sorted row
    starts = np.ones(bank.shape, dtype=bool)
    starts[:, 1:] = bank[:, 1:] != bank[:, :-1]
    at = np.flatnonzero(starts)
    out = np.zeros(len(shapes), dtype=np.int64)
    np.maximum.at(out, at // k.size, np.diff(np.append(at, bank.size)))
    return out


def _skews(b: Tuple[int, int, int]) -> List[Tuple[int, int, int]]:
    """The skews (Kwh, Kch, Kcw) tried for a shape of Bc x Bh x Bw banks, the fewest nonzero first:
    each below its banks (Bw for Kwh, Bc for Kch and Kcw) and SKEWS."""
    bc, _, bw = b
    kw, kc = range(min(bw, SKEWS)), range(min(bc, SKEWS))
    return sorted(((a, x, y) for a in kw for x in kc for y in kc), key=lambda k: (sum(1 for v in k if v), k))


def one_group(f: List[int]) -> bool:
    """Whether a window word's PE lanes all read the same activations (its output channels form
    one group, OG >= O: a dense conv, a linear), so that one read serves them all. hlsgen_core
    reads such a word once per VEC x SIMD lane (`XSH` where every word of a core is so, `SSH`
    where some are), and its routes come from those ports alone."""
    return f[WORD["W_OG"]] >= f[WORD["W_O"]]


def _groups(f: List[int], vec: int) -> int:
    """A window word's output groups (positions of its VEC pixels)."""
    return int(f[WORD["W_N"]]) * int(f[WORD["W_OH"]]) * -(-int(f[WORD["W_OW"]]) // vec)


def _window(f: List[int], vec: int, pe: int, simd: int, rng, picks: Optional[Sequence[int]] = None,
            read_pe: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray, bool]:
    """A window word's reads and writes at output positions (`picks`, else a sample of them):
    (reads[cycle, lane], writes[cycle, lane], sampled). A read cycle is a step (output channel
    group, reduction step), its lanes (p, v, s) over read_pe x VEC x SIMD; read_pe is PE, or 1
    where the PE lanes share an input channel (OG >= O), as they do unless given. A write cycle
    is a group's, its lanes (p, v) over PE x VEC."""
    g = {k: int(f[WORD[f"W_{k}"]]) for k in ("N", "C", "H", "W", "O", "CG", "KH", "KW", "OH", "OW", "SH", "SW", "DH",
                                            "DW", "PT", "PL", "OG")}
    src, dst = int(f[WORD["SRC"]]), int(f[WORD["DST"]])
    red = g["CG"] * g["KH"] * g["KW"]
    ngrp = _groups(f, vec)
    ogs = -(-g["OW"] // vec)
    shared = one_group(f)                 # every PE lane reads the same input channel
    if read_pe is None:
        read_pe = 1 if shared else pe
    if picks is None:
        per = (1 if shared else -(-g["O"] // pe)) * -(-red // simd) * read_pe * vec * simd
        if ngrp * per <= PATTERN_ENUM:
            picks = range(ngrp)
        else:
            picks = sorted(set(_edge_positions(g, vec, ogs)) | {0, 1, ngrp // 2, ngrp - 2, ngrp - 1}
                           | {int(v) for v in rng.integers(0, ngrp, 3)})
            picks = [p for p in picks if 0 <= p < ngrp]
    sampled = len(picks) < ngrp
    o0s = np.arange(0, 1 if shared else g["O"], pe)
    r0s = np.arange(0, red, simd)
    v = np.arange(vec)
    p = np.arange(read_pe)
    s = np.arange(simd)
    reads, writes = [], []
    for q in picks:
        n, rest = divmod(q, g["OH"] * ogs)
        oy, og = divmod(rest, ogs)
        ox = og * vec + v                                                  # [V]
        o = o0s[:, None] + p[None, :]                                      # [O0, P]
        r = r0s[:, None] + s[None, :]                                      # [R0, S]
        ci, ky, kx = r // (g["KH"] * g["KW"]), r // g["KW"] % g["KH"], r % g["KW"]
        iy = oy * g["SH"] - g["PT"] + ky * g["DH"]                         # [R0, S]
        ix = ox[:, None, None] * g["SW"] - g["PL"] + kx[None] * g["DW"]    # [V, R0, S]
        ch = (o // g["OG"])[:, :, None, None] * g["CG"] + ci[None, None]   # [O0, P, R0, S]
        ok = (r < red)[None, None, None] & (o < g["O"])[:, :, None, None, None] & (ox < g["OW"])[None, None, :, None, None]
        ok = ok & ((iy >= 0) & (iy < g["H"]))[None, None, None] & ((ix >= 0) & (ix < g["W"]))[None, None]
        a = src + ((n * g["C"] + ch[:, :, None]) * g["H"] + iy[None, None, None]) * g["W"] + ix[None, None]
        a = np.where(ok, a, -1)                                            # [O0, P, V, R0, S]
        reads.append(a.transpose(0, 3, 1, 2, 4).reshape(len(o0s) * len(r0s), -1))
        ow = np.arange(0, g["O"], pe)[:, None] + np.arange(pe)[None, :]   # [O0w, PE]
        okw = (ow < g["O"])[:, :, None] & (ox < g["OW"])[None, None]
        wa = dst + ((n * g["O"] + ow[:, :, None]) * g["OH"] + oy) * g["OW"] + ox[None, None]
        writes.append(np.where(okw, wa, -1).reshape(len(ow), -1))
    return np.concatenate(reads), np.concatenate(writes), sampled


def _edge_positions(g: Dict[str, int], vec: int, ogs: int) -> List[int]:
    """A window word's output positions (of its first image), one for each way the padding cuts
    its taps: each distinct set of rows (ky) in the input, crossed with each distinct set of
    columns (v, kx) of its VEC pixels in the input. Where the banks are linear in the region's
    coordinates, every other position reads in the pattern of one of these, moved."""
    def firsts(keys):
        seen: Dict[tuple, int] = {}
        for k, key in enumerate(keys):
            seen.setdefault(key, k)
        return sorted(seen.values())
    ky, kx, v = np.arange(g["KH"]), np.arange(g["KW"]), np.arange(vec)
    rows = firsts(tuple(((oy * g["SH"] - g["PT"] + ky * g["DH"] >= 0)
                         & (oy * g["SH"] - g["PT"] + ky * g["DH"] < g["H"])).tolist()) for oy in range(g["OH"]))
    cols = []
    for og in range(ogs):
        ox = og * vec + v
        ix = ox[:, None] * g["SW"] - g["PL"] + kx[None] * g["DW"]
        cols.append(tuple(((ix >= 0) & (ix < g["W"]) & (ox < g["OW"])[:, None]).ravel().tolist()))
    return [oy * ogs + og for oy in rows for og in firsts(cols)]


def _blocks(total: int, lanes: int) -> Tuple[List[np.ndarray], bool]:
    """Element indices to take, in whole cycles of `lanes`: all, or blocks at the start, middle
    and end (sampled)."""
    if total <= ENUM:
        return [np.arange(total, dtype=np.int64)], False
    n = max(lanes, ENUM // 3 // lanes * lanes)
    mid = total // 2 // lanes * lanes
    last = (total - 1) // lanes * lanes - (n - lanes)
    return [np.arange(a, min(total, a + n), dtype=np.int64) for a in (0, mid, max(0, last))], True


def _cycles(idx: np.ndarray, addr: np.ndarray, lanes: int) -> np.ndarray:
    """Addresses of consecutive elements grouped into cycles of `lanes` (-1 after the last)."""
    pad = -len(idx) % lanes
    return np.concatenate([addr, np.full(pad, -1, dtype=np.int64)]).reshape(-1, lanes)


def _element(f: List[int], order: List[int], lanes: int):
    """An element word's (writes, reads) per cycle of `lanes` consecutive elements in its
    iteration order, and whether they are sampled."""
    from .core import _element_dims, element_addresses
    dims, _ = _element_dims(f)
    total = math.prod(dims)
    maps = element_addresses(f)
    nreads = 2 if f[WORD["KIND"]] == KIND_ELTWISE and f[WORD["E_NT"]] > 1 else 1
    idx_blocks, sampled = _blocks(total, lanes)
    writes, reads = [], []
    for idx in idx_blocks:
        digits = np.unravel_index(idx, [dims[d] for d in order])
        co = [None] * MAX_RANK
        for k, d in enumerate(order):
            co[d] = digits[k].astype(np.int64)
        addr = [b + sum(co[d] * int(k_[d]) for d in range(MAX_RANK)) for b, k_ in maps]
        writes.append(_cycles(idx, addr[0], lanes))
        reads.append(np.concatenate([_cycles(idx, addr[1 + t], lanes) for t in range(nreads)], axis=1))
    return np.concatenate(writes), np.concatenate(reads), sampled


def _beats(base_of: np.ndarray, beat: int) -> Tuple[np.ndarray, bool]:
    idx_blocks, sampled = _blocks(len(base_of), beat)
    return np.concatenate([_cycles(i, base_of[i], beat) for i in idx_blocks]), sampled


def bank_of(c, h, w, b: Sequence[int]):
    """The bank of the word (c, h, w) among Bc x Bh x Bw banks skewed by (Kwh, Kch, Kcw) (b: the
    shape, its skews 0 where not given), numbered as hlsgen_bank_mem numbers them:
    ((h mod Bh) * Bw + (w + Kwh h) mod Bw) * Bc + (c + Kch h + Kcw w) mod Bc."""
    bc, bh, bw = b[:3]
    kwh, kch, kcw = tuple(b[3:6]) or (0, 0, 0)
    return (h % bh * bw + (w + kwh * h) % bw) * bc + (c + kch * h + kcw * w) % bc


class _Routes:
    """Per region and client, each of the client's ports (its lanes, numbered as the client's
    ports on the memory) and the banks it reaches: every access of every word enumerated, or,
    where a word has more than ROUTE_ENUM, all the region's banks for that word's lanes."""

    def __init__(self, reg: _Regions, chosen: Dict[int, List[Tuple[Shape, Tuple[int, int, int]]]]):
        self.reg, self.chosen = reg, chosen                 # per region, the bank shapes (and views) to route for
        self.pairs: Dict[Tuple[int, int, str], List[np.ndarray]] = {}
        self.whole: Dict[Tuple[int, str], set] = {}       # lanes given every bank (not enumerated)

    def add(self, client: str, addr: np.ndarray, port: np.ndarray, exact: bool) -> None:
        """addr[cycle, column]: the accesses (-1: none); port[column]: the client's port of a column."""
        addr = addr.reshape(len(addr), -1).astype(np.int64)
        ports = np.broadcast_to(np.asarray(port, dtype=np.int64)[None, :], addr.shape)
        region = self.reg.locate(addr)
        for r in np.unique(region[region >= 0]):
            r = int(r)
            m = region == r
            if not exact:
                self.whole.setdefault((r, client), set()).update(int(p) for p in np.unique(ports[m]))
                continue
            split = {}                                    # the coordinates in each view, once
            for k, (b, dims) in enumerate(self.chosen[r]):
                if dims not in split:
                    split[dims] = self.reg.coords(r, addr[m], dims)
                c, h, w = split[dims]
                nb = _nbanks(b)
                self.pairs.setdefault((r, k, client), []).append(np.unique(ports[m] * nb + bank_of(c, h, w, b)))

    def of(self, r: int, k: int = 0) -> Dict[str, List[List[int]]]:
        """Region r's routes in its k-th bank shape: per client, per port up to its highest, the
        banks it reaches."""
        nb = _nbanks(self.chosen[r][k][0])
        out: Dict[str, List[List[int]]] = {}
        clients = {c for (q, _, c) in self.pairs if q == r} | {c for (q, c) in self.whole if q == r}
        for client in sorted(clients):
            u = np.unique(np.concatenate(self.pairs.get((r, k, client), [np.zeros(0, dtype=np.int64)])))
            whole = self.whole.get((r, client), set())
            n = max([int(u.max()) // nb + 1 if len(u) else 0] + [p + 1 for p in whole])
            lanes: List[set] = [set() for _ in range(n)]
            for x in u:
                lanes[int(x) // nb].add(int(x) % nb)
            for p in whole:
                lanes[p] = set(range(nb))
            out[client] = [sorted(s) for s in lanes]
        return out


def _window_routes(rt: _Routes, a: Dict, ln: Dict) -> None:
    """A window word's reads and writes into the routes, at every output position (in chunks),
    columns mapped onto the core's ports: read (v * MPR + p) * MS + s (MPR: 1 where every word of
    the core's shares its PE lanes' reads, XSH; p: 0 where this word does, SSH), write v * MP + p
    (hlsgen_core.sv)."""
    f, vec, pe, simd = a["f"], a["vec"], a["pe"], a["simd"]
    shared = one_group(f)
    mpr = 1 if ln["XSH"] else ln["MP"]
    read_pe = 1 if shared else pe
    p, v, s = np.meshgrid(np.arange(read_pe), np.arange(vec), np.arange(simd), indexing="ij")
    rport = ((v * mpr + p) * ln["MS"] + s).reshape(-1)
    pw, vw = np.meshgrid(np.arange(pe), np.arange(vec), indexing="ij")
    wport = (vw * ln["MP"] + pw).reshape(-1)
    ngrp = _groups(f, vec)
    red = f[WORD["W_CG"]] * f[WORD["W_KH"]] * f[WORD["W_KW"]]
    per = (1 if shared else -(-f[WORD["W_O"]] // pe)) * -(-red // simd) * read_pe * vec * simd
    exact = ngrp * per <= ROUTE_ENUM
    # every position, a chunk at a time; beyond ROUTE_ENUM, the sampled positions, whose ports
    # then reach every bank
    step = max(1, ROUTE_CHUNK // max(1, per))
    chunks = [list(range(lo, min(ngrp, lo + step))) for lo in range(0, ngrp, step)] if exact else [None]
    for picks in chunks:
        rd, wr, _ = _window(f, vec, pe, simd, np.random.default_rng(0), picks, read_pe)
        rt.add(f"core{a['core']} read lanes", rd, rport, exact)
        rt.add(f"core{a['core']} write lanes", wr, wport, exact)


def plan(layout: List[Dict], words: int, sb: int, accesses: List[Dict], inputs: List[Dict], outputs: List[Dict],
         channels: List, phase_of: Dict[str, Tuple[int, str]], device, lanes: Dict[int, Dict]) -> Dict:
    """The banks of every region of the activation memory (the module's text), and what they
    cost as the cost model places memories (cost.storage: LUT RAM when tiny, else block RAM
    or URAM), beside one memory per region placed by the model's rule for a stored tensor
    (read 64 bits a cycle; a dataflow schedule charges its streamed tensors FIFOs instead).
    `phase_of`: per task, when its clients run: (stage, "") in a dataflow stage, whose tasks
    all run at once, and (stage, task) in a sequential one, whose core runs one task after
    another (a task's channels run within it). `lanes`: per core, its lanes as core.py sizes
    them (MV, MP, MS, ML, XSH), which number its ports.
    Each region also gets its routes: per client, each of its ports and the banks it reaches
    (hlsgen_bank_mem's route lists, act_mem.route_params), every access enumerated (_Routes)."""
    reg = _Regions(layout, words)
    pat = _Patterns(reg)
    ab = address_bits(words)
    rng = np.random.default_rng(0)
    element_words = []                       # (access, writes, reads, sampled): enumerated once
    for a in accesses:
        f, c = a["f"], a["core"]
        if f[WORD["KIND"]] == KIND_WINDOW:
            rd, wr, sampled = _window(f, a["vec"], a["pe"], a["simd"], rng)
        else:
            wr, rd, sampled = _element(f, a["order"], a["vec"] * a["pe"] * a["simd"])
            element_words.append((a, wr, rd, sampled))
        pat.add(f"core{c} read lanes", False, phase_of[a["task"]], rd, sampled)
        pat.add(f"core{c} write lanes", True, phase_of[a["task"]], wr, sampled)
    beats_of = []                            # (client, beats, sampled)
    for p in inputs:
        beats, sampled = _beats(p["base"] + np.arange(p["size"], dtype=np.int64), p["lanes"])   # a step a cycle
        pat.add(f"input {p['name']} beats", True, IN_PHASE, beats, sampled)
        beats_of.append((f"input {p['name']} beats", beats, sampled))
    for p in outputs:
        beats, sampled = _beats(p["base"] + np.arange(p["size"], dtype=np.int64), p["lanes"])   # a step a cycle
        pat.add(f"output {p['name']} beats", False, OUT_PHASE, beats, sampled)
        beats_of.append((f"output {p['name']} beats", beats, sampled))
    for ch in channels:
        if ch.what == "weights":
            continue
        beats, sampled = _beats(ch.base + offchip.onchip_index(ch, ch.count), ch.lanes)   # a step a cycle
        client = f"m_axi {ch.bundle} {'write' if ch.write else 'read'} beats"
        pat.add(client, not ch.write, phase_of[ch.task], beats, sampled)
        beats_of.append((client, beats, sampled))
    # per region its bank shapes: the fewest banks that serve at the words a bank may take, and,
    # where one client at a time may put two words into a bank, also the fewest at one word (no
    # bank then needs a true dual port); where the memory would split an address into the
    # region's coordinates by constant divides, also the fewest that serve in each merged view
    # that splits by bits alone (_views): the cheapest is built (below), its divides priced
    options: Dict[int, List[Tuple[Shape, int, int, int]]] = {}
    for r in range(len(reg.names)):
        allowed = _allowed(pat, r)
        words_at = [allowed]
        if allowed == 2 and any(w for v in pat.phases.get(r, {}).values() for _, w in v):
            words_at.append(1)
        options[r] = []
        codes = pat.patterns(r)
        for a in words_at:
            plain = _choose(codes, reg.dims[r], reg.sizes[r], a)
            if plain[1] <= a or not options[r]:
                options[r].append((*plain, a, 0))
            # skewed banks, where they serve with fewer banks than plain ones
            b, worst = _choose(codes, reg.dims[r], reg.sizes[r], a, skewed=True)
            if worst <= a and (plain[1] > a or _nbanks(b) < _nbanks(plain[0])):
                options[r].append((b, worst, a, 0))
        for v in range(1, len(reg.views[r])):
            for a in words_at:
                b, worst = _choose(pat.patterns(r, v), reg.views[r][v], reg.sizes[r], a)
                if worst <= a:
                    options[r].append((b, worst, a, v))
    rt = _Routes(reg, {r: [(b, reg.views[r][v]) for b, _, _, v in o] for r, o in options.items()})
    for a in accesses:
        if a["f"][WORD["KIND"]] == KIND_WINDOW:
            _window_routes(rt, a, lanes[a["core"]])
    for a, wr, rd, sampled in element_words:
        # lane l writes through port l and reads term t through port t * ML + l (hlsgen_core.sv)
        n = wr.shape[1]
        rt.add(f"core{a['core']} write lanes", wr, np.arange(n), not sampled)
        rt.add(f"core{a['core']} read lanes", rd,
               (np.arange(rd.shape[1]) // n) * lanes[a["core"]]["ML"] + np.arange(rd.shape[1]) % n, not sampled)
    for client, beats, sampled in beats_of:
        rt.add(client, beats, np.arange(beats.shape[1]), not sampled)
    out = []
    for r, name in enumerate(reg.names):
        busiest = _busiest(pat, r)
        ports = len(busiest)
        writers = sum(1 for _, w in busiest if w)
        # beyond two clients at once the region is copied, every copy written by the writer and
        # read by its own readers
        copies = 1 if ports <= 2 else (-(-(ports - writers) // (2 - writers)) if writers < 2 else 0)
        # its banks hold the bits its words need (hlsgen_bank_mem's RB), and its reads compare
        # addresses to share a port only where a client reads one word through two (SHARE)
        rb, share = min(sb, reg.bits[r] or sb), pat.shared_reads.get(r, False)
        priced = [_priced(pat, reg, r, b, worst, allowed, rt.of(r, k), copies, rb, share, device, v, ab)
                  for k, (b, worst, allowed, v) in enumerate(options[r])]
        best = _cheapest(priced, device)
        codes = pat.patterns(r, best["view_index"])
        best.update({"region": name, "base": reg.bases[r], "size": reg.sizes[r], "word_bits": rb, "shared_reads": share,
                     "lutram": False,      # (_fit_block_ram below moves regions into LUT RAM)
                     "ports": ports, "writers": writers, "copies": copies,
                     "copy_of": _copies(pat, r, copies) if copies > 1 else {},
                     "served": bool(best["worst"] <= best["allowed"] and copies > 0),
                     "clients": sorted(c for c, _ in busiest), "patterns": int(len(codes)),
                     "sampled": bool(pat.sampled.get(r, False)), "routes_exact": not any(q == r for q, _ in rt.whole),
                     "shapes_priced": [{"shape": shape_text(o), "view": o["view"], "banks": o["banks"],
                                        "allowed": o["allowed"], "divide_lut": o["divide_lut"],
                                        "fraction": round(_fraction(o["bank_storage"], o["logic"], device,
                                                                    o["divide_lut"]), 6)}
                                       for o in priced],
                     "whole_storage": storage(reg.sizes[r] * sb, 64, device).as_dict()})
        out.append(best)
    lutram = _fit_block_ram(out, device)
    total = lambda key: {k: sum(o[key][k] for o in out) for k in ("dsp", "bram18", "uram", "lut", "ff")}  # noqa: E731
    return {"figures": "planned from the configuration words (not simulated, not synthesized): per region of the "
                       "activation memory, banks by coordinates (c mod Bc, h mod Bh, w mod Bw) of its dimensions or of "
                       "a merged view of them (`view`) so that no client puts two words into one bank in one cycle; "
                       "ports: its clients that may run at once",
            "max_banks": MAX_BANKS, "served": all(o["served"] for o in out), "sb": sb,
            "banks": sum(o["banks"] * max(1, o["copies"]) for o in out),
            "paths": sum(o["paths"] for o in out), "full_paths": sum(o["full_paths"] for o in out),
            "words": sum(o["banks"] * max(1, o["copies"]) * o["depth"] for o in out),
            "region_words": sum(o["size"] for o in out), "storage": total("bank_storage"),
            "logic": total("logic"),
            "whole_storage": total("whole_storage"), "regions": out, "lutram": lutram}


def _fit_block_ram(out: List[Dict], device) -> Dict:
    """Where the banks' block RAMs are more than the device has, the regions whose banks are all
    written through one port move into distributed RAM (hlsgen_bank_mem's LUTRAM), those with the
    fewest LUT sites a block RAM saved first, until the rest fit (then any of them the rest can
    do without goes back, the most LUTs first); where even all of them would not make the rest
    fit, none moves (the design does not fit either way, and LUT RAM would only take LUTs).
    Each moved region's `lutram` is set and its bank_storage repriced; returns what was done,
    for the reports."""
    have = device.bram18
    used = sum(o["bank_storage"]["bram18"] for o in out)
    if used <= have:
        return {"moved": [], "bram18_before": used, "bram18_device": have}
    cands = []
    for o in out:
        st = o["bank_storage"]
        if st["bram18"] and not st["uram"] and not o["two_write_banks"]:
            dist = bank_cost(o["depth"], o["word_bits"], False, device, lutram=True).times(o["banks"] * max(1, o["copies"]))
            cands.append((dist.lut / st["bram18"], o, dist))
    cands.sort(key=lambda c: c[0])
    need, moved = used - have, []
    for _, o, dist in cands:
        if need <= 0:
            break
        need -= o["bank_storage"]["bram18"]
        moved.append((o, dist))
    if need > 0:
        return {"moved": [], "bram18_before": used, "bram18_device": have}
    # then back into block RAM, the most LUTs first, each the rest can do without
    for o, dist in sorted(moved, key=lambda m: -m[1].lut):
        if need + o["bank_storage"]["bram18"] <= 0:
            need += o["bank_storage"]["bram18"]
            moved.remove((o, dist))
    for o, dist in moved:
        o["lutram"], o["bank_storage"] = True, dist.as_dict()
    return {"moved": [o["region"] for o, _ in moved], "bram18_before": used, "bram18_device": have}


def _priced(pat: _Patterns, reg: _Regions, r: int, b: Shape, worst: int, allowed: int,
            routes: Dict[str, List[List[int]]], copies: int, sb: int, share: bool, device, view: int, ab: int) -> Dict:
    """Region r in its view `view` (reg.views) in banks of shape b (serving `allowed` words a bank a
    cycle) of sb-bit words, its reads sharing ports where `share`, with these routes: its banks,
    routes and what they cost as synthesis builds them
    (bank_cost, route_logic), and the LUTs of its lanes' constant divides (act_mem.DECODE_FIT's
    divide term, at `ab` address bits), which hlsgen_top_mem adds around it."""
    dims, size = reg.views[r][view], reg.sizes[r]
    nb = _nbanks(b)
    paths = sum(len(x) for lanes_ in routes.values() for x in lanes_)
    depth = _depth(dims, b, size)
    # hlsgen_bank_mem's TWO_WRITES (act_mem.bank_memory passes `two_writes` on): a second write
    # port where one writer may put two words into a bank, or two write at once; a bank is then
    # written through both ports where two write ports reach it
    writing = sorted({c for v in pat.phases.get(r, {}).values() for c, w in v if w} & set(routes))
    two = bool(writing) and (allowed >= 2 or len(writing) >= 2)
    wports = _fanin(routes, writing, nb)
    tdp = int((wports >= 2).sum()) if two else 0
    # every copy holds every bank and takes every write; a copy's readers are its own
    n = max(1, copies)
    bank = bank_cost(depth, sb, True, device).times(tdp).plus([bank_cost(depth, sb, False, device).times(nb - tdp)])
    regs = depth * sb * (tdp * in_registers(depth, True) + (nb - tdp) * in_registers(depth, False))
    readers = [c for c in routes if c not in writing]
    rports = _fanin(routes, readers, nb)
    # what route_logic prices (benchmarks/bank_fit.py fits it on these), and each bank's routed
    # read and write ports (a copy's)
    inputs = {"nr": sum(1 for c in readers for x in routes[c] if x), "pr": int(rports.sum()),
              "pw": int(wports.sum()) * n, "depth": depth, "sb": sb, "share": int(share), "register_bits": regs * n,
              "read_fanin": rports.tolist(), "write_fanin": wports.tolist()}
    # every lane of every copy splits its offset: a reader's in its copy, a writer's in each
    lanes_ = inputs["nr"] + sum(1 for c in writing for x in routes[c] if x) * n
    divides = _divides(dims, size)
    return {"view": "tensor" if view == 0 else "merged", "view_index": view, "dims": list(dims),
            "tensor_dims": list(reg.dims[r]), "divides": divides,
            "divide_lut": int(round(DECODE_FIT["divide_address_bits"] * divides * lanes_ * ab)),
            "Bc": b[0], "Bh": b[1], "Bw": b[2], "Kwh": b[3], "Kch": b[4], "Kcw": b[5], "banks": nb, "depth": depth,
            "worst": worst, "allowed": allowed, "routes": routes, "paths": paths, "full_paths": sum(1 for lanes_ in routes.values() for x in lanes_ if x) * nb,
            "two_writes": two, "two_write_banks": tdp, "bank_storage": bank.times(n).as_dict(),
            "logic": route_logic(inputs, nb).as_dict(), "route_inputs": inputs}


def _cheapest(priced: List[Dict], device) -> Dict:
    """The priced shape to build: of those that serve (no client puts more words into a bank in a
    cycle than it allows), the one taking the smallest share of the device, its divides counted;
    the cheapest of all where none serves."""
    return min(priced, key=lambda o: (o["worst"] > o["allowed"],
                                      _fraction(o["bank_storage"], o["logic"], device, o["divide_lut"])))


def _fanin(routes: Dict[str, List[List[int]]], clients: Sequence[str], nb: int) -> np.ndarray:
    """Per bank, the ports of these clients routed to it."""
    out = np.zeros(nb, dtype=np.int64)
    for c in clients:
        for banks in routes[c]:
            out[list(banks)] += 1
    return out


def shape_text(o: Dict) -> str:
    """A region's bank shape as the report gives it: Bc x Bh x Bw, and its skews where it has any
    (`skew c+h+3w`: Bc's bank (c + h + 3w) mod Bc); in a merged view (_views), `offset mod B`
    (banked by offset) or the shape `of` the view's dimensions."""
    if o.get("view") == "merged":
        if o["dims"][:2] == [1, 1]:
            return f"offset mod {o['Bw']}"
        return f"{o['Bc']}x{o['Bh']}x{o['Bw']} of {'x'.join(map(str, o['dims']))}"
    text = f"{o['Bc']}x{o['Bh']}x{o['Bw']}"
    parts = []
    if o.get("Kwh"):
        parts.append(f"w{_term(o['Kwh'], 'h')}")
    if o.get("Kch") or o.get("Kcw"):
        parts.append("c" + "".join(_term(k, v) for k, v in ((o.get("Kch", 0), "h"), (o.get("Kcw", 0), "w")) if k))
    return text + (f" skew {', '.join(parts)}" if parts else "")


def _term(k: int, v: str) -> str:
    return f"+{'' if k == 1 else k}{v}"


def _fraction(st: Dict[str, int], lg: Dict[str, int], device, extra_lut: int = 0) -> float:
    """A region's storage and routing (and `extra_lut` more LUTs) as one figure: the fractions of
    the device's block RAM, URAM, LUTs and flip-flops they take, added up."""
    return sum((st[k] + lg[k] + (extra_lut if k == "lut" else 0)) / have
               for k, have in (("bram18", device.bram18), ("uram", device.uram),
                               ("lut", device.lut), ("ff", device.ff)) if have > 0)


def unserved(p: Dict, name=str) -> Optional[str]:
    """A line naming the first region the plan does not serve (through `name`), or None."""
    for o in p["regions"]:
        if o["worst"] > o["allowed"]:
            return (f"{name(o['region'])}: {o['worst']} words of one client in one bank in one cycle even at "
                    f"{o['banks']} banks")
        if not o["copies"]:
            return f"{name(o['region'])}: {o['writers']} writers at once ({', '.join(map(name, o['clients']))})"
    return None
