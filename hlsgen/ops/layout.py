"""Data-movement ops: values pass through unchanged, only their positions change, so the
output keeps the input's integer type and quantization. Small enough to share a module.

Cost: each moves one element per lane per cycle (no DSP). A reshape is free (the same
stream, reinterpreted); a transpose needs the whole tensor buffered before its first output.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .base import LoopNest, OpKind, act_bits, channel_layout, elementwise_loops, register, row_width


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

    @staticmethod
    def loops(task, graph):
        return LoopNest(vectors=0, pe_bound=1, free=True)


@register
class Transpose(OpKind):
    name = "transpose"

    @staticmethod
    def output_shapes(attrs, input_shapes):
        return [tuple(input_shapes[0][p] for p in attrs["perm"])]

    @staticmethod
    def golden(task, graph, inputs):
        return [np.ascontiguousarray(np.transpose(inputs[0], task.attrs["perm"]))]

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        return LoopNest(vectors=x.size, pe_bound=1, act_bits=x.dtype.bits, blocks=1,
                        full_buffer_bits=x.size * x.dtype.bits)


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

    @staticmethod
    def loops(task, graph):
        # streams pixel by pixel; the channels of one pixel are buffered and reordered
        x = graph.tensors[task.inputs[0]]
        return elementwise_loops(task, graph).with_window(x.shape[1] * x.dtype.bits)


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

    @staticmethod
    def loops(task, graph):
        # one configuration word per input, one input after another
        return dataclasses.replace(elementwise_loops(task, graph), parts="inputs")


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

    @staticmethod
    def loops(task, graph):
        x = graph.tensors[task.inputs[0]]
        outer, c = channel_layout(x.shape)
        rows = x.shape[0] * x.shape[2] if len(x.shape) == 4 else outer
        return LoopNest(vectors=outer, pe_bound=c, vec_bound=row_width(x.shape), act_bits=x.dtype.bits, blocks=rows,
                        parts="outputs")


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

    @staticmethod
    def loops(task, graph):
        # a streaming slice still reads every input element; a sequential core's move word
        # gathers only the output's (gather: the scheduler scales its steps by that share)
        x = graph.tensors[task.inputs[0]]
        outer, c = channel_layout(x.shape)
        rows = x.shape[0] * x.shape[2] if len(x.shape) == 4 else outer
        return LoopNest(vectors=outer, pe_bound=c, vec_bound=row_width(x.shape), act_bits=x.dtype.bits, blocks=rows,
                        gather=graph.tensors[task.outputs[0]].size / max(1, x.size))


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

    @staticmethod
    def loops(task, graph):
        # replays each buffered input row `factor` times
        x = graph.tensors[task.inputs[0]]
        row = (x.shape[1] * x.shape[3] if len(x.shape) == 4 else x.shape[-1]) * x.dtype.bits
        return elementwise_loops(task, graph).with_window(row)
