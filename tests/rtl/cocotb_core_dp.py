"""cocotb test of hlsgen_core_dp, the arithmetic of hlsgen_core: random window steps (two per
output group, so the accumulators carry) and elementwise lanes, each output compared with a
Python reference built on the golden requantizer's rounding (hlsgen.numerics.round_shift).
HLSGEN_CASE gives the parameters and the shapes behind them (`mac`: VEC, PE, SIMD, pairing;
`rq`: VEC, PE). Each weighted or averaging step takes one of the shapes as its word's folding
(fv, fp, fs), in turn, as a sequential core's words do. Operands follow what hlsgen_core feeds:
in a shape paired along PE the lanes of a pair read the same activation (a dense conv), along
VEC the same weight; lanes are live at random inside the folding (padding, ragged edges), and a
dead lane's weight is any WB-bit value (a row of the ROM it did not ask for). A
paired shape's weights are PWB bits wide, an unpaired shape's WB (a core whose int8 stem conv
beside its int4 layers).

The datapath is a pipeline (DPL = 4: a step's outputs come 4 cycles after its operands): the
steps stream in back to back, with random empty cycles between them (acc_en low, the operands
random), and every table row comes in the cycle its stage uses it (hlsgen_core_dp's header), so
a row of another step sits on the other stages' ports at the same time."""
import json
import os
import random

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, Timer

from hlsgen.backends.rtl.core import WRITE_DELAY
from hlsgen.numerics import round_shift


def pack(values, bits):
    out = 0
    for k, v in enumerate(values):
        out |= (int(v) & ((1 << bits) - 1)) << (k * bits)
    return out


def unpack(word, bits, n):
    out = []
    for k in range(n):
        v = (int(word) >> (k * bits)) & ((1 << bits) - 1)
        out.append(v - (1 << bits) if v >> (bits - 1) else v)
    return out


def tail(p, sh, half_even, zp, lo, hi):
    q = int(round_shift(np.array([p], dtype=object), sh, "half_even" if half_even else "floor")[0]) + zp
    return min(max(q, lo), hi)


DPL = WRITE_DELAY - 1                         # hlsgen_core_dp's latency: operands to outputs
# the cycle, after its operands, each row field is read in (hlsgen_core_dp's header)
ROW_AT = {"m0": DPL - 1, "bias": DPL, "shift": DPL, "he": DPL, "ozp": DPL, "lo": DPL, "hi": DPL,
          "em": 0, "ebias": 1, "eshift": 2, "ehe": 2, "eozp": 2, "elo": 2, "ehi": 2}


