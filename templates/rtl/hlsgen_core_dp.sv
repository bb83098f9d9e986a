// hlsgen: the arithmetic of one hlsgen_core, sized to the words that core runs. hlsgen_core
// computes every output value here: its window lanes' multiply-accumulates (or maxima), the
// requantization of a window step's outputs, and its elementwise lanes. Addresses, memories and
// tables stay in hlsgen_core, which passes each lane's operands and table rows in.
//
// This is the part `make synth-yosys` synthesizes for every core of a design (docs/rtl.md), so
// it is written for Yosys as well as Verilator: packed ports (lane k at bits [k*W +: W]),
// products at their real widths, no unpacked ports or `return`.
//
// Window lanes k = (v * MP + p) * MS + s (VEC pixels x PE output channels x SIMD taps); output
// lane o = v * MP + p. A step adds, for every live lane, w * (x - zp) (w = 1 when the word has
// no weights: average pools) to its output lane's accumulator, or takes the maximum (max
// pools). Only the lanes inside the envelope of the core's weighted words (WV x WP x WS) have
// a multiplier, and only the outputs inside that of its requantizing words (QV x QP) a
// requantizer: a max pool's wide folding adds comparators, not DSPs. PACK pairs two
// lanes on one multiplier, as hlsgen_mac_pair does (int4 x int8, the cost model's two
// products per DSP48E2):
//   PACK = 1: lanes p and p + 1 (same pixel and tap, so the same activation when the core's
//             weighted words are dense convs or linears): (w1 * 2^SP + w0) * (x - zp);
//   PACK = 2: lanes v and v + 1 (same output channel and tap, so the same weight for every
//             conv): ((x1 - zp) * 2^SP + (x0 - zp)) * w.
// The accumulators are AW bits: the widest accumulator range of the core's tasks (sums wrap
// modulo 2^AW, so a final value that fits is exact).
//
// Elementwise lanes (EL of the core's ML lanes; the others only serve moves), ET terms each:
// bias + sum_t (x_t - zp_t) * m_t, then the
// requantizer's tail (hlsgen_rq_tail).
module hlsgen_core_dp #(
    parameter int MV = 1,
    parameter int MP = 1,
    parameter int MS = 1,
    parameter int ML = 1,
    parameter int SB = 9,                    // memory word bits
    parameter int XB = 8,                    // the bits of the activations this core's words read
    parameter int WB = 8,                    // weight bits
    parameter int AW = 32,                   // accumulator bits
    parameter int PW = 64,                   // requantization bias bits
    parameter int WV = 1,                    // the multiplying lanes: v < WV, p < WP, s < WS (the envelope
    parameter int WP = 1,                    // of the core's words with weights; 0: none multiply)
    parameter int WS = 1,
    parameter int PACK = 0,
    parameter int QV = 1,                    // the requantized outputs: v < QV, p < QP (the envelope of the
    parameter int QP = 1,                    // core's requantizing window words; 0: none)
    parameter int ET = 2,                    // elementwise terms (0: the core runs no elementwise word)
    parameter int EL = 1                     // lanes of its elementwise words (moves use the others)
) (
    // waiver: a core sized for its words leaves the operands of the others unused (the weights
    // of lanes without a multiplier, the requantization rows of outputs without a requantizer,
    // the second term when ET < 2)
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic                   clk,
    // a window step
    input  logic                   acc_en,   // the step fires: accumulators take the step's sums
    input  logic                   first,    // the step starts an output group (from init)
    input  logic                   wmax,     // maxima instead of sums
    input  logic                   wuse,     // the word has weights
    input  logic [MV*MP*MS-1:0]    live,
    input  logic [MV*MP*MS*SB-1:0] x,
    input  logic [MV*MP*MS*WB-1:0] w,
    input  logic signed [SB:0]     zp,
    input  logic signed [SB-1:0]   init,
    // the step's outputs: requantization rows (multiplier, bias, shift, rounding, zero point, clamp)
    input  logic [MV*MP*32-1:0]    m0,
    input  logic [MV*MP*PW-1:0]    bias,
    input  logic [MV*MP*7-1:0]     shift,
    input  logic [MV*MP-1:0]       he,
    input  logic [MV*MP*32-1:0]    ozp,
    input  logic [MV*MP*32-1:0]    lo,
    input  logic [MV*MP*32-1:0]    hi,
    output logic [MV*MP*SB-1:0]    wq,       // requantized (or the maximum) of acc_next
    // elementwise lanes: term t of lane l at [(t * ML + l) * W +: W]
    input  logic [1:0]             nt,
    input  logic [2*ML*SB-1:0]     ex,
    input  logic [2*(SB+1)-1:0]    ezp,
    input  logic [2*ML*32-1:0]     em,
    input  logic [ML*PW-1:0]       ebias,
    input  logic [ML*7-1:0]        eshift,
    input  logic [ML-1:0]          ehe,
    input  logic [ML*32-1:0]       eozp,
    input  logic [ML*32-1:0]       elo,
    input  logic [ML*32-1:0]       ehi,
    output logic [ML*SB-1:0]       eq
    /* verilator lint_on UNUSEDSIGNAL */
);
    localparam int NL = MV * MP * MS;
    localparam int NO = MV * MP;
    localparam int DW = XB + 1;              // x - zp (x and zp both fit XB bits, signed or not)
    localparam int PRW = WB + DW;            // one product
    // the requantizer (hlsgen_rq_tail) works at RW bits: wider than a window output's product
    // plus its bias and than an elementwise lane's two products plus its bias
    localparam int RW0 = (AW + 32 > DW + 34) ? AW + 32 : DW + 34;
    localparam int RW = (RW0 > PW ? RW0 : PW) + 2;   // PW (kernel.py's requantization width) also
                                             // covers the largest shift + 2, which the rounding needs
    localparam int SP = PRW + 1;             // a packed pair's field: each product |w * d| < 2^(SP-1)

    // ---------------------------------------------------------------- products
    logic signed [DW-1:0] d[NL];             // x - zp of every lane
    logic signed [PRW-1:0] prod[NL];         // w * (x - zp), or x - zp when the word has no weights
    genvar k;
    generate
        for (k = 0; k < NL; k = k + 1) begin : g_d
            assign d[k] = DW'($signed(x[k * SB +: SB])) - DW'(zp);
        end
        for (k = 0; k < NL; k = k + 1) begin : g_lane
            localparam int V = k / (MP * MS);
            localparam int P = (k / MS) % MP;
            localparam int S = k % MS;
            if (!(V < WV && P < WP && S < WS)) begin : g_add     // no multiplier: x - zp
                assign prod[k] = PRW'(d[k]);
            end else if ((PACK == 1 && P % 2 == 0 && P + 1 < WP) || (PACK == 2 && V % 2 == 0 && V + 1 < WV))
            begin : g_pair                    // lanes k and K2 on one multiplier: two packed operands
                localparam int K2 = PACK == 1 ? k + MS : k + MP * MS;   // the pair's other lane
                localparam int OW = PACK == 1 ? WB : DW;   // the packed operands: weights (PE) or x - zp (VEC)
                localparam int QW = PACK == 1 ? DW : WB;   // the shared one
                logic signed [OW-1:0] f0, f1;
                logic signed [QW-1:0] q;          // the shared operand, from a live lane of the pair
                logic signed [OW+SP:0] pk;
                logic signed [OW+SP+QW:0] pp;
                logic signed [SP-1:0] low;
                /* verilator lint_off UNUSEDSIGNAL */   // waiver: the high field's top bits copy its sign
                logic signed [OW+SP+QW:0] high;
                /* verilator lint_on UNUSEDSIGNAL */
                if (PACK == 1) begin : g_pe   // same pixel and tap: one activation, two weights
                    assign f0 = $signed(w[k * WB +: WB]);
                    assign f1 = $signed(w[K2 * WB +: WB]);
                    assign q = live[k] ? d[k] : d[K2];
                end else begin : g_vec        // same channel and tap: one weight, two activations
                    assign f0 = d[k];
                    assign f1 = d[K2];
                    assign q = live[k] ? $signed(w[k * WB +: WB]) : $signed(w[K2 * WB +: WB]);
                end
                assign pk = ((OW+SP+1)'(f1) <<< SP) + (OW+SP+1)'(f0);
                assign pp = pk * q;
                assign low = pp[SP-1:0];
                assign high = (pp - (OW+SP+QW+1)'(low)) >>> SP;
                assign prod[k] = wuse ? PRW'(low) : PRW'(d[k]);
                assign prod[K2] = wuse ? PRW'(high) : PRW'(d[K2]);
            end else if (!(PACK == 1 && P % 2 == 1) && !(PACK == 2 && V % 2 == 1)) begin : g_one
                assign prod[k] = wuse ? PRW'($signed(w[k * WB +: WB]) * d[k]) : PRW'(d[k]);
            end                               // (else: the second lane of a pair, set above)
        end
    endgenerate

    // ---------------------------------------------------------------- accumulation and requantization
    logic signed [AW-1:0] acc[NO];
    genvar o;
    generate
        for (o = 0; o < NO; o = o + 1) begin : g_out
            logic signed [AW-1:0] sum, mx, nxt;
            always_comb begin
                sum = first ? AW'(init) : acc[o];
                mx = sum;
                for (int s = 0; s < MS; s = s + 1) begin
                    if (live[o * MS + s]) begin
                        sum = sum + AW'(prod[o * MS + s]);
                        if (AW'($signed(x[(o * MS + s) * SB +: SB])) > mx) mx = AW'($signed(x[(o * MS + s) * SB +: SB]));
                    end
                end
                nxt = wmax ? mx : sum;
            end
            always_ff @(posedge clk) if (acc_en) acc[o] <= nxt;
            if (o / MP < QV && o % MP < QP) begin : g_rq
                logic signed [AW+31:0] rp;
                /* verilator lint_off UNUSEDSIGNAL */   // waiver: the saturated value fits SB bits
                logic signed [RW-1:0] q;
                /* verilator lint_on UNUSEDSIGNAL */
                assign rp = nxt * $signed(m0[o * 32 +: 32]);
                hlsgen_rq_tail #(.W(RW)) rq (
                    .p(RW'(rp) + RW'($signed(bias[o * PW +: PW]))), .sh(shift[o * 7 +: 7]), .half_even(he[o]),
                    .zp(RW'($signed(ozp[o * 32 +: 32]))), .lo(RW'($signed(lo[o * 32 +: 32]))),
                    .hi(RW'($signed(hi[o * 32 +: 32]))), .q(q));
                assign wq[o * SB +: SB] = wmax ? nxt[SB-1:0] : q[SB-1:0];
            end else begin : g_norq
                assign wq[o * SB +: SB] = nxt[SB-1:0];
            end
        end
    endgenerate

    // ---------------------------------------------------------------- elementwise lanes
    genvar l;
    generate
        if (ET == 0) begin : g_noelt         // the core's element words only move data
            assign eq = '0;
        end else begin : g_elts
            for (l = EL; l < ML; l = l + 1) begin : g_move
                assign eq[l * SB +: SB] = '0;
            end
            for (l = 0; l < EL; l = l + 1) begin : g_elt
                logic signed [RW-1:0] p;
                /* verilator lint_off UNUSEDSIGNAL */   // waiver: the saturated value fits SB bits
                logic signed [RW-1:0] q;
                /* verilator lint_on UNUSEDSIGNAL */
                logic signed [DW-1:0] d0;
                logic signed [DW+31:0] t0, t1;
                assign d0 = DW'($signed(ex[l * SB +: SB])) - DW'($signed(ezp[0 +: SB + 1]));
                assign t0 = d0 * $signed(em[l * 32 +: 32]);
                if (ET > 1) begin : g_t1
                    logic signed [DW-1:0] d1;
                    assign d1 = DW'($signed(ex[(ML + l) * SB +: SB])) - DW'($signed(ezp[SB + 1 +: SB + 1]));
                    assign t1 = d1 * $signed(em[(ML + l) * 32 +: 32]);
                end else begin : g_not1
                    assign t1 = '0;
                end
                assign p = RW'($signed(ebias[l * PW +: PW])) + (nt != 2'd0 ? RW'(t0) : '0) + (nt > 2'd1 ? RW'(t1) : '0);
                hlsgen_rq_tail #(.W(RW)) rq (
                    .p(p), .sh(eshift[l * 7 +: 7]), .half_even(ehe[l]), .zp(RW'($signed(eozp[l * 32 +: 32]))),
                    .lo(RW'($signed(elo[l * 32 +: 32]))), .hi(RW'($signed(ehi[l * 32 +: 32]))), .q(q));
                assign eq[l * SB +: SB] = q[SB-1:0];
            end
        end
    endgenerate
endmodule
