"""Integer types and quantization parameters: plain data, no ONNX, no I/O."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import HlsgenError


@dataclass(frozen=True)
class IntType:
    """A two's-complement (signed) or plain binary (unsigned) integer of `bits` bits."""

    bits: int
    signed: bool

    def __post_init__(self):
        if self.bits < 1:
            raise ValueError(f"IntType needs at least one bit, got {self.bits}")

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def signed_bits(self) -> int:
        """The bits its values take as two's-complement words: one more where unsigned."""
        return self.bits + (not self.signed)

    @property
    def name(self) -> str:
        return f"{'int' if self.signed else 'uint'}{self.bits}"

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def for_range(lo: int, hi: int) -> "IntType":
        """The narrowest type holding every integer in [lo, hi]."""
        lo, hi = int(lo), int(hi)
        if lo > hi:
            raise ValueError(f"empty range [{lo}, {hi}]")
        if lo >= 0:
            return IntType(max(1, hi.bit_length()), False)
        # signed: need -(2^(b-1)) <= lo and hi <= 2^(b-1)-1
        bits = max((-lo - 1).bit_length(), max(hi, 0).bit_length()) + 1
        return IntType(bits, True)


@dataclass
class Quant:
    """real = scale * (q - zero_point).

    `scale` and `zero_point` are 0-d arrays (per tensor) or 1-d arrays along `axis`
    (per channel). Scales are float64 and strictly positive.
    """

    scale: np.ndarray
    zero_point: np.ndarray
    axis: Optional[int] = None

    def __post_init__(self):
        self.scale = np.asarray(self.scale, dtype=np.float64)
        self.zero_point = np.asarray(self.zero_point, dtype=np.int64)
        if self.scale.ndim == 0 and self.axis is not None:
            self.axis = None

    @property
    def per_channel(self) -> bool:
        return self.scale.ndim == 1 and self.scale.size > 1

    @property
    def kind(self) -> str:
        return "per-channel" if self.per_channel else "per-tensor"

    def broadcast(self, arr: np.ndarray, ndim: int) -> np.ndarray:
        """Reshape a per-channel array so it broadcasts against a tensor of rank ndim."""
        arr = np.asarray(arr)
        if arr.ndim == 0 or self.axis is None:
            return arr.reshape(()) if arr.size == 1 else arr
        shape = [1] * ndim
        shape[self.axis] = arr.size
        return arr.reshape(shape)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        """Integer -> real (float64). For reports and comparisons only, never on the data path."""
        q = np.asarray(q)
        return self.broadcast(self.scale, q.ndim) * (q.astype(np.float64) - self.broadcast(self.zero_point, q.ndim))

    def same_as(self, other: "Quant") -> bool:
        return (
            self.scale.shape == other.scale.shape
            and np.array_equal(self.scale, other.scale)
            and np.array_equal(self.zero_point, other.zero_point)
            and self.axis == other.axis
        )


def container_bits(bits: int) -> int:
    """The byte-aligned width a tensor travels in: AXI-Stream TDATA (port_bits // this elements
    per beat), off-chip words, data files."""
    for cw in (8, 16, 32, 64):
        if bits <= cw:
            return cw
    raise HlsgenError(f"a {bits}-bit tensor is wider than 64 bits; hlsgen's memory layout stops at 64")
