"""What banking the activation memory would face, weighed on a simulated access trace.

`make sim SIM_ARGS=--banks` runs the simulation with hlsgen_act_mem's +mem_trace (every cycle's
enabled reads and writes, port and address) and then this module, which writes
results/banks.json and prints a table. For each scheme it gives the most accesses that fall
into one bank in one cycle (a true dual-port block RAM serves 2), the banks it takes, and the
clients (sim/design.json's synth.act_mem.clients) that met in that bank in the first such cycle:

- `cyclic`: the one memory as it is, bank = address mod NB, every access counted (two reads
  of one word count twice, as the RTL's bank_worst probe counts them; results/sim.json's
  bank_accesses must give the same figures);
- `region cyclic`: a memory per stored tensor and per staging region of an m_axi read (and
  one for every other word: the elementwise constants), bank = offset mod NB in each (the
  constants' by address); reads of one word in one cycle share a port;
- `region coordinates`: the same memories, each banked by coordinates: of its last three
  dimensions (C, H, W of an NCHW tensor; 1, N, F of an N x F one), bank = (c mod Bc, h mod Bh,
  w mod Bw), with the powers of two Bc, Bh, Bw chosen per tensor for the fewest banks that see
  at most 2 accesses a cycle (the fewest accesses where none does); reads of one word share a
  port. A bank's depth is its share of the tensor, ceil(C/Bc) ceil(H/Bh) ceil(W/Bw) words per
  leading index.

Every figure is simulated (Verilator, this design, this input). It says what a layout would
have to serve; it is not a synthesized memory.

    python sim/hlsgen_sim/banks.py [OUT]     (OUT: the emitted project; default: this one)
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

_ACCESS = re.compile(r" ([rw])(\d+):([0-9a-fA-F]+)")
MAX_NB = 512
BINCOUNT_CELLS = 1 << 24     # (cycle, bank) counters at a time


def read_trace(path: Path) -> Dict[str, np.ndarray]:
    """The trace hlsgen_act_mem wrote (+mem_trace=FILE) as arrays, one element per access:
    cycle, write (0 read, 1 write), port (within its kind) and address."""
    cyc: List[int] = []
    wr: List[int] = []
    port: List[int] = []
    addr: List[int] = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            head, _, rest = line.partition(" ")
            try:
                c = int(head)
            except ValueError:
                raise ValueError(f"{path}:{n}: not a trace line (cycle first): {line.strip()[:60]!r}") from None
            for kind, p, a in _ACCESS.findall(" " + rest):
                cyc.append(c)
                wr.append(kind == "w")
                port.append(int(p))
                addr.append(int(a, 16))
    return {"cycle": np.asarray(cyc, dtype=np.int64), "write": np.asarray(wr, dtype=bool),
            "port": np.asarray(port, dtype=np.int64), "addr": np.asarray(addr, dtype=np.int64)}


def _clients(design: Dict, t: Dict[str, np.ndarray]) -> Tuple[List[str], np.ndarray]:
    """(client names, each access's client index)."""
    clients = design["synth"]["act_mem"]["clients"]
    names = [c["client"] for c in clients]
    of = np.full(len(t["port"]), -1, dtype=np.int64)
    for i, c in enumerate(clients):
        mine = (t["write"] == (c["port"] == "w")) & (t["port"] >= c["first"]) & (t["port"] < c["first"] + c["n"])
        of[mine] = i
    if (of < 0).any():
        k = int(np.argmax(of < 0))
        raise ValueError(f"trace access {'w' if t['write'][k] else 'r'}{t['port'][k]} is on no client of design.json")
    return names, of


def _worst(cycle: np.ndarray, bank: np.ndarray, keep: np.ndarray) -> Tuple[int, int, int]:
    """(most accesses on one bank in one cycle, that cycle, that bank) over the kept accesses."""
    if not keep.any():
        return 0, -1, -1
    cyc, bnk = cycle[keep], bank[keep]
    step = np.diff(cyc)
    if (step < 0).any():                     # (a trace is in cycle order; a hand-made one may not be)
        o = np.argsort(cyc, kind="stable")
        cyc, bnk = cyc[o], bnk[o]
        step = np.diff(cyc)
    nb = int(bnk.max()) + 1
    # count (cycle, bank) pairs by the cycles' ranks, a chunk of cycles at a time (no sort); the
    # first of the most (earliest cycle, then lowest bank)
    rank = np.concatenate([[0], np.cumsum(step != 0)])
    per = max(1, BINCOUNT_CELLS // nb)
    best = (0, -1, -1)
    for lo in range(0, int(rank[-1]) + 1, per):
        a, b = np.searchsorted(rank, [lo, lo + per])
        cnt = np.bincount((rank[a:b] - lo) * nb + bnk[a:b])
        i = int(np.argmax(cnt))
        if cnt[i] > best[0]:
            j = a + int(np.searchsorted(rank[a:b], lo + i // nb))
            best = (int(cnt[i]), int(cyc[j]), i % nb)
    return best


def _shared(t: Dict[str, np.ndarray]) -> np.ndarray:
    """The accesses a banked memory serves, reads of one word in one cycle sharing a port: every
    write and the first read of each (cycle, address)."""
    keep = t["write"].copy()
    reads = np.flatnonzero(~t["write"])
    if len(reads):
        _, first = np.unique(np.stack([t["cycle"][reads], t["addr"][reads]]), axis=1, return_index=True)
        keep[reads[first]] = True
    return keep


def _region_of(bases: np.ndarray, sizes: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """Each address's index among regions (base, size), -1 where it is in none."""
    if not len(bases):
        return np.full(len(addr), -1, dtype=np.int64)
    order = np.argsort(bases, kind="stable")
    k = np.searchsorted(bases[order], addr, side="right") - 1
    r = order[np.maximum(k, 0)]
    return np.where((k >= 0) & (addr < bases[r] + sizes[r]), r, -1)


def _regions(design: Dict, t: Dict[str, np.ndarray]):
    """Each access's region (an index into design.json's regions: stored tensors and staging
    regions; the last index: every other word, the elementwise constants, from the first of
    them) and its offset in it; the regions' names, shapes and sizes."""
    regs = sorted(design["synth"]["act_mem"]["regions"], key=lambda r: r["base"])
    words = int(design["synth"]["act_mem"]["words"])
    free = np.ones(words, dtype=bool)
    for r in regs:
        free[r["base"]:r["base"] + r["size"]] = False
    lo = int(np.argmax(free)) if free.any() else 0
    other = max(1, int(np.flatnonzero(free)[-1]) + 1 - lo) if free.any() else 1
    names = [r["tensor"] for r in regs] + ["(constants)"]
    shapes = [r["shape"] for r in regs] + [[other]]
    sizes = [r["size"] for r in regs] + [other]
    starts = np.asarray([r["base"] for r in regs], dtype=np.int64)
    addr = t["addr"]
    if (addr >= words).any():
        raise ValueError(f"trace address {int(addr[np.argmax(addr >= words)]):#x} is in no region of design.json "
                         f"(the memory has {words} words)")
    region = _region_of(starts, np.asarray([r["size"] for r in regs], dtype=np.int64), addr)
    region = np.where(region >= 0, region, len(regs))
    offset = addr - np.append(starts, lo)[region]
    return region, offset, names, shapes, sizes


def planned(design: Dict, t: Dict[str, np.ndarray]) -> Dict:
    """The build's bank plan (design.json's synth.act_mem.banking, hlsgen/backends/rtl/banking.py)
    held against the trace: per region, under the plan's Bc, Bh, Bw, the most words one client
    put into one bank in one cycle (the plan allows `allowed`) and the most clients that met in
    the region in one cycle (the plan provides `ports`). Reads of one word share a port where
    the plan's region does (`shared_reads`; hlsgen_bank_mem's SHARE), and each takes one where it
    does not. And every access (every lane's, shared or not) against its port's routes."""
    plan = design["synth"]["act_mem"]["banking"]
    names, client = _clients(design, t)
    regs = plan["regions"]
    region = _region_of(np.asarray([r["base"] for r in regs], dtype=np.int64),
                        np.asarray([r["size"] for r in regs], dtype=np.int64), t["addr"])
    if (region < 0).any():
        raise ValueError(f"trace address {int(t['addr'][np.argmax(region < 0)]):#x} is in no region of the bank plan")
    bank = np.zeros(len(region), dtype=np.int64)          # every access's bank in its region
    for r, reg in enumerate(regs):
        mine = region == r
        c, h, w, _ = _coords(t["addr"][mine] - reg["base"], reg["dims"])
        bank[mine] = _bank(c, h, w, reg)
    off_route = _off_route(design, t, names, client, region, bank)
    # every read of a region whose reads do not share ports (SHARE = 0) is an access of its own
    unshared = ~np.asarray([bool(r.get("shared_reads", True)) for r in regs])
    keep = _shared(t) | (~t["write"] & unshared[region])
    cycle, client, region, bank = t["cycle"][keep], client[keep], region[keep], bank[keep]
    out = []
    for r, reg in enumerate(regs):
        mine = region == r
        cyc, who = cycle[mine], client[mine]
        worst, at, met = 0, -1, 0
        if mine.any():
            key = (cyc * len(names) + who) * reg["banks"] + bank[mine]
            u, cnt = np.unique(key, return_counts=True)
            i = int(np.argmax(cnt))
            worst, at = int(cnt[i]), int(u[i] // reg["banks"] // len(names))
            pairs = np.unique(cyc * len(names) + who)
            met = int(np.unique(pairs // len(names), return_counts=True)[1].max())
        out.append({"region": reg["region"], "Bc": reg["Bc"], "Bh": reg["Bh"], "Bw": reg["Bw"],
                    **{k: int(reg.get(k, 0)) for k in ("Kwh", "Kch", "Kcw")}, "banks": reg["banks"],
                    "copies": reg["copies"], "allowed": reg["allowed"], "ports": reg["ports"], "worst": worst,
                    "cycle": at, "clients_met": met,
                    "ok": bool(worst <= reg["allowed"] and met <= max(1, reg["ports"]))})
    return {"figures": "the build's planned banks (not simulated) checked on this simulated trace",
            "ok": all(o["ok"] for o in out) and off_route is None, "plan_served": plan["served"],
            "routes_kept": off_route is None, "off_route": off_route,
            "paths": plan.get("paths"), "full_paths": plan.get("full_paths"),
            **{k: plan.get(k) for k in ("banks", "words", "region_words", "storage", "logic", "whole_storage")},
            "regions": out}


def _bank(c: np.ndarray, h: np.ndarray, w: np.ndarray, reg: Dict) -> np.ndarray:
    """The bank of (c, h, w) in a planned region, numbered as hlsgen_bank_mem (and banking.py's
    routes) number them: ((h mod Bh) * Bw + (w + Kwh h) mod Bw) * Bc + (c + Kch h + Kcw w) mod Bc
    (the skews: 0 where the plan has none)."""
    kwh, kch, kcw = (int(reg.get(k, 0)) for k in ("Kwh", "Kch", "Kcw"))
    return (h % reg["Bh"] * reg["Bw"] + (w + kwh * h) % reg["Bw"]) * reg["Bc"] + (c + kch * h + kcw * w) % reg["Bc"]


def _off_route(design: Dict, t: Dict[str, np.ndarray], names: List[str], client: np.ndarray, region: np.ndarray,
               bank: np.ndarray) -> Optional[str]:
    """The first access (region and bank: each access's, in the plan) on a bank that the plan's
    routes do not give its port (banking.py: each client's ports and the banks they reach), or None."""
    first = {c["client"]: c["first"] for c in design["synth"]["act_mem"]["clients"]}
    bad = []
    for r, reg in enumerate(design["synth"]["act_mem"]["banking"]["regions"]):
        for i, name in enumerate(names):
            sel = np.flatnonzero((region == r) & (client == i))
            if not len(sel):
                continue
            lanes = reg.get("routes", {}).get(name, [])
            port = t["port"][sel] - first[name]
            allowed = np.zeros((max(len(lanes), int(port.max()) + 1), reg["banks"]), dtype=bool)
            for k, banks in enumerate(lanes):
                allowed[k, banks] = True
            miss = np.flatnonzero(~allowed[port, bank[sel]])
            if len(miss):
                j = sel[miss[0]]
                bad.append((int(t["cycle"][j]), f"cycle {int(t['cycle'][j])}: {name} port {int(port[miss[0]])} "
                                                f"reached bank {int(bank[j])} of {reg['region']}, "
                                                f"which its routes do not give it"))
    return min(bad)[1] if bad else None


def _pow2s(n: int) -> List[int]:
    out = [1]
    while out[-1] < min(n, MAX_NB):
        out.append(out[-1] * 2)
    return out


def _coords(offset: np.ndarray, shape: Sequence[int]) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Tuple[int, int, int]]:
    dims = ([1, 1, 1] + [int(d) for d in shape])[-3:]
    c, h, w = dims
    return offset // (h * w) % c, offset // w % h, offset % w, (c, h, w)


def _depth(dims: Tuple[int, int, int], b: Tuple[int, int, int], size: int) -> int:
    """A coordinate bank's words: its share of each dimension, times the leading indices."""
    share = 1
    for d, n in zip(dims, b):
        share *= -(-d // n)
    return share * max(1, size // (dims[0] * dims[1] * dims[2]))


def _who(names: List[str], client: np.ndarray, sel: np.ndarray) -> List[str]:
    got = {}
    for i in client[sel]:
        got[names[int(i)]] = got.get(names[int(i)], 0) + 1
    return [f"{n} x{k}" for n, k in sorted(got.items(), key=lambda kv: -kv[1])]


def weigh(design: Dict, t: Dict[str, np.ndarray], ports: int = 2) -> Dict:
    """The schemes' figures for one design's trace (see the module's text); coordinate banks
    are chosen for at most `ports` accesses per bank per cycle with the fewest banks (where no
    choice reaches it, the fewest accesses)."""
    names, client = _clients(design, t)
    cycle, addr = t["cycle"], t["addr"]
    every = np.ones(len(addr), dtype=bool)
    out: Dict = {"figures": "simulated (Verilator): accesses of the activation memory per bank per cycle under "
                            "each banking scheme; a true dual-port block RAM serves 2",
                 "accesses": int(len(addr)), "cycles_with_accesses": int(len(np.unique(cycle)))}
    cyc = {}
    for j in range(10):
        nb = 1 << j
        most, at, bank = _worst(cycle, addr % nb, every)
        sel = (cycle == at) & (addr % nb == bank)
        cyc[str(nb)] = {"worst": most, "cycle": at, "clients": _who(names, client, sel)}
    out["cyclic"] = cyc
    shared = _shared(t)
    region, offset, rnames, shapes, sizes = _regions(design, t)
    rc = {}
    for j in range(10):
        nb = 1 << j
        bank = region * nb + offset % nb
        most, at, b = _worst(cycle, bank, shared)
        sel = shared & (cycle == at) & (bank == b)
        rc[str(nb)] = {"worst": most, "banks": nb * len(rnames), "cycle": at,
                       "region": rnames[b // nb] if most else None, "clients": _who(names, client, sel)}
    out["region_cyclic"] = rc
    per = []
    for r, (rname, shape, size) in enumerate(zip(rnames, shapes, sizes)):
        mine = np.flatnonzero(shared & (region == r))         # the region's accesses only
        c, h, w, dims = _coords(offset[mine], shape)
        cyc = cycle[mine]
        every = np.ones(len(mine), dtype=bool)
        best = None
        # fewest banks first (stable: the nested order within a count); once some count serves
        # at `ports`, no larger count can beat it
        cands = sorted(((bc, bh, bw) for bc in _pow2s(dims[0]) for bh in _pow2s(dims[1]) for bw in _pow2s(dims[2])
                        if bc * bh * bw <= MAX_NB), key=lambda b: b[0] * b[1] * b[2])
        for bc, bh, bw in cands:
            if best is not None and best[0][0] == ports and bc * bh * bw > best[0][1]:
                break
            bank = (c % bc * bh + h % bh) * bw + w % bw
            most, at, b = _worst(cyc, bank, every)
            key = (max(most, ports), bc * bh * bw, most)
            if best is None or key < best[0]:
                best = (key, (bc, bh, bw), at, b, bank)
        (_, nbanks, most), (bc, bh, bw), at, b, bank = best
        sel = mine[(cyc == at) & (bank == b)]
        constants = r == len(rnames) - 1
        per.append({"region": rname, "shape": [int(size)] if constants else list(shape), "words": int(size),
                    "accesses": int(len(mine)), "worst": most, "banks": nbanks, "Bc": bc, "Bh": bh, "Bw": bw, "cycle": at,
                    "depth": -(-int(size) // nbanks) if constants else _depth(dims, (bc, bh, bw), int(size)),
                    "clients": _who(names, client, sel) if most else []})
    worst = max(per, key=lambda p: p["worst"])
    out["region_coordinates"] = {"worst": worst["worst"], "worst_region": worst["region"], "ports": ports,
                                 "banks": sum(p["banks"] for p in per),
                                 "words": sum(p["banks"] * p["depth"] for p in per),
                                 "region_words": sum(p["words"] for p in per), "regions": per}
    if "banking" in design["synth"]["act_mem"]:
        out["planned"] = planned(design, t)
    return out


def table(res: Dict) -> List[str]:
    """The printed summary."""
    lines = ["banks (simulated accesses per bank per cycle; a true dual-port block RAM serves 2):",
             "  NB                      " + " ".join(f"{nb:>4}" for nb in res["cyclic"]),
             "  one memory, cyclic      " + " ".join(f"{v['worst']:>4}" for v in res["cyclic"].values()),
             "  a memory per tensor     " + " ".join(f"{v['worst']:>4}" for v in res["region_cyclic"].values())]
    rc = res["region_coordinates"]
    lines.append(f"  per tensor, by coordinates: at most {rc['worst']} (in {rc['worst_region'][:36]}), {rc['banks']} banks, "
                 f"{rc['words']:,} words of banks for {rc['region_words']:,} words of tensors and constants:")
    for p in rc["regions"]:
        who = "; ".join(p["clients"][:4])
        lines.append(f"    {p['region'][:36]:<36} {'x'.join(map(str, p['shape'])):>14} Bc={p['Bc']:<3} Bh={p['Bh']:<3} "
                     f"Bw={p['Bw']:<3} worst {p['worst']:>3}" + (f"  ({who})" if p["worst"] > 2 else ""))
    pl = res.get("planned")
    if pl:
        bad = [o for o in pl["regions"] if not o["ok"]]
        st = pl["storage"]
        lines.append(f"  the build's plan (per client at most `allowed` words a bank a cycle): {pl['banks']} banks, "
                     f"{pl['words']:,} words ({st['bram18']} BRAM18, {st['lut']:,} LUTs of LUT RAM, modeled); "
                     + ("the trace keeps to it" if not bad else
                        "the trace breaks it in " + "; ".join(f"{o['region'][:36]} ({o['worst']} words in a bank at "
                                                              f"cycle {o['cycle']}, {o['clients_met']} clients met)"
                                                              for o in bad[:3])))
        if pl.get("paths") is not None:
            lines.append(f"  its routes (each port to the banks its words reach): {pl['paths']:,} port-bank paths, where a "
                         f"full crossbar of the same ports has {pl['full_paths']:,}; "
                         + ("every access kept to them" if pl["routes_kept"] else pl["off_route"]))
    nb512 = res["cyclic"][str(MAX_NB)]
    if nb512["worst"] > 2:
        lines.append(f"  one memory at {MAX_NB} banks: {nb512['worst']} in one bank at cycle {nb512['cycle']}: "
                     + "; ".join(nb512["clients"][:6]))
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=str(Path(__file__).resolve().parents[2]))
    a = ap.parse_args(argv)
    out = Path(a.out)
    trace = out / "results" / "mem_trace.txt"
    if not trace.exists():
        print(f"banks: no trace at {trace}; run `make sim SIM_ARGS=--banks`", file=sys.stderr)
        return 2
    design = json.loads((out / "sim" / "design.json").read_text())
    res = weigh(design, read_trace(trace))
    (out / "results" / "banks.json").write_text(json.dumps(res, indent=2) + "\n")
    print("\n".join(table(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
