"""The Schedule: what the scheduler decided, as plain data (the backends render from it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import HlsgenError
from .cost import Folding, Resources


def format_segmentation(stages: Sequence[Tuple[str, int]]) -> str:
    """A segmentation in the notation of the reports and of --stages: D3 S2 D1 (each stage's
    mode initial and its number of tasks)."""
    return " ".join(f"{mode[0].upper()}{tasks}" for mode, tasks in stages)


def parse_segmentation(text: str) -> List[Tuple[str, int]]:
    """The inverse of format_segmentation: (mode, tasks) per stage; bad text is an HlsgenError."""
    out = []
    for tok in text.split():
        if len(tok) < 2 or tok[0].upper() not in "DS" or not tok[1:].isdigit() or int(tok[1:]) < 1:
            raise HlsgenError(f"--stages {text!r}: write each stage as D<tasks> (dataflow) or S<tasks> "
                              f"(sequential), separated by spaces, e.g. 'S3 D7'")
        out.append(("dataflow" if tok[0].upper() == "D" else "sequential", int(tok[1:])))
    return out


@dataclass
class TaskPlan:
    name: str
    op: str
    folding: Folding
    cycles: int                  # compute cycles for one input, with pipeline depth
    transfer_cycles: int         # off-chip transfer cycles of this task's own traffic
    macs: int
    resources: Resources         # datapath (DSP/LUT/FF) plus its line buffers in dataflow
    weights: str                 # "bram" / "uram" / "registers" / "offchip" / "none"
    offchip_bytes: int
    start: int = 0               # modeled start cycle (absolute)


@dataclass
class Buffer:
    """Where a tensor lives between tasks: a FIFO (dataflow), a scratchpad or off-chip."""

    tensor: str
    kind: str                    # "fifo" | "scratchpad" | "offchip" | "input" | "output" (the graph's, on chip)
    bits: int
    depth: int = 0               # FIFO depth in words
    width: int = 0               # FIFO word width in bits
    resources: Resources = field(default_factory=Resources)


@dataclass
class Stage:
    index: int
    mode: str                    # "dataflow" | "sequential"
    tasks: List[TaskPlan]
    cycles: int                  # for the whole batch, switch-in overhead included (not in the first stage)
    start: int = 0               # cycle at which the stage starts
    resources: Resources = field(default_factory=Resources)
    buffers: List[Buffer] = field(default_factory=list)
    offchip_bytes: int = 0
    bottleneck: Optional[str] = None


@dataclass
class Schedule:
    model: str
    device: str
    mode: str                    # requested mode: dataflow / sequential / auto
    objective: str
    batch: int
    clock_mhz: float
    resource_cap: float
    stages: List[Stage]
    total_cycles: int            # for the batch
    offchip_bytes: int
    resources: Resources         # the design as emitted: every stage its own cores, FIFOs and stored
                                 # tensors, so everything adds up over stages; + resident weights and
                                 # the graph's input and output arrays
    budget: Resources
    weights_resident: bool
    macs: int
    search: Dict = field(default_factory=dict)
    port_bits: int = 512         # AXI width of off-chip ports and of the graph's input and output streams
    max_lanes: Optional[int] = None   # no task folded wider (VEC x PE x SIMD); None: no such limit
    max_beat_lanes: Optional[int] = None   # no beat of activations moved more elements a cycle on chip
                                 # (--max-beat-lanes, else --max-lanes; cost.beat_lanes); None: no such limit
    stream_in_cycles: int = 0    # the graph's inputs streamed in before the first stage (beats)
    stream_out_cycles: int = 0   # the graph's outputs streamed out after the last stage
    control_cycles: int = 0      # the kernel's start and done handshakes
    io_offchip_tensors: Tuple[str, ...] = ()   # the graph's inputs and outputs that are host buffers in
                                 # off-chip memory (m_axi pointers in0.., out0..), not AXI4-Stream ports
                                 # into arrays: all inputs, all outputs, or both (--io)

    @property
    def io_offchip(self) -> bool:
        """Any of the graph's inputs and outputs is off chip."""
        return bool(self.io_offchip_tensors)

    @property
    def segmentation(self) -> str:
        """The stages in the reports' notation, which --stages takes back: e.g. S1 D9."""
        return format_segmentation([(st.mode, len(st.tasks)) for st in self.stages])

    @property
    def latency_ms(self) -> float:
        return self.total_cycles / (self.clock_mhz * 1e3)

    @property
    def gops(self) -> float:
        """2 x MACs per second for the batch, at the modeled latency."""
        return 2 * self.macs * self.batch / max(self.latency_ms, 1e-12) / 1e6

    @property
    def cycles_per_input(self) -> float:
        return self.total_cycles / self.batch

    def to_json(self, device=None) -> Dict:
        def res(r: Resources):
            return r.as_dict()

        out = {
            "model": self.model, "mode": self.mode, "objective": self.objective, "batch": self.batch,
            "figures": "modeled (hlsgen cost model, not simulated or synthesized)",
            "clock_mhz": self.clock_mhz, "resource_cap": self.resource_cap,
            "total_cycles": self.total_cycles, "latency_ms": round(self.latency_ms, 6),
            "cycles_per_input": self.cycles_per_input,
            "macs": self.macs, "gops": round(self.gops, 3),
            "offchip_bytes": self.offchip_bytes, "weights_resident": self.weights_resident, "port_bits": self.port_bits,
            "max_lanes": self.max_lanes, "max_beat_lanes": self.max_beat_lanes,
            "stream_in_cycles": self.stream_in_cycles, "stream_out_cycles": self.stream_out_cycles,
            "control_cycles": self.control_cycles, "io_offchip": self.io_offchip,
            "io_offchip_tensors": list(self.io_offchip_tensors),
            "resources": res(self.resources), "budget": res(self.budget),
            "segmentation": self.segmentation,
            "stages": [{
                "index": s.index, "mode": s.mode, "start": s.start, "cycles": s.cycles,
                "offchip_bytes": s.offchip_bytes, "bottleneck": s.bottleneck, "resources": res(s.resources),
                "tasks": [{"name": t.name, "op": t.op, "vec": t.folding.vec, "pe": t.folding.pe, "simd": t.folding.simd,
                           "start": t.start, "cycles": t.cycles, "transfer_cycles": t.transfer_cycles, "macs": t.macs,
                           "weights": t.weights, "offchip_bytes": t.offchip_bytes, "resources": res(t.resources)}
                          for t in s.tasks],
                "buffers": [{"tensor": b.tensor, "kind": b.kind, "bits": b.bits, "depth": b.depth, "width": b.width,
                             "resources": res(b.resources)} for b in s.buffers],
            } for s in self.stages],
            "search": self.search,
        }
        out["device"] = device.summary() if device is not None else self.device
        return out
