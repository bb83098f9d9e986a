"""hlsgen's shared cocotb library: valid/ready stream drivers with random gaps and
backpressure, a stall watchdog that names the stream, and the Verilator runner setup."""
from .streams import StallError, StreamSink, StreamSource, clock_and_reset

__all__ = ["StallError", "StreamSink", "StreamSource", "clock_and_reset"]
