"""Off-chip memory for the design testbench: an AXI4 slave behind each m_axi bundle, built on
cocotbext-axi's AXI channel sources and sinks, over one byte array the host's buffers live in.

It behaves as the cost model assumes off-chip memory does (hlsgen/schedule/scheduler.py): the
first beat of a burst comes `latency` cycles after its request is accepted (a write response
`latency` cycles after its last beat), and a bundle's channel moves at most `bytes_per_cycle`
on reads and writes together. Requests are pipelined: many bursts may be in flight. Protocol
errors (a burst crossing 4 KiB, a narrow size, WLAST misplaced, an address outside every buffer)
are collected in `errors`, which the test checks."""
import collections
import math

import cocotb
from cocotb.triggers import ClockCycles, Event
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiBus
from cocotbext.axi.axi_channels import AxiARSink, AxiAWSink, AxiBSource, AxiRSource, AxiWSink

PERIOD_NS = 10


class Memory:
    """The host's buffers: one byte array at `base` (above 4 GiB, so the pointer registers'
    high words matter), each buffer 4 KiB aligned."""

    def __init__(self, sizes, base: int = 0x4_0000_0000):
        self.base, self.addr = base, []
        off = 0
        for n in sizes:
            self.addr.append(base + off)
            off += -(-max(n, 1) // 4096) * 4096
        self.data = bytearray(off)

    def index(self, addr: int, n: int) -> int:
        k = addr - self.base
        if k < 0 or k + n > len(self.data):
            raise IndexError(f"address 0x{addr:x} (+{n}) is outside the host's buffers")
        return k


class Ddr:
    def __init__(self, dut, prefix: str, clk, rst_n, mem: Memory, latency: int, bytes_per_cycle: float,
                 trace: bool = False):
        bus = AxiBus.from_prefix(dut, prefix)
        # Vitis's m_axi ports carry AXI3's 2-bit AxLOCK, cocotbext-axi's AXI4 channels a 1-bit one:
        # this memory ignores the lock, so leave it unbound
        for channel, name in ((bus.write.aw, "awlock"), (bus.read.ar, "arlock")):
            if hasattr(channel, name) and len(getattr(channel, name)) != 1:
                delattr(channel, name)
        self.clk, self.mem, self.latency, self.name = clk, mem, latency, prefix
        self.ar = AxiARSink(bus.read.ar, clk, rst_n, reset_active_level=False)
        self.r = AxiRSource(bus.read.r, clk, rst_n, reset_active_level=False)
        self.aw = AxiAWSink(bus.write.aw, clk, rst_n, reset_active_level=False)
        self.w = AxiWSink(bus.write.w, clk, rst_n, reset_active_level=False)
        # W is taken at the channel's rate: the sink holds at most two beats (WREADY falls while it
        # does), as many as it takes to re-raise WREADY after one is taken, so a beat waits only
        # for the bandwidth (with one, the two-edge refill would slow writes to a beat per 2 cycles)
        self.w.queue_occupancy_limit = 2
        self.b = AxiBSource(bus.write.b, clk, rst_n, reset_active_level=False)
        self.width = len(bus.read.r.rdata) // 8
        self.beat_cycles = self.width / bytes_per_cycle
        self.free = 0.0                        # the next cycle the channel can move a beat
        self.errors = []
        # with `trace`: [simulated cycle, "AR"/"R"/"AW"/"W"/"B", beats of the burst or beat index]
        self.events = [] if trace else None
        self.read_beats = self.write_beats = 0
        self._reads, self._writes = collections.deque(), collections.deque()
        self._read_ev, self._write_ev = Event(), Event()
        for co in (self._accept_reads(), self._serve_reads(), self._take_writes(), self._answer_writes()):
            cocotb.start_soon(co)

    def _log(self, what: str, n: int):
        if self.events is not None:
            self.events.append([round(self._now()), what, n])

    def _now(self) -> float:
        return get_sim_time("ns") / PERIOD_NS

    async def _until(self, t: float):
        wait = math.ceil(t - self._now())
        if wait > 0:
            await ClockCycles(self.clk, wait)

    def _check(self, what: str, addr: int, beats: int, size: int):
        if 1 << size != self.width:
            self.errors.append(f"{self.name}: {what} at 0x{addr:x} has size {1 << size} bytes, not the port's {self.width}")
        if addr % self.width or addr % 4096 + beats * self.width > 4096:
            self.errors.append(f"{self.name}: {what} of {beats} beats at 0x{addr:x} is unaligned or crosses 4 KiB")

    async def _slot(self):
        """Wait for the channel's bandwidth to carry one more beat."""
        t = max(self._now(), self.free)
        await self._until(t)
        self.free = t + self.beat_cycles

    async def _accept_reads(self):
        while True:
            ar = await self.ar.recv()
            self._log("AR", int(ar.arlen) + 1)
            self._reads.append((self._now() + self.latency, int(ar.araddr), int(ar.arlen) + 1, int(ar.arsize)))
            self._read_ev.set()

    async def _serve_reads(self):
        while True:
            while not self._reads:
                self._read_ev.clear()
                await self._read_ev.wait()
            due, addr, n, size = self._reads.popleft()
            self._check("read burst", addr, n, size)
            await self._until(due)
            for k in range(n):
                await self._slot()
                r = self.r._transaction_obj()
                r.rid, r.rresp, r.rlast = 0, 0, int(k == n - 1)
                try:
                    i = self.mem.index(addr + k * self.width, self.width)
                    r.rdata = int.from_bytes(self.mem.data[i:i + self.width], "little")
                except IndexError as exc:
                    self.errors.append(f"{self.name}: read: {exc}")
                    r.rdata, r.rresp = 0, 2
                self.read_beats += 1
                await self.r.send(r)
                self._log("R", k)

    async def _take_writes(self):
        while True:
            aw = await self.aw.recv()
            self._log("AW", int(aw.awlen) + 1)
            addr, n, size = int(aw.awaddr), int(aw.awlen) + 1, int(aw.awsize)
            self._check("write burst", addr, n, size)
            resp = 0
            for k in range(n):
                w = await self.w.recv()
                self._log("W", k)
                # the channel's bandwidth carries it: a beat not taken yet (the sink holds two)
                # keeps WREADY low until then
                await self._slot()
                self.write_beats += 1
                if int(w.wlast) != int(k == n - 1):
                    self.errors.append(f"{self.name}: write burst at 0x{addr:x}: WLAST on beat {k} of {n}")
                data, strb = int(w.wdata).to_bytes(self.width, "little"), int(w.wstrb)
                try:
                    i = self.mem.index(addr + k * self.width, self.width)
                    for j in range(self.width):
                        if strb >> j & 1:
                            self.mem.data[i + j] = data[j]
                except IndexError as exc:
                    self.errors.append(f"{self.name}: write: {exc}")
                    resp = 2
            self._writes.append((self._now() + self.latency, resp))
            self._write_ev.set()

    async def _answer_writes(self):
        while True:
            while not self._writes:
                self._write_ev.clear()
                await self._write_ev.wait()
            due, resp = self._writes.popleft()
            await self._until(due)
            b = self.b._transaction_obj()
            b.bid, b.bresp = 0, resp
            await self.b.send(b)
            self._log("B", 0)
