// hlsgen: a 2-D convolution (groups = 1) with its requantization on valid/ready element
// streams: hlsgen_sliding_window (the line buffer, taps in (ky, kx, c) order) feeding
// hlsgen_linear (PE output channels x SIMD taps per cycle) with the weights laid out
// [o][ky][kx][c] (hlsgen.backends.rtl.modules.conv_params). Input and output are NHWC, one
// element per transfer: O outputs per output pixel.
module hlsgen_conv #(
    parameter int C = 1,
    parameter int H = 4,
    parameter int W = 4,
    parameter int O = 1,
    parameter int KH = 3,
    parameter int KW = 3,
    parameter int SH = 1,
    parameter int SW = 1,
    parameter int DH = 1,
    parameter int DW = 1,
    parameter int PT = 0,
    parameter int PL = 0,
    parameter int OH = 4,
    parameter int OW = 4,
    parameter int PE = 1,
    parameter int SIMD = 1,
    parameter int A_W = 8,
    parameter bit A_SIGNED = 1,
    parameter int ZP_IN = 0,
    parameter int W_W = 4,
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
    logic [A_W-1:0] win_data;
    logic win_valid, win_ready;
    hlsgen_sliding_window #(.C(C), .H(H), .W(W), .KH(KH), .KW(KW), .SH(SH), .SW(SW), .DH(DH), .DW(DW), .PT(PT),
                            .PL(PL), .OH(OH), .OW(OW), .A_W(A_W), .PADV(A_W'(ZP_IN)), .CHANNEL_OUTER(1'b0)) window (
        .clk(clk), .rst_n(rst_n), .s_data(s_data), .s_valid(s_valid), .s_ready(s_ready),
        .m_data(win_data), .m_valid(win_valid), .m_ready(win_ready)
    );
    hlsgen_linear #(.K(KH * KW * C), .N(O), .PE(PE), .SIMD(SIMD), .A_W(A_W), .A_SIGNED(A_SIGNED), .ZP_IN(ZP_IN),
                    .W_W(W_W), .ACC_W(ACC_W), .PW(PW), .OUT_W(OUT_W), .ZP_OUT(ZP_OUT), .HALF_EVEN(HALF_EVEN),
                    .WEIGHTS(WEIGHTS), .RQ_MULT(RQ_MULT), .RQ_BIAS(RQ_BIAS), .RQ_SHIFT(RQ_SHIFT), .RQ_LO(RQ_LO),
                    .RQ_HI(RQ_HI)) mvau (
        .clk(clk), .rst_n(rst_n), .s_data(win_data), .s_valid(win_valid), .s_ready(win_ready),
        .m_data(m_data), .m_valid(m_valid), .m_ready(m_ready)
    );
endmodule
