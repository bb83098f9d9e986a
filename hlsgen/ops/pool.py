"""Pooling.

maxpool: max over windows; padding never wins (padded with the type's minimum). The output
         keeps the input's quantization (max commutes with a monotone dequantization).
avgpool: window sum of (x - z) then requantization by s_in / (window size * s_out). Covers
         AveragePool (count_include_pad=1 or no padding), GlobalAveragePool and ReduceMean
         over spatial axes (attrs["global"] = True).
"""
from __future__ import annotations

import numpy as np

from ..numerics import apply_requant
from .base import LoopNest, OpKind, acc_bits, act_bits, pad_amounts, register, window_out, windows, zero_point


def _window_shape(attrs, shape):
    n, c, h, w = shape
    if attrs.get("global"):
        return [(n, c, 1, 1)]
    (ph, pw) = pad_amounts(attrs["pads"], 2)
    k, s, d = attrs["kernel"], attrs["strides"], attrs.get("dilations", (1, 1))
    ceil = attrs.get("ceil_mode", False)
    return [(n, c, window_out(h, k[0], s[0], d[0], ph, ceil), window_out(w, k[1], s[1], d[1], pw, ceil))]


def _window_loops(task, graph, requant_terms: int) -> LoopNest:
    """Sliding-window reduction: channels in parallel (pe), window taps (simd)."""
    x = graph.tensors[task.inputs[0]]
    n, c, oh, ow = graph.tensors[task.outputs[0]].shape
    ab = act_bits(graph, task.inputs[0])
    if task.attrs.get("global"):
        # accumulate every input pixel, one output at the very end
        return LoopNest(vectors=n * x.shape[2] * x.shape[3], pe_bound=c, vec_bound=x.shape[3], act_bits=ab,
                        acc_bits=acc_bits(task), requant_terms=requant_terms, blocks=1, window_bits=c * acc_bits(task),
                        drain_blocks=n * x.shape[2], group_passes=True)
    k = task.attrs["kernel"]
    (ph, pw) = pad_amounts(task.attrs["pads"], 2)
    rows = (k[0] - 1) * task.attrs.get("dilations", (1, 1))[0] + 1
    return LoopNest(vectors=n * oh * ow, pe_bound=c, simd_bound=k[0] * k[1], vec_bound=ow, act_bits=ab,
                    acc_bits=acc_bits(task) if requant_terms else 0, requant_terms=requant_terms, blocks=n * oh, lookahead=max(1, rows - ph[0]),
                    window_bits=rows * (x.shape[3] + pw[0] + pw[1]) * c * ab)


def _pad_for_windows(a, attrs, out_hw, fill):
    (ph, pw) = pad_amounts(attrs["pads"], 2)
    k, s, d = attrs["kernel"], attrs["strides"], attrs.get("dilations", (1, 1))
    # ceil_mode may need extra right/bottom padding so the last window exists
    need_h = (out_hw[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (out_hw[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1
    eh = max(0, need_h - (a.shape[2] + ph[0] + ph[1]))
    ew = max(0, need_w - (a.shape[3] + pw[0] + pw[1]))
    return np.pad(a, ((0, 0), (0, 0), (ph[0], ph[1] + eh), (pw[0], pw[1] + ew)), constant_values=fill)


@register
class MaxPool(OpKind):
    name = "maxpool"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return _window_shape(attrs, input_shapes[0])

    @staticmethod
    def golden(task, graph, inputs):
        out_hw = graph.tensors[task.outputs[0]].shape[2:]
        fill = graph.tensors[task.inputs[0]].dtype.min
        a = _pad_for_windows(inputs[0].astype(np.int64), task.attrs, out_hw, fill)
        out = None
        for _, _, view in windows(a, task.attrs["kernel"], task.attrs["strides"], task.attrs.get("dilations", (1, 1)), out_hw):
            out = view.copy() if out is None else np.maximum(out, view)
        return [out]

    @staticmethod
    def loops(task, graph):
        return _window_loops(task, graph, requant_terms=0)


@register
class AvgPool(OpKind):
    name = "avgpool"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return _window_shape(attrs, input_shapes[0])

    @staticmethod
    def window_sum(task, graph, x):
        a = x.astype(np.int64) - zero_point(graph, task.inputs[0])
        if task.attrs.get("global"):
            return a.sum(axis=(2, 3), keepdims=True)
        out_hw = graph.tensors[task.outputs[0]].shape[2:]
        a = _pad_for_windows(a, task.attrs, out_hw, 0)
        acc = np.zeros(a.shape[:2] + tuple(out_hw), dtype=np.int64)
        for _, _, view in windows(a, task.attrs["kernel"], task.attrs["strides"], (1, 1), out_hw):
            acc += view
        return acc

    @staticmethod
    def golden(task, graph, inputs):
        return [apply_requant([AvgPool.window_sum(task, graph, inputs[0])], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        return 0

    @staticmethod
    def loops(task, graph):
        return _window_loops(task, graph, requant_terms=1)
