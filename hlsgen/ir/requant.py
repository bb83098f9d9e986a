"""Requantization parameters: the fixed-point form of a real multiplier (docs/numerics.md)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np

from .types import IntType


@dataclass
class Requant:
    """q_out = clamp(round_shift(sum_i(acc_i * multipliers[i]) + bias, shift) + zero_point, lo, hi)

    multipliers: one int64 array per accumulator term (0-d or per channel along channel_axis),
                 each |m| < 2^31.
    shift:       right shift, int64 array (0-d or per channel), >= 0.
    bias:        int64 array at the scale 2^-shift output LSB (0-d or per channel).
    rounding:    "half_even" (ties to even, as ONNX QuantizeLinear / QONNX Quant ROUND) or
                 "floor".
    lo, hi:      clamp bounds (python ints, or int64 arrays per channel).
    out:         the output integer type.
    product_bits: signed width that holds every intermediate sum, from operand ranges.
    term_bits:   signed width that holds every accumulator term (0: unknown).
    """

    multipliers: List[np.ndarray]
    shift: np.ndarray
    bias: np.ndarray
    zero_point: int
    lo: np.ndarray
    hi: np.ndarray
    out: IntType
    channel_axis: int
    rounding: str = "half_even"
    product_bits: int = 64
    term_bits: int = 0

    def summary(self) -> str:
        per = "per-channel" if np.ndim(self.shift) else "per-tensor"
        return f"x M0/2^n ({per}, {len(self.multipliers)} term{'s' if len(self.multipliers) > 1 else ''}) -> {self.out}"
