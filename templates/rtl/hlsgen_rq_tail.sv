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
    // p = fl x 2^sh + rem, rem being p's low sh bits (0 <= rem < 2^sh): rem is above half
    // (2^(sh - 1)) where its top bit, p[sh - 1], is set and any bit below it is (sticky), and is
    // half where only that bit is. So the rounding reads two bits of p, not a second shift, a
    // subtraction and a comparison at W bits (stop 46: 556 LUT at W = 54 where those took 722;
    // tests/test_rtl_modules.py proves the two forms one circuit for every shift below W - 1,
    // the shifts the users' W is sized for)
    logic signed [W-1:0] fl, r, one;
    logic [W-1:0] at, below;                 // p[sh - 1] (none when sh = 0), and the bits under it
    logic top, sticky, up;
    assign one = 1;
    assign fl = p >>> sh;
    always_comb for (int i = 0; i < W; i++) begin   // (at 32 bits: W may exceed the shift's range)
        at[i] = i + 1 == int'(sh);
        below[i] = i + 1 < int'(sh);
    end
    assign top = |(p & at);
    assign sticky = |(p & below);
    assign up = half_even && top && (sticky || fl[0]);
    assign r = (up ? fl + one : fl) + zp;
    assign q = (r < lo) ? lo : ((r > hi) ? hi : r);
endmodule
