// hlsgen: per-channel requantization of NP accumulators at once, from the channel tables hlsgen
// writes ($readmemh: RQ_MULT, RQ_BIAS, RQ_SHIFT, RQ_LO, RQ_HI, N words each):
// q = clamp(round((acc x mult[ch] + bias[ch]) >> shift[ch]) + ZP_OUT, lo[ch], hi[ch]), the
// arithmetic of hlsgen_pkg::requant_tail (hlsgen_requant's). Combinational; shared by
// hlsgen_linear and hlsgen_window_reduce.
module hlsgen_rq_rom #(
    parameter int N = 1,                     // channels (table rows)
    parameter int NP = 1,                    // accumulators requantized at once
    parameter int ACC_W = 24,
    parameter int PW = 64,
    parameter int OUT_W = 8,
    parameter int ZP_OUT = 0,
    parameter bit HALF_EVEN = 1,
    parameter string RQ_MULT = "rq_mult.mem",
    parameter string RQ_BIAS = "rq_bias.mem",
    parameter string RQ_SHIFT = "rq_shift.mem",
    parameter string RQ_LO = "rq_lo.mem",
    parameter string RQ_HI = "rq_hi.mem"
) (
    input  logic signed [ACC_W-1:0] acc[NP],
    input  int                      ch[NP],
    output logic [OUT_W-1:0]        q[NP]
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
    localparam int RW = hlsgen_pkg::RQ_W;
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: the saturated value fits OUT_W bits
    always_comb begin
        for (int p = 0; p < NP; p++) begin
            automatic logic signed [RW-1:0] v;
            v = hlsgen_pkg::requant_tail(RW'(acc[p]) * RW'(rq_mult[ch[p]]) + RW'(rq_bias[ch[p]]), rq_shift[ch[p]],
                                         HALF_EVEN, RW'(ZP_OUT), RW'(rq_lo[ch[p]]), RW'(rq_hi[ch[p]]));
            q[p] = OUT_W'(v);
        end
    end
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
