"""The activation memory's banks, planned at build time from the configuration words
(docs/rtl.md, "Banks planned from the words").

hlsgen_act_mem is still one array with a port per lane (the simulation-first RTL). A memory a
synthesis tool can build is banks. Here each region of it (each stored tensor, each staging
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
words into one bank in one cycle (reads of one word share a port). The region then needs as
many ports per bank as it has clients that may run at once: those of one dataflow stage, or of
one task of a sequential stage (the input streams before the first, the output streams after
the last). Two is a true dual-port block
RAM. A window word's patterns are taken at a sample of its output positions (the first, the
second, the middle, the last two and three drawn at random), which is exact where a move of
the window moves every lane alike (a convolution over its input); an element word's or a
channel's steps are all taken up to ENUM elements, and blocks at the start, middle and end
beyond.

The figures are planned (from the words, not simulated and not synthesized): `make sim
SIM_ARGS=--banks` checks them against the simulated access trace (sim/hlsgen_sim/banks.py).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...schedule.cost import storage
from ..vitis.kernel import KIND_ELTWISE, KIND_WINDOW, MAX_RANK, WORD
from . import offchip

MAX_BANKS = 512          # banks of one region, at most
ENUM = 1 << 21           # an element word's or channel's elements taken whole up to this many
ORIGINS = 8              # a window word's output positions sampled
IN_PHASE, OUT_PHASE = (-1, ""), (1 << 30, "")      # the input streams' and output streams' phases


class _Regions:
    """The memory's regions: stored tensors and staging regions (core.py's layout, aliases
    dropped), then the words in none of them (the elementwise constants) as one more."""

    def __init__(self, layout: List[Dict], words: int):
        regs = sorted((r for r in layout if r["kind"] != "alias"), key=lambda r: r["base"])
        self.names = [r["tensor"] for r in regs]
        self.bases = [int(r["base"]) for r in regs]
        self.sizes = [int(r["size"]) for r in regs]
        self.shapes = [[int(d) for d in r["shape"]] for r in regs]
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
        self.dims = [tuple(([1, 1, 1] + s)[-3:]) for s in self.shapes]
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

    def coords(self, r: int, addr: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        c, h, w = self.dims[r]
        off = addr - self.bases[r]
        return off // (h * w) % c, off // w % h, off % w


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
    """Per region, the distinct shapes of what one client accesses in one cycle: each row a
    cycle's distinct words as offsets (c, h, w) from its first, encoded in one integer each."""

    def __init__(self, regions: _Regions):
        self.reg = regions
        self.rows: Dict[int, List[np.ndarray]] = {}
        self.phases: Dict[int, Dict[Tuple[int, str], set]] = {}
        self.sampled: Dict[int, bool] = {}

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
            self.rows.setdefault(r, []).append(self._encode(r, sub))

    def _encode(self, r: int, addr: np.ndarray) -> np.ndarray:
        a = np.sort(addr, axis=1)
        dup = np.zeros_like(a, dtype=bool)
        dup[:, 1:] = a[:, 1:] == a[:, :-1]
        a = np.where(dup, -1, a)
        valid = a >= 0
        c, h, w = self.reg.coords(r, np.maximum(a, 0))
        first = np.argmax(valid, axis=1)
        rows = np.arange(len(a))
        C, H, W = self.reg.dims[r]
        code = (((c - c[rows, first][:, None]) + C) * (2 * H) + (h - h[rows, first][:, None]) + H) * (2 * W) \
            + (w - w[rows, first][:, None]) + W
        code = np.sort(np.where(valid, code, -1), axis=1)
        return np.unique(code, axis=0)

    def patterns(self, r: int) -> np.ndarray:
        parts = self.rows.get(r, [])
        if not parts:
            return np.zeros((0, 1), dtype=np.int64)
        width = max(p.shape[1] for p in parts)
        full = [np.pad(p, ((0, 0), (width - p.shape[1], 0)), constant_values=-1) for p in parts]
        return np.unique(np.concatenate(full), axis=0)


