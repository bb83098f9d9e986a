"""Valid/ready stream drivers for cocotb 2.x.

A word moves on a rising clock edge where valid and ready are both high. The source inserts
idle cycles with probability `gap`, the sink withholds ready with probability `backpressure`;
with both 0 they run at full rate. Both are seeded, so a failing run repeats exactly.
`StreamSink.take(n)` fails with StallError, naming the stream, when no word arrives for
`stall_cycles` cycles.
"""
from __future__ import annotations

import random
from collections import deque
from typing import Dict, List, Sequence

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge


async def clock_and_reset(clk, rst_n, cycles: int = 3, period_ns: int = 10):
    """Start a free-running clock and hold the active-low reset for `cycles` cycles."""
    cocotb.start_soon(Clock(clk, period_ns, unit="ns").start())
    rst_n.value = 0
    await ClockCycles(clk, cycles)
    rst_n.value = 1


class StallError(AssertionError):
    pass


def _value(sig, signed: bool) -> int:
    v = sig.value
    return v.to_signed() if signed else int(v)


class StreamSource:
    """Drives `fields` (name -> signal) with valid/ready handshakes."""

    def __init__(self, clk, fields: Dict[str, object], valid, ready, gap: float = 0.0, seed: int = 0, name: str = "in"):
        self.clk, self.fields, self.valid, self.ready = clk, fields, valid, ready
        self.gap, self.rng, self.name = gap, random.Random(seed), name
        self.queue: deque = deque()
        self.sent = 0
        self.cycles = 0
        self.times: List[int] = []             # cycle of every transfer
        self.valid.value = 0
        self._task = None

    def send(self, words: Sequence[Dict[str, int]]):
        """Queue words; the driver runs until the queue is empty (no simulator callbacks after)."""
        self.queue.extend(words)
        if self._task is None or self._task.done():
            self._task = cocotb.start_soon(self._run())

    async def _run(self):
        pending = False
        while self.queue or pending:
            await RisingEdge(self.clk)
            self.cycles += 1
            if pending and int(self.valid.value) and int(self.ready.value):
                pending = False
                self.sent += 1
                self.times.append(self.cycles)
            if pending:
                continue                              # hold the word until it is taken
            if self.queue and self.rng.random() >= self.gap:
                word = self.queue.popleft()
                for k, sig in self.fields.items():
                    sig.value = int(word[k]) & ((1 << len(sig)) - 1)
                self.valid.value = 1
                pending = True
            else:
                self.valid.value = 0
        self.valid.value = 0


class StreamSink:
    """Collects words from `fields` (name -> (signal, signed)) with random backpressure."""

    def __init__(self, clk, fields: Dict[str, tuple], valid, ready, backpressure: float = 0.0, seed: int = 1,
                 name: str = "out", expect: int = None):
        """With `expect`, the sink stops (ready low, no callbacks) after that many words: a
        design that sends more then stalls, and the stall is reported."""
        self.expect = expect
        self.clk, self.fields, self.valid, self.ready = clk, fields, valid, ready
        self.bp, self.rng, self.name = backpressure, random.Random(seed), name
        self.words: List[Dict[str, int]] = []
        self.cycles = 0
        self.times: List[int] = []             # cycle of every transfer
        self.ready.value = 0
        self._task = cocotb.start_soon(self._run())

    async def _run(self):
        while self.expect is None or len(self.words) < self.expect:
            await RisingEdge(self.clk)
            self.cycles += 1
            if int(self.valid.value) and int(self.ready.value):
                self.words.append({k: _value(sig, signed) for k, (sig, signed) in self.fields.items()})
                self.times.append(self.cycles)
                if self.expect is not None and len(self.words) >= self.expect:
                    break
            self.ready.value = 0 if self.rng.random() < self.bp else 1
        self.ready.value = 0

    async def take(self, n: int, stall_cycles: int = 1000) -> List[Dict[str, int]]:
        """Wait for n words; StallError if none arrives for stall_cycles cycles."""
        idle = 0
        last = len(self.words)
        while len(self.words) < n:
            await RisingEdge(self.clk)
            if len(self.words) != last:
                last, idle = len(self.words), 0
            else:
                idle += 1
                if idle > stall_cycles:
                    raise StallError(f"stream {self.name} stalled: {len(self.words)} of {n} words, "
                                     f"none for {stall_cycles} cycles")
        return self.words[:n]
