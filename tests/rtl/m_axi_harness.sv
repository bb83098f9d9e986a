// Test harness of hlsgen_m_axi (tests/test_rtl_modules.py, cocotb_m_axi.py): one bundle with two
// read channels and one write channel. Read beats are checked here against the pattern the test
// put in memory (byte at offset a of a buffer: (a * 7 + 3 + 41 * channel) mod 256), in order;
// the write channel sends pattern (a * 13 + 5) mod 256, and the test checks the memory. The
// write channel may send beats [0, allow) only: the chip's readiness handshake. The write
// beats' data is a register loaded with beat wr_beat_next, as a chip reading it from a block
// RAM's registered port does. S0, S1, S2: each channel's cycles a beat (CH_STEPS): a read beat
// is counted when taken (rd_take), on its last step.
module m_axi_harness #(
    parameter int DW = 128,
    parameter int N0 = 40,
    parameter int N1 = 7,
    parameter int N2 = 37,
    parameter int S0 = 1,
    parameter int S1 = 1,
    parameter int S2 = 1
) (
    input  logic          clk,
    input  logic          rst_n,
    input  logic [2:0]    go,
    input  logic [191:0]  base,              // three 64-bit buffer addresses
    input  int            allow,
    output logic [2:0]    busy,
    output int            errors,
    output int            got0,
    output int            got1,
    output logic          m_axi_gmem0_AWVALID,
    input  logic          m_axi_gmem0_AWREADY,
    output logic [63:0]   m_axi_gmem0_AWADDR,
    output logic [0:0]    m_axi_gmem0_AWID,
    output logic [7:0]    m_axi_gmem0_AWLEN,
    output logic [2:0]    m_axi_gmem0_AWSIZE,
    output logic [1:0]    m_axi_gmem0_AWBURST,
    output logic [1:0]    m_axi_gmem0_AWLOCK,
    output logic [3:0]    m_axi_gmem0_AWCACHE,
    output logic [2:0]    m_axi_gmem0_AWPROT,
    output logic [3:0]    m_axi_gmem0_AWQOS,
    output logic [3:0]    m_axi_gmem0_AWREGION,
    output logic          m_axi_gmem0_WVALID,
    input  logic          m_axi_gmem0_WREADY,
    output logic [DW-1:0] m_axi_gmem0_WDATA,
    output logic [DW/8-1:0] m_axi_gmem0_WSTRB,
    output logic          m_axi_gmem0_WLAST,
    input  logic          m_axi_gmem0_BVALID,
    output logic          m_axi_gmem0_BREADY,
    input  logic [1:0]    m_axi_gmem0_BRESP,
    input  logic [0:0]    m_axi_gmem0_BID,
    output logic          m_axi_gmem0_ARVALID,
    input  logic          m_axi_gmem0_ARREADY,
    output logic [63:0]   m_axi_gmem0_ARADDR,
    output logic [0:0]    m_axi_gmem0_ARID,
    output logic [7:0]    m_axi_gmem0_ARLEN,
    output logic [2:0]    m_axi_gmem0_ARSIZE,
    output logic [1:0]    m_axi_gmem0_ARBURST,
    output logic [1:0]    m_axi_gmem0_ARLOCK,
    output logic [3:0]    m_axi_gmem0_ARCACHE,
    output logic [2:0]    m_axi_gmem0_ARPROT,
    output logic [3:0]    m_axi_gmem0_ARQOS,
    output logic [3:0]    m_axi_gmem0_ARREGION,
    input  logic          m_axi_gmem0_RVALID,
    output logic          m_axi_gmem0_RREADY,
    input  logic [DW-1:0] m_axi_gmem0_RDATA,
    input  logic          m_axi_gmem0_RLAST,
    input  logic [1:0]    m_axi_gmem0_RRESP,
    input  logic [0:0]    m_axi_gmem0_RID
);
    localparam int BYTES = DW / 8;
    logic g[3], b[3], ok[3], rd_valid, rd_take;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the write steps are the engine's to count
    int rd_step, wr_step, wr_step_next;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [63:0] addr[3];
    int rd_ch, rd_beat, wr_ch, wr_beat, wr_ch_next, wr_beat_next, last[3];
    logic [DW-1:0] rd_data, wr_data;
    int next0, next1;
    always_comb begin
        for (int c = 0; c < 3; c++) begin
            g[c] = go[c];
            addr[c] = base[64 * c +: 64];
            busy[c] = b[c];
        end
        ok[0] = 1'b0;
        ok[1] = 1'b0;
        ok[2] = last[2] < allow;
    end
    always_ff @(posedge clk) for (int k = 0; k < BYTES; k++) wr_data[8 * k +: 8] <= 8'((wr_beat_next * BYTES + k) * 13 + 5);
    hlsgen_m_axi #(.DW(DW), .NCH(3), .MAXB(16), .OUTST(16), .CH_WRITE(3'b100),
                   .CH_BEATS({32'(N2), 32'(N1), 32'(N0)}), .CH_STEPS({32'(S2), 32'(S1), 32'(S0)})) dut (
        .clk(clk), .rst_n(rst_n), .go(g), .addr(addr), .busy(b), .rd_valid(rd_valid), .rd_ch(rd_ch),
        .rd_beat(rd_beat), .rd_data(rd_data), .rd_step(rd_step), .rd_take(rd_take), .wr_ch(wr_ch),
        .wr_beat(wr_beat), .wr_step(wr_step), .wr_ch_next(wr_ch_next), .wr_beat_next(wr_beat_next),
        .wr_step_next(wr_step_next), .wr_data(wr_data),
        .wr_strb('1), .wr_last_beat(last), .wr_ok(ok),
        .AWVALID(m_axi_gmem0_AWVALID), .AWREADY(m_axi_gmem0_AWREADY), .AWADDR(m_axi_gmem0_AWADDR),
        .AWID(m_axi_gmem0_AWID), .AWLEN(m_axi_gmem0_AWLEN), .AWSIZE(m_axi_gmem0_AWSIZE),
        .AWBURST(m_axi_gmem0_AWBURST), .AWLOCK(m_axi_gmem0_AWLOCK), .AWCACHE(m_axi_gmem0_AWCACHE),
        .AWPROT(m_axi_gmem0_AWPROT), .AWQOS(m_axi_gmem0_AWQOS), .AWREGION(m_axi_gmem0_AWREGION),
        .WVALID(m_axi_gmem0_WVALID), .WREADY(m_axi_gmem0_WREADY), .WDATA(m_axi_gmem0_WDATA),
        .WSTRB(m_axi_gmem0_WSTRB), .WLAST(m_axi_gmem0_WLAST), .BVALID(m_axi_gmem0_BVALID),
        .BREADY(m_axi_gmem0_BREADY), .BRESP(m_axi_gmem0_BRESP), .BID(m_axi_gmem0_BID),
        .ARVALID(m_axi_gmem0_ARVALID), .ARREADY(m_axi_gmem0_ARREADY), .ARADDR(m_axi_gmem0_ARADDR),
        .ARID(m_axi_gmem0_ARID), .ARLEN(m_axi_gmem0_ARLEN), .ARSIZE(m_axi_gmem0_ARSIZE),
        .ARBURST(m_axi_gmem0_ARBURST), .ARLOCK(m_axi_gmem0_ARLOCK), .ARCACHE(m_axi_gmem0_ARCACHE),
        .ARPROT(m_axi_gmem0_ARPROT), .ARQOS(m_axi_gmem0_ARQOS), .ARREGION(m_axi_gmem0_ARREGION),
        .RVALID(m_axi_gmem0_RVALID), .RREADY(m_axi_gmem0_RREADY), .RDATA(m_axi_gmem0_RDATA),
        .RLAST(m_axi_gmem0_RLAST), .RRESP(m_axi_gmem0_RRESP), .RID(m_axi_gmem0_RID)
    );
    // every read beat: the right channel's next beat, with the pattern's bytes
    always_ff @(posedge clk) begin
        if (!rst_n) begin
            errors <= 0;
            got0 <= 0;
            got1 <= 0;
            next0 <= 0;
            next1 <= 0;
        end else if (rd_take) begin
            automatic int bad = 0;
            automatic int want = rd_ch == 0 ? next0 : next1;
            if (rd_ch > 1 || rd_beat != want || rd_step + 1 != (rd_ch == 0 ? S0 : S1) || !rd_valid) bad = 1;
            for (int k = 0; k < BYTES; k++)
                if (rd_data[8 * k +: 8] != 8'((rd_beat * BYTES + k) * 7 + 3 + 41 * rd_ch)) bad = 1;
            errors <= errors + bad;
            if (rd_ch == 0) begin
                got0 <= got0 + 1;
                next0 <= next0 + 1;
            end else begin
                got1 <= got1 + 1;
                next1 <= next1 + 1;
            end
        end
    end
endmodule