def _worst(codes: np.ndarray, dims: Tuple[int, int, int], b: Tuple[int, int, int]) -> int:
    """The most different words of one cycle of one client that fall into one bank."""
    if codes.size == 0:
        return 0
    C, H, W = dims
    bc, bh, bw = b
    valid = codes >= 0
    k = np.maximum(codes, 0)
    dw = k % (2 * W) - W
    dh = k // (2 * W) % (2 * H) - H
    dc = k // (4 * W * H) - C
    bank = (np.mod(dc, bc) * bh + np.mod(dh, bh)) * bw + np.mod(dw, bw)
    lanes = codes.shape[1]
    bank = np.where(valid, bank, -1 - np.arange(lanes)[None, :])
    s = np.sort(bank, axis=1)
    if not (s[:, 1:] == s[:, :-1]).any():
        return int(valid.any(axis=1).max())
    key = np.arange(len(s))[:, None] * (MAX_BANKS + lanes + 1) + s + lanes + 1
    _, cnt = np.unique(key[s >= 0], return_counts=True)
    return int(cnt.max())


def _choose(codes: np.ndarray, dims: Tuple[int, int, int], size: int, allowed: int) -> Tuple[Tuple[int, int, int], int]:
    """(Bc, Bh, Bw) and the worst it leaves: the fewest banks, then the fewest words, that serve
    every pattern at `allowed` words a bank; where none does, the fewest such words."""
    cands = sorted(((bc, bh, bw) for bc in _pow2s(dims[0]) for bh in _pow2s(dims[1]) for bw in _pow2s(dims[2])
                    if bc * bh * bw <= MAX_BANKS),
                   key=lambda b: (b[0] * b[1] * b[2], _depth(dims, b, size) * b[0] * b[1] * b[2], b))
    best = None
    for b in cands:
        worst = _worst(codes, dims, b)
        if worst <= allowed:
            return b, worst
        if best is None or worst < best[1]:
            best = (b, worst)
    return best


