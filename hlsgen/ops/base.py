"""The op registry. Each op kind keeps together: its shape rule, its NumPy golden and its
cost figures (MACs and parameter bytes now; cycles and resources join in the scheduler).

An op kind is registered with `@register` on a class with static methods:
    output_shapes(attrs, input_shapes) -> list of output shapes
    golden(task, graph, inputs) -> list of int64 arrays     (exact integer arithmetic)
    macs(task, graph) -> int                               (multiply-accumulates per inference)
    loops(task, graph) -> LoopNest                         (how the work folds onto hardware:
                                                            the scheduler's cost model reads it)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, List, Type

import numpy as np

OPS: Dict[str, Type["OpKind"]] = {}


@dataclass(frozen=True)
class LoopNest:
    """An op's loop nest as the cost model sees it (FINN-style folding, plus pixel unrolling):

        for v in range(vectors / vec):            # sequential outer loop (pixels x batch, rows)
          for p in range(ceil(pe_bound / pe)):    # output-parallel loop, `pe` lanes
            for s in range(ceil(simd_bound / simd)):   # reduction loop, `simd` lanes, II = 1
              vec x pe x simd operations in parallel

    so cycles = vectors/vec * (pe_bound/pe) * (simd_bound/simd) + pipeline depth, with `pe`,
    `simd` and `vec` dividing their bounds (`vec` divides `vec_bound`, e.g. the output row).
    """

    vectors: int                 # outer iterations
    pe_bound: int                # output-parallel bound (output channels / features)
    simd_bound: int = 1          # reduction bound (C/groups * KH * KW, in-features; 1 elementwise)
    vec_bound: int = 1           # how far the outer loop may be unrolled (output row width)
    multiply: bool = False       # each lane multiplies activation x weight (DSP)
    act_bits: int = 8
    weight_bits: int = 0
    acc_bits: int = 0            # accumulator width (adder-tree LUTs, requant DSP tiles)
    weights: int = 0             # constant elements read by the lanes
    requant_terms: int = 0       # fixed-point multipliers per output lane (requantization)
    blocks: int = 1              # output blocks a consumer can start on (dataflow overlap)
    lookahead: int = 1           # input blocks (rows) needed before the first output block
    window_bits: int = 0         # line buffer a streaming (dataflow) implementation needs
    full_buffer_bits: int = 0    # whole-tensor buffer when output order != input order
    drain_blocks: int = 0        # input blocks the work is spread over, when not `blocks` (a global
                                 # pool: one output, but it accumulates as each input row arrives)
    free: bool = False           # a pure re-interpretation (reshape): no hardware, no cycles
    parts: str = ""              # "inputs": copies its inputs into its output one after another (a
                                 # concat); "outputs": makes its outputs one after another (a split)
    group_passes: bool = False   # reduces one group of PE channels over all its input rows, then the
                                 # next (a global pool): only its first group follows its producer
    gather: float = 1.0          # share of its iterations a sequential core runs, which gathers only
                                 # the output elements (a slice of a tensor on chip; 1: all)
    elementwise: bool = False    # its requantization multipliers are per element (add, requant,
                                 # clip), not per window output: a time-shared core's separate pool
    pe_shares_input: bool = True  # output channels side by side read the same activation (not so
                                  # across the groups of a grouped or depthwise conv): packed int4
                                  # products may pair along PE (cost.packing)

    def with_window(self, window_bits: int) -> "LoopNest":
        return dataclasses.replace(self, window_bits=window_bits)


class OpKind:
    name: str = ""

    @staticmethod
    def output_shapes(attrs, input_shapes) -> List[tuple]:
        raise NotImplementedError

    @staticmethod
    def golden(task, graph, inputs: List[np.ndarray]) -> List[np.ndarray]:
        raise NotImplementedError

    @staticmethod
    def macs(task, graph) -> int:
        return 0

    @staticmethod
    def loops(task, graph) -> "LoopNest":
        raise NotImplementedError


def act_bits(graph, tensor_name: str) -> int:
    return graph.tensors[tensor_name].dtype.bits


def acc_bits(task) -> int:
    """Accumulator width: the requantizer's product width less its 31-bit multiplier."""
    rq = task.attrs.get("requant")
    return max(8, int(rq.product_bits) - 31) if rq is not None else 32


def reduction_acc_bits(act: int, weight: int, length: int, task=None) -> int:
    """Accumulator width of a reduction: the exact range of its sums where the frontend knows it
    (the requantizer's term_bits, from the real weights: what the RTL sizes its accumulators
    to), else the bound act + weight + log2(length)."""
    rq = task.attrs.get("requant") if task is not None else None
    if rq is not None and rq.term_bits:
        return int(rq.term_bits)
    return act + weight + max(1, int(length - 1).bit_length())


def channel_layout(shape) -> tuple:
    """(outer elements, channels) of an activation: NCHW keeps channels on axis 1, others last."""
    shape = tuple(shape)
    if len(shape) == 4:
        n, c, h, w = shape
        return n * h * w, c
    c = shape[-1] if shape else 1
    return max(1, int(np.prod(shape, dtype=np.int64)) // max(1, c)), c


def row_width(shape) -> int:
    return int(shape[3]) if len(shape) == 4 else 1


def elementwise_loops(task, graph, requant_terms=0) -> LoopNest:
    out = graph.tensors[task.outputs[0]]
    outer, c = channel_layout(out.shape)
    rows = out.shape[0] * out.shape[2] if len(out.shape) == 4 else outer
    return LoopNest(vectors=outer, pe_bound=c, vec_bound=row_width(out.shape),
                    act_bits=act_bits(graph, task.inputs[0]), acc_bits=acc_bits(task) if requant_terms else 0,
                    requant_terms=requant_terms, blocks=max(1, rows), elementwise=True)


def register(cls):
    if not cls.name:
        raise ValueError("op kind without a name")
    OPS[cls.name] = cls
    return cls


def zero_point(graph, tensor_name: str) -> int:
    q = graph.tensors[tensor_name].quant
    return int(q.zero_point) if q is not None else 0


def pad_amounts(pads, spatial: int):
    """ONNX pads [x1_begin, x2_begin, ..., x1_end, x2_end] -> [(begin, end), ...]."""
    pads = list(pads) if pads else [0] * (2 * spatial)
    return [(pads[i], pads[i + spatial]) for i in range(spatial)]


def window_out(size: int, kernel: int, stride: int, dilation: int, pad: tuple, ceil_mode: bool = False) -> int:
    span = size + pad[0] + pad[1] - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        # the last window must start inside the input or left padding (ONNX rule)
        if (out - 1) * stride >= size + pad[0]:
            out -= 1
        return out
    return span // stride + 1


def windows(a: np.ndarray, kernel, stride, dilation, out_hw):
    """Yield (kh, kw, view) for every kernel tap over the padded NCHW array `a`."""
    (kh_n, kw_n), (sh, sw), (dh, dw), (oh, ow) = kernel, stride, dilation, out_hw
    for kh in range(kh_n):
        for kw in range(kw_n):
            h0, w0 = kh * dh, kw * dw
            yield kh, kw, a[..., h0 : h0 + sh * (oh - 1) + 1 : sh, w0 : w0 + sw * (ow - 1) + 1 : sw]
