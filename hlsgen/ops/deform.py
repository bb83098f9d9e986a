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
from .base import OpKind, pad_amounts, register, zero_point
from .conv import Conv, window_conv_loops


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

    # the output grid is that of the standard convolution with the same attributes
    output_shapes = Conv.output_shapes

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
        # a streaming implementation buffers every row a tap may reach: the kernel's rows plus
        # the largest offset above and below
        x, kh = graph.tensors[task.inputs[0]], graph.tensors[task.inputs[1]].shape[2]
        reach = _offset_range(task, graph)
        return window_conv_loops(task, graph, rows=min(x.shape[2], (kh - 1) * task.attrs["dilations"][0] + 1 + 2 * reach))


def deform_conv_float(x, w, offset, bias=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
                      group=1, offset_group=1):
    """ONNX DeformConv (opset 19) in float64 NumPy: bilinear sampling at fractional offsets,
    zero outside the input, optional mask and bias. The reference the integer form is
    checked against, and the float model of the general bilinear form."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    (pt, pl), (pb, pr) = (pads[0], pads[1]), (pads[2], pads[3])
    oh = (h + pt + pb - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pl + pr - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    off = np.asarray(offset, dtype=np.float64).reshape(n, offset_group, kh * kw, 2, oh, ow)
    msk = np.ones((n, offset_group, kh * kw, oh, ow)) if mask is None else \
        np.asarray(mask, dtype=np.float64).reshape(n, offset_group, kh * kw, oh, ow)
    cpg = c // offset_group                       # channels per offset group
    base_y = (np.arange(oh) * strides[0] - pt).reshape(oh, 1)
    base_x = (np.arange(ow) * strides[1] - pl).reshape(1, ow)
    cols = np.zeros((n, c, kh * kw, oh, ow))
    for b in range(n):
        for og in range(offset_group):
            xs = x[b, og * cpg:(og + 1) * cpg]        # (cpg, h, w)
            for t in range(kh * kw):
                i, j = divmod(t, kw)
                py = base_y + i * dilations[0] + off[b, og, t, 0]
                px = base_x + j * dilations[1] + off[b, og, t, 1]
                y0, x0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
                fy, fx = py - y0, px - x0
                val = np.zeros((cpg, oh, ow))
                for dy, dx, wt in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx), (1, 0, fy * (1 - fx)), (1, 1, fy * fx)):
                    yy, xx = y0 + dy, x0 + dx
                    inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < wd)
                    v = xs[:, np.clip(yy, 0, h - 1), np.clip(xx, 0, wd - 1)]
                    val += np.where(inside, v * wt, 0.0)
                cols[b, og * cpg:(og + 1) * cpg, t] = val * msk[b, og, t]
    cols = cols.reshape(n, group, cg, kh * kw, oh, ow)
    wg = w.reshape(group, oc // group, cg, kh * kw)
    out = np.einsum("ngctyx,goct->ngoyx", cols, wg).reshape(n, oc, oh, ow)
    if bias is not None:
        out += np.asarray(bias, dtype=np.float64).reshape(1, oc, 1, 1)
    return out


@register
class DeformConvBilinear(OpKind):
    """deform_conv_bilinear: ONNX DeformConv in its general form, in integers. Inputs:
    [x, weight, offset, (mask)]. Offsets are fixed point with `frac` fraction bits (scale
    2^-frac); positions are split into an integer part and a fraction, the four corner weights
    (2^f - fy)(2^f - fx), ... sum to 2^(2f) exactly, so

        acc = sum_taps w * mask_q * sum_corners cornerweight * (x - zx)

    is exact; the requantization carries s_x * s_w * s_mask * 2^(-2f)."""

    name = "deform_conv_bilinear"

    output_shapes = DeformConv.output_shapes

    @staticmethod
    def accumulate(task, graph, x, off, mask=None):
        a = task.attrs
        f = a["frac"]
        one = 1 << f
        w = graph.tensors[task.inputs[1]].data.astype(np.int64)
        xv = x.astype(np.int64) - zero_point(graph, task.inputs[0])
        ov = off.astype(np.int64) - zero_point(graph, task.inputs[2])
        n, c, h, wd = xv.shape
        o, cg, kh, kw = w.shape
        groups, og = a["groups"], a["offset_group"]
        _, _, oh, ow = graph.tensors[task.outputs[0]].shape
        (ph, pw) = pad_amounts(a["pads"], 2)
        (sh, sw), (dh, dw) = a["strides"], a["dilations"]
        ov = ov.reshape(n, og, kh * kw, 2, oh, ow)
        mv = None
        if mask is not None:
            mv = (mask.astype(np.int64) - zero_point(graph, task.inputs[3])).reshape(n, og, kh * kw, oh, ow)
        cpg = c // og
        base_y = ((np.arange(oh) * sh - ph[0]) << f).reshape(1, oh, 1)
        base_x = ((np.arange(ow) * sw - pw[0]) << f).reshape(1, 1, ow)
        nidx = np.arange(n).reshape(n, 1, 1)
        cols = np.zeros((n, c, kh * kw, oh, ow), dtype=np.int64)
        for g in range(og):
            xs = xv[:, g * cpg:(g + 1) * cpg]
            for t in range(kh * kw):
                i, j = divmod(t, kw)
                py = base_y + ((i * dh) << f) + ov[:, g, t, 0]
                px = base_x + ((j * dw) << f) + ov[:, g, t, 1]
                y0, x0 = py >> f, px >> f
                fy, fx = py & (one - 1), px & (one - 1)
                val = np.zeros((n, cpg, oh, ow), dtype=np.int64)
                for cy, cx, wt in ((0, 0, (one - fy) * (one - fx)), (0, 1, (one - fy) * fx), (1, 0, fy * (one - fx)),
                                   (1, 1, fy * fx)):
                    yy, xx = y0 + cy, x0 + cx
                    inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < wd)
                    v = xs[nidx, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, wd - 1)]          # n, oh, ow, cpg
                    val += np.moveaxis(np.where(inside[..., None], v, 0), -1, 1) * (wt * inside)[:, None]
                if mv is not None:
                    val = val * mv[:, g, t][:, None]
                cols[:, g * cpg:(g + 1) * cpg, t] = val
        cols = cols.reshape(n, groups, cg, kh * kw, oh, ow)
        wg = w.reshape(groups, o // groups, cg, kh * kw)
        return np.einsum("ngctyx,goct->ngoyx", cols, wg).reshape(n, o, oh, ow)

    @staticmethod
    def golden(task, graph, inputs):
        mask = inputs[3] if len(inputs) > 3 else None
        acc = DeformConvBilinear.accumulate(task, graph, inputs[0], inputs[2], mask)
        return [apply_requant([acc], task.attrs["requant"])]

    macs = DeformConv.macs

    @staticmethod
    def loops(task, graph):
        x, kh = graph.tensors[task.inputs[0]], graph.tensors[task.inputs[1]].shape[2]
        f = task.attrs["frac"]
        ot = graph.tensors[task.inputs[2]]
        # rows up to max|offset| above and below (plus one for the second bilinear row); each
        # tap reads four corners and carries 2f more bits from the corner weights
        reach = max(abs(ot.dtype.min), abs(ot.dtype.max)) >> f
        rows = min(x.shape[2], (kh - 1) * task.attrs["dilations"][0] + 2 + 2 * reach)
        return window_conv_loops(task, graph, rows=rows, reads_per_tap=4, extra_act_bits=2 * f)
