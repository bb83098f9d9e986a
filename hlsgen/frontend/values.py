"""What a float ONNX tensor is, seen from the integer world, while the frontend walks the graph.

Every ONNX tensor name maps to one of these:
  Const      a float or integer constant (initializers, Constant nodes, folded subgraphs)
  QConst     an integer constant on a quantization grid (quantized weights and biases)
  FloatIn    a graph input before its quantizer
  QVal       an IR integer tensor: the float tensor equals quant.dequantize(IR tensor) exactly
  Pending    a wide accumulator with a real-valued affine map and clamp still to apply; it
             becomes an IR task when a quantizer (or a graph output) consumes it
  QLinear    the integer result of QuantizeLinear (and Clip), before DequantizeLinear
  IntIn      an integer graph input (token ids, positions): indices, not quantized values
  Masked     a quantized tensor with some elements replaced by -inf (attention mask)
  Reduction  softmax / LayerNorm of one quantized tensor, waiting for its output quantizer
  Func       an elementwise float function of one quantized tensor (GELU in any form),
             waiting for its output quantizer: it becomes a table of 2^bits entries
  Expanded   a * real(QVal) + b with constants a, b that broadcast the tensor to a larger shape
             (DeformConv offsets computed from one integer scalar per pixel)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..ir import IntType, Quant


@dataclass
class Const:
    value: np.ndarray

    @property
    def shape(self):
        return tuple(self.value.shape)


@dataclass
class QConst:
    data: np.ndarray  # int64
    quant: Quant
    dtype: IntType

    @property
    def shape(self):
        return tuple(self.data.shape)

    def real(self) -> np.ndarray:
        return self.quant.dequantize(self.data)


@dataclass
class FloatIn:
    name: str
    shape: Tuple[int, ...]


@dataclass
class QVal:
    ir_name: str
    shape: Tuple[int, ...]


@dataclass
class Quantizer:
    """A quantizer from a Quant node or a QuantizeLinear[-Clip]-DequantizeLinear chain."""

    scale: np.ndarray  # 0-d or per channel
    zero_point: np.ndarray
    axis: Optional[int]
    lo: int  # integer clamp bounds (narrow range, Clip)
    hi: int
    dtype: IntType
    node: str  # ONNX node name, for messages
    rounding: str = "half_even"


@dataclass
class QLinear:
    """QuantizeLinear output: integers of `source` quantized by `quantizer` (Clip may narrow)."""

    source: object
    quantizer: Quantizer
    shape: Tuple[int, ...]


@dataclass
class Pending:
    """real = clamp(sum_i acc_i * term_scales[i] + bias, lo, hi), per channel along `axis`.

    `op`, `inputs`, `attrs` describe the IR task that computes the accumulators;
    `term_ranges` are the exact integer bounds of each accumulator.
    """

    op: str
    inputs: List[str]
    attrs: Dict
    term_scales: List[np.ndarray]
    term_ranges: List[Tuple[int, int]]
    bias: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    shape: Tuple[int, ...]
    axis: int
    channels: int
    source: List[str] = field(default_factory=list)

    def affine(self, a: np.ndarray, b: np.ndarray) -> "Pending":
        """Apply v -> a*v + b (a, b per channel or scalar) in place."""
        a = np.broadcast_to(np.asarray(a, dtype=np.float64), (self.channels,)).copy()
        b = np.broadcast_to(np.asarray(b, dtype=np.float64), (self.channels,)).copy()
        self.term_scales = [np.broadcast_to(s, (self.channels,)) * a for s in self.term_scales]
        self.bias = np.broadcast_to(self.bias, (self.channels,)) * a + b
        with np.errstate(invalid="ignore"):
            lo = np.where(a >= 0, self.lo * a + b, self.hi * a + b)
            hi = np.where(a >= 0, self.hi * a + b, self.lo * a + b)
        zero = a == 0
        lo[zero] = -np.inf
        hi[zero] = np.inf
        self.lo, self.hi = lo, hi
        return self

    def clamp(self, lo, hi) -> "Pending":
        self.lo = np.maximum(self.lo, lo)
        self.hi = np.minimum(self.hi, hi)
        return self


@dataclass
class Expanded:
    """real = a * real(src) + b, where a and b broadcast `src` to `shape` (e.g. (1, 18, 1, 1)
    coefficients turning a (N, 1, H, W) offset scalar into DeformConv's (N, 18, H, W) offsets)."""

    src: QVal
    a: np.ndarray
    b: np.ndarray
    shape: Tuple[int, ...]


@dataclass
class IntIn:
    name: str
    shape: Tuple[int, ...]


@dataclass
class Masked:
    src: QVal
    mask: np.ndarray          # bool, True = replaced by -inf (excluded)


@dataclass
class Reduction:
    kind: str                 # "softmax" | "layernorm"
    src: QVal
    shape: Tuple[int, ...]
    mask: Optional[np.ndarray] = None
    gamma: Optional[np.ndarray] = None
    beta: Optional[np.ndarray] = None
    eps: float = 0.0


@dataclass
class Func:
    src: QVal
    src_onnx: str             # the ONNX tensor holding the source's float value
    shape: Tuple[int, ...]


@dataclass
class LNStage:
    """A step of a decomposed LayerNorm over the last axis of `src`:
    mean -> centered (x - mean) -> square -> var -> var_eps -> std; then centered / std
    becomes a Reduction("layernorm")."""

    kind: str
    src: QVal
    eps: float = 0.0
