"""cocotb testbench of an emitted design's RTL (OUT/rtl/hlsgen_top.sv).

Reads OUT/sim/design.json and OUT/data/*.bin, drives the input streams with cocotbext-axi's
AXI-Stream source (random gaps when HLSGEN_GAP > 0) and takes the outputs with its AXI-Stream
sink (random backpressure when HLSGEN_BACKPRESSURE > 0): one frame per tensor, consecutive
elements packed little-endian into port-wide beats, TLAST on the last beat.
Off-chip memory (ddr.py) sits behind every m_axi bundle: the host's buffers (data/weights.bin
for streamed weights, data/in*.bin for the graph's inputs when they are off chip, zeroed buffers
for spilled tensors and off-chip outputs) at addresses above 4 GiB, with the cost model's
latency and bandwidth. Off-chip outputs are read back from that memory after ap_done.
Control goes through s_axi_control with cocotbext-axi's AXI4-Lite master, as a host driver
would: write the buffers' addresses into the pointer registers, enable the ap_done interrupt, set ap_start, wait for the interrupt, read ap_done from
the control register and clear the interrupt. Every output element is compared with the golden. Writes
HLSGEN_RESULT (JSON): passed, mismatches, elements, cycles (ap_start to ap_done), first
mismatches, the stalled stream if the design stops making progress, and whether the activation
memory's banks served every access (act_mem_banks, memory_errors)."""
import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from hlsgen_sim.ddr import Ddr, Memory


def _words(path: Path, cw: int):
    return _words_of(path.read_bytes(), cw)


def _words_of(data: bytes, cw: int):
    n = cw // 8
    return [int.from_bytes(data[i:i + n], "little") for i in range(0, len(data), n)]


def _pauses(p: float, seed: int):
    """cocotbext-axi pause generator: True (idle this cycle) with probability p."""
    rng = random.Random(seed)
    while True:
        yield p >= 1.0 or (p > 0 and rng.random() < p)


class _Beats:
    """Counts the handshakes of one stream until it has carried `expect` beats (then stops
    watching, so a long run costs no callback per cycle): how far a stalled stream got."""

    def __init__(self, clk, valid, ready, expect: int, name: str):
        self.n, self.expect, self.name = 0, expect, name
        cocotb.start_soon(self._run(clk, valid, ready))

    async def _run(self, clk, valid, ready):
        while self.n < self.expect:
            if not _high(valid):                 # no beat offered: no callback a cycle until one is
                await RisingEdge(valid)
            await RisingEdge(clk)
            if _high(valid) and _high(ready):
                self.n += 1


def _high(sig) -> bool:
    """Whether a 1-bit signal is 1; not while it is X or Z (Icarus's nets before the first
    evaluation and its registers before reset; Verilator's start at 0)."""
    v = sig.value
    return v.is_resolvable and bool(int(v))


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def _compare(result: dict, what: str, want, got, cw: int):
    """Count every element of one output against the golden; the first mismatches by name."""
    for i, (e, g) in enumerate(zip(want, got)):
        result["elements"] += 1
        if e != g:
            result["mismatches"] += 1
            if len(result["first_mismatches"]) < 10:
                result["first_mismatches"].append(
                    f"{what} index {i}: expected {_signed(e, cw)}, got {_signed(g, cw)}")


def _busy_cores(dut, design) -> str:
    """Which stage stalled: its cores that are not idle, with the word each is on ("" if none)."""
    busy = []
    for c in design.get("cores", []):
        try:
            core = getattr(dut, f"core{c['index']}")
            state, pc = int(core.state.value), int(core.pc.value)
        except (AttributeError, ValueError):
            continue
        if state != 0:
            busy.append(f"stage {c['stage']} core{c['index']} ({c['tasks']}) at word {max(pc - 1, 0)} of its "
                        f"{c['words']}")
    return ("the inputs are in but a stage stopped: busy " + "; ".join(busy)) if busy else ""


