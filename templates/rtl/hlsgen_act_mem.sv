// hlsgen: the activation memory of a design (rtl/hlsgen_top.sv): every stored tensor, the graph's
// inputs and outputs, staging regions and the constants of elementwise ops, WORDS words of SB
// bits, initialized from FILE ($readmemh). NRP read ports, each registered as a block RAM's
// (the word at raddr comes out on rdata one cycle later), and NWP write ports; the top numbers
// them client by client (the cores' read and write lanes, the output streams' and m_axi write
// channels' beats, the input streams' and m_axi read channels' beats) and writes each port's
// client in a comment. Writes land at the clock edge; a read in the same cycle sees the old
// word. Two writes to one word in one cycle: the higher port wins (the top never makes them).
//
// This is the part of a design that `make synth-yosys SCOPE=top` does not synthesize (it keeps
// the module as a black box): one array with a port per lane is not a block RAM. Banking it so
// that every bank has the ports a block RAM has is the step after this one (docs/rtl.md).
// Ports are packed vectors (port k at [k * W +: W]) so that a black box keeps them.
module hlsgen_act_mem #(
    parameter int WORDS = 1,
    parameter int SB = 9,
    parameter int AB = 1,                    // address bits: WORDS <= 2^AB
    parameter int NRP = 1,
    parameter int NWP = 1,
    parameter FILE = ""                      // $readmemh image (untyped: Yosys's parsers take it so)
) (
    input  logic              clk,
    input  logic [NRP*AB-1:0] raddr,
    output logic [NRP*SB-1:0] rdata,
    input  logic [NWP-1:0]    we,
    input  logic [NWP*AB-1:0] waddr,
    input  logic [NWP*SB-1:0] wdata
);
    logic [SB-1:0] mem[WORDS];
    initial $readmemh(FILE, mem);
    always_ff @(posedge clk) begin
        for (int k = 0; k < NWP; k++) if (we[k]) mem[waddr[k * AB +: AB]] <= wdata[k * SB +: SB];
        for (int k = 0; k < NRP; k++) rdata[k * SB +: SB] <= mem[raddr[k * AB +: AB]];
    end
endmodule
