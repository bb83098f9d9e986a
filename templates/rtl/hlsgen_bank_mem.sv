// hlsgen: one region of the activation memory (a stored tensor, a staging region) built as the
// bank planner (hlsgen/backends/rtl/banking.py) plans it: C x H x W words of SB bits in
// BC x BH x BW banks (BC = 2^LBC, ...), the word at coordinates (c, h, w) in bank
// (c mod BC, h mod BH, w mod BW) at in-bank address ((h / BH) * WQ + w / BW) * CQ + c / BC
// (CQ = ceil(C / BC), WQ = ceil(W / BW)). Each bank is a memory with the ports of a block RAM:
// port A reads or writes, port B reads (and writes too when TWO_WRITES, a true dual port).
//
// Clients give coordinates, not addresses: NR read ports (rc, rh, rw, re) and NW write ports
// (wc, wh, ww, we, wdata), packed (port k at [k * CB +: CB], [k * SB +: SB]). Each cycle every
// bank takes its writes first (port A, then port B when TWO_WRITES), then its reads: a read of a
// word that a port of its bank already addresses this cycle shares that port (reads of one word
// by several lanes are one access; a read of a word written this cycle sees the old word, as
// port A reads first), any other read takes the next free port. A read's word comes out on
// rdata one cycle later, as a block RAM's does. rdata the cycle after a read that was not
// enabled is not a word the port read: in simulation (Verilator) it is the complement of what
// the bank's port gives, as in hlsgen_act_mem, so a client that used it would show.
// More distinct words in one bank in one cycle than its ports serve (or a second write without
// TWO_WRITES) is a cycle the plan does not serve: `conflict` goes high and stays high, and the
// access that found no port is dropped. The planner chooses the banks so that it never happens.
//
// The in-bank address's multiplies by the constants CQ and WQ are sums of shifts (mulc), so
// that synthesis builds adders and takes no DSP for them.
module hlsgen_bank_mem #(
    parameter int SB = 9,
    parameter int C = 1,
    parameter int H = 1,
    parameter int W = 1,
    parameter int LBC = 0,
    parameter int LBH = 0,
    parameter int LBW = 0,
    parameter int NR = 1,
    parameter int NW = 1,
    parameter int CB = 16,                   // coordinate bits
    parameter int TWO_WRITES = 0
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [NR-1:0]    re,
    input  logic [NR*CB-1:0] rc,
    input  logic [NR*CB-1:0] rh,
    input  logic [NR*CB-1:0] rw,
    output logic [NR*SB-1:0] rdata,
    input  logic [NW-1:0]    we,
    input  logic [NW*CB-1:0] wc,
    input  logic [NW*CB-1:0] wh,
    input  logic [NW*CB-1:0] ww,
    input  logic [NW*SB-1:0] wdata,
    output logic             conflict
);
    localparam int NB = 1 << (LBC + LBH + LBW);
    localparam int LNB = LBC + LBH + LBW;
    localparam int BI = LNB > 0 ? LNB : 1;   // bank index bits
    localparam int CQ = (C + (1 << LBC) - 1) >> LBC;
    localparam int WQ = (W + (1 << LBW) - 1) >> LBW;
    localparam int HQ = (H + (1 << LBH) - 1) >> LBH;
    localparam int D = CQ * WQ * HQ;         // words a bank
    localparam int DB = D > 1 ? $clog2(D) : 1;

    function automatic logic [DB-1:0] mulc(input logic [CB-1:0] x, input logic [31:0] k);
        mulc = '0;
        for (int i = 0; i < 31; i++) if (k[i]) mulc = mulc + DB'({32'(x)} << i);
    endfunction

    function automatic logic [BI-1:0] bank_of(input logic [CB-1:0] c, input logic [CB-1:0] h, input logic [CB-1:0] w);
        logic [31:0] b;
        b = 32'(h & CB'((1 << LBH) - 1));
        b = (b << LBW) | 32'(w & CB'((1 << LBW) - 1));
        b = (b << LBC) | 32'(c & CB'((1 << LBC) - 1));
        bank_of = BI'(b);
    endfunction

    function automatic logic [DB-1:0] addr_of(input logic [CB-1:0] c, input logic [CB-1:0] h, input logic [CB-1:0] w);
        addr_of = mulc(CB'(mulc(h >> LBH, WQ)) + (w >> LBW), CQ) + DB'(c >> LBC);
    endfunction

    // every port's bank and in-bank address
    logic [BI-1:0] rb[NR], wb[NW];
    logic [DB-1:0] ra[NR], wa[NW];
    always_comb begin
        for (int k = 0; k < NR; k++) begin
            rb[k] = bank_of(rc[k * CB +: CB], rh[k * CB +: CB], rw[k * CB +: CB]);
            ra[k] = addr_of(rc[k * CB +: CB], rh[k * CB +: CB], rw[k * CB +: CB]);
        end
        for (int k = 0; k < NW; k++) begin
            wb[k] = bank_of(wc[k * CB +: CB], wh[k * CB +: CB], ww[k * CB +: CB]);
            wa[k] = addr_of(wc[k * CB +: CB], wh[k * CB +: CB], ww[k * CB +: CB]);
        end
    end

    // each bank's two ports this cycle, and each read port's (bank, port) one cycle later
    logic [NB*DB-1:0] a_addr;
    logic [NB*SB-1:0] qa, qb;
    logic [NB-1:0]    over;
    logic [NR-1:0]    r_on_b;               // this cycle: read k is served by its bank's port B
    always_comb begin
        r_on_b = '0;
        for (int k = 0; k < NR; k++)
            r_on_b[k] = !(a_addr[32'(rb[k]) * DB +: DB] == ra[k]);
    end

    for (genvar b = 0; b < NB; b++) begin : g_bank
        logic          av, bv, awe, bwe;
        logic [DB-1:0] aad, bad;
        logic [SB-1:0] awd, bwd;
        always_comb begin
            av = 1'b0; bv = 1'b0; awe = 1'b0; bwe = 1'b0; aad = '0; bad = '0; awd = '0; bwd = '0;
            over[b] = 1'b0;
            for (int k = 0; k < NW; k++)
                if (we[k] && wb[k] == BI'(b)) begin
                    if (!av) begin
                        av = 1'b1; awe = 1'b1; aad = wa[k]; awd = wdata[k * SB +: SB];
                    end else if (TWO_WRITES != 0 && !bv) begin
                        bv = 1'b1; bwe = 1'b1; bad = wa[k]; bwd = wdata[k * SB +: SB];
                    end else over[b] = 1'b1;
                end
            for (int k = 0; k < NR; k++)
                if (re[k] && rb[k] == BI'(b)) begin
                    if (av && aad == ra[k]) ;
                    else if (bv && bad == ra[k]) ;
                    else if (!av) begin
                        av = 1'b1; aad = ra[k];
                    end else if (!bv) begin
                        bv = 1'b1; bad = ra[k];
                    end else over[b] = 1'b1;
                end
        end
        assign a_addr[b * DB +: DB] = aad;

        logic [SB-1:0] m[D];
        logic [SB-1:0] qa_r, qb_r;
        always_ff @(posedge clk) begin
            if (awe) m[aad] <= awd;
            if (bwe) m[bad] <= bwd;
            qa_r <= m[aad];
            qb_r <= m[bad];
        end
        assign qa[b * SB +: SB] = qa_r;
        assign qb[b * SB +: SB] = qb_r;
    end

    logic [BI-1:0] rb_d[NR];
    logic [NR-1:0] on_b_d, re_d;
    always_ff @(posedge clk) begin
        re_d <= re;
        on_b_d <= r_on_b;
        for (int k = 0; k < NR; k++) rb_d[k] <= rb[k];
        if (!rst_n) conflict <= 1'b0;
        else if (|over) conflict <= 1'b1;
    end
    always_comb
        for (int k = 0; k < NR; k++) begin
            rdata[k * SB +: SB] = on_b_d[k] ? qb[32'(rb_d[k]) * SB +: SB] : qa[32'(rb_d[k]) * SB +: SB];
`ifdef VERILATOR
            if (!re_d[k]) rdata[k * SB +: SB] = ~rdata[k * SB +: SB];
`endif
        end
endmodule
