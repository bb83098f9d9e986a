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
        # a streaming conv keeps (KH-1)*dilation+1 input rows of the padded input
        kh = graph.tensors[task.inputs[1]].shape[2]
        return window_conv_loops(task, graph, rows=(kh - 1) * task.attrs["dilations"][0] + 1)


def window_conv_loops(task, graph, rows: int, reads_per_tap: int = 1, extra_act_bits: int = 0) -> LoopNest:
    """The loop nest of a convolution-like op (conv, deformable conv) that streams its input
    through a line buffer of `rows` padded input rows: output pixels outer, output channels
    in parallel (pe), C/groups x KH x KW reduced (simd). `reads_per_tap` counts the pixels one
    tap reads (4 for bilinear sampling), `extra_act_bits` the width its interpolation adds. Its
    first output row waits for the rows of the window below the top padding."""
    x = graph.tensors[task.inputs[0]]
    w = graph.tensors[task.inputs[1]]
    n, o, oh, ow = graph.tensors[task.outputs[0]].shape
    _, cg, kh, kw = w.shape
    ab, wb = act_bits(graph, task.inputs[0]), w.dtype.bits
    (ph, pw) = pad_amounts(task.attrs["pads"], 2)
    window = rows * (x.shape[3] + pw[0] + pw[1]) * x.shape[1] * ab
    return LoopNest(vectors=n * oh * ow * reads_per_tap, pe_bound=o, simd_bound=cg * kh * kw, vec_bound=ow, multiply=True,
                    act_bits=ab + extra_act_bits, weight_bits=wb,
                    acc_bits=reduction_acc_bits(ab + extra_act_bits, wb, cg * kh * kw, task),
                    weights=w.size, requant_terms=1, blocks=n * oh, lookahead=max(1, rows - ph[0]), window_bits=window,
                    pe_shares_input=cg == x.shape[1])


@register
class ConvTranspose(OpKind):
    """conv_transpose: 2-D transposed convolution (ONNX ConvTranspose), fused requantization.
    Inputs: [x, weight (C_in, C_out/groups, KH, KW)].

    y[n, g*Og+o, i*s - pad + k*d] += w[g*Cg+c, o, k] * (x[n, g*Cg+c, i] - zx), then output_padding
    extends the bottom/right edge (with nothing added there), as ONNX specifies."""

    name = "conv_transpose"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        (n, c, h, w), (ci, og, kh, kw) = input_shapes[0], input_shapes[1]
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        (sh, sw), (dh, dw), (oph, opw) = attrs["strides"], attrs["dilations"], attrs["output_padding"]
        oh = (h - 1) * sh - ph[0] - ph[1] + dh * (kh - 1) + oph + 1
        ow = (w - 1) * sw - pw[0] - pw[1] + dw * (kw - 1) + opw + 1
        return [(n, og * attrs["groups"], oh, ow)]

    @staticmethod
    def accumulate(task, graph, x):
        attrs = task.attrs
        w = graph.tensors[task.inputs[1]].data.astype(np.int64)
        a = x.astype(np.int64) - zero_point(graph, task.inputs[0])
        n, c, h, wd = a.shape
        ci, og, kh, kw = w.shape
        groups = attrs["groups"]
        cg = ci // groups
        (ph, pw) = pad_amounts(attrs["pads"], 2)
        (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
        _, o, oh, ow = graph.tensors[task.outputs[0]].shape
        # full (uncropped) output, then crop the pads
        fh = max((h - 1) * sh + dh * (kh - 1) + 1, oh + ph[0])
        fw = max((wd - 1) * sw + dw * (kw - 1) + 1, ow + pw[0])
        full = np.zeros((n, groups, og, fh, fw), dtype=np.int64)
        ag = a.reshape(n, groups, cg, h, wd)
        wg = w.reshape(groups, cg, og, kh, kw)
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("ngchw,gco->ngohw", ag, wg[:, :, :, i, j])
                full[:, :, :, i * dh: i * dh + (h - 1) * sh + 1: sh, j * dw: j * dw + (wd - 1) * sw + 1: sw] += contrib
        full = full.reshape(n, groups * og, fh, fw)
        return full[:, :, ph[0]: ph[0] + oh, pw[0]: pw[0] + ow]

    @staticmethod
    def golden(task, graph, inputs):
        return [apply_requant([ConvTranspose.accumulate(task, graph, inputs[0])], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        x = graph.tensors[task.inputs[0]].shape
        ci, og, kh, kw = graph.tensors[task.inputs[1]].shape
        return int(x[0] * x[2] * x[3]) * ci * og * kh * kw

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        w = graph.tensors[task.inputs[1]]
        ci, og, kh, kw = w.shape
        groups = task.attrs["groups"]
        ab, wb = act_bits(graph, task.inputs[0]), w.dtype.bits
        n, _, oh, ow = graph.tensors[task.outputs[0]].shape
        # each input pixel scatters into a KH x KW window of every output channel: one pass
        # over the input (vectors), output channels in parallel (pe), taps and input channels
        # of a group reduced per output (simd); KH output rows stay buffered
        return LoopNest(vectors=int(x.shape[0] * x.shape[2] * x.shape[3]), pe_bound=og * groups,
                        simd_bound=(ci // groups) * kh * kw, vec_bound=x.shape[3], multiply=True, act_bits=ab,
                        weight_bits=wb, acc_bits=reduction_acc_bits(ab, wb, (ci // groups) * kh * kw, task), weights=w.size,
                        requant_terms=1, blocks=n * x.shape[2], lookahead=1,
                        window_bits=kh * ow * og * groups * 32, pe_shares_input=groups == 1)
