// hlsgen: integer requantization, bit-exact with hlsgen/numerics.py (docs/numerics.md, section 4).
//
//   q = clamp(round_shift(sum_i acc_i * M_i + B, n) + z, lo, hi)
//
// round_shift(p, n): p * 2^-n rounded to an integer, ties to even (ONNX / QONNX rounding) or
// floor. `PB` is the signed width that holds every intermediate sum (Requant.product_bits,
// computed in Python from the operand ranges); the template never widens or narrows silently.
#ifndef HLSGEN_REQUANT_H
#define HLSGEN_REQUANT_H

// Xilinx's ap_types headers are compiled as system headers (-isystem); GCC still reports some
// middle-end warnings (-Wuninitialized in ap_private.h's wide-integer code) at their own
// location, so they are silenced for that header only. Our code keeps -Wall -Wextra -Werror.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <ap_int.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Constant tables (weights, constants): the exact ap_int type in synthesis; a plain C integer
// type holding the same values in C simulation, because g++ needs gigabytes of memory to build
// large initializer lists of ap_int objects. Every read converts to the exact type.
#ifdef __SYNTHESIS__
#define HLSGEN_ROM(EXACT, PLAIN) EXACT
#else
#define HLSGEN_ROM(EXACT, PLAIN) PLAIN
#endif

namespace hlsgen {

enum Rounding { HALF_EVEN = 0, FLOOR = 1 };

// p * 2^-shift rounded; shift >= 0. Arithmetic shift right is floor for negative p.
template <int PB>
ap_int<PB> round_shift(ap_int<PB> p, int shift, Rounding rounding) {
#pragma HLS INLINE
    ap_int<PB> floor_q = p >> shift;
    if (rounding == FLOOR || shift == 0) return floor_q;
    ap_int<PB> rem = p - (floor_q << shift);           // 0 <= rem < 2^shift
    ap_int<PB> half = ap_int<PB>(1) << (shift - 1);
    bool up = (rem > half) || (rem == half && floor_q[0] == 1);
    return up ? ap_int<PB>(floor_q + 1) : floor_q;
}

// Saturate a wide value into [lo, hi] and return it as the output type.
template <typename OUT, int PB>
OUT clamp_to(ap_int<PB> v, long long lo, long long hi) {
#pragma HLS INLINE
    if (v < ap_int<PB>(lo)) return OUT(lo);
    if (v > ap_int<PB>(hi)) return OUT(hi);
    return OUT(v);
}

}  // namespace hlsgen

#endif
