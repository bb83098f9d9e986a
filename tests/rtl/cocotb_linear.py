"""cocotb test of hlsgen_linear on a real linear task: rows of activations in, every output
equal to the golden's; writes the measured cycles (first input to last output) to
HLSGEN_RESULT."""
import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from hlsgen_sim import StreamSink, StreamSource, clock_and_reset


@cocotb.test()
async def linear_matches_golden(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    await clock_and_reset(dut.clk, dut.rst_n)
    src = StreamSource(dut.clk, {"x": dut.s_data}, dut.s_valid, dut.s_ready, gap=case["gap"], seed=case["seed"])
    sink = StreamSink(dut.clk, {"y": (dut.m_data, case["out_signed"])}, dut.m_valid, dut.m_ready,
                      backpressure=case["backpressure"], seed=case["seed"] + 1, name="m_data")
    src.send([{"x": v} for row in case["rows"] for v in row])
    want = [v for row in case["expected"] for v in row]
    got = [w["y"] for w in await sink.take(len(want), stall_cycles=2000)]
    await ClockCycles(dut.clk, 20)
    assert len(sink.words) == len(want), f"{len(sink.words) - len(want)} extra outputs"
    n = len(case["expected"][0])
    bad = [(i // n, i % n, e, g) for i, (e, g) in enumerate(zip(want, got)) if e != g]
    assert not bad, f"{len(bad)} of {len(want)} differ; first (row, channel, golden, rtl): {bad[:5]}"
    with open(os.environ["HLSGEN_RESULT"], "w") as f:
        json.dump({"cycles": sink.times[-1] - src.times[0] + 1}, f)
