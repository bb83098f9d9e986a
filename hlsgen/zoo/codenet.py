"""CoDeNet (Dong, Wang et al., FPGA 2021): a CenterNet detector on a ShuffleNetV2 encoder with
depthwise *deformable* 3x3 convolutions in the decoder, in Brevitas.

Architecture (../shared/anchors.md):
- stem: 3x3 conv 3 -> 24, stride 4 (configs a, c, d), or stride 2 + 3x3/2 maxpool (b, e);
- three ShuffleNetV2 stages, each a stride-2 unit then [3, 7, 3] stride-1 units; channels
  [116, 232, 464] (1x) or [244, 488, 976] (2x); units split -> (1x1, dw3x3, 1x1) -> concat ->
  channel shuffle (2 groups), no residual adds;
- 1x1 conv to 1024 channels (2048 for 2x);
- decoder: 3 x [depthwise deformable 3x3 -> 1x1 conv to 256/128/64 -> BN -> ReLU -> nearest 2x];
- heads hm (20 VOC classes), wh (2), reg (2): 1x1 64->64, BN, ReLU, dw3x3, BN, ReLU, 1x1 + bias.

The deformable convolution is CoDeNet's simplified form: one offset scalar per output pixel
from a 1x1 conv to one channel, clamped to [0, 7] and rounded to an integer by a 3-bit
quantizer of scale 1; the taps sit at p + k*s. It is exported as a standard ONNX DeformConv
(opset 19) whose offsets are (k-1)*(s-1) per tap (Mul and Sub by constants), so onnxruntime
and onnx's reference evaluator run the file.

Quantization: weights 4-bit per output channel (first layer 8-bit), activations 8-bit per
tensor; each concatenation shares one quantizer between its inputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np


@dataclass(frozen=True)
class CodenetConfig:
    input_size: int
    stem_stride: int            # 4, or 2 followed by a 3x3/2 max pool
    stem_channels: int
    stage_channels: Tuple[int, int, int]
    stage_units: Tuple[int, int, int]   # stride-1 units after each stride-2 unit
    conv5: int
    decoder: Tuple[int, int, int]
    head: int
    classes: int = 20


CONFIGS = {
    "a": CodenetConfig(256, 4, 24, (116, 232, 464), (3, 7, 3), 1024, (256, 128, 64), 64),
    "b": CodenetConfig(256, 2, 24, (116, 232, 464), (3, 7, 3), 1024, (256, 128, 64), 64),
    "c": CodenetConfig(512, 4, 24, (116, 232, 464), (3, 7, 3), 1024, (256, 128, 64), 64),
    "d": CodenetConfig(512, 4, 24, (244, 488, 976), (3, 7, 3), 2048, (256, 128, 64), 64),
    "e": CodenetConfig(512, 2, 24, (244, 488, 976), (3, 7, 3), 2048, (256, 128, 64), 64),
    "tiny": CodenetConfig(64, 4, 8, (16, 32, 32), (0, 0, 0), 32, (32, 16, 16), 16),
}


def deform_conv_integer(x: np.ndarray, w: np.ndarray, offset: np.ndarray, pad: int) -> np.ndarray:
    """Float deformable 3x3 conv (stride 1, dilation 1) with integer offsets: each tap reads
    one pixel, zero outside. Same result as ONNX DeformConv for integer offsets."""
    n, c, h, wd = x.shape
    groups = c // w.shape[1]
    cg = w.shape[1]
    out = np.zeros((n, w.shape[0], h, wd), dtype=np.float32)
    ys = np.arange(h).reshape(1, h, 1)
    xs = np.arange(wd).reshape(1, 1, wd)
    nidx = np.arange(n).reshape(n, 1, 1)
    og = w.shape[0] // groups
    for i in range(3):
        for j in range(3):
            t = i * 3 + j
            py = (ys - pad + i + offset[:, 2 * t]).astype(np.int64)
            px = (xs - pad + j + offset[:, 2 * t + 1]).astype(np.int64)
            inside = (py >= 0) & (py < h) & (px >= 0) & (px < wd)
            v = x[nidx, :, np.clip(py, 0, h - 1), np.clip(px, 0, wd - 1)]          # n, h, w, c
            v = np.moveaxis(v, -1, 1) * inside[:, None]
            v = v.reshape(n, groups, cg, h, wd)
            wg = w[:, :, i, j].reshape(groups, og, cg)
            out += np.einsum("ngchw,goc->ngohw", v, wg).reshape(n, -1, h, wd)
    return out


def _modules():
    import torch
    import torch.nn as nn
    import brevitas.nn as qnn
    from brevitas.core.scaling import ScalingImplType
    from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Uint8ActPerTensorFloat

    class OffsetQuant(Uint8ActPerTensorFloat):
        """3-bit unsigned with a constant scale of 1: round and clamp the offset to 0..7."""
        bit_width = 3
        scaling_impl_type = ScalingImplType.CONST
        scaling_init = 7.0

    class DeformFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, offset):
            y = deform_conv_integer(x.detach().numpy(), w.detach().numpy(), offset.detach().numpy(), 1)
            return torch.from_numpy(y)

        @staticmethod
        def symbolic(g, x, w, offset):
            groups = x.type().sizes()[1]
            return g.op("DeformConv", x, w, offset, group_i=groups, kernel_shape_i=[3, 3], offset_group_i=1,
                        pads_i=[1, 1, 1, 1], strides_i=[1, 1], dilations_i=[1, 1])

    def conv(cin, cout, k, stride=1, groups=1, bits=4, bias=False):
        return qnn.QuantConv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=bias,
                               weight_quant=Int8WeightPerChannelFloat, weight_bit_width=bits)

    def relu_q():
        return qnn.QuantReLU(act_quant=Uint8ActPerTensorFloat, return_quant_tensor=False)

    def signed_q():
        return qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, return_quant_tensor=False)

    class ConvBN(nn.Module):
        """conv -> BN -> quantized ReLU (or a signed quantizer when relu=False)."""

        def __init__(self, cin, cout, k, stride=1, groups=1, bits=4, relu=True, out_q=None):
            super().__init__()
            self.conv = conv(cin, cout, k, stride, groups, bits)
            self.bn = nn.BatchNorm2d(cout)
            self.q = out_q if out_q is not None else (relu_q() if relu else signed_q())

        def forward(self, x):
            return self.q(self.bn(self.conv(x)))

    def shuffle(x):
        n, c, h, w = x.shape
        return x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)

    class DownUnit(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            half = cout // 2
            self.out_q = relu_q()      # shared by both branches: the concat needs one scale
            self.b1_dw = ConvBN(cin, cin, 3, 2, groups=cin, relu=False)
            self.b1_pw = ConvBN(cin, half, 1, out_q=self.out_q)
            self.b2_pw1 = ConvBN(cin, half, 1)
            self.b2_dw = ConvBN(half, half, 3, 2, groups=half, relu=False)
            self.b2_pw2 = ConvBN(half, half, 1, out_q=self.out_q)

        def forward(self, x):
            a = self.b1_pw(self.b1_dw(x))
            b = self.b2_pw2(self.b2_dw(self.b2_pw1(x)))
            return shuffle(torch.cat([a, b], dim=1))

    class Unit(nn.Module):
        def __init__(self, c):
            super().__init__()
            half = c // 2
            self.out_q = relu_q()
            self.pw1 = ConvBN(half, half, 1)
            self.dw = ConvBN(half, half, 3, groups=half, relu=False)
            self.pw2 = ConvBN(half, half, 1, out_q=self.out_q)

        def forward(self, x):
            a, b = x.chunk(2, dim=1)
            return shuffle(torch.cat([self.out_q(a), self.pw2(self.dw(self.pw1(b)))], dim=1))

    class DeformDW(nn.Module):
        """CoDeNet's depthwise deformable 3x3: offset scalar s from a 1x1 conv, taps at p + k*s."""

        def __init__(self, c):
            super().__init__()
            self.offset = conv(c, 1, 1, bias=True)
            self.offset_q = qnn.QuantReLU(act_quant=OffsetQuant, return_quant_tensor=False)
            self.weight_holder = conv(c, c, 3, groups=c)
            coef = torch.tensor([[i - 1, j - 1] for i in range(3) for j in range(3)], dtype=torch.float32)
            self.register_buffer("coef", coef.reshape(1, 18, 1, 1))
            self.out_q = signed_q()

        def forward(self, x):
            s = self.offset_q(self.offset(x))
            offsets = s * self.coef - self.coef            # tap k at p + k*s  <=>  offset (k-1)*(s-1)
            w = self.weight_holder.quant_weight()
            w = w.value if hasattr(w, "value") else w
            return self.out_q(DeformFn.apply(x, w, offsets))

    class Head(nn.Module):
        def __init__(self, cin, mid, cout):
            super().__init__()
            self.pw = ConvBN(cin, mid, 1)
            self.dw = ConvBN(mid, mid, 3, groups=mid)
            self.out = conv(mid, cout, 1, bias=True)
            self.q = signed_q()

        def forward(self, x):
            return self.q(self.out(self.dw(self.pw(x))))

    class CoDeNet(nn.Module):
        def __init__(self, cfg: CodenetConfig):
            super().__init__()
            self.inp = signed_q()
            self.stem = ConvBN(3, cfg.stem_channels, 3, cfg.stem_stride, bits=8)
            self.pool = nn.MaxPool2d(3, 2, padding=1) if cfg.stem_stride == 2 else None
            layers, cin = [], cfg.stem_channels
            for c, n in zip(cfg.stage_channels, cfg.stage_units):
                layers.append(DownUnit(cin, c))
                layers += [Unit(c) for _ in range(n)]
                cin = c
            self.stages = nn.Sequential(*layers)
            self.conv5 = ConvBN(cin, cfg.conv5, 1)
            dec, cin = [], cfg.conv5
            for c in cfg.decoder:
                dec += [DeformDW(cin), ConvBN(cin, c, 1), nn.Upsample(scale_factor=2, mode="nearest")]
                cin = c
            self.decoder = nn.Sequential(*dec)
            self.hm = Head(cin, cfg.head, cfg.classes)
            self.wh = Head(cin, cfg.head, 2)
            self.reg = Head(cin, cfg.head, 2)

        def forward(self, x):
            x = self.stem(self.inp(x))
            if self.pool is not None:
                x = self.pool(x)
            x = self.decoder(self.conv5(self.stages(x)))
            return self.hm(x), self.wh(x), self.reg(x)

    return CoDeNet


