// hlsgen: the integer requantizer, bit-exact with hlsgen/numerics.py (docs/numerics.md):
//
//   q = clamp(round_shift(acc * mult + bias, shift) + zp, lo, hi)
//
// round_shift(p, n) = p * 2^-n rounded half to even (HALF_EVEN = 1) or floor (HALF_EVEN = 0).
// PW is the signed product width (the Requant's product_bits plus headroom), chosen by Python.
// A two-stage pipeline on a valid/ready stream: stage 1 multiplies and adds the bias, stage 2
// rounds, adds the zero point and saturates. The per-channel constants travel with the
// accumulator (the engine reads them from its tables at the same time).
module hlsgen_requant #(
    parameter int ACC_W = 24,
    parameter int MULT_W = 32,
    parameter int PW = 64,
    parameter int OUT_W = 8,
    parameter bit HALF_EVEN = 1
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic signed [ACC_W-1:0]  s_acc,
    input  logic signed [MULT_W-1:0] s_mult,
    input  logic signed [PW-1:0]     s_bias,
    input  logic [6:0]               s_shift,
    input  logic signed [OUT_W:0]    s_zp,
    input  logic signed [OUT_W:0]    s_lo,
    input  logic signed [OUT_W:0]    s_hi,
    input  logic                     s_valid,
    output logic                     s_ready,
    output logic signed [OUT_W:0]    m_q,       // one bit wider: holds signed and unsigned OUT_W-bit types
    output logic                     m_valid,
    input  logic                     m_ready
);
    // stage 1: p = acc * mult + bias
    logic signed [PW-1:0] p1;
    logic [6:0] sh1;
    logic signed [OUT_W:0] zp1, lo1, hi1;
    logic v1;
    // stage 2 output
    logic signed [OUT_W:0] q2;
    logic v2;

    logic en2, en1;
    assign en2 = !v2 || m_ready;
    assign en1 = !v1 || en2;
    assign s_ready = en1;
    assign m_q = q2;
    assign m_valid = v2;

    always_ff @(posedge clk) begin
        if (!rst_n) v1 <= 1'b0;
        else if (en1) v1 <= s_valid;
        if (en1 && s_valid) begin
            p1  <= PW'(s_acc) * PW'(s_mult) + s_bias;
            sh1 <= s_shift;
            zp1 <= s_zp;
            lo1 <= s_lo;
            hi1 <= s_hi;
        end
    end

    // stage 2: round_shift, zero point, saturation (hlsgen_rq_tail) into the register
    localparam int RW = 128;                 // wider than any requantizer product hlsgen emits
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the saturated value fits OUT_W + 1 bits
    logic signed [RW-1:0] tail;
    /* verilator lint_on UNUSEDSIGNAL */
    hlsgen_rq_tail #(.W(RW)) rq (.p(RW'(p1)), .sh(sh1), .half_even(HALF_EVEN), .zp(RW'(zp1)), .lo(RW'(lo1)),
                                 .hi(RW'(hi1)), .q(tail));

    always_ff @(posedge clk) begin
        if (!rst_n) v2 <= 1'b0;
        else if (en2) v2 <= v1;
        if (en2 && v1) q2 <= (OUT_W + 1)'(tail);
    end
endmodule
