// hlsgen: per-channel requantization of NP accumulators at once, from the channel tables hlsgen
// writes ($readmemh: RQ_MULT, RQ_BIAS, RQ_SHIFT, RQ_LO, RQ_HI, N words each):
// q = clamp(round((acc x mult[ch] + bias[ch]) >> shift[ch]) + ZP_OUT, lo[ch], hi[ch]), the
// arithmetic of hlsgen_rq_tail (hlsgen_requant's). Combinational; shared by
// hlsgen_linear and hlsgen_window_reduce. Ports are packed (accumulator p at bits
// [p*ACC_W +: ACC_W], and so on) and the product is ACC_W x 32 bits, so that Yosys reads the
// module and maps the multiply at its real width.
module hlsgen_rq_rom #(
    parameter int N = 1,                     // channels (table rows)
    parameter int NP = 1,                    // accumulators requantized at once
    parameter int ACC_W = 24,
    parameter int PW = 64,
    parameter int OUT_W = 8,
    parameter int ZP_OUT = 0,
    parameter bit HALF_EVEN = 1,
    parameter RQ_MULT = "rq_mult.mem",
    parameter RQ_BIAS = "rq_bias.mem",
    parameter RQ_SHIFT = "rq_shift.mem",
    parameter RQ_LO = "rq_lo.mem",
    parameter RQ_HI = "rq_hi.mem"
) (
    input  logic [NP*ACC_W-1:0] acc,
    input  logic [NP*32-1:0]    ch,
    output logic [NP*OUT_W-1:0] q
);
    logic signed [31:0] rq_mult[N];
    logic signed [PW-1:0] rq_bias[N];
    logic [6:0] rq_shift[N];
    logic signed [OUT_W:0] rq_lo[N], rq_hi[N];
    initial begin
        $readmemh(RQ_MULT, rq_mult);
        $readmemh(RQ_BIAS, rq_bias);
        $readmemh(RQ_SHIFT, rq_shift);
        $readmemh(RQ_LO, rq_lo);
        $readmemh(RQ_HI, rq_hi);
    end
    localparam int RW = (ACC_W + 32 > PW ? ACC_W + 32 : PW) + 2;   // the product plus the bias
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the saturated value fits OUT_W bits
    genvar p;
    generate
        for (p = 0; p < NP; p = p + 1) begin : g_lane
            logic signed [ACC_W-1:0] a;
            logic [31:0] c;
            logic signed [ACC_W+31:0] prod;
            logic signed [RW-1:0] v;
            assign a = acc[p * ACC_W +: ACC_W];
            assign c = ch[p * 32 +: 32];
            assign prod = a * rq_mult[c];
            hlsgen_rq_tail #(.W(RW)) rq (.p(RW'(prod) + RW'(rq_bias[c])), .sh(rq_shift[c]), .half_even(HALF_EVEN),
                                         .zp(RW'(ZP_OUT)), .lo(RW'(rq_lo[c])), .hi(RW'(rq_hi[c])), .q(v));
            assign q[p * OUT_W +: OUT_W] = v[OUT_W-1:0];
        end
    endgenerate
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
