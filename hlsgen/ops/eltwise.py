"""Elementwise integer ops.

add:     q = requant(sum_i (x_i - z_i) * M_i)        Add of differently scaled inputs
requant: q = requant((x - z) * M + B)                Mul/Add by constants, standalone BN,
                                                     change of quantizer, Trunc
clip:    q = clip(x, lo, hi)                         Relu/Clip whose bounds lie on the grid
mul:     q = requant((a - za) * (b - zb) * M)        product of two activations (gating)
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..numerics import apply_requant
from .base import OpKind, elementwise_loops, register, zero_point


def _centered_terms(task, graph, inputs):
    """Every input minus its zero point, broadcast to the output shape, as int64."""
    out_shape = graph.tensors[task.outputs[0]].shape
    return [np.broadcast_to(x.astype(np.int64) - zero_point(graph, n), out_shape) for x, n in zip(inputs, task.inputs)]


def _broadcast_shape(shapes):
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


@register
class Add(OpKind):
    name = "add"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [_broadcast_shape(input_shapes)]

    @staticmethod
    def golden(task, graph, inputs):
        return [apply_requant(_centered_terms(task, graph, inputs), task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        return 0

    @staticmethod
    def loops(task, graph):
        # one fixed-point multiplier per input term and lane
        return elementwise_loops(task, graph, requant_terms=len(task.inputs))


@register
class RequantOp(OpKind):
    name = "requant"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        return [apply_requant([inputs[0].astype(np.int64) - zero_point(graph, task.inputs[0])], task.attrs["requant"])]

    @staticmethod
    def loops(task, graph):
        return elementwise_loops(task, graph, requant_terms=1)


@register
class Clip(OpKind):
    name = "clip"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        return [np.clip(inputs[0], task.attrs["lo"], task.attrs["hi"]).astype(np.int64)]

    @staticmethod
    def loops(task, graph):
        return elementwise_loops(task, graph)


@register
class Mul(OpKind):
    name = "mul"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [_broadcast_shape(input_shapes)]

    @staticmethod
    def golden(task, graph, inputs):
        a, b = _centered_terms(task, graph, inputs)
        return [apply_requant([a * b], task.attrs["requant"])]

    @staticmethod
    def macs(task, graph):
        return graph.tensors[task.outputs[0]].size

    @staticmethod
    def loops(task, graph):
        # one multiplier per lane: the second operand plays the weight's part
        n = elementwise_loops(task, graph, requant_terms=1)
        return dataclasses.replace(n, multiply=True, weight_bits=graph.tensors[task.inputs[1]].dtype.bits)
