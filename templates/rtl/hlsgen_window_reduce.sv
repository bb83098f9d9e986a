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
    parameter WEIGHTS = "weights.mem",
    parameter RQ_MULT = "rq_mult.mem",
    parameter RQ_BIAS = "rq_bias.mem",
    parameter RQ_SHIFT = "rq_shift.mem",
    parameter RQ_LO = "rq_lo.mem",
    parameter RQ_HI = "rq_hi.mem"
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
    generate
        if (MODE == 0) begin : g_weights
            initial $readmemh(WEIGHTS, wrom);
        end
    endgenerate

    function automatic logic signed [XW-1:0] value(input logic [A_W-1:0] x);
        value = A_SIGNED ? XW'($signed(x)) : XW'({1'b0, x});
    endfunction

    int c, k;                                // the channel and tap of the next input
    logic signed [ACC_W-1:0] acc, nxt;
    logic [OUT_W-1:0] q;
    generate
        if (MODE != 1) begin : g_rq                  // the window's result requantized (hlsgen_rq_rom)
            hlsgen_rq_rom #(.N(C), .NP(1), .ACC_W(ACC_W), .PW(PW), .OUT_W(OUT_W), .ZP_OUT(ZP_OUT),
                            .HALF_EVEN(HALF_EVEN), .RQ_MULT(RQ_MULT), .RQ_BIAS(RQ_BIAS), .RQ_SHIFT(RQ_SHIFT),
                            .RQ_LO(RQ_LO), .RQ_HI(RQ_HI)) rq (.acc(nxt), .ch(32'(c)), .q(q));
        end else begin : g_max
            assign q = OUT_W'(nxt);
        end
    endgenerate
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
                    m_data <= q;
                end
            end
        end
    end
endmodule
