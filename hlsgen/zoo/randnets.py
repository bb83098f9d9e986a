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

    def conv(self, x, c, h, w, cout, k, s, d, p, g, relu, bits, bn=False):
        """A Conv of `bits`-bit weights (a bias half the time; BatchNormalization after it where
        `bn`), a Relu where `relu`: (its output, its height, its width)."""
        rs = self.rs
        wt = self.weight((cout, c // g, k, k), bits)
        ins = [x, wt] + ([self.const(rs.uniform(-0.5, 0.5, cout))] if rs.rand() < 0.5 else [])
        y = self.node("Conv", ins, kernel_shape=[k, k], strides=[s, s], dilations=[d, d], pads=[p] * 4, group=g)
        if bn:
            y = self.node("BatchNormalization", [y, self.const(rs.uniform(0.5, 1.5, cout)),
                                                 self.const(rs.uniform(-0.3, 0.3, cout)),
                                                 self.const(rs.uniform(-0.2, 0.2, cout)),
                                                 self.const(rs.uniform(0.5, 2.0, cout))], epsilon=1e-5)
        if relu:
            y = self.node("Relu", [y])
        oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
        return y, oh, ow


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
        return n.conv(x, c, h, w, cout, k, s, d, p, g, relu, wbits())

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


GRAPH_BLOCKS = ("conv", "conv", "dwconv", "pool", "add", "add", "concat", "split", "shuffle", "upsample", "slice",
                "scale", "clip")


class _T:
    """A tensor of the graph being built: its name, shape (channels, height, width), its
    quantizer (bits, signed, scale) and how many nodes read it."""

    def __init__(self, name, c, h, w, bits, signed, scale, label):
        self.name, self.c, self.h, self.w = name, c, h, w
        self.bits, self.signed, self.scale = bits, signed, scale
        self.label, self.uses, self.is_input = label, 0, False
        self.dims = None


def random_graph(seed: int, blocks: int = None):
    """(model, description): a random quantized CNN that is a graph, not a chain: 1 to 3 inputs
    (the second and third at the first's size or half of it), then 3 to 7 blocks (or `blocks`),
    each reading any earlier tensor, so that tensors fan out to branches of different depths
    that meet again in adds and concats of two or three tensors; splits whose parts feed
    different branches; BatchNormalization and per-channel Mul folded into the requantizers;
    images up to 32 pixels a side and up to 24 channels. Every tensor nothing reads is an output,
    and sometimes one that something reads is too. The description is one line per tensor."""
    from onnx import TensorProto
    n = _Net(seed)
    rs = n.rs
    large = rs.rand() < 0.2
    batch = 2 if rs.rand() < 0.15 else 1
    h, w = (int(rs.randint(16, 33)), int(rs.randint(16, 33))) if large else (int(rs.randint(4, 17)),
                                                                              int(rs.randint(4, 17)))
    cmax = 9 if large else 25
    abits = lambda: int(rs.choice([3, 4, 5, 6, 8, 8]))     # noqa: E731
    wbits = lambda: int(rs.choice([2, 3, 4, 4, 5, 8]))     # noqa: E731
    live: List[_T] = []
    inputs = []

    def add(name, c, hh, ww, bits, signed, scale, what, reads=()):
        for r in reads:
            r.uses += 1
        t = _T(name, c, hh, ww, bits, signed, scale, f"t{len(live)}")
        live.append(t)
        src = ", ".join(r.label for r in reads)
        n.notes.append(f"{t.label} = {what}{f' ({src})' if src else ''} -> {c}x{hh}x{ww}, {bits}-bit "
                       f"{'signed' if signed else 'unsigned'}")
        return t

    def pick(ok=lambda t: True, avoid=()):
        cands = [t for t in live if ok(t) and t not in avoid]
        if not cands:
            return None
        unread = [t for t in cands if t.is_input and t.uses == 0]
        leaves = [t for t in cands if t.uses == 0]
        pool = unread or (leaves if leaves and rs.rand() < 0.85 else cands)
        return pool[int(rs.randint(len(pool)))]

    for i in range(int(rs.choice([1, 1, 2, 3]))):
        c = int(rs.randint(1, cmax if i == 0 else 9))
        hh, ww = (h // 2, w // 2) if i and min(h, w) >= 8 and rs.rand() < 0.4 else (h, w)
        signed = i == 0 or rs.rand() < 0.5
        bits = 8 if i == 0 else abits()
        q, sc = n.quant(f"x{i}", bits, signed, 0.05 if i == 0 else None)
        inputs.append(n.h.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [batch, c, hh, ww]))
        add(q, c, hh, ww, bits, signed, sc, f"input x{i}").is_input = True

    def requant(x: str, signed: bool):
        """x quantized to random bits: (its output, bits, signed, scale)."""
        bits = abits()
        q, sc = n.quant(x, bits, signed)
        return q, bits, signed, sc

    def conv_of(t, cout, k, s, d, p, g, relu, what):
        y, oh, ow = n.conv(t.name, t.c, t.h, t.w, cout, k, s, d, p, g, relu, wbits(), bn=bool(rs.rand() < 0.3))
        bits, signed = abits(), not relu
        q, sc = n.quant(y, bits, signed)
        return add(q, cout, oh, ow, bits, signed, sc, what, [t])

    for _ in range(blocks or int(rs.randint(3, 8))):
        kind = str(rs.choice(GRAPH_BLOCKS))
        if kind == "conv":
            t = pick()
            m = min(t.h, t.w)
            k = int(rs.choice([1, 3, 3, 5])) if m >= 5 else int(rs.choice([1, 3]))
            d = 2 if k == 3 and m >= 7 and rs.rand() < 0.25 else 1
            s = 2 if m >= 6 and rs.rand() < 0.3 else 1
            p = int(rs.choice([0, (k // 2) * d])) if m - d * (k - 1) >= 1 else (k // 2) * d
            cout = int(rs.randint(1, cmax))
            g = 1
            for cand in (2, 3, 4):
                if t.c % cand == 0 and cout % cand == 0 and rs.rand() < 0.3:
                    g = cand
            relu = bool(rs.rand() < 0.6)
            conv_of(t, cout, k, s, d, p, g, relu, f"conv {k}x{k}/s{s}/d{d}/p{p}/g{g}{' relu' if relu else ''}")
        elif kind == "dwconv":
            t = pick()
            mult = int(rs.choice([1, 1, 2]))
            k = 3 if min(t.h, t.w) >= 3 else 1
            s = 2 if min(t.h, t.w) >= 6 and rs.rand() < 0.4 else 1
            relu = bool(rs.rand() < 0.5)
            conv_of(t, t.c * mult, k, s, 1, k // 2, t.c, relu, f"depthwise {k}x{k}/s{s} x{mult}")
        elif kind == "pool":
            t = pick(lambda t: min(t.h, t.w) >= 4)
            if t is None:
                continue
            if rs.rand() < 0.5:
                k, s = int(rs.choice([2, 3])), int(rs.choice([1, 2]))
                p = 1 if k == 3 and rs.rand() < 0.5 else 0
                y = n.node("MaxPool", [t.name], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
                add(y, t.c, (t.h + 2 * p - k) // s + 1, (t.w + 2 * p - k) // s + 1, t.bits, t.signed, t.scale,
                    f"maxpool {k}/s{s}/p{p}", [t])
            else:
                y = n.node("AveragePool", [t.name], kernel_shape=[2, 2], strides=[2, 2])
                q, bits, signed, sc = requant(y, t.signed)
                add(q, t.c, t.h // 2, t.w // 2, bits, signed, sc, "avgpool 2/s2", [t])
        elif kind == "add":
            a = pick()
            b = pick(lambda u: (u.c, u.h, u.w) == (a.c, a.h, a.w), avoid=(a,))
            if b is None or rs.rand() < 0.3:     # a conv branch to the shape of `a`, from a tensor of its size
                src = pick(lambda u: (u.h, u.w) == (a.h, a.w))
                k = int(rs.choice([1, 3]))
                b = conv_of(src, a.c, k, 1, 1, k // 2, 1, bool(rs.rand() < 0.5), f"conv {k}x{k} branch")
            y = n.node("Add", [a.name, b.name])
            relu = bool(rs.rand() < 0.5)
            if relu:
                y = n.node("Relu", [y])
            q, bits, signed, sc = requant(y, not relu)
            add(q, a.c, a.h, a.w, bits, signed, sc, f"add{' relu' if relu else ''}", [a, b])
        elif kind == "concat":
            a = pick()
            parts = [a]
            for _ in range(int(rs.choice([1, 1, 2]))):
                b = pick(lambda u: (u.h, u.w) == (a.h, a.w), avoid=parts)
                if b is None:
                    k = int(rs.choice([1, 3]))
                    b = conv_of(a, int(rs.randint(1, 9)), k, 1, 1, k // 2, 1, True, f"conv {k}x{k} branch")
                parts.append(b)
            bits, signed = abits(), all(not u.signed for u in parts) and rs.rand() < 0.7
            scale = round(float(rs.uniform(0.02, 0.25)), 4)
            qs = [n.quant(u.name, bits, signed, scale)[0] for u in parts]
            y = n.node("Concat", qs, axis=1)
            add(y, sum(u.c for u in parts), a.h, a.w, bits, signed, scale, "concat", parts)
        elif kind == "split":
            t = pick(lambda t: t.c >= 2)
            if t is None:
                continue
            k = 3 if t.c >= 3 and rs.rand() < 0.4 else 2
            cuts = sorted(rs.choice(np.arange(1, t.c), k - 1, replace=False).tolist())
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [t.c])]
            outs = [n.name("split") for _ in sizes]
            n.nodes.append(n.h.make_node("Split", [t.name, n.const(sizes, np.int64)], outs, name=n.name("Split"),
                                         axis=1))
            for o, sz in zip(outs, sizes):
                add(o, sz, t.h, t.w, t.bits, t.signed, t.scale, f"split part of {sizes}", [t])
        elif kind == "shuffle":
            t = pick(lambda t: any(t.c % v == 0 and t.c > v for v in (2, 3, 4)))
            if t is None:
                continue
            g = next(v for v in (2, 3, 4) if t.c % v == 0 and t.c > v)
            y = n.node("Reshape", [t.name, n.const([batch, g, t.c // g, t.h, t.w], np.int64)])
            y = n.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
            y = n.node("Reshape", [y, n.const([batch, t.c, t.h, t.w], np.int64)])
            add(y, t.c, t.h, t.w, t.bits, t.signed, t.scale, f"channel shuffle, {g} groups", [t])
        elif kind == "upsample":
            t = pick(lambda t: t.h * t.w <= 256)
            if t is None:
                continue
            y = n.node("Resize", [t.name, "", n.const([1.0, 1.0, 2.0, 2.0])], mode="nearest",
                       coordinate_transformation_mode="asymmetric", nearest_mode="floor")
            add(y, t.c, 2 * t.h, 2 * t.w, t.bits, t.signed, t.scale, "upsample x2", [t])
        elif kind == "slice":
            t = pick(lambda t: t.c >= 2)
            if t is None:
                continue
            lo = int(rs.randint(0, t.c - 1))
            hi = int(rs.randint(lo + 1, t.c + 1))
            y = n.node("Slice", [t.name, n.const([lo], np.int64), n.const([hi], np.int64), n.const([1], np.int64)])
            add(y, hi - lo, t.h, t.w, t.bits, t.signed, t.scale, f"slice channels {lo}:{hi}", [t])
        elif kind == "scale":
            t = pick()
            m = rs.uniform(0.25, 2.0, (1, t.c, 1, 1)) * rs.choice([-1.0, 1.0], (1, t.c, 1, 1))
            y = n.node("Mul", [t.name, n.const(m)])
            q, bits, signed, sc = requant(y, True)
            add(q, t.c, t.h, t.w, bits, signed, sc, "per-channel Mul", [t])
        elif kind == "clip":
            t = pick()
            lo, hi = (-2 ** (t.bits - 2), 2 ** (t.bits - 2) - 1) if t.signed else (0, 2 ** (t.bits - 1))
            y = n.node("Clip", [t.name, n.const(lo * t.scale), n.const(hi * t.scale)])
            add(y, t.c, t.h, t.w, t.bits, t.signed, t.scale, f"clip [{lo}, {hi}] steps", [t])
    for t in [t for t in live if t.is_input and t.uses == 0]:
        conv_of(t, int(rs.randint(1, cmax)), 1, 1, 1, 0, 1, bool(rs.rand() < 0.5), "conv 1x1")
    outs = [t for t in live if t.uses == 0]
    if rs.rand() < 0.2:
        t = outs[int(rs.randint(len(outs)))]
        cout = int(rs.randint(2, 11))
        y = n.node("GlobalAveragePool", [t.name])
        y, _ = n.quant(y, abits(), t.signed)
        y = n.node("Flatten", [y])
        y = n.node("Gemm", [y, n.weight((cout, t.c), wbits()), n.const(rs.uniform(-0.5, 0.5, cout))], transB=1)
        y, sc = n.quant(y, 8, True)
        head = add(y, cout, 1, 1, 8, True, sc, "global pool + linear", [t])
        head.dims = [batch, cout]
        outs[outs.index(t)] = head
    inner = [t for t in live if t.uses and not t.is_input]
    if inner and rs.rand() < 0.3:
        outs.append(inner[int(rs.randint(len(inner)))])
    rs.shuffle(outs)
    n.notes.append("outputs " + ", ".join(t.label for t in outs))
    g = n.h.make_graph(n.nodes, f"random_graph_{seed}", inputs,
                       [n.h.make_tensor_value_info(t.name, TensorProto.FLOAT, t.dims or [batch, t.c, t.h, t.w])
                        for t in outs], n.inits)
    m = n.h.make_model(g, opset_imports=[n.h.make_opsetid("", 13), n.h.make_opsetid(QDOMAIN, 1)])
    m.ir_version = 8
    return m, n.notes


def random_design(family: str, seed: int, small):
    """(model, description, (device, `hlsgen build` options, label)): `random_net(seed)` for
    family "chain", `random_graph(seed)` for "graph", with its `random_target`."""
    model, notes = (random_graph if family == "graph" else random_net)(seed)
    ports = (len(model.graph.input), len(model.graph.output)) if family == "graph" else None
    return model, notes, random_target(seed, small, ports)


def random_target(seed: int, small, ports=None):
    """A seeded random target for `random_net(seed)`: (device, `hlsgen build` options, a short
    label). `small` is the small test device's file (designs/devices/small.yaml). With `ports`
    (the number of inputs and of outputs: a `random_graph(seed)`), a target of another stream
    of seeds, whose inputs and outputs are sometimes off chip port by port."""
    rs = np.random.RandomState((2 if ports else 1) * 10**6 + seed)
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
    elif ports and sum(ports) > 2 and rs.rand() < 0.25:
        names = [f"in{k}" for k in range(ports[0])] + [f"out{k}" for k in range(ports[1])]
        pick = [p for p in names if rs.rand() < 0.5] or names[:1]
        opts += ["--io", "offchip:" + ",".join(pick)]
        label += " io-" + "-".join(pick)
    return dev, opts, label