async def _trace_words(dut, design, out: list, pubs: list):
    """HLSGEN_TRACE=1: the cycle each core starts each word, and each row count a core publishes
    that moves its counter (for the timeline in sim.json)."""
    cores = [(c["index"], getattr(dut, f"core{c['index']}"), getattr(dut, f"c{c['index']}_pub", None))
             for c in design.get("cores", [])]
    last: dict = {}
    t = 0
    while True:
        await RisingEdge(dut.ap_clk)
        t += 1
        for k, core, pub in cores:
            if int(core.wstart.value):
                out.append([t, k, int(core.wnum.value)])
            if pub is not None and int(pub.value):          # a count that moves the counter
                ctr, rows = int(getattr(dut, f"c{k}_pub_id").value), int(getattr(dut, f"c{k}_pub_rows").value)
                if rows != last.get(ctr, 0):
                    last[ctr] = rows
                    pubs.append([t, k, ctr, rows])


def _bank_probe(dut):
    """What banking the activation memory would face, as hlsgen_act_mem measured it over the run
    (its bank_worst; None on RTL without it, such as Vitis's): for NB = 1, 2, 4 .. 512 cyclic
    banks, the most enabled reads and writes that fell into one bank in one cycle."""
    try:
        probe = dut.act_mem.m.bank_worst           # 16 bits per bank count, NPB of them
        bits, npb = int(probe.value), len(probe) // 16
    except (AttributeError, ValueError):
        return None
    worst = {str(1 << j): bits >> (16 * j) & 0xFFFF for j in range(npb)}
    return {"figures": "simulated: the most enabled reads and writes of the activation memory that fell into one "
                       "bank in any cycle, for NB cyclic banks (bank = address mod NB; two reads of one address count "
                       "twice); a true dual-port block RAM serves 2 a cycle",
            "worst_per_bank": worst}


def _banks_served(dut):
    """Whether the activation memory's banks (hlsgen_top_mem) served every access over the run:
    `conflict` (an access a bank's ports or its port's routes did not serve), `differs` (an
    enabled read whose word from the banks is not the one array's beside them, in Verilator's
    simulation; None in the form synthesis reads, SIM=icarus, which has no such array).
    None on RTL without them, such as Vitis's."""
    try:
        conflict = int(dut.act_mem.conflict.value)
    except (AttributeError, ValueError):
        return None
    try:
        differs = bool(int(dut.act_mem.differs.value))
    except (AttributeError, ValueError):
        differs = None
    return {"figures": "simulated: the activation memory built in its planned banks (hlsgen_bank_mem per region)",
            "conflict": bool(conflict), "differs": differs}