def build(config: str, act_bits: int, weight_bits: int):
    if act_bits != 8 or weight_bits != 4:
        from ..errors import HlsgenError
        raise HlsgenError("codenet is defined at 4-bit weights (8-bit first layer) and 8-bit activations; "
                          "drop --act-bits/--weight-bits")
    cfg = CONFIGS[config]
    net = _modules()(cfg)
    return net, (1, 3, cfg.input_size, cfg.input_size)


def spread_offsets(net, shape, seed: int) -> None:
    """Random weights would leave most offset scalars at 0 (a ReLU of a zero-mean value) and
    never exercise the deformable path. Rescale each offset conv so that, on seeded random
    inputs, its output has mean 3.5 and a standard deviation of 2.5 across the pixels of an
    image: after rounding and clamping the offsets cover 0..7."""
    import torch

    deform = [m for m in net.modules() if hasattr(m, "weight_holder")]
    stats = {}

    class Measured(Exception):
        """Raised by the hook once the offset conv has run: nothing after it in the network
        bears on its statistics, so the forward stops there (the decoder's later, larger layers
        and the heads are not computed; the statistics are the same)."""

    def hook(mod, inp, out):
        v = out.detach()
        v = v.value if hasattr(v, "value") else v
        # spread within an image (the deformation varies from pixel to pixel), averaged over images
        spatial = float(v.flatten(1).var(dim=1).mean().sqrt())
        stats[mod] = (float(v.mean()), spatial if spatial > 1e-6 else 1.0)
        raise Measured
    g = torch.Generator().manual_seed(seed + 1)
    for d in deform:
        h = d.offset.register_forward_hook(hook)
        try:
            with torch.no_grad():
                net.eval()
                net(torch.randn(8, *shape[1:], generator=g))   # across inputs, not one image
        except Measured:
            pass
        finally:
            h.remove()
        mean, std = stats[d.offset]
        with torch.no_grad():
            d.offset.weight.mul_(2.5 / std)
            d.offset.bias.copy_(d.offset.bias * 2.5 / std + (3.5 - mean * 2.5 / std))
