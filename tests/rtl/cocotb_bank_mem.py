"""cocotb test of hlsgen_bank_mem: one region in banks by coordinates, against a model that is a
plain word per (n, c, h, w). Every word is written, then random cycles of reads and writes run
where many lanes read the same few words (as a window's lanes do) and every bank takes what its
ports serve; every read returns the word as it was before that cycle's writes, and no cycle
raises `conflict`. With an image (HLSGEN_CASE "image", the module's FILE), every word is read
first and must be the image's. Last, three distinct words read from one bank in one cycle raise it. With
routes (HLSGEN_CASE "routes": read port k's banks, as the route parameters give them), reads keep to their
port's banks, and a read off them raises `conflict` too. With SHARE = 0 reads of one word take a
port each (and three of one word in a bank raise `conflict`); with RB < SB the banks hold RB bits
and every word written is a value of RB bits (as a tensor's are), read back sign-extended."""
import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge


def _params(dut):
    names = ("SB", "N", "C", "H", "W", "LBC", "LBH", "LBW", "KWH", "KCH", "KCW", "NR", "NW", "CB", "TWO_WRITES",
             "SHARE", "RB")
    return {n: int(getattr(dut, n).value) for n in names}


def _bank(p, n, c, h, w):
    """The bank of (c, h, w), written out here from hlsgen_bank_mem's header, skews and all."""
    bw = (w + p["KWH"] * h) % (1 << p["LBW"])
    bc = (c + p["KCH"] * h + p["KCW"] * w) % (1 << p["LBC"])
    return ((((h % (1 << p["LBH"])) << p["LBW"]) | bw) << p["LBC"]) | bc


def _value(p, rs):
    """A random word: a value of RB bits, signed, in SB bits (two's complement)."""
    return rs.randrange(-(1 << (p["RB"] - 1)), 1 << (p["RB"] - 1)) & ((1 << p["SB"]) - 1)


def _accept(p, writes, reads):
    """The accesses a bank's ports serve, in the order the module takes them (writes first, then
    reads; a read of a word its bank already addresses shares that port where SHARE): (writes,
    reads) kept."""
    ports = {}                                  # bank -> [(word, is_write)]
    kept_w, kept_r = [], []
    for k, word, v in writes:
        got = ports.setdefault(_bank(p, *word), [])
        if len(got) == 0 or (len(got) == 1 and p["TWO_WRITES"] and got[0][1]):
            got.append((word, True))
            kept_w.append((k, word, v))
    for k, word in reads:
        got = ports.setdefault(_bank(p, *word), [])
        if p["SHARE"] and any(w == word for w, _ in got):
            kept_r.append((k, word))
        elif len(got) < 2:
            got.append((word, False))
            kept_r.append((k, word))
    return kept_w, kept_r


def _pack(values, bits):
    out = 0
    for k, v in enumerate(values):
        out |= (v & ((1 << bits) - 1)) << (k * bits)
    return out


def _drive(dut, p, writes, reads):
    nr, nw, cb, sb = p["NR"], p["NW"], p["CB"], p["SB"]
    rco = [(0, 0, 0, 0)] * nr
    wco = [(0, 0, 0, 0)] * nw
    wd = [0] * nw
    for k, word in reads:
        rco[k] = word
    for k, word, v in writes:
        wco[k], wd[k] = word, v
    dut.re.value = _pack([1 if any(k == j for j, _ in reads) else 0 for k in range(nr)], 1)
    dut.we.value = _pack([1 if any(k == j for j, _, _ in writes) else 0 for k in range(nw)], 1)
    for i, name in enumerate("nchw"):
        getattr(dut, "r" + name).value = _pack([co[i] for co in rco], cb)
        getattr(dut, "w" + name).value = _pack([co[i] for co in wco], cb)
    dut.wdata.value = _pack(wd, sb)


