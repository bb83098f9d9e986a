"""cocotb test of a streaming op module with one element stream in (s_data) and one out
(m_data): HLSGEN_CASE gives the input elements and the golden's outputs in stream order; every
output must equal the golden's, with nothing lost, duplicated or extra, at full rate or under
random gaps and backpressure. Writes the measured cycles (first input to last output) to
HLSGEN_RESULT."""
import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from hlsgen_sim import StreamSink, StreamSource, clock_and_reset


@cocotb.test()
async def stream_op_matches_golden(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    await clock_and_reset(dut.clk, dut.rst_n)
    src = StreamSource(dut.clk, {"x": dut.s_data}, dut.s_valid, dut.s_ready, gap=case["gap"], seed=case["seed"])
    sink = StreamSink(dut.clk, {"y": (dut.m_data, case["out_signed"])}, dut.m_valid, dut.m_ready,
                      backpressure=case["backpressure"], seed=case["seed"] + 1, name="m_data")
    src.send([{"x": v} for v in case["inputs"]])
    want = case["expected"]
    got = [w["y"] for w in await sink.take(len(want), stall_cycles=5000)]
    await ClockCycles(dut.clk, 50)
    assert len(sink.words) == len(want), f"{len(sink.words) - len(want)} extra outputs"
    bad = [(i, e, g) for i, (e, g) in enumerate(zip(want, got)) if e != g]
    assert not bad, f"{len(bad)} of {len(want)} differ; first (index in stream order, golden, rtl): {bad[:5]}"
    with open(os.environ["HLSGEN_RESULT"], "w") as f:
        json.dump({"cycles": sink.times[-1] - src.times[0] + 1, "inputs": len(case["inputs"]), "outputs": len(want)}, f)
