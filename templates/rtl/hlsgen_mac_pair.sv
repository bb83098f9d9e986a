// hlsgen: two products w0*a and w1*a of a signed activation and two signed narrow weights in
// ONE multiplier, the int4 x int8 packing the cost model counts as 2 MACs per DSP48E2:
//
//   (w1 * 2^S + w0) * a = w1*a * 2^S + w0*a
//
// The low field is w0*a, recovered by sign-extending the low S bits; the high field is the
// rest shifted down (the low field's sign borrows one from it, which the subtraction undoes).
// Exact whenever |w0*a| < 2^(S-1): with A_W = 8, W_W = 4, S = 18 that is 1024 < 131072.
// The packed operand needs W_W + S + 1 = 23 bits (w1 * 2^S + w0 reaches -2^(W_W+S-1) - 2^(W_W-1),
// the case w0 = w1 = -8 that the exhaustive test caught) and the activation 8: one 27 x 18 DSP48E2.
// One register stage after the multiply (the DSP's M register), valid travels alongside.
module hlsgen_mac_pair #(
    parameter int A_W = 8,
    parameter int W_W = 4,
    parameter int S = 18
) (
    input  logic                      clk,
    input  logic                      rst_n,
    input  logic                      in_valid,
    input  logic signed [A_W-1:0]     a,
    input  logic signed [W_W-1:0]     w0,
    input  logic signed [W_W-1:0]     w1,
    output logic                      out_valid,
    output logic signed [A_W+W_W-1:0] p0,
    output logic signed [A_W+W_W-1:0] p1
);
    localparam int PK_W = W_W + S + 1;       // packed weight operand
    localparam int PR_W = PK_W + A_W;        // product

    logic signed [PK_W-1:0] packed_w;
    logic signed [PR_W-1:0] prod;
    logic signed [S-1:0] low;
    // waiver: high_part's bits above A_W + W_W are copies of p1's sign bit (|w1*a| < 2^(A_W+W_W-1))
    /* verilator lint_off UNUSEDSIGNAL */
    logic signed [PR_W-1:0] high_part;
    /* verilator lint_on UNUSEDSIGNAL */

    assign packed_w = (PK_W'(w1) <<< S) + PK_W'(w0);

    always_ff @(posedge clk) begin
        if (!rst_n) out_valid <= 1'b0;
        else out_valid <= in_valid;
        prod <= PR_W'(packed_w) * PR_W'(a);
    end

    assign low = prod[S-1:0];
    assign high_part = (prod - PR_W'(low)) >>> S;
    assign p0 = (A_W + W_W)'(low);
    assign p1 = (A_W + W_W)'(high_part);
endmodule
