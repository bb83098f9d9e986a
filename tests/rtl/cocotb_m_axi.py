"""cocotb test of hlsgen_m_axi (through tests/rtl/m_axi_harness.sv) against the testbench's
off-chip memory (sim/hlsgen_sim/ddr.py): two read channels and a write channel on one bundle.
Every read beat arrives once, in order, with the memory's bytes; the write channel sends only
the beats the chip has allowed, and the memory ends up with exactly its bytes; bursts are legal
(the memory model checks 4 KiB crossings, sizes, WLAST); reads are pipelined, so N beats take
the latency plus N / bandwidth, not a latency per burst. A channel whose beat takes S steps
(the harness's S0..S2) holds R or W for S cycles a beat, and writes bursts of 16 / S beats."""
import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from hlsgen_sim.ddr import Ddr, Memory


async def _wait_idle(dut, limit):
    for t in range(limit):
        await RisingEdge(dut.clk)
        if int(dut.busy.value) == 0:
            return t + 1
    raise AssertionError(f"busy = {int(dut.busy.value):03b} after {limit} cycles")


@cocotb.test()
async def m_axi_moves_every_beat(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    dw = int(dut.DW.value)
    width = dw // 8
    n = [int(dut.N0.value), int(dut.N1.value), int(dut.N2.value)]
    steps = [int(dut.S0.value), int(dut.S1.value), int(dut.S2.value)]
    per = [max(s, width / case["bytes_per_cycle"]) for s in steps]      # cycles a beat, each channel
    burst = max(1, 16 // steps[2])
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst_n.value = 0
    dut.go.value = 0
    dut.allow.value = 0
    host = Memory([k * width for k in n])
    for c in (0, 1):
        i = host.index(host.addr[c], n[c] * width)
        for a in range(n[c] * width):
            host.data[i + a] = (a * 7 + 3 + 41 * c) % 256
    ddr = Ddr(dut, "m_axi_gmem0", dut.clk, dut.rst_n, host, case["latency"], case["bytes_per_cycle"])
    dut.base.value = sum(a << (64 * c) for c, a in enumerate(host.addr))
    await ClockCycles(dut.clk, 4)
    dut.rst_n.value = 1
    await ClockCycles(dut.clk, 2)
    # the reads, both channels at once
    dut.go.value = 0b011
    await RisingEdge(dut.clk)
    dut.go.value = 0
    cycles = await _wait_idle(dut, 20000)
    assert int(dut.errors.value) == 0, f"{int(dut.errors.value)} read beats out of order or with wrong bytes"
    assert (int(dut.got0.value), int(dut.got1.value)) == (n[0], n[1])
    beats = n[0] + n[1]
    floor = case["latency"] + n[0] * per[0] + n[1] * per[1]
    assert floor - 2 <= cycles <= floor + 24, f"{beats} beats in {cycles} cycles; the memory allows {floor:.0f}"
    # the write: nothing leaves before the chip allows it, then exactly the channel's beats
    dut.go.value = 0b100
    await RisingEdge(dut.clk)
    dut.go.value = 0
    await ClockCycles(dut.clk, 50)
    assert ddr.write_beats == 0, f"{ddr.write_beats} beats written before the chip allowed any"
    dut.allow.value = 20
    await ClockCycles(dut.clk, 40 + case["latency"] + int(20 * per[2]))
    first = 20 // burst * burst
    assert ddr.write_beats == first, f"{ddr.write_beats} beats written with 20 allowed (bursts of {burst})"
    assert int(dut.busy.value) == 0b100
    dut.allow.value = n[2]
    cycles = await _wait_idle(dut, 20000)
    # the rest moves at the channel's rate too (the memory once took W at a beat per 2 cycles
    # where it allowed 1.33), and the last response comes its latency after the last beat
    floor = case["latency"] + (n[2] - first) * per[2]
    assert floor - 2 <= cycles <= floor + 12, f"{n[2] - first} beats written in {cycles} cycles; the memory allows {floor:.0f}"
    i = host.index(host.addr[2], n[2] * width)
    got = host.data[i:i + n[2] * width]
    want = bytes((a * 13 + 5) % 256 for a in range(n[2] * width))
    assert got == want, f"written bytes differ from offset {next(k for k in range(len(want)) if got[k] != want[k])}"
    assert ddr.read_beats == beats and ddr.write_beats == n[2]
    assert not ddr.errors, ddr.errors
