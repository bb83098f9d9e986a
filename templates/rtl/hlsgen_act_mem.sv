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
//
// A read port reads only when its enable `re` is high (a block RAM's enable): a client enables
// exactly the reads it uses. In simulation (Verilator) a read whose enable is low returns the
// word's complement, never the word, so a client that used a read it did not enable would
// show in the design's outputs; in synthesis rdata holds, as a block RAM's does.
// Simulation also measures what banking this memory would face (bank_worst): for NB = 2^j banks
// (j = 0 .. NPB - 1), cyclic (bank = address mod NB), the most enabled reads and writes that fall
// into one bank in any cycle (16 bits each, entry j at [16 j +: 16]; the testbench writes them
// into results/sim.json). Two reads of one address count twice. A true dual-port block RAM
// serves two accesses per cycle. With the plusarg +mem_trace=FILE, simulation also writes every
// cycle's enabled accesses into FILE, one line a cycle that has any: the cycle (from the first
// edge), then ` r<port>:<address>` for each enabled read and ` w<port>:<address>` for each write
// (hex addresses), for sim/hlsgen_sim/banks.py to weigh banking schemes against.
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
    input  logic [NRP-1:0]    re,
    output logic [NRP*SB-1:0] rdata,
    input  logic [NWP-1:0]    we,
    input  logic [NWP*AB-1:0] waddr,
    input  logic [NWP*SB-1:0] wdata
);
    logic [SB-1:0] mem[WORDS];
    initial $readmemh(FILE, mem);
    always_ff @(posedge clk) begin
        for (int k = 0; k < NWP; k++) if (we[k]) mem[waddr[k * AB +: AB]] <= wdata[k * SB +: SB];
        for (int k = 0; k < NRP; k++)
`ifdef VERILATOR
            rdata[k * SB +: SB] <= re[k] ? mem[raddr[k * AB +: AB]] : ~mem[raddr[k * AB +: AB]];
`else
            if (re[k]) rdata[k * SB +: SB] <= mem[raddr[k * AB +: AB]];
`endif
    end
`ifdef VERILATOR
    localparam int NPB = 10;                 // 1 .. 512 banks
    logic [16*NPB-1:0] bank_worst;
    initial bank_worst = '0;
    always_ff @(posedge clk) begin
        automatic int cnt[1 << (NPB - 1)];
        for (int j = 0; j < NPB; j++) begin
            automatic int most = 0;
            for (int b = 0; b < (1 << j); b++) cnt[b] = 0;
            for (int k = 0; k < NRP; k++) if (re[k]) cnt[int'(raddr[k * AB +: AB]) & ((1 << j) - 1)] += 1;
            for (int k = 0; k < NWP; k++) if (we[k]) cnt[int'(waddr[k * AB +: AB]) & ((1 << j) - 1)] += 1;
            for (int b = 0; b < (1 << j); b++) if (cnt[b] > most) most = cnt[b];
            if (most > int'(bank_worst[16 * j +: 16])) bank_worst[16 * j +: 16] <= 16'(most);
        end
    end
    int trace_fd;
    int unsigned cycle;
    initial begin
        automatic string path;
        trace_fd = 0;
        cycle = 0;
        if ($value$plusargs("mem_trace=%s", path)) begin
            trace_fd = $fopen(path, "w");
            if (trace_fd == 0) $fatal(1, "hlsgen_act_mem: cannot write the trace %s", path);
        end
    end
    always_ff @(posedge clk) begin
        cycle <= cycle + 1;
        if (trace_fd != 0 && (|re || |we)) begin
            $fwrite(trace_fd, "%0d", cycle);
            for (int k = 0; k < NRP; k++) if (re[k]) $fwrite(trace_fd, " r%0d:%0h", k, raddr[k * AB +: AB]);
            for (int k = 0; k < NWP; k++) if (we[k]) $fwrite(trace_fd, " w%0d:%0h", k, waddr[k * AB +: AB]);
            $fwrite(trace_fd, "\n");
        end
    end
    final if (trace_fd != 0) $fclose(trace_fd);
`endif
endmodule
