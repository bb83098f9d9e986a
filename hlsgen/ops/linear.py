"""linear: y = x @ W^T over the last axis (Gemm / MatMul with constant weights), fused
requantization. Inputs: [x (..., K), weight (N, K)]."""
from __future__ import annotations

import numpy as np

from ..numerics import apply_requant, int_matmul
from .base import LoopNest, OpKind, act_bits, reduction_acc_bits, register, zero_point


@register
class Linear(OpKind):
    name = "linear"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        x, w = input_shapes
        return [tuple(x[:-1]) + (w[0],)]

    @staticmethod
    def golden(task, graph, inputs):
        w = graph.tensors[task.inputs[1]].data
        a = inputs[0].astype(np.int64) - zero_point(graph, task.inputs[0])
        acc = int_matmul(a, w.T)
        return [apply_requant([acc], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        out = graph.tensors[task.outputs[0]].shape
        return int(np.prod(out)) * graph.tensors[task.inputs[1]].shape[1]

    @staticmethod
    def loops(task, graph):
        w = graph.tensors[task.inputs[1]]
        out = graph.tensors[task.outputs[0]].shape
        rows = int(np.prod(out[:-1], dtype=np.int64)) if len(out) > 1 else 1
        nout, k = w.shape
        ab, wb = act_bits(graph, task.inputs[0]), w.dtype.bits
        # rows stream one after another; a consumer can start after the first row
        return LoopNest(vectors=rows, pe_bound=nout, simd_bound=k, vec_bound=1, multiply=True,
                        act_bits=ab, weight_bits=wb, acc_bits=reduction_acc_bits(ab, wb, k, task),
                        weights=w.size, requant_terms=1, blocks=rows)