@cocotb.test()
async def banks_serve_what_the_plan_allows(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    p = _params(dut)
    rs = random.Random(case["seed"])
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst_n.value = 0
    _drive(dut, p, [], [])
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    words = [(n, c, h, w) for n in range(p["N"]) for h in range(p["H"]) for w in range(p["W"]) for c in range(p["C"])]
    routes = case.get("routes") or [None] * p["NR"]
    if case.get("image"):
        # the region's image (FILE, in (n, c, h, w) order) is where every word starts: each read
        # alone, through the first read port routed to its bank
        bad = []
        for n, c, h, w in words:
            want = case["image"][((n * p["C"] + c) * p["H"] + h) * p["W"] + w]
            k = next(j for j in range(p["NR"]) if routes[j] is None or _bank(p, n, c, h, w) in routes[j])
            await FallingEdge(dut.clk)
            _drive(dut, p, [], [(k, (n, c, h, w))])
            await FallingEdge(dut.clk)
            _drive(dut, p, [], [])
            got = (int(dut.rdata.value) >> (k * p["SB"])) & ((1 << p["SB"]) - 1)
            if got != want and len(bad) < 5:
                bad.append(((n, c, h, w), want, got))
        assert not bad, f"words differ from the image (word, image, got): {bad}"
    model = {}
    # fill: every word once, as many a cycle as the banks take
    todo = list(words)
    while todo:
        offer = [(k, todo[k], _value(p, rs)) for k in range(min(p["NW"], len(todo)))]
        kept, _ = _accept(p, offer, [])
        await FallingEdge(dut.clk)
        _drive(dut, p, kept, [])
        for _, word, v in kept:
            model[word] = v
        done = {word for _, word, _ in kept}
        todo = [w for w in todo if w not in done]
    await FallingEdge(dut.clk)
    _drive(dut, p, [], [])
    # random cycles
    pending = []                                 # (port, expected) of the reads driven last cycle
    checked, bad, shared = 0, [], 0
    reach = [[w for w in words if r is None or _bank(p, *w) in r] for r in routes]   # words read port k may read

    def pick(k, hot):
        near = [w for w in hot if w in reach[k]] if routes[k] is not None else hot
        return rs.choice(near) if near and rs.random() < 0.6 else rs.choice(reach[k])

    for cycle in range(case["cycles"]):
        hot = rs.sample(words, min(3, len(words)))
        reads = [(k, pick(k, hot)) for k in range(p["NR"]) if rs.random() < case["load"]]
        writes = [(k, rs.choice(words), _value(p, rs)) for k in range(p["NW"]) if rs.random() < case["load"] / 2]
        # one word written by two ports in a cycle: the top never makes it
        seen = set()
        writes = [x for x in writes if not (x[1] in seen or seen.add(x[1]))]
        kept_w, kept_r = _accept(p, writes, reads)
        shared += len(kept_r) - len({w for _, w in kept_r})
        await FallingEdge(dut.clk)
        for k, want in pending:
            got = (int(dut.rdata.value) >> (k * p["SB"])) & ((1 << p["SB"]) - 1)
            checked += 1
            if got != want and len(bad) < 5:
                bad.append((cycle, k, want, got))
        _drive(dut, p, kept_w, kept_r)
        pending = [(k, model[word]) for k, word in kept_r]
        for _, word, v in kept_w:
            model[word] = v
    await FallingEdge(dut.clk)
    for k, want in pending:
        got = (int(dut.rdata.value) >> (k * p["SB"])) & ((1 << p["SB"]) - 1)
        checked += 1
        if got != want and len(bad) < 5:
            bad.append(("last", k, want, got))
    _drive(dut, p, [], [])
    assert not bad, f"reads differ from the model (cycle, port, expected, got): {bad}"
    assert checked > case["cycles"], f"only {checked} reads checked"
    # lanes read one word in one cycle: through one port (SHARE) or through two
    assert shared > 0, "no cycle had lanes reading one word"
    await FallingEdge(dut.clk)
    assert int(dut.conflict.value) == 0, "conflict raised on accesses the banks serve"
    # three distinct words of one bank in one cycle (bank 0, or one that read ports 0-2 all reach):
    # more than its two ports
    if p["NR"] >= 3:
        common = [b for b in range(1 << (p["LBC"] + p["LBH"] + p["LBW"]))
                  if all(routes[k] is None or b in routes[k] for k in range(3))]
        assert common, "the test needs a bank that read ports 0, 1 and 2 reach"
        three = [w for w in words if _bank(p, *w) == common[0]][:3]
        assert len(three) == 3, "the test needs a bank of 3 words or more"
        _drive(dut, p, [], list(enumerate(three)))
        await FallingEdge(dut.clk)
        _drive(dut, p, [], [])
        await FallingEdge(dut.clk)
        assert int(dut.conflict.value) == 1, "three distinct words in one bank did not raise conflict"
        if not p["SHARE"]:
            # three reads of one word: a port each, one more than the bank has
            dut.rst_n.value = 0
            await FallingEdge(dut.clk)
            dut.rst_n.value = 1
            await FallingEdge(dut.clk)
            _drive(dut, p, [], [(k, three[0]) for k in range(3)])
            await FallingEdge(dut.clk)
            _drive(dut, p, [], [])
            await FallingEdge(dut.clk)
            assert int(dut.conflict.value) == 1, "three reads of one word in one bank (SHARE = 0) did not raise conflict"
    if case.get("routes"):
        # a read off its port's routes, after a reset clears `conflict`
        dut.rst_n.value = 0
        await FallingEdge(dut.clk)
        dut.rst_n.value = 1
        await FallingEdge(dut.clk)
        assert int(dut.conflict.value) == 0, "reset did not clear conflict"
        off = next(w for w in words if _bank(p, *w) not in routes[0])
        _drive(dut, p, [], [(0, off)])
        await FallingEdge(dut.clk)
        _drive(dut, p, [], [])
        await FallingEdge(dut.clk)
        assert int(dut.conflict.value) == 1, "a read off its port's routes did not raise conflict"