@cocotb.test()
async def design_matches_golden(dut):
    root = Path(os.environ["HLSGEN_PROJECT"])
    design = json.loads((root / "sim" / "design.json").read_text())
    gap = float(os.environ.get("HLSGEN_GAP", "0"))
    bp = float(os.environ.get("HLSGEN_BACKPRESSURE", "0"))
    seed = int(os.environ.get("HLSGEN_SEED", "1"))
    for path in json.loads(os.environ.get("HLSGEN_PROBES", "[]")):
        handle = dut
        try:
            for part in path.split("."):
                handle = getattr(handle, part)
            handle.value
        except (AttributeError, ValueError):
            raise AssertionError(f"the testbench cannot see {path} in the simulated RTL: "
                                 "sim/hlsgen_sim/run_design.py's DESIGN_PUBLIC must make it public") from None
    cocotb.start_soon(Clock(dut.ap_clk, 10, unit="ns").start())
    dut.ap_rst_n.value = 0
    # the streams: cocotbext-axi's AXI-Stream source and sink, one frame per tensor (TLAST on
    # its last beat), random idle cycles and backpressure from seeded pause generators (none at
    # full rate)
    sources, sinks, counts_in, counts_out = [], [], [], []
    for k, p in enumerate(design["inputs"]):
        src = AxiStreamSource(AxiStreamBus.from_prefix(dut, p["name"]), dut.ap_clk, dut.ap_rst_n,
                              reset_active_level=False)
        if gap > 0:                              # a pause generator is a coroutine every cycle
            src.set_pause_generator(_pauses(gap, seed + k))
        sources.append((src, (root / "data" / p["file"]).read_bytes()))
        counts_in.append(_Beats(dut.ap_clk, getattr(dut, f"{p['name']}_TVALID"), getattr(dut, f"{p['name']}_TREADY"),
                                p["beats"], p["name"]))
    for k, p in enumerate(design["outputs"]):
        sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, p["name"]), dut.ap_clk, dut.ap_rst_n,
                             reset_active_level=False)
        if bp > 0:
            sink.set_pause_generator(_pauses(bp, seed + 100 + k))
        sinks.append(sink)
        counts_out.append(_Beats(dut.ap_clk, getattr(dut, f"{p['name']}_TVALID"), getattr(dut, f"{p['name']}_TREADY"),
                                 p["beats"], p["name"]))
    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control"), dut.ap_clk, dut.ap_rst_n,
                         reset_active_level=False)
    # off-chip memory: the host's buffers, one per pointer argument, behind every bundle
    pointers = design.get("pointers", [])
    host = Memory([p["bytes"] for p in pointers])
    for p, addr in zip(pointers, host.addr):
        if p["file"]:
            data = (root / "data" / p["file"]).read_bytes()
            i = host.index(addr, len(data))
            host.data[i:i + len(data)] = data
    ddrs = [Ddr(dut, f"m_axi_{b['name']}", dut.ap_clk, dut.ap_rst_n, host, int(design["memory"]["latency"]),
                float(design["memory"]["bytes_per_cycle"]), trace=os.environ.get("HLSGEN_TRACE") == "1")
            for b in design.get("bundles", [])]
    await ClockCycles(dut.ap_clk, 4)
    dut.ap_rst_n.value = 1
    await ClockCycles(dut.ap_clk, 2)
    for src, data in sources:
        src.send_nowait(AxiStreamFrame(data))
    limit = int(design["cycle_limit"])
    stalled = None
    for k, addr in enumerate(host.addr):         # pointer arguments, low word first
        await axil.write_dword(0x10 + 12 * k, addr & 0xFFFFFFFF)
        await axil.write_dword(0x14 + 12 * k, addr >> 32)
    for k, addr in enumerate(host.addr):
        got = await axil.read_dword(0x10 + 12 * k) | await axil.read_dword(0x14 + 12 * k) << 32
        assert got == addr, f"pointer register {k} ({pointers[k]['name']}) reads 0x{got:x}, wrote 0x{addr:x}"
    await axil.write_dword(0x04, 1)              # global interrupt enable
    await axil.write_dword(0x08, 1)              # interrupt on ap_done
    status = await axil.read_dword(0x00)
    assert status & 0x4, f"control register 0x{status:x}: not idle after reset"
    # cycles from ap_start to ap_done: hlsgen's top exposes both; on Vitis's RTL (RTL=vitis) they
    # are inside its control block, so the write of ap_start and the interrupt stand in
    inner = hasattr(dut, "ap_start") and hasattr(dut, "ap_done")
    trace: list = []
    pubs: list = []
    start = cocotb.start_soon(axil.write_dword(0x00, 1))      # ap_start
    if inner:
        await RisingEdge(dut.ap_start)
        if os.environ.get("HLSGEN_TRACE") == "1":             # counts cycles from ap_start
            cocotb.start_soon(_trace_words(dut, design, trace, pubs))
    else:
        await start
    t0 = get_sim_time("ns")
    # wait for ap_done without a Python callback per cycle (the design may run 10^5 cycles)
    timeout = Timer(limit * 10, unit="ns")
    fired = await First(RisingEdge(dut.ap_done if inner else dut.interrupt), timeout)
    cycles = int(round((get_sim_time("ns") - t0) / 10))
    await start
    if fired is not timeout:
        await ClockCycles(dut.ap_clk, 2)
        assert int(dut.interrupt.value), "ap_done came but the interrupt did not"
        status = await axil.read_dword(0x00)
        assert status & 0x2, f"control register 0x{status:x}: ap_done is not set after ap_done"
        await axil.write_dword(0x0c, 1)          # clear the interrupt
        await ClockCycles(dut.ap_clk, 2)
        assert not int(dut.interrupt.value), "the interrupt stays high after clearing it"
    if fired is timeout:
        short_in = [f"{c.name} accepted {c.n} of {c.expect} beats" for c in counts_in if c.n < c.expect]
        short_out = [f"{c.name} delivered {c.n} of {c.expect} beats" for c in counts_out if c.n < c.expect]
        busy = _busy_cores(dut, design)
        stalled = (f"input stream {short_in[0]}" if short_in else busy if busy
                   else f"output stream {short_out[0]}" if short_out else "ap_done never came")
    await ClockCycles(dut.ap_clk, 4)
    result = {"passed": False, "mismatches": 0, "elements": 0, "cycles": cycles, "first_mismatches": [],
              "stalled": stalled, "offchip_beats": {d.name: {"read": d.read_beats, "written": d.write_beats} for d in ddrs},
              "axi_errors": [e for d in ddrs for e in d.errors][:10], "memory_errors": []}
    if trace:
        result["word_starts"] = trace           # [cycle from ap_start, core, word]
        result["row_publications"] = pubs       # [cycle from ap_start, core, row counter, rows complete]
    probe = _bank_probe(dut)
    if probe:
        result["bank_accesses"] = probe
    served = _banks_served(dut)
    if served:
        result["act_mem_banks"] = served
        if served["conflict"]:
            result["memory_errors"].append("activation memory: a bank did not serve an access (conflict: more words "
                                        "than its ports, or off its port's routes); the access was dropped")
        if served["differs"]:
            result["memory_errors"].append("activation memory: a read from the banks differs from the one array beside "
                                        "them (the first is printed above)")
    if os.environ.get("HLSGEN_TRACE") == "1":   # every m_axi handshake, in cycles from ap_start
        start = round(t0 / 10)
        result["axi_events"] = {d.name: [[c - start, what, n] for c, what, n in d.events] for d in ddrs}
    if stalled is None:
        for k, (sink, p) in enumerate(zip(sinks, design["outputs"])):
            want = _words(root / "data" / p["file"], p["cw"])
            frames = []
            while not sink.empty():
                frames.append(sink.recv_nowait())
            data = frames[0].tdata if frames else b""
            got = _words_of(bytes(data), p["cw"])[:p["size"]]
            if len(frames) != 1 or len(data) != p["beats"] * p["beat"] * p["cw"] // 8:
                # TLAST elsewhere than on the last beat splits the tensor into several frames
                result["first_mismatches"].append(
                    f"{p['name']} ({p['label']}): {len(frames)} frames of {[len(f.tdata) for f in frames]} bytes, expected "
                    f"one of {p['beats']} beats (TLAST on the last beat only)")
                result["mismatches"] += abs(len(want) - len(got)) or 1
            _compare(result, f"{p['name']} ({p['label']})", want, got, p["cw"])
        # the graph's outputs in off-chip memory (--io offchip): the host's buffers after ap_done
        for p, addr in zip(pointers, host.addr):
            if not p.get("golden"):
                continue
            want = _words(root / "data" / p["golden"], p["cw"])
            i = host.index(addr, p["bytes"])
            got = _words_of(bytes(host.data[i:i + p["bytes"]]), p["cw"])
            _compare(result, f"{p['name']} ({p['label']}, off-chip)", want, got, p["cw"])
        result["passed"] = (result["mismatches"] == 0 and result["elements"] > 0 and not result["axi_errors"]
                            and not result["memory_errors"])
    Path(os.environ["HLSGEN_RESULT"]).write_text(json.dumps(result))
    assert stalled is None, stalled
    assert not result["axi_errors"], result["axi_errors"]
    assert not result["memory_errors"], result["memory_errors"]
    assert result["passed"], result["first_mismatches"]
