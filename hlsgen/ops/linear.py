"""linear: y = x @ W^T over the last axis (Gemm / MatMul with constant weights), fused
requantization. Inputs: [x (..., K), weight (N, K)]."""
from __future__ import annotations

import numpy as np

from ..numerics import apply_requant
from .base import OpKind, register, zero_point


@register
class Linear(OpKind):
    name = "linear"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        x, w = input_shapes
        return [tuple(x[:-1]) + (w[0],)]

    @staticmethod
    def golden(task, graph, inputs):
        w = graph.tensors[task.inputs[1]].data.astype(np.int64)
        a = inputs[0].astype(np.int64) - zero_point(graph, task.inputs[0])
        acc = a @ w.T
        return [apply_requant([acc], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        out = graph.tensors[task.outputs[0]].shape
        return int(np.prod(out)) * graph.tensors[task.inputs[1]].shape[1]
