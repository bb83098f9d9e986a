"""The op registry. Each op kind keeps together: its shape rule, its NumPy golden and its
cost figures (MACs and parameter bytes now; cycles and resources join in the scheduler).

An op kind is registered with `@register` on a class with static methods:
    output_shapes(attrs, input_shapes) -> list of output shapes
    golden(task, graph, inputs) -> list of int64 arrays     (exact integer arithmetic)
    macs(task, graph) -> int                               (multiply-accumulates per inference)
"""
from __future__ import annotations

from typing import Dict, List, Type

import numpy as np

OPS: Dict[str, Type["OpKind"]] = {}


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
