"""The top's own logic (hlsgen_top.sv less its cores, its activation memory and its m_axi
engines), as Yosys synth_xilinx builds it: a fit on synthesized designs (benchmarks/top_fit.py,
benchmarks/top_points.json), over what the template builds for a design:

- `pointers`: the AXI4-Lite control (hlsgen_axilite_ctrl) holds a 64-bit register a pointer
  argument and reads any of them back;
- `offset_bits`: a channel's address is its pointer plus its constant offset, an adder as wide
  as the bits above the offset's trailing zeros (a channel at offset 0 needs none);
- `table_luts`: each channel's per-beat row table (dma<k>.mem) is a ROM of tab_bits a beat, a
  LUT6 per bit and 64 beats;
- `counter_bits`: the row counters (rows[NC], of which the cores read their CB bits), each
  written by the cores whose words publish into it (a core's pub_id takes the values of its
  words') and by a staging read channel;
- `element_bits`: the address (AB bits) and live check of every element of a beat the top moves
  itself: the input streams' writes and the output streams' reads, an m_axi bundle's write-beat
  reads and its staging reads' writes, each permuted from off-chip (NHWC) order;
- `stepped_bundles`: the m_axi bundles with a channel whose beats move in steps (--max-lanes,
  cost.beat_lanes): the engine's step counts, the read ports' step muxes, the write gather
  register, about as large whatever the beat and however many channels (stop 56: a term per
  bit of the stepped beats priced the designs left out worse);
- `stepped_streams`: the stream ports whose beats move in steps (an input's TDATA taken a step
  at a time, a mux of its steps per memory port; an output's beat shifted into a gather
  register and then into TDATA's, flip-flops with an enable);
- `one`: the state machine, its beat, port and stage counters, and the stage's core masks.

Until stop 53 none of it was priced, so the RTL's modeled figures were below Yosys's by it (954
LUT of the capped demo_cnn's 14,142). The own logic is a difference of two syntheses (the top
flattened, less its cores alone), noisy by 100-200 LUT. Since stop 54 the fit is on 18 designs,
six of them with their inputs and outputs off chip (up to 5 pointers and 10 channels): within
-30% to +57% of the own logic on them (at most 406 LUT), -51% to +73% on a design left out, and
the top whole (cores synthesized, engines and own logic modeled) within -8.2% to +10.4%
(docs/rtl.md, "The rest of the top priced, and cheaper" and "The top fit on 18 designs").
Since stop 56 it is on 21, five of them with beats in steps (stepped_bundles, stepped_streams):
each within 35% or 200 LUT, -50% to +116% on a design left out (docs/rtl.md, "Stream beats in
steps")."""
from __future__ import annotations

from typing import Dict, List

# LUT sites and FF of the top's own logic a unit of each input (top_inputs); `one` a design.
# Fitted by benchmarks/top_fit.py on benchmarks/top_points.json.
TOP_FIT = {"one": 126.98, "pointers": 138.23, "offset_bits": 1.49, "table_luts": 0.0, "counter_bits": 0.0,
           "element_bits": 0.36, "stepped_bundles": 558.85, "stepped_streams": 31.35}
TOP_FF_FIT = {"one": 83.66, "pointers": 108.94, "offset_bits": 0.0, "table_luts": 0.9, "counter_bits": 0.0,
              "element_bits": 0.05, "stepped_bundles": 441.65, "stepped_streams": 156.69}


def top_inputs(core: Dict, amem: Dict) -> Dict[str, int]:
    """What TOP_FIT prices for a design: `core` as rtl.core.build_core returns it (its channels,
    pointers, counters, cores and streams), `amem` its activation memory's ports
    (act_mem.act_mem_ports: the elements of a beat the top reads and writes itself)."""
    params = core["core_params"]
    chans: List[Dict] = core["channels"]
    staging_reads = sum(1 for ch in chans if not ch["write"] and ch["what"] != "weights")
    cb = max(int(c["params"]["CB"]) for c in core["cores"])    # the widest core's counts
    elements = sum(n for group in ("rb", "wb", "ro", "wi") for _, n in amem[group].values())
    return {
        "one": 1,
        "pointers": len(core["pointers"]),
        "offset_bits": sum(64 - ((ch["off"] & -ch["off"]).bit_length() - 1) for ch in chans if ch["off"]),
        "table_luts": sum(ch["tab_bits"] * -(-ch["beats"] // 64) for ch in chans if ch["tab_bits"]),
        "counter_bits": cb * (int(params["NC"]) + sum(c["publishes"] for c in core["cores"]) + staging_reads),
        "element_bits": int(params["AB"]) * elements,
        "stepped_bundles": sum(1 for b in core["bundles"] if any(ch["steps"] > 1 for ch in b["channels"])),
        "stepped_streams": sum(1 for p in core["inputs"] + core["outputs"] if p["steps"] > 1),
    }


def price(coef: Dict[str, float], inputs: Dict[str, int]) -> float:
    """These inputs priced by these coefficients (TOP_FIT's, or a refit's: benchmarks/top_fit.py)."""
    return sum(coef[k] * v for k, v in inputs.items())


def top_logic(inputs: Dict[str, int]) -> Dict[str, int]:
    """The top's own logic for these inputs, MODELED (LUT sites, FF)."""
    return {"lut": int(round(price(TOP_FIT, inputs))), "ff": int(round(price(TOP_FF_FIT, inputs)))}
