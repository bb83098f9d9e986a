"""Transformer ops in integer arithmetic (docs/numerics.md, section 8):

gather     embedding lookup: out = table[ids]                 (table: constant, ids: indices)
matmul     (A - za) @ (B - zb) of two activations, fused requantization
softmax    integer softmax over the last axis: exp table, integer sum, integer division
layernorm  integer LayerNorm over the last axis: exact centered sums, integer square root
lut        any elementwise function of one 8-bit tensor (GELU, ...) as a table of its
           2^bits outputs, computed at compile time from the float subgraph itself
"""
from __future__ import annotations

import math

import numpy as np

from ..numerics import apply_requant, int_matmul
from .base import LoopNest, OpKind, act_bits, channel_layout, reduction_acc_bits, register, zero_point


def _rows(shape) -> int:
    return int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1


def _round_div(num: np.ndarray, den) -> np.ndarray:
    """round(num / den), ties away from zero... for num >= 0 and den > 0: floor((2 num + den) / 2 den)."""
    return (2 * num + den) // (2 * den)


@register
class Gather(OpKind):
    name = "gather"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        table, ids = input_shapes
        return [tuple(ids) + tuple(table[1:])]

    @staticmethod
    def golden(task, graph, inputs):
        table = graph.tensors[task.inputs[0]].data.astype(np.int64)
        return [np.take(table, inputs[1].astype(np.int64), axis=0)]

    @staticmethod
    def loops(task, graph):
        table = graph.tensors[task.inputs[0]]
        ids = graph.tensors[task.inputs[1]]
        return LoopNest(vectors=ids.size, pe_bound=int(np.prod(table.shape[1:])), act_bits=table.dtype.bits,
                        weight_bits=table.dtype.bits, weights=table.size, blocks=ids.size)


@register
class MatMul(OpKind):
    name = "matmul"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        a, b = input_shapes
        batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
        return [tuple(batch) + (a[-2], b[-1])]

    @staticmethod
    def golden(task, graph, inputs):
        a = inputs[0].astype(np.int64) - zero_point(graph, task.inputs[0])
        b = inputs[1].astype(np.int64) - zero_point(graph, task.inputs[1])
        return [apply_requant([int_matmul(a, b)], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        out = graph.tensors[task.outputs[0]].shape
        return int(np.prod(out)) * graph.tensors[task.inputs[0]].shape[-1]

    @staticmethod
    def loops(task, graph):
        a, b = graph.tensors[task.inputs[0]], graph.tensors[task.inputs[1]]
        out = graph.tensors[task.outputs[0]].shape
        k = a.shape[-1]
        ab, bb = a.dtype.bits, b.dtype.bits
        rows = _rows(out)
        # the right operand is an activation: a streaming version must hold it whole
        return LoopNest(vectors=rows, pe_bound=out[-1], simd_bound=k, multiply=True, act_bits=ab, weight_bits=bb,
                        acc_bits=reduction_acc_bits(ab, bb, k), requant_terms=1, blocks=rows,
                        full_buffer_bits=b.size * bb)


@register
class Softmax(OpKind):
    """attrs: exp_table (int64, exp_table[j] = round(exp(-j * s_in) * 2^frac)), frac, recip
    (round(2^g / s_out)), g, mask (bool, broadcastable, True = excluded) or None, zero_point,
    lo, hi, out (IntType)."""

    name = "softmax"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        a = task.attrs
        q = inputs[0].astype(np.int64)
        mask = a["mask"]
        keep = np.ones(q.shape, dtype=bool) if mask is None else ~np.broadcast_to(mask, q.shape)
        qmax = np.max(np.where(keep, q, np.iinfo(np.int64).min), axis=-1, keepdims=True)
        d = np.where(keep, qmax - q, 0)
        e = np.where(keep, a["exp_table"][d], 0)
        s = e.sum(axis=-1, keepdims=True)
        den = np.maximum(s, 1) << a["g"]
        y = _round_div(e * a["recip"], den) + a["zero_point"]
        return [np.clip(y, a["lo"], a["hi"])]

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        rows = _rows(x.shape)
        # max, exp + sum, divide: three passes over a row held in a buffer; one divider per lane
        return LoopNest(vectors=3 * rows, pe_bound=x.shape[-1], act_bits=x.dtype.bits, acc_bits=32, requant_terms=1,
                        blocks=rows, window_bits=x.shape[-1] * x.dtype.bits * 2)


@register
class LayerNorm(OpKind):
    """attrs: k (fraction bits of the root), g, eps_fixed (round(eps * D^2 / s_in^2 * 2^(2k))),
    mult (per element: round(gamma / s_out * 2^(k+g))), bias_fixed (round(beta / s_out * 2^g)),
    zero_point, lo, hi, out."""

    name = "layernorm"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        a = task.attrs
        q = inputs[0].astype(np.int64)
        d = q.shape[-1]
        c = d * q - q.sum(axis=-1, keepdims=True)                 # exact: d * (q - mean)
        flat_c = c.reshape(-1, d)
        roots = np.empty((flat_c.shape[0], 1), dtype=object)
        for r in range(flat_c.shape[0]):
            v = sum(int(x) * int(x) for x in flat_c[r])             # exact sum of squares
            roots[r, 0] = max(1, math.isqrt((v << (2 * a["k"])) // d + a["eps_fixed"]))
        root = roots.reshape(c.shape[:-1] + (1,))
        num = c.astype(object) * a["mult"].astype(object) + a["bias_fixed"].astype(object) * root
        den = root * (1 << a["g"])
        # round half up: floor((2 num + den) / (2 den)), valid for negative num too
        y = (2 * num + den) // (2 * den)
        y = np.asarray(y, dtype=np.int64) + a["zero_point"]
        return [np.clip(y, a["lo"], a["hi"])]

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        rows = _rows(x.shape)
        # sum, sum of squares (one multiplier per lane), then scale: two passes over a buffered row
        return LoopNest(vectors=2 * rows, pe_bound=x.shape[-1], multiply=True, act_bits=x.dtype.bits + 11,
                        weight_bits=x.dtype.bits + 11, acc_bits=48, requant_terms=1, blocks=rows,
                        window_bits=x.shape[-1] * x.dtype.bits * 2)


@register
class Lut(OpKind):
    """attrs: table (int64, one output per input value), lo (the input type's minimum)."""

    name = "lut"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        return [task.attrs["table"][inputs[0].astype(np.int64) - task.attrs["lo"]]]

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        out = graph.tensors[task.outputs[0]]
        outer, c = channel_layout(x.shape)
        return LoopNest(vectors=outer, pe_bound=c, act_bits=x.dtype.bits, weight_bits=out.dtype.bits,
                        weights=len(task.attrs["table"]), blocks=max(1, outer))
