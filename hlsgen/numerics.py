"""Integer arithmetic shared by every op: requantization and rounding (docs/numerics.md).

This module is the single source of truth for how a wide accumulator becomes a narrow
activation. The golden calls `apply_requant`; HLS and RTL backends print the numbers that
`make_requant` computes and implement `round_shift` bit for bit.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from .ir.requant import Requant
from .ir.types import IntType

MULT_BITS = 31  # |multiplier| < 2^31: fits a signed 32-bit operand
MAX_SHIFT = 96  # multipliers below 2^-66 are treated as 0 (no contribution within 1 LSB)


def _as_channel_array(x, channels: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.size == 1:
        return np.full(channels, float(x.reshape(-1)[0]) if x.size else 0.0)
    return x.reshape(channels)


def fixed_point(reals: Sequence[np.ndarray], channels: int) -> Tuple[List[np.ndarray], np.ndarray]:
    """Represent per-channel real multipliers M_i as m_i * 2^-shift with a shift shared by
    the terms of a channel, chosen so that the largest |m_i| lies in [2^30, 2^31)."""
    ms = [_as_channel_array(r, channels) for r in reals]
    biggest = np.max(np.abs(np.stack(ms)), axis=0)
    shift = np.zeros(channels, dtype=np.int64)
    nz = biggest > 0
    e = np.floor(np.log2(biggest[nz]))
    shift[nz] = (MULT_BITS - 1) - e.astype(np.int64)
    if np.any(shift < 0):
        raise ValueError("requantization multiplier >= 2^31: scales are inconsistent")
    shift = np.minimum(shift, MAX_SHIFT)
    mults = [np.rint(m * np.exp2(shift.astype(np.float64))).astype(np.int64) for m in ms]
    # Rounding can reach exactly 2^31: one bit less of precision for that channel.
    over = np.max(np.abs(np.stack(mults)), axis=0) >= (1 << MULT_BITS)
    if np.any(over):
        shift = np.where(over, shift - 1, shift)
        mults = [np.rint(m * np.exp2(shift.astype(np.float64))).astype(np.int64) for m in ms]
    return mults, shift


def quantize_real(value, scale, zero_point) -> np.ndarray:
    """round_half_even(value / scale) + zero_point, for constants (clamp bounds, inputs)."""
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.rint(np.asarray(value, dtype=np.float64) / scale)
    return q + zero_point


def _squeeze_channels(a: np.ndarray):
    a = np.asarray(a)
    flat = a.reshape(-1)
    return flat[:1].reshape(()) if flat.size == 1 or np.all(flat == flat[0]) else a


def make_requant(
    term_scales: Sequence,
    term_ranges: Sequence[Tuple[int, int]],
    bias_real,
    out_scale: float,
    out_zero_point: int,
    out_lo: int,
    out_hi: int,
    clamp_lo_real,
    clamp_hi_real,
    channels: int,
    channel_axis: int,
    rounding: str = "half_even",
) -> Requant:
    """Build the Requant that maps sum_i(acc_i * term_scales[i]) + bias_real, clamped to
    [clamp_lo_real, clamp_hi_real], onto the output grid real = out_scale * (q - zp).

    Clamping in the real domain becomes clamping of q because quantization is monotone:
    Q(clip(v, a, b)) = clip(Q(v), Q(a), Q(b)).
    """
    reals = [_as_channel_array(s, channels) / out_scale for s in term_scales]
    mults, shift = fixed_point(reals, channels)
    bias_lsb = _as_channel_array(bias_real, channels) / out_scale
    bias = np.rint(bias_lsb * np.exp2(shift.astype(np.float64)))
    if not np.all(np.isfinite(bias)):
        raise ValueError("bias does not fit the requantization")
    bias_obj = np.array([int(b) for b in bias], dtype=object)

    lo = np.full(channels, out_lo, dtype=np.int64)
    hi = np.full(channels, out_hi, dtype=np.int64)
    clo = _as_channel_array(clamp_lo_real, channels)
    chi = _as_channel_array(clamp_hi_real, channels)
    fin = np.isfinite(clo)
    lo[fin] = np.maximum(lo[fin], np.clip(quantize_real(clo[fin], out_scale, out_zero_point), out_lo, out_hi).astype(np.int64))
    fin = np.isfinite(chi)
    hi[fin] = np.minimum(hi[fin], np.clip(quantize_real(chi[fin], out_scale, out_zero_point), out_lo, out_hi).astype(np.int64))
    hi = np.maximum(hi, lo)

    # Width of the widest intermediate: sum_i |acc_i| * |m_i| + |bias| + rounding constant.
    bound = 0
    for (alo, ahi), m in zip(term_ranges, mults):
        bound_c = [max(abs(int(alo) * int(mc)), abs(int(ahi) * int(mc))) for mc in m]
        bound = bound + np.array(bound_c, dtype=object)
    bound = bound + np.array([abs(int(b)) for b in bias_obj], dtype=object)
    bound = bound + np.array([1 << int(s) for s in shift], dtype=object)
    product_bits = int(max(int(b) for b in bound)).bit_length() + 1

    # Python ints only where int64 could overflow (see apply_requant)
    bias_arr = bias_obj if product_bits > 63 else _squeeze_channels(bias_obj.astype(np.int64))
    return Requant(
        multipliers=[_squeeze_channels(m) for m in mults],
        shift=_squeeze_channels(shift),
        bias=bias_arr,
        zero_point=int(out_zero_point),
        lo=_squeeze_channels(lo),
        hi=_squeeze_channels(hi),
        out=IntType.for_range(out_lo, out_hi),
        channel_axis=channel_axis,
        rounding=rounding,
        product_bits=product_bits,
        term_bits=max(max(abs(int(alo)), abs(int(ahi))).bit_length() + 1 for alo, ahi in term_ranges),
    )


def round_shift(p: np.ndarray, shift, rounding: str) -> np.ndarray:
    """p * 2^-shift rounded to an integer: 'half_even' (ties to even) or 'floor'.

    Works on int64 and on object (Python int) arrays; `>>` is an arithmetic shift (floor).
    """
    p = np.asarray(p)
    shift = np.asarray(shift).astype(object if p.dtype == object else np.int64)
    floor = p >> shift
    if rounding == "floor":
        return floor
    if rounding != "half_even":
        raise ValueError(f"unknown rounding {rounding!r}")
    rem = p - (floor << shift)
    half = (np.ones_like(shift) << shift) >> 1
    positive = shift > 0
    up = positive & ((rem > half) | ((rem == half) & ((floor & 1) == 1)))
    return floor + up.astype(p.dtype if p.dtype != object else np.int64)


def _bcast(arr, ndim: int, axis: int):
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return arr
    shape = [1] * ndim
    shape[axis] = arr.size
    return arr.reshape(shape)


def apply_requant(terms: Sequence[np.ndarray], rq: Requant) -> np.ndarray:
    """The golden requantizer: exact integer arithmetic, int64 when it provably fits."""
    ndim = np.ndim(terms[0])
    wide = rq.product_bits > 63
    dtype = object if wide else np.int64
    p = None
    for t, m in zip(terms, rq.multipliers):
        t = np.asarray(t).astype(dtype)
        prod = t * _bcast(np.asarray(m).astype(dtype), ndim, rq.channel_axis)
        p = prod if p is None else p + prod
    p = p + _bcast(np.asarray(rq.bias).astype(dtype), ndim, rq.channel_axis)
    shift = _bcast(np.asarray(rq.shift).astype(dtype), ndim, rq.channel_axis)
    q = round_shift(p, shift, rq.rounding)
    q = q + rq.zero_point
    lo = _bcast(np.asarray(rq.lo).astype(dtype), ndim, rq.channel_axis)
    hi = _bcast(np.asarray(rq.hi).astype(dtype), ndim, rq.channel_axis)
    q = np.minimum(np.maximum(q, lo), hi)
    return q.astype(np.int64)


def accumulator_range(a: IntType | Tuple[int, int], w: IntType | Tuple[int, int], length: int) -> Tuple[int, int]:
    """Exact bounds of a dot product of `length` terms a*w from the operand ranges."""
    alo, ahi = (a.min, a.max) if isinstance(a, IntType) else a
    wlo, whi = (w.min, w.max) if isinstance(w, IntType) else w
    prods = [alo * wlo, alo * whi, ahi * wlo, ahi * whi]
    return length * min(prods), length * max(prods)


# A float type and the magnitude up to which it holds every integer exactly (2^ its significand's
# bits: 24 for float32, 53 for float64); int_matmul keeps its sums below it
EXACT_FLOAT = ((np.float32, 1 << 24), (np.float64, 1 << 53))


def _magnitude(x: np.ndarray) -> int:
    """The largest |value| of an integer array, as a Python int (no int64 overflow)."""
    return max(abs(int(x.max())), abs(int(x.min()))) if x.size else 0


def int_matmul(a, b) -> np.ndarray:
    """a @ b of integer arrays (np.matmul's broadcasting), exact: int64, or Python integers (an
    object array) where a sum may reach 2^63.

    NumPy multiplies int64 matrices with a plain loop, and converting a large weight matrix
    to int64 takes 8 bytes an element; a float GEMM (BLAS) is much faster. It is exact when
    every sum it forms is an integer the float holds: each partial sum of a dot product of
    length K is at most K x max|a| x max|b| in magnitude, so below 2^24 float32 computes it
    exactly, whatever the order and blocking of the additions, with or without fused
    multiply-adds (each result is an integer it represents, so nothing rounds). Otherwise
    float64 below 2^53, the int64 loop below 2^63, and Python integers above, where int64
    would wrap."""
    a, b = np.asarray(a), np.asarray(b)
    k = a.shape[-1]
    bound = k * _magnitude(a) * _magnitude(b)
    for ftype, exact in EXACT_FLOAT:
        if bound < exact:
            return np.matmul(a.astype(ftype), b.astype(ftype)).astype(np.int64)
    if bound < 1 << 63:
        return np.matmul(a.astype(np.int64), b.astype(np.int64))
    return np.matmul(a.astype(object), b.astype(object))
