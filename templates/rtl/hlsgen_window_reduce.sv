// hlsgen: per-channel window reduction on a valid/ready element stream: depthwise conv
// (MODE 0), max pooling (MODE 1) and average pooling (MODE 2). It takes hlsgen_sliding_window's
// CHANNEL_OUTER order, (c, ky, kx) per output pixel, and sends one element per channel and pixel
// (NHWC), one multiply-accumulate (or compare) per cycle.
//   MODE 0: acc = sum_k w[c][k] * (x - ZP_IN), requantized with channel c's row of the tables;
//   MODE 1: the maximum of the raw inputs (the padding carries the input's minimum);
//   MODE 2: acc = sum_k (x - ZP_IN), requantized (the divisor is in the requantization).
// Tables ($readmemh, hlsgen.backends.rtl.modules.window_reduce_params): WEIGHTS (C x KK words,
// [c][ky][kx], MODE 0), RQ_MULT, RQ_BIAS, RQ_SHIFT, RQ_LO, RQ_HI (C words, MODE 0 and 2).
module hlsgen_window_reduce #(
    parameter int C = 1,
    parameter int KK = 9,                    // taps per window
    parameter int MODE = 0,
    parameter int A_W = 8,
    parameter bit A_SIGNED = 1,
    parameter int ZP_IN = 0,
    parameter int W_W = 8,
    parameter int ACC_W = 24,
    parameter int PW = 64,
    parameter int OUT_W = 8,
    parameter int ZP_OUT = 0,
    parameter bit HALF_EVEN = 1,
    parameter string WEIGHTS = "weights.mem",
    parameter string RQ_MULT = "rq_mult.mem",
    parameter string RQ_BIAS = "rq_bias.mem",
    parameter string RQ_SHIFT = "rq_shift.mem",
    parameter string RQ_LO = "rq_lo.mem",
    parameter string RQ_HI = "rq_hi.mem"
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [A_W-1:0]   s_data,
    input  logic             s_valid,
    output logic             s_ready,
    output logic [OUT_W-1:0] m_data,
    output logic             m_valid,
    input  logic             m_ready
);
    localparam int XW = A_W + 2;             // centered activation
    logic signed [W_W-1:0] wrom[C * KK];
    logic signed [31:0] rq_mult[C];
    logic signed [PW-1:0] rq_bias[C];
    logic [6:0] rq_shift[C];
    logic signed [OUT_W:0] rq_lo[C], rq_hi[C];
    initial begin
        if (MODE == 0) $readmemh(WEIGHTS, wrom);
        if (MODE != 1) begin
            $readmemh(RQ_MULT, rq_mult);
            $readmemh(RQ_BIAS, rq_bias);
            $readmemh(RQ_SHIFT, rq_shift);
            $readmemh(RQ_LO, rq_lo);
            $readmemh(RQ_HI, rq_hi);
        end
    end

    function automatic logic signed [XW-1:0] value(input logic [A_W-1:0] x);
        return A_SIGNED ? XW'(signed'(x)) : XW'({1'b0, x});
    endfunction

    localparam int RW = hlsgen_pkg::RQ_W;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the saturated value fits OUT_W bits
    function automatic logic [OUT_W-1:0] requant(input logic signed [ACC_W-1:0] a, input int ch);
        logic signed [RW-1:0] q;
        q = hlsgen_pkg::requant_tail(RW'(a) * RW'(rq_mult[ch]) + RW'(rq_bias[ch]), rq_shift[ch], HALF_EVEN,
                                     RW'(ZP_OUT), RW'(rq_lo[ch]), RW'(rq_hi[ch]));
        return OUT_W'(q);
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    int c, k;                                // the channel and tap of the next input
    logic signed [ACC_W-1:0] acc, nxt;
    logic signed [XW-1:0] v;
    assign v = value(s_data);
    always_comb begin
        if (MODE == 1) nxt = (k == 0 || ACC_W'(v) > acc) ? ACC_W'(v) : acc;
        else if (MODE == 0) nxt = (k == 0 ? '0 : acc) + ACC_W'(wrom[c * KK + k]) * ACC_W'(v - XW'(ZP_IN));
        else nxt = (k == 0 ? '0 : acc) + ACC_W'(v - XW'(ZP_IN));
    end
    assign s_ready = rst_n && (!m_valid || m_ready);

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            c <= 0;
            k <= 0;
            m_valid <= 1'b0;
        end else begin
            if (m_valid && m_ready) m_valid <= 1'b0;
            if (s_valid && s_ready) begin
                acc <= nxt;
                if (k + 1 < KK) k <= k + 1;
                else begin
                    k <= 0;
                    c <= (c + 1 < C) ? c + 1 : 0;
                    m_valid <= 1'b1;
                    m_data <= (MODE == 1) ? OUT_W'(nxt) : requant(nxt, c);
                end
            end
        end
    end
endmodule
