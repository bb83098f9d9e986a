"""cocotb test of hlsgen_stream_fifo: every word arrives once and in order, at full rate and
under random input gaps and output backpressure."""
import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from hlsgen_sim import StreamSink, StreamSource, clock_and_reset


@cocotb.test()
async def fifo_keeps_every_word_in_order(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    width = int(dut.WIDTH.value)
    await clock_and_reset(dut.clk, dut.rst_n)
    words = [{"data": (i * 2654435761) % (1 << width)} for i in range(case["n"])]
    src = StreamSource(dut.clk, {"data": dut.s_data}, dut.s_valid, dut.s_ready, gap=case["gap"], seed=case["seed"])
    sink = StreamSink(dut.clk, {"data": (dut.m_data, False)}, dut.m_valid, dut.m_ready,
                      backpressure=case["backpressure"], seed=case["seed"] + 1, name="m")
    src.send(words)
    got = await sink.take(len(words), stall_cycles=200)
    await ClockCycles(dut.clk, 10)
    assert len(sink.words) == len(words), f"{len(sink.words) - len(words)} extra words"
    bad = [(i, w["data"], g["data"]) for i, (w, g) in enumerate(zip(words, got)) if w != g]
    assert not bad, f"{len(bad)} words differ; first (index, sent, received): {bad[:5]}"
    if case["gap"] == 0 and case["backpressure"] == 0:
        # full rate: one word per cycle once the pipeline is filled
        assert sink.cycles <= len(words) + 16, f"{sink.cycles} cycles for {len(words)} words"
