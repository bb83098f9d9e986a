"""cocotb test of a streaming layout module with several element streams (<port>_data,
_valid, _ready): HLSGEN_CASE gives each input port's elements and each output port's golden
elements, in stream order. Every output must equal the golden's, with nothing lost, duplicated
or extra, at full rate or under random gaps and backpressure. Writes the measured cycles (first
input to last output) to HLSGEN_RESULT."""
import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from hlsgen_sim import StreamSink, StreamSource, clock_and_reset


@cocotb.test()
async def stream_ports_match_golden(dut):
    case = json.loads(os.environ["HLSGEN_CASE"])
    await clock_and_reset(dut.clk, dut.rst_n)
    srcs, sinks = [], []
    for k, (port, values) in enumerate(sorted(case["sources"].items())):
        src = StreamSource(dut.clk, {"x": getattr(dut, f"{port}_data")}, getattr(dut, f"{port}_valid"),
                           getattr(dut, f"{port}_ready"), gap=case["gap"], seed=case["seed"] + k, name=port)
        src.send([{"x": v} for v in values])
        srcs.append(src)
    for k, (port, want) in enumerate(sorted(case["sinks"].items())):
        sinks.append((port, want["values"], StreamSink(
            dut.clk, {"y": (getattr(dut, f"{port}_data"), want["signed"])}, getattr(dut, f"{port}_valid"),
            getattr(dut, f"{port}_ready"), backpressure=case["backpressure"], seed=case["seed"] + 50 + k, name=port)))
    last = 0
    for port, want, sink in sinks:
        got = [w["y"] for w in await sink.take(len(want), stall_cycles=5000)]
        bad = [(i, e, g) for i, (e, g) in enumerate(zip(want, got)) if e != g]
        assert not bad, f"{port}: {len(bad)} of {len(want)} differ; first (index, golden, rtl): {bad[:5]}"
        last = max(last, sink.times[-1] if sink.times else 0)
    await ClockCycles(dut.clk, 50)
    for port, want, sink in sinks:
        assert len(sink.words) == len(want), f"{port}: {len(sink.words) - len(want)} extra outputs"
    first = min(s.times[0] for s in srcs if s.times)
    with open(os.environ["HLSGEN_RESULT"], "w") as f:
        json.dump({"cycles": last - first + 1}, f)
