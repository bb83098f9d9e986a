// hlsgen: arithmetic shared by the RTL modules, bit-exact with hlsgen/numerics.py.
package hlsgen_pkg;
    localparam int RQ_W = 128;               // wider than any requantizer product hlsgen emits

    // The requantizer's tail: round_shift(p, sh) (ties to even, or floor), plus the zero point,
    // saturated to [lo, hi]. Callers sign-extend their operands to RQ_W bits.
    function automatic logic signed [RQ_W-1:0] requant_tail(
        input logic signed [RQ_W-1:0] p, input logic [6:0] sh, input logic half_even,
        input logic signed [RQ_W-1:0] zp, input logic signed [RQ_W-1:0] lo, input logic signed [RQ_W-1:0] hi);
        logic signed [RQ_W-1:0] fl, rem, half, q, one;
        logic up;
        one = 1;
        fl = p >>> sh;
        rem = p - (fl <<< sh);
        half = (sh == 7'd0) ? '0 : (one <<< (sh - 7'd1));
        up = half_even && (sh != 7'd0) && ((rem > half) || (rem == half && fl[0]));
        q = (up ? fl + one : fl) + zp;
        if (q < lo) q = lo;
        if (q > hi) q = hi;
        requant_tail = q;
    endfunction
endpackage