def _window(f: List[int], vec: int, pe: int, simd: int, rng) -> Tuple[np.ndarray, np.ndarray, bool]:
    """A window word's reads and writes at sampled output positions: (reads[cycle, lane],
    writes[cycle, lane], sampled)."""
    g = {k: int(f[WORD[f"W_{k}"]]) for k in ("N", "C", "H", "W", "O", "CG", "KH", "KW", "OH", "OW", "SH", "SW", "DH",
                                            "DW", "PT", "PL", "OG")}
    src, dst = int(f[WORD["SRC"]]), int(f[WORD["DST"]])
    red = g["CG"] * g["KH"] * g["KW"]
    ngrp = g["N"] * g["OH"] * -(-g["OW"] // vec)
    picks = sorted({0, 1, ngrp // 2, ngrp - 2, ngrp - 1} | {int(v) for v in rng.integers(0, ngrp, 3)})
    picks = [p for p in picks if 0 <= p < ngrp]
    sampled = len(picks) < ngrp
    ogs = -(-g["OW"] // vec)
    shared = g["OG"] >= g["O"]            # every PE lane reads the same input channel
    o0s = np.arange(0, 1 if shared else g["O"], pe)
    r0s = np.arange(0, red, simd)
    v = np.arange(vec)
    p = np.arange(1 if shared else pe)
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


def plan(layout: List[Dict], words: int, sb: int, accesses: List[Dict], inputs: List[Dict], outputs: List[Dict],
         channels: List, phase_of: Dict[str, Tuple[int, str]], device) -> Dict:
    """The banks of every region of the activation memory (the module's text), and what they
    cost as the cost model places memories (cost.storage: LUT RAM when tiny, else block RAM
    or URAM), beside one memory per region placed by the model's rule for a stored tensor
    (read 64 bits a cycle; a dataflow schedule charges its streamed tensors FIFOs instead).
    `phase_of`: per task, when its clients run: (stage, "") in a dataflow stage, whose tasks
    all run at once, and (stage, task) in a sequential one, whose core runs one task after
    another (a task's channels run within it)."""
    reg = _Regions(layout, words)
    pat = _Patterns(reg)
    rng = np.random.default_rng(0)
    for a in accesses:
        f, c = a["f"], a["core"]
        if f[WORD["KIND"]] == KIND_WINDOW:
            rd, wr, sampled = _window(f, a["vec"], a["pe"], a["simd"], rng)
        else:
            wr, rd, sampled = _element(f, a["order"], a["vec"] * a["pe"] * a["simd"])
        pat.add(f"core{c} read lanes", False, phase_of[a["task"]], rd, sampled)
        pat.add(f"core{c} write lanes", True, phase_of[a["task"]], wr, sampled)
    for p in inputs:
        beats, sampled = _beats(p["base"] + np.arange(p["size"], dtype=np.int64), p["beat"])
        pat.add(f"input {p['name']} beats", True, IN_PHASE, beats, sampled)
    for p in outputs:
        beats, sampled = _beats(p["base"] + np.arange(p["size"], dtype=np.int64), p["beat"])
        pat.add(f"output {p['name']} beats", False, OUT_PHASE, beats, sampled)
    for ch in channels:
        if ch.what == "weights":
            continue
        beats, sampled = _beats(ch.base + offchip.onchip_index(ch, ch.count), ch.beat)
        pat.add(f"m_axi {ch.bundle} {'write' if ch.write else 'read'} beats", not ch.write, phase_of[ch.task], beats,
                sampled)
    out = []
    for r, name in enumerate(reg.names):
        dims, size = reg.dims[r], reg.sizes[r]
        phases = pat.phases.get(r, {})
        busiest = max(phases.values(), key=lambda v: (len(v), sum(w for _, w in v)), default=set())
        ports = len(busiest)
        writers = sum(1 for _, w in busiest if w)
        # a dual-port bank: a client alone may use both ports; beyond two clients at once the
        # region is copied, every copy written by the writer and read by its own readers
        allowed = 2 if ports <= 1 else 1
        copies = 1 if ports <= 2 else (-(-(ports - writers) // (2 - writers)) if writers < 2 else 0)
        codes = pat.patterns(r)
        (bc, bh, bw), worst = _choose(codes, dims, size, allowed)
        nb = bc * bh * bw
        depth = _depth(dims, (bc, bh, bw), size)
        bank = storage(depth * sb, sb, device)
        whole = storage(size * sb, 64, device)
        out.append({"region": name, "base": reg.bases[r], "size": size, "dims": list(dims), "Bc": bc, "Bh": bh,
                    "Bw": bw, "banks": nb, "depth": depth, "worst": worst, "allowed": allowed, "ports": ports,
                    "writers": writers, "copies": copies, "served": bool(worst <= allowed and copies > 0),
                    "clients": sorted(c for c, _ in busiest), "patterns": int(len(codes)),
                    "sampled": bool(pat.sampled.get(r, False)),
                    "bank_storage": {k: v * nb * max(1, copies) for k, v in bank.as_dict().items()},
                    "whole_storage": whole.as_dict()})
    total = lambda key: {k: sum(o[key][k] for o in out) for k in ("dsp", "bram18", "uram", "lut", "ff")}  # noqa: E731
    return {"figures": "planned from the configuration words (not simulated, not synthesized): per region of the "
                       "activation memory, banks by coordinates (c mod Bc, h mod Bh, w mod Bw) so that no client puts "
                       "two words into one bank in one cycle; ports: its clients that may run at once",
            "max_banks": MAX_BANKS, "served": all(o["served"] for o in out),
            "banks": sum(o["banks"] * max(1, o["copies"]) for o in out),
            "words": sum(o["banks"] * max(1, o["copies"]) * o["depth"] for o in out),
            "region_words": sum(o["size"] for o in out), "storage": total("bank_storage"),
            "whole_storage": total("whole_storage"), "regions": out}


def unserved(p: Dict, name=str) -> Optional[str]:
    """A line naming the first region the plan does not serve (through `name`), or None."""
    for o in p["regions"]:
        if o["worst"] > o["allowed"]:
            return (f"{name(o['region'])}: {o['worst']} words of one client in one bank in one cycle even at "
                    f"{o['banks']} banks")
        if not o["copies"]:
            return f"{name(o['region'])}: {o['writers']} writers at once ({', '.join(map(name, o['clients']))})"
    return None
