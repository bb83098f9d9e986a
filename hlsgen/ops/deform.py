"""deform_conv: deformable 2-D convolution with integer per-pixel offsets (CoDeNet's form),
fused requantization. Inputs: [x, weight, s]; s is an integer activation (N, 1, OH, OW).

Tap t = (i, j) of output pixel (y, x) reads input position
    (y*stride - pad_top  + i*dilation + dh_t,  x*stride - pad_left + j*dilation + dw_t)
with dh_t = alpha[2t] * (s[y, x] - zs) + beta[2t] and dw_t = alpha[2t+1] * (s - zs) + beta[2t+1]
(alpha, beta integers). This is ONNX DeformConv (opset 19) whose offset input is an integer
affine function of one integer tensor: bilinear sampling at integer positions reads exactly
one pixel, so no interpolation is needed. Positions outside the input read a real zero.

CoDeNet: s = clamp(round(1x1 conv), lo, hi), alpha = (i-1, j-1), beta = -alpha, i.e. the taps
sit at p + k*s (a per-pixel dilation s).
"""
from __future__ import annotations

import numpy as np

from ..numerics import apply_requant
from .base import LoopNest, OpKind, act_bits, pad_amounts, reduction_acc_bits, register, window_out, zero_point


def _offset_range(task, graph):
    """Largest |offset| of any tap over the integer range of s."""
    st = graph.tensors[task.inputs[2]]
    zs = zero_point(graph, task.inputs[2])
    lo, hi = st.dtype.min - zs, st.dtype.max - zs
    a = np.asarray(task.attrs["alpha"], dtype=np.int64)
    b = np.asarray(task.attrs["beta"], dtype=np.int64)
    return int(np.max(np.maximum(np.abs(a * lo + b), np.abs(a * hi + b))))


@register
class DeformConv(OpKind):
    name = "deform_conv"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        (n, c, h, w), (o, cg, kh, kw) = input_shapes[0], input_shapes[1]
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        oh = window_out(h, kh, attrs["strides"][0], attrs["dilations"][0], ph)
        ow = window_out(w, kw, attrs["strides"][1], attrs["dilations"][1], pw)
        return [(n, o, oh, ow)]

    @staticmethod
    def accumulate(task, graph, x, s):
        attrs = task.attrs
        w = graph.tensors[task.inputs[1]].data.astype(np.int64)
        a = x.astype(np.int64) - zero_point(graph, task.inputs[0])
        sv = s.astype(np.int64) - zero_point(graph, task.inputs[2])          # (n, 1, oh, ow)
        n, c, h, wd = a.shape
        o, cg, kh, kw = w.shape
        groups = attrs["groups"]
        _, _, oh, ow = graph.tensors[task.outputs[0]].shape
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
        alpha, beta = attrs["alpha"], attrs["beta"]
        base_y = (np.arange(oh) * sh - ph[0]).reshape(1, oh, 1)
        base_x = (np.arange(ow) * sw - pw[0]).reshape(1, 1, ow)
        nidx = np.arange(n).reshape(n, 1, 1)
        wg = w.reshape(groups, o // groups, cg, kh, kw)
        acc = np.zeros((n, groups, o // groups, oh, ow), dtype=np.int64)
        for i in range(kh):
            for j in range(kw):
                t = i * kw + j
                py = base_y + i * dh + alpha[2 * t] * sv[:, 0] + beta[2 * t]
                px = base_x + j * dw + alpha[2 * t + 1] * sv[:, 0] + beta[2 * t + 1]
                inside = (py >= 0) & (py < h) & (px >= 0) & (px < wd)
                v = a[nidx, :, np.clip(py, 0, h - 1), np.clip(px, 0, wd - 1)]     # (n, oh, ow, c)
                v = np.where(inside[..., None], v, 0)
                v = np.moveaxis(v, -1, 1).reshape(n, groups, cg, oh, ow)
                acc += np.einsum("ngchw,goc->ngohw", v, wg[:, :, :, i, j])
        return acc.reshape(n, o, oh, ow)

    @staticmethod
    def golden(task, graph, inputs):
        acc = DeformConv.accumulate(task, graph, inputs[0], inputs[2])
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
        # a streaming implementation buffers every row a tap may reach: the kernel's rows plus
        # the largest offset above and below
        reach = _offset_range(task, graph)
        rows = min(x.shape[2], (kh - 1) * task.attrs["dilations"][0] + 1 + 2 * reach)
        (ph, pw) = pad_amounts(task.attrs["pads"], 2)
        window = rows * (x.shape[3] + pw[0] + pw[1]) * x.shape[1] * ab
        return LoopNest(vectors=n * oh * ow, pe_bound=o, simd_bound=cg * kh * kw, vec_bound=ow, multiply=True,
                        act_bits=ab, weight_bits=wb, acc_bits=reduction_acc_bits(ab, wb, cg * kh * kw),
                        weights=w.size, requant_terms=1, blocks=n * oh, lookahead=rows, window_bits=window)
