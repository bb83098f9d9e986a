// hlsgen: the requantizer's tail, bit-exact with hlsgen/numerics.py: round_shift(p, sh) (ties to
// even, or floor), plus the zero point, saturated to [lo, hi], at W bits (each user sizes W to
// its widest product plus bias, so that synthesis builds no wider shifters). Combinational;
// shared by hlsgen_requant, hlsgen_rq_rom and hlsgen_core_dp.
module hlsgen_rq_tail #(
    parameter int W = 64
) (
    input  logic signed [W-1:0] p,
    input  logic [6:0]          sh,
    input  logic                half_even,
    input  logic signed [W-1:0] zp,
    input  logic signed [W-1:0] lo,
    input  logic signed [W-1:0] hi,
    output logic signed [W-1:0] q
);
    logic signed [W-1:0] fl, rem, half, r, one;
    logic up;
    assign one = 1;
    assign fl = p >>> sh;
    assign rem = p - (fl <<< sh);
    assign half = (sh == 7'd0) ? '0 : (one <<< (sh - 7'd1));
    assign up = half_even && (sh != 7'd0) && ((rem > half) || (rem == half && fl[0]));
    assign r = (up ? fl + one : fl) + zp;
    assign q = (r < lo) ? lo : ((r > hi) ? hi : r);
endmodule