@cocotb.test()
async def core_dp_matches_reference(dut):
    c = json.loads(os.environ["HLSGEN_CASE"])
    mv, mp, ms, ml, sb, wb, pw = (c[k] for k in ("MV", "MP", "MS", "ML", "SB", "WB", "PW"))
    no = mv * mp
    rng = random.Random(c["seed"])
    cocotb.start_soon(_clock(dut.clk))
    xb = c["XB"]
    qlo, qhi = -(1 << (sb - 1)), (1 << (sb - 1)) - 1           # what a requantizer may saturate to
    steps = []                                    # every step: its port values and expected outputs
    for trial in range(c["trials"]):
        # the word kinds this core's parameters allow: a weighted window word (at one of its MAC
        # shapes), an average pool (no weights, at one of its requantizer shapes), a max pool (any
        # folding inside the lanes)
        kinds = (["mac"] if c["mac"] else []) + (["avg"] if c["rq"] else []) + ["max"]
        kind = kinds[trial % len(kinds)]
        # a tensor is XB-bit signed or unsigned, its zero point in the same range
        signed = trial % 3 != 2
        xlo, xhi = (-(1 << (xb - 1)), (1 << (xb - 1)) - 1) if signed else (0, (1 << xb) - 1)
        wmax, wuse = kind == "max", kind == "mac"
        pair = 0
        if wuse:
            fv, fp, fs, pair = c["mac"][(trial // len(kinds)) % len(c["mac"])]
        elif kind == "avg":
            (fv, fp), fs = c["rq"][(trial // len(kinds)) % len(c["rq"])], ms
        else:
            fv, fp, fs = mv, mp, ms
        env = (fv, fp, fs)
        wbits = c["PWB"] if pair else wb
        wlo, whi = -(1 << (wbits - 1)), (1 << (wbits - 1)) - 1
        # every other trial of a PE-paired shape is a probe: its live weights are 0 and its rows
        # pass the accumulator through (x 2^30 >> 30), so that an error of one in any sum shows
        # (a dead first lane's stray weight, wider than PWB, would carry into its pair's product)
        probe = pair == 1 and (trial // len(kinds) // len(c["mac"])) % 2 == 1
        if probe:
            wlo = whi = 0
        zp = rng.randint(max(xlo, -20), 20) if not wmax else 0
        init = xlo if wmax else 0
        acc = [init] * no
        rows = [dict(m=rng.randint(1 << 29, (1 << 31) - 1) * rng.choice([1, -1]), bias=rng.randint(-(1 << 20), 1 << 20),
                     sh=rng.randint(20, 40), he=rng.randint(0, 1), zp=rng.randint(-5, 5), lo=qlo, hi=qhi)
                 for _ in range(no)]
        if probe:
            rows = [dict(r, m=1 << 30, bias=0, sh=30) for r in rows]
        for step in range(2):
            xs = [[[rng.randint(xlo, xhi) for _ in range(ms)] for _ in range(mp)] for _ in range(mv)]
            ws = [[[rng.randint(wlo, whi) for _ in range(ms)] for _ in range(mp)] for _ in range(mv)]
            x, w, live = [], [], []
            for v in range(mv):
                for p in range(mp):
                    for s in range(ms):
                        x.append(xs[v][p - p % 2][s] if pair == 1 else xs[v][p][s])
                        w.append(ws[v - v % 2][p][s] if pair == 2 else ws[v][p][s])
                        live.append(rng.random() < 0.8 and v < env[0] and p < env[1] and s < env[2])
            for o in range(no):
                for s in range(ms):
                    k = o * ms + s
                    if live[k]:
                        acc[o] = max(acc[o], x[k]) if wmax else acc[o] + (w[k] if wuse else 1) * (x[k] - zp)
            stray = [wv if lv else rng.randint(-(1 << (wb - 1)), (1 << (wb - 1)) - 1) for wv, lv in zip(w, live)]
            port = dict(acc_en=1, first=int(step == 0), wmax=int(wmax), wuse=int(wuse), fv=fv, fp=fp, fs=fs,
                        live=pack(live, 1), x=pack(x, sb), w=pack(stray, wb),
                        zp=zp & ((1 << (sb + 1)) - 1), init=init & ((1 << sb) - 1))
            for name, key, bits in (("m0", "m", 32), ("bias", "bias", pw), ("shift", "sh", 7), ("he", "he", 1),
                                    ("ozp", "zp", 32), ("lo", "lo", 32), ("hi", "hi", 32)):
                port[name] = pack([r[key] for r in rows], bits)
            want = {}
            for o in range(no):
                r = rows[o]
                if not wmax and not (o // mp < fv and o % mp < fp):
                    continue                      # an output outside the word's folding
                want[o] = acc[o] if wmax else tail(acc[o] * r["m"] + r["bias"], r["sh"], r["he"], r["zp"], r["lo"],
                                                   r["hi"])
            # elementwise lanes, same step: bias + sum_t (x_t - zp_t) * m_t
            nt = rng.randint(1, c["ET"]) if c["ET"] else 0
            ex = [rng.randint(xlo, xhi) for _ in range(2 * ml)]
            ezp = [rng.randint(max(xlo, -20), 20) for _ in range(2)]
            em = [rng.randint(1 << 28, (1 << 31) - 1) for _ in range(2 * ml)]
            erows = [dict(bias=rng.randint(-(1 << 30), 1 << 30), sh=rng.randint(28, 40), he=rng.randint(0, 1),
                          zp=rng.randint(-5, 5), lo=qlo, hi=qhi) for _ in range(ml)]
            port.update(nt=nt, ex=pack(ex, sb), ezp=pack(ezp, sb + 1), em=pack(em, 32))
            for name, key, bits in (("ebias", "bias", pw), ("eshift", "sh", 7), ("ehe", "he", 1), ("eozp", "zp", 32),
                                    ("elo", "lo", 32), ("ehi", "hi", 32)):
                port[name] = pack([r[key] for r in erows], bits)
            ewant = {}
            if c["ET"]:
                for lane in range(c["EL"]):       # (the other lanes serve moves: no arithmetic)
                    r = erows[lane]
                    p = r["bias"] + sum((ex[t * ml + lane] - ezp[t]) * em[t * ml + lane] for t in range(nt))
                    ewant[lane] = tail(p, r["sh"], r["he"], r["zp"], r["lo"], r["hi"])
            steps.append(dict(port=port, want=want, ewant=ewant, at=(trial, step)))
            while rng.random() < 0.25:            # an empty cycle: nothing fires, the operands are noise
                noise = {k: rng.getrandbits(max(1, len(getattr(dut, k)))) for k in port}
                steps.append(dict(port=dict(noise, acc_en=0), want=None, ewant=None, at=None))
    # stream them: step i's operands in cycle i, its row fields ROW_AT later, its outputs DPL later
    bad = []
    checked = 0
    for cyc in range(len(steps) + DPL):
        for name in steps[0]["port"]:
            i = cyc - ROW_AT.get(name, 0)
            if 0 <= i < len(steps):
                getattr(dut, name).value = steps[i]["port"][name]
        await Timer(1, "ns")
        i = cyc - DPL
        if 0 <= i < len(steps) and steps[i]["want"] is not None:
            got = unpack(dut.wq.value, sb, no)
            for o, want in steps[i]["want"].items():
                checked += 1
                if got[o] != want:
                    bad.append(("window", *steps[i]["at"], o, want, got[o]))
            if steps[i]["ewant"]:
                egot = unpack(dut.eq.value, sb, ml)
                for lane, want in steps[i]["ewant"].items():
                    checked += 1
                    if egot[lane] != want:
                        bad.append(("elementwise", *steps[i]["at"], lane, want, egot[lane]))
        await RisingEdge(dut.clk)
        await Timer(1, "ns")
    assert checked > 0
    assert not bad, f"{len(bad)} outputs differ; first (kind, trial, step, lane, reference, rtl): {bad[:5]}"


async def _clock(clk):
    while True:
        clk.value = 0
        await Timer(5, "ns")
        clk.value = 1
        await Timer(5, "ns")
