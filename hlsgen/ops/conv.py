"""conv: 2-D convolution (any kernel, stride, padding, dilation, groups incl. depthwise)
with a fused requantization. Inputs: [x, weight]; weight is a constant (O, C/groups, KH, KW).

acc[n,o,y,x] = sum_{c,kh,kw} w[o,c,kh,kw] * (x[n,g*Cg+c, y*s+kh*d-pad, ...] - zx)
Padding contributes x = zx, i.e. a real zero.
"""
from __future__ import annotations

import numpy as np

from ..numerics import apply_requant
from .base import LoopNest, OpKind, act_bits, pad_amounts, reduction_acc_bits, register, window_out, windows, zero_point


@register
class Conv(OpKind):
    name = "conv"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        (n, c, h, w), (o, cg, kh, kw) = input_shapes[0], input_shapes[1]
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        oh = window_out(h, kh, attrs["strides"][0], attrs["dilations"][0], ph)
        ow = window_out(w, kw, attrs["strides"][1], attrs["dilations"][1], pw)
        return [(n, o, oh, ow)]

    @staticmethod
    def accumulate(task, graph, x: np.ndarray) -> np.ndarray:
        attrs = task.attrs
        w = graph.tensors[task.inputs[1]].data.astype(np.int64)
        groups = attrs["groups"]
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        a = x.astype(np.int64) - zero_point(graph, task.inputs[0])
        a = np.pad(a, ((0, 0), (0, 0), ph, pw))
        n, c = a.shape[:2]
        o, cg, kh, kw = w.shape
        out_shape = graph.tensors[task.outputs[0]].shape
        oh, ow = out_shape[2], out_shape[3]
        a = a.reshape(n, groups, cg, a.shape[2], a.shape[3])
        wg = w.reshape(groups, o // groups, cg, kh, kw)
        acc = np.zeros((n, groups, o // groups, oh, ow), dtype=np.int64)
        for i, j, view in windows(a, (kh, kw), attrs["strides"], attrs["dilations"], (oh, ow)):
            acc += np.einsum("ngchw,goc->ngohw", view, wg[:, :, :, i, j])
        return acc.reshape(n, o, oh, ow)

    @staticmethod
    def golden(task, graph, inputs):
        acc = Conv.accumulate(task, graph, inputs[0])
        return [apply_requant([acc], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        out = graph.tensors[task.outputs[0]].shape
        _, cg, kh, kw = graph.tensors[task.inputs[1]].shape
        return int(np.prod(out)) * cg * kh * kw

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        w = graph.tensors[task.inputs[1]]
        n, o, oh, ow = graph.tensors[task.outputs[0]].shape
        _, cg, kh, kw = w.shape
        ab, wb = act_bits(graph, task.inputs[0]), w.dtype.bits
        (ph, pw) = pad_amounts(task.attrs["pads"], 2)
        dil_h = task.attrs["dilations"][0]
        # a streaming conv keeps (KH-1)*dilation+1 input rows of the padded input
        rows = (kh - 1) * dil_h + 1
        window = rows * (x.shape[3] + pw[0] + pw[1]) * x.shape[1] * ab
        return LoopNest(vectors=n * oh * ow, pe_bound=o, simd_bound=cg * kh * kw, vec_bound=ow, multiply=True,
                        act_bits=ab, weight_bits=wb, acc_bits=reduction_acc_bits(ab, wb, cg * kh * kw),
                        weights=w.size, requant_terms=1, blocks=n * oh, lookahead=rows, window_bits=window)
