"""Seeded random quantized CNNs for fuzzing the backends.

`random_net(seed)` builds a small QONNX graph (Quant nodes, as Brevitas exports them; built with
onnx.helper, no torch) from a random chain of blocks: convolutions of random kernels, strides,
dilations, paddings and groups (depthwise too), pools, residual adds, concats, channel shuffles,
nearest upsampling, channel slices, clips and a pooled linear head, with random channel counts,
image sizes, batch, weight bits (2 to 8, per tensor or per channel) and activation bits (3 to 8,
signed or not). The same seed gives the same model on every machine (NumPy's RandomState).
`benchmarks/fuzz_designs.py` builds, C-simulates and RTL-simulates many of them.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

QDOMAIN = "qonnx.custom_op.general"
BLOCKS = ("conv", "conv", "conv", "dwconv", "maxpool", "avgpool", "residual", "concat", "shuffle", "upsample",
          "slice", "split_swap", "clip")


class _Net:
    def __init__(self, seed: int):
        from onnx import helper, numpy_helper
        self.h, self.nh = helper, numpy_helper
        self.rs = np.random.RandomState(seed)
        self.nodes, self.inits = [], []
        self.k = 0
        self.notes: List[str] = []

    def name(self, what: str) -> str:
        self.k += 1
        return f"{what}{self.k}"

    def const(self, value, dtype=np.float32) -> str:
        n = self.name("c")
        self.inits.append(self.nh.from_array(np.asarray(value, dtype=dtype), n))
        return n

    def node(self, op: str, inputs, **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(self.h.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def quant(self, x: str, bits: int, signed: bool, scale: float = None) -> Tuple[str, float]:
        """An activation quantizer: (its output, its scale)."""
        s = float(scale if scale is not None else round(float(self.rs.uniform(0.02, 0.25)), 4))
        out = self.name("q")
        self.nodes.append(self.h.make_node(
            "Quant", [x, self.const(s), self.const(0.0), self.const(float(bits))], [out], name=out, domain=QDOMAIN,
            signed=int(signed), narrow=0, rounding_mode="ROUND"))
        return out, s

    def weight(self, shape, bits: int) -> str:
        w = self.rs.uniform(-1, 1, shape).astype(np.float32)
        per_channel = bool(self.rs.rand() < 0.5)
        top = np.abs(w).reshape(shape[0], -1).max(axis=1) if per_channel else np.abs(w).max()
        scale = np.maximum(np.asarray(top, np.float32) / max(1, 2 ** (bits - 1) - 1), 1e-3)
        if per_channel:
            scale = scale.reshape((shape[0],) + (1,) * (len(shape) - 1))
        out = self.name("wq")
        self.nodes.append(self.h.make_node(
            "Quant", [self.const(w), self.const(scale), self.const(0.0), self.const(float(bits))], [out], name=out,
            domain=QDOMAIN, signed=1, narrow=1, rounding_mode="ROUND"))
        return out


def random_net(seed: int, blocks: int = None):
    """(model, description): a random quantized CNN of 2 to 4 blocks (or `blocks`); the description
    is one line per block."""
    from onnx import TensorProto
    n = _Net(seed)
    rs = n.rs
    batch = 2 if rs.rand() < 0.15 else 1
    c, h, w = int(rs.randint(1, 7)), int(rs.randint(5, 13)), int(rs.randint(5, 13))
    abits = lambda: int(rs.choice([3, 4, 5, 6, 8, 8]))     # noqa: E731
    wbits = lambda: int(rs.choice([2, 3, 4, 4, 5, 8]))     # noqa: E731
    dims = [batch, c, h, w]
    x, scale = n.quant("x", 8, True, 0.05)
    signed, bits = True, 8
    n.notes.append(f"input {batch}x{c}x{h}x{w}")

    def conv(x, c, h, w, cout, k, s, d, p, g, relu):
        wt = n.weight((cout, c // g, k, k), wbits())
        ins = [x, wt] + ([n.const(rs.uniform(-0.5, 0.5, cout))] if rs.rand() < 0.5 else [])
        y = n.node("Conv", ins, kernel_shape=[k, k], strides=[s, s], dilations=[d, d], pads=[p] * 4, group=g)
        if relu:
            y = n.node("Relu", [y])
        oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
        return y, oh, ow

    for _ in range(blocks or int(rs.randint(2, 5))):
        kinds = [b for b in BLOCKS if b not in ("slice", "split_swap", "shuffle") or c >= 2]
        kind = str(rs.choice(kinds))
        if kind in ("maxpool", "avgpool") and min(h, w) < 4:
            kind = "conv"
        if kind == "upsample" and h * w > 64:
            kind = "conv"
        if kind == "conv":
            k = int(rs.choice([1, 3, 3, 5])) if min(h, w) >= 5 else int(rs.choice([1, 3]))
            d = 2 if k == 3 and min(h, w) >= 7 and rs.rand() < 0.25 else 1
            s = 2 if min(h, w) >= 6 and rs.rand() < 0.3 else 1
            p = int(rs.choice([0, (k // 2) * d])) if min(h, w) - d * (k - 1) >= 1 else (k // 2) * d
            cout = int(rs.randint(1, 13))
            g = 1
            for cand in (2, 3):
                if c % cand == 0 and cout % cand == 0 and rs.rand() < 0.3:
                    g = cand
            relu = bool(rs.rand() < 0.6)
            x, h, w = conv(x, c, h, w, cout, k, s, d, p, g, relu)
            c, bits, signed = cout, abits(), not relu
            x, scale = n.quant(x, bits, signed)
            n.notes.append(f"conv {k}x{k}/s{s}/d{d}/p{p}/g{g} -> {c}x{h}x{w}{' relu' if relu else ''}, {bits}-bit")
        elif kind == "dwconv":
            m = int(rs.choice([1, 1, 2]))
            k = 3 if min(h, w) >= 3 else 1
            s = 2 if min(h, w) >= 6 and rs.rand() < 0.4 else 1
            relu = bool(rs.rand() < 0.5)
            x, h, w = conv(x, c, h, w, c * m, k, s, 1, k // 2, c, relu)
            c, bits, signed = c * m, abits(), not relu
            x, scale = n.quant(x, bits, signed)
            n.notes.append(f"depthwise {k}x{k}/s{s} x{m} -> {c}x{h}x{w}, {bits}-bit")
        elif kind == "maxpool":
            k = int(rs.choice([2, 3]))
            s = int(rs.choice([1, 2]))
            p = 1 if k == 3 and rs.rand() < 0.5 else 0
            x = n.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
            h, w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
            n.notes.append(f"maxpool {k}/s{s}/p{p} -> {c}x{h}x{w}")
        elif kind == "avgpool":
            x = n.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
            h, w = h // 2, w // 2
            bits = abits()
            x, scale = n.quant(x, bits, signed)
            n.notes.append(f"avgpool 2/s2 -> {c}x{h}x{w}, {bits}-bit")
        elif kind == "residual":
            y, _, _ = conv(x, c, h, w, c, 3, 1, 1, 1, 1, False)
            y, _ = n.quant(y, abits(), True)
            x = n.node("Add", [x, y])
            relu = bool(rs.rand() < 0.5)
            if relu:
                x = n.node("Relu", [x])
            bits, signed = abits(), not relu
            x, scale = n.quant(x, bits, signed)
            n.notes.append(f"residual 3x3 -> {c}x{h}x{w}, {bits}-bit")
        elif kind == "concat":
            bits = abits()
            scale = round(float(rs.uniform(0.02, 0.25)), 4)
            c1, c2 = int(rs.randint(1, 7)), int(rs.randint(1, 7))
            a, _, _ = conv(x, c, h, w, c1, 1, 1, 1, 0, 1, True)
            a, _ = n.quant(a, bits, False, scale)
            b, _, _ = conv(x, c, h, w, c2, 3, 1, 1, 1, 1, True)
            b, _ = n.quant(b, bits, False, scale)
            x = n.node("Concat", [a, b], axis=1)
            c, signed = c1 + c2, False
            n.notes.append(f"concat 1x1 ({c1}) + 3x3 ({c2}) -> {c}x{h}x{w}, {bits}-bit")
        elif kind == "shuffle":
            g = next((v for v in (2, 3) if c % v == 0 and c > v), None)
            if g is None:
                n.notes.append("shuffle skipped (channels)")
                continue
            y = n.node("Reshape", [x, n.const([batch, g, c // g, h, w], np.int64)])
            y = n.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
            x = n.node("Reshape", [y, n.const([batch, c, h, w], np.int64)])
            n.notes.append(f"channel shuffle, {g} groups")
        elif kind == "upsample":
            x = n.node("Resize", [x, "", n.const([1.0, 1.0, 2.0, 2.0])], mode="nearest",
                       coordinate_transformation_mode="asymmetric", nearest_mode="floor")
            h, w = 2 * h, 2 * w
            n.notes.append(f"upsample x2 -> {c}x{h}x{w}")
        elif kind == "slice":
            lo = int(rs.randint(0, c - 1))
            hi = int(rs.randint(lo + 1, c + 1))
            x = n.node("Slice", [x, n.const([lo], np.int64), n.const([hi], np.int64), n.const([1], np.int64)])
            c = hi - lo
            n.notes.append(f"slice channels {lo}:{hi} -> {c}x{h}x{w}")
        elif kind == "split_swap":
            first = int(rs.randint(1, c))
            outs = [n.name("split"), n.name("split")]
            n.nodes.append(n.h.make_node("Split", [x, n.const([first, c - first], np.int64)], outs, name=n.name("Split"),
                                         axis=1))
            x = n.node("Concat", [outs[1], outs[0]], axis=1)
            n.notes.append(f"split {first}+{c - first} and swapped")
        elif kind == "clip":
            if signed:
                lo, hi = -2 ** (bits - 2), 2 ** (bits - 2) - 1
            else:
                lo, hi = 0, 2 ** (bits - 1)
            x = n.node("Clip", [x, n.const(lo * scale), n.const(hi * scale)])
            n.notes.append(f"clip [{lo}, {hi}] steps")
    if rs.rand() < 0.3:
        cout = int(rs.randint(2, 11))
        x = n.node("GlobalAveragePool", [x])
        x, _ = n.quant(x, abits(), signed)
        x = n.node("Flatten", [x])
        wt = n.weight((cout, c), wbits())
        x = n.node("Gemm", [x, wt, n.const(rs.uniform(-0.5, 0.5, cout))], transB=1)
        x, _ = n.quant(x, 8, True)
        n.notes.append(f"global pool + linear -> {cout}")
    out = n.nodes[-1].output[0]
    g = n.h.make_graph(n.nodes, f"random_{seed}",
                       [n.h.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                       [n.h.make_tensor_value_info(out, TensorProto.FLOAT, None)], n.inits)
    m = n.h.make_model(g, opset_imports=[n.h.make_opsetid("", 13), n.h.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    return m, n.notes


def random_target(seed: int, small):
    """A seeded random target for `random_net(seed)`: (device, `hlsgen build` options, a short
    label). `small` is the small test device's file (designs/devices/small.yaml)."""
    rs = np.random.RandomState(10**6 + seed)
    r = rs.rand()
    if r < 0.4:
        dev, opts, label = "u280", [], "u280"
    elif r < 0.7:
        dev, opts, label = str(small), ["--resource-cap", "0.2", "--weights", "offchip"], "small 0.2"
    else:
        dev, opts, label = "ultra96v2", [], "ultra96v2"
    mode = str(rs.choice(["dataflow", "sequential", "auto"]))
    opts += ["--mode", mode]
    label += f" {mode}"
    if rs.rand() < 0.2:
        n = str(int(rs.choice([2, 4, 8])))
        opts += ["--max-lanes", n]
        label += f" lanes{n}"
    if rs.rand() < 0.15:
        b = str(int(rs.choice([32, 64])))
        opts += ["--port-bits", b]
        label += f" port{b}"
    if rs.rand() < 0.15:
        opts += ["--io", "offchip"]
        label += " io-offchip"
    return dev, opts, label
