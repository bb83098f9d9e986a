"""Data-movement ops: values pass through unchanged, only their positions change, so the
output keeps the input's integer type and quantization. Small enough to share a module.
"""
from __future__ import annotations

import numpy as np

from .base import OpKind, register


@register
class Reshape(OpKind):
    """Reshape, Flatten, Squeeze, Unsqueeze: same elements in the same (row-major) order."""

    name = "reshape"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(attrs["shape"])]

    @staticmethod
    def golden(task, graph, inputs):
        return [inputs[0].reshape(task.attrs["shape"])]


@register
class Transpose(OpKind):
    name = "transpose"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0][p] for p in attrs["perm"])]

    @staticmethod
    def golden(task, graph, inputs):
        return [np.ascontiguousarray(np.transpose(inputs[0], task.attrs["perm"]))]


@register
class ChannelShuffle(OpKind):
    """ShuffleNet's Reshape(N,g,C/g,H,W) -> Transpose(0,2,1,3,4) -> Reshape(N,C,H,W)."""

    name = "channel_shuffle"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0])]

    @staticmethod
    def golden(task, graph, inputs):
        x = inputs[0]
        n, c = x.shape[:2]
        g = task.attrs["groups"]
        return [x.reshape((n, g, c // g) + x.shape[2:]).swapaxes(1, 2).reshape(x.shape).copy()]


@register
class Concat(OpKind):
    name = "concat"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        ax = attrs["axis"]
        out = list(input_shapes[0])
        out[ax] = sum(s[ax] for s in input_shapes)
        return [tuple(out)]

    @staticmethod
    def golden(task, graph, inputs):
        return [np.concatenate(inputs, axis=task.attrs["axis"])]


@register
class Split(OpKind):
    name = "split"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        ax = attrs["axis"]
        outs = []
        for size in attrs["sizes"]:
            s = list(input_shapes[0])
            s[ax] = size
            outs.append(tuple(s))
        return outs

    @staticmethod
    def golden(task, graph, inputs):
        idx = np.cumsum(task.attrs["sizes"])[:-1]
        return [p.copy() for p in np.split(inputs[0], idx, axis=task.attrs["axis"])]


@register
class Slice(OpKind):
    """attrs["slices"]: one (start, stop, step) per axis, already normalized."""

    name = "slice"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(len(range(*sl)) for sl in attrs["slices"])]

    @staticmethod
    def golden(task, graph, inputs):
        return [inputs[0][tuple(slice(*sl) for sl in task.attrs["slices"])].copy()]


@register
class Resize(OpKind):
    """Nearest-neighbour upsampling by integer factors per axis (Resize / Upsample)."""

    name = "resize"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(d * f for d, f in zip(input_shapes[0], attrs["factors"]))]

    @staticmethod
    def golden(task, graph, inputs):
        x = inputs[0]
        for axis, f in enumerate(task.attrs["factors"]):
            if f != 1:
                x = np.repeat(x, f, axis=axis)
        return [x]
