"""cocotb test of hlsgen_requant: every output equals the golden requantizer's
(hlsgen.numerics.apply_requant) on the cases in HLSGEN_CASE, under random gaps and backpressure."""
import json
import os

import cocotb

from hlsgen_sim import StreamSink, StreamSource, clock_and_reset


@cocotb.test()
async def requant_matches_golden(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    await clock_and_reset(dut.clk, dut.rst_n)
    fields = {k: getattr(dut, f"s_{k}") for k in ("acc", "mult", "bias", "shift", "zp", "lo", "hi")}
    src = StreamSource(dut.clk, fields, dut.s_valid, dut.s_ready, gap=case["gap"], seed=case["seed"])
    sink = StreamSink(dut.clk, {"q": (dut.m_q, True)}, dut.m_valid, dut.m_ready, backpressure=case["backpressure"],
                      seed=case["seed"] + 1, name="m_q")
    src.send(case["words"])
    got = await sink.take(len(case["words"]), stall_cycles=200)
    bad = [(i, e, g["q"]) for i, (e, g) in enumerate(zip(case["expected"], got)) if e != g["q"]]
    assert not bad, f"{len(bad)} of {len(got)} differ; first (index, golden, rtl): {bad[:5]}"
