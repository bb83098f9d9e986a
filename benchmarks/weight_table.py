"""A streamed weight table alone, as Yosys synth_xilinx -family xcup builds it in the forms
hlsgen_core has had: why stop 45 writes a beat into a whole slot of its row and gives each PE
lane a copy of its own (docs/rtl.md, "Streamed weight tables in LUT RAM").

    .venv/bin/python benchmarks/weight_table.py

Each table has rows of 256 bits (64 weights of 4 bits, one m_axi beat), one write port and
registered reads. Printed per form: Yosys's LUT (in sites), LUT RAM sites, FF and its cells.
  - write: a beat written as a slice at a run-time offset (stop 44) against into its slot of the
    row (stop 45); 8 rows, two read ports;
  - reads: 8 lanes, each reading a row and the low 8 bits of the next, from one table (stop 44),
    from one copy per 3 lanes, and from one copy per lane (stop 45), each copy in a generate
    scope of its own (copies in one scope are merged back into one table); 6 rows.
"""
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sim"))

from hlsgen_sim import yosys  # noqa: E402

WRITE = """
module write_form #(parameter int WR = 64, parameter int WB = 4, parameter int WBEAT = 64, parameter int D = 8,
                    parameter int SLOT = 0) (
  input logic clk, input logic we, input logic [15:0] wa, input logic [WBEAT*WB-1:0] wd,
  input logic [$clog2(D)-1:0] ra0, ra1, output logic [WR*WB-1:0] q0, q1);
  localparam int LWR = $clog2(WR);
  localparam int LWBEAT = $clog2(WBEAT);
  logic [WR*WB-1:0] mem[D];
  always_ff @(posedge clk) begin
    if (we && !SLOT) mem[wa >> LWR][(wa & (WR - 1)) * WB +: WBEAT * WB] <= wd;
    if (we && SLOT)
      for (int s = 0; s < WR / WBEAT; s++)
        if (((wa & (WR - 1)) >> LWBEAT) == s) mem[wa >> LWR][s * WBEAT * WB +: WBEAT * WB] <= wd;
    q0 <= mem[ra0];
    q1 <= mem[ra1];
  end
endmodule
"""

READS = """
module read_form #(parameter int W = 256, parameter int D = 6, parameter int MP = 8, parameter int LPC = 8) (
  input logic clk, input logic we, input logic [7:0] wa, input logic [W-1:0] wd,
  input logic [MP*8-1:0] ra, output logic [MP*(W+8)-1:0] q);
  localparam int NCP = (MP + LPC - 1) / LPC;
  for (genvar c = 0; c < NCP; c++) begin : cp
    logic [W-1:0] mem[D];
    always_ff @(posedge clk) begin
      if (we) mem[wa] <= wd;
      for (int p = c * LPC; p < (c + 1) * LPC && p < MP; p++)
        q[p*(W+8) +: W+8] <= {mem[ra[p*8 +: 8] + 1][7:0], mem[ra[p*8 +: 8]]};
    end
  end
endmodule
"""

# one table read by every lane (stop 44's form; as a one-row array of tables, the form whose
# synthesis fits yowasp's memory: the same table in a generate scope runs it out of memory)
ONE = """
module one_table #(parameter int W = 256, parameter int D = 6, parameter int MP = 8) (
  input logic clk, input logic we, input logic [7:0] wa, input logic [W-1:0] wd,
  input logic [MP*8-1:0] ra, output logic [MP*(W+8)-1:0] q);
  logic [W-1:0] mem[1][D];
  always_ff @(posedge clk) begin
    if (we) mem[0][wa] <= wd;
    for (int p = 0; p < MP; p++) q[p*(W+8) +: W+8] <= {mem[0][ra[p*8 +: 8] + 1][7:0], mem[0][ra[p*8 +: 8]]};
  end
endmodule
"""


def synth(work: Path, text: str, top: str, params: dict) -> str:
    src = work / f"{top}.sv"
    src.write_text(text)
    cells = yosys.yosys_cells(work / "_".join(f"{k}{v}" for k, v in params.items()), [src], top, params,
                              frontend="slang")
    r = yosys.resources(cells)
    shown = {k: v for k, v in cells.items() if v and k not in ("wires", "ports", "cells", "BUFG")}
    return f"{r['LUT']:6,} LUT ({r['LUTRAM']:,} LUT RAM), {r['FF']:6,} FF   {shown}"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for slot, what in ((0, "a slice at a run-time offset"), (1, "into its slot")):
            print(f"write, {what:28s}: {synth(work, WRITE, 'write_form', {'SLOT': slot})}", flush=True)
        print(f"reads, {'one table, 8 lanes':28s}: {synth(work, ONE, 'one_table', {'MP': 8})}", flush=True)
        for lpc, what in ((3, "a copy per 3 lanes"), (1, "a copy per lane")):
            print(f"reads, {what:28s}: {synth(work, READS, 'read_form', {'LPC': lpc})}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
