"""cocotb testbench of an emitted design's RTL (OUT/rtl/hlsgen_top.sv).

Reads OUT/sim/design.json and OUT/data/*.bin, drives the input streams (random gaps when
HLSGEN_GAP > 0), takes the output streams (random backpressure when HLSGEN_BACKPRESSURE > 0).
Control goes through s_axi_control with cocotbext-axi's AXI4-Lite master, as a host driver
would: enable the ap_done interrupt, set ap_start, wait for the interrupt, read ap_done from
the control register and clear the interrupt. Every output element is compared with the golden. Writes
HLSGEN_RESULT (JSON): passed, mismatches, elements, cycles (ap_start to ap_done), first
mismatches, and the stalled stream if the design stops making progress."""
import json
import os
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from hlsgen_sim.streams import StreamSink, StreamSource


def _words(path: Path, cw: int):
    data = path.read_bytes()
    n = cw // 8
    return [int.from_bytes(data[i:i + n], "little") for i in range(0, len(data), n)]


def _beats(words, cw: int, beat: int):
    """Consecutive elements packed into stream beats, the first in the low bits."""
    return [sum(w << (cw * e) for e, w in enumerate(words[i:i + beat])) for i in range(0, len(words), beat)]


def _unpack(beats, cw: int, beat: int, size: int):
    mask = (1 << cw) - 1
    return [(b >> (cw * e)) & mask for b in beats for e in range(beat)][:size]


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


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
            busy.append(f"stage {c['stage']} core{c['index']} ({c['tasks']}) at word {max(pc - 1, c['first'])} of "
                        f"[{c['first']}, {c['last']})")
    return ("the inputs are in but a stage stopped: busy " + "; ".join(busy)) if busy else ""


@cocotb.test()
async def design_matches_golden(dut):
    root = Path(os.environ["HLSGEN_PROJECT"])
    design = json.loads((root / "sim" / "design.json").read_text())
    gap = float(os.environ.get("HLSGEN_GAP", "0"))
    bp = float(os.environ.get("HLSGEN_BACKPRESSURE", "0"))
    seed = int(os.environ.get("HLSGEN_SEED", "1"))
    cocotb.start_soon(Clock(dut.ap_clk, 10, unit="ns").start())
    dut.ap_rst_n.value = 0
    sources, sinks = [], []
    for k, p in enumerate(design["inputs"]):
        src = StreamSource(dut.ap_clk, {"d": getattr(dut, f"in{k}_TDATA"), "l": getattr(dut, f"in{k}_TLAST")},
                           getattr(dut, f"in{k}_TVALID"), getattr(dut, f"in{k}_TREADY"), gap=gap, seed=seed + k,
                           name=f"in{k}")
        beats = _beats(_words(root / "data" / p["file"], p["cw"]), p["cw"], p["beat"])
        src.send([{"d": w, "l": int(i == len(beats) - 1)} for i, w in enumerate(beats)])
        sources.append((src, len(beats)))
    for k, p in enumerate(design["outputs"]):
        sinks.append(StreamSink(dut.ap_clk, {"d": (getattr(dut, f"out{k}_TDATA"), False),
                                             "l": (getattr(dut, f"out{k}_TLAST"), False)},
                                getattr(dut, f"out{k}_TVALID"), getattr(dut, f"out{k}_TREADY"), backpressure=bp,
                                seed=seed + 100 + k, name=f"out{k}", expect=p["beats"]))
    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control"), dut.ap_clk, dut.ap_rst_n,
                         reset_active_level=False)
    await ClockCycles(dut.ap_clk, 4)
    dut.ap_rst_n.value = 1
    await ClockCycles(dut.ap_clk, 2)
    limit = int(design["cycle_limit"])
    stalled = None
    await axil.write_dword(0x04, 1)              # global interrupt enable
    await axil.write_dword(0x08, 1)              # interrupt on ap_done
    status = await axil.read_dword(0x00)
    assert status & 0x4, f"control register 0x{status:x}: not idle after reset"
    # cycles from ap_start to ap_done: hlsgen's top exposes both; on Vitis's RTL (RTL=vitis) they
    # are inside its control block, so the write of ap_start and the interrupt stand in
    inner = hasattr(dut, "ap_start") and hasattr(dut, "ap_done")
    start = cocotb.start_soon(axil.write_dword(0x00, 1))      # ap_start
    if inner:
        await RisingEdge(dut.ap_start)
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
        short_in = [f"{s.name} accepted {s.sent} of {n} beats" for s, n in sources if s.sent < n]
        short_out = [f"{s.name} delivered {len(s.words)} of {p['beats']} beats"
                     for s, p in zip(sinks, design["outputs"]) if len(s.words) < p["beats"]]
        busy = _busy_cores(dut, design)
        stalled = (f"input stream {short_in[0]}" if short_in else busy if busy
                   else f"output stream {short_out[0]}" if short_out else "ap_done never came")
    await ClockCycles(dut.ap_clk, 4)
    result = {"passed": False, "mismatches": 0, "elements": 0, "cycles": cycles, "first_mismatches": [],
              "stalled": stalled}
    if stalled is None:
        for k, (sink, p) in enumerate(zip(sinks, design["outputs"])):
            want = _words(root / "data" / p["file"], p["cw"])
            got = _unpack([w["d"] for w in sink.words], p["cw"], p["beat"], p["size"])
            if len(sink.words) != p["beats"]:
                result["first_mismatches"].append(f"out{k} ({p['label']}): {len(sink.words)} beats, expected {p['beats']}")
                result["mismatches"] += abs(len(want) - len(got)) or 1
            lasts = [w["l"] for w in sink.words]
            if lasts and (lasts[-1] != 1 or any(lasts[:-1])):
                result["first_mismatches"].append(f"out{k} ({p['label']}): TLAST not on the last beat only")
                result["mismatches"] += 1
            for i, (e, g) in enumerate(zip(want, got)):
                result["elements"] += 1
                if e != g:
                    result["mismatches"] += 1
                    if len(result["first_mismatches"]) < 10:
                        result["first_mismatches"].append(
                            f"out{k} ({p['label']}) index {i}: expected {_signed(e, p['cw'])}, got {_signed(g, p['cw'])}")
        result["passed"] = result["mismatches"] == 0 and result["elements"] > 0
    Path(os.environ["HLSGEN_RESULT"]).write_text(json.dumps(result))
    assert stalled is None, stalled
    assert result["passed"], result["first_mismatches"]
