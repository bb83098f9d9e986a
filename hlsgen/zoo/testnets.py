"""Small seeded Brevitas networks covering the Foundation op set, and their export.

Used by the test suite and `make demo`. Every builder is deterministic for a given seed:
weights come from torch's seeded RNG, and activation quantizers are calibrated on seeded
random inputs in training mode before export.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Callable, Dict, Tuple

NETS: Dict[str, Tuple[Callable, Tuple[int, ...]]] = {}


def _register(name, input_shape):
    def deco(fn):
        NETS[name] = (fn, input_shape)
        return fn
    return deco


def _imports():
    import torch
    import torch.nn as nn
    import brevitas.nn as qnn
    from brevitas.quant import Int8WeightPerChannelFloat, Int8WeightPerTensorFloat, Int8ActPerTensorFloat, Uint8ActPerTensorFloat
    return torch, nn, qnn, Int8WeightPerChannelFloat, Int8WeightPerTensorFloat, Int8ActPerTensorFloat, Uint8ActPerTensorFloat


def _conv(qnn, wq, cin, cout, k, stride=1, groups=1, bits=4, bias=False):
    return qnn.QuantConv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=bias,
                           weight_quant=wq, weight_bit_width=bits)


@_register("conv_bn_relu", (1, 3, 16, 16))
def conv_bn_relu():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.conv = _conv(qnn, WPC, 3, 8, 3, bits=8)
            self.bn = nn.BatchNorm2d(8)
            self.relu = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)

        def forward(self, x):
            return self.relu(self.bn(self.conv(self.inp(x))))
    return Net()


@_register("depthwise_s2", (1, 8, 16, 16))
def depthwise_s2():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.dw = _conv(qnn, WPC, 8, 8, 3, stride=2, groups=8, bits=4, bias=True)
            self.bn = nn.BatchNorm2d(8)
            self.out = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)

        def forward(self, x):
            return self.out(self.bn(self.dw(self.inp(x))))
    return Net()


@_register("pointwise", (1, 16, 8, 8))
def pointwise():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.pw = _conv(qnn, WPC, 16, 24, 1, bits=4, bias=True)
            self.relu = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)

        def forward(self, x):
            return self.relu(self.pw(self.inp(x)))
    return Net()


@_register("maxpool", (1, 4, 12, 12))
def maxpool():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.conv = _conv(qnn, WPT, 4, 8, 3, bits=4)
            self.relu = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.pool = nn.MaxPool2d(3, stride=2, padding=1)

        def forward(self, x):
            return self.pool(self.relu(self.conv(self.inp(x))))
    return Net()


@_register("residual", (1, 8, 8, 8))
def residual():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.c1 = _conv(qnn, WPC, 8, 8, 3, bits=4)
            self.bn1 = nn.BatchNorm2d(8)
            self.r1 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.c2 = _conv(qnn, WPC, 8, 8, 3, bits=4)
            self.bn2 = nn.BatchNorm2d(8)
            self.q2 = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.out = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)

        def forward(self, x):
            x = self.inp(x)
            y = self.q2(self.bn2(self.c2(self.r1(self.bn1(self.c1(x))))))
            return self.out(x + y)   # two differently scaled inputs
    return Net()


@_register("gap_linear", (1, 8, 8, 8))
def gap_linear():
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.conv = _conv(qnn, WPC, 8, 16, 3, bits=4)
            self.relu = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.q = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=True)
            self.fc = qnn.QuantLinear(16, 10, bias=True, weight_quant=WPC, weight_bit_width=4)

        def forward(self, x):
            x = self.q(self.gap(self.relu(self.conv(self.inp(x)))))
            return self.fc(torch.flatten(x, 1))
    return Net()


def _mlp(bits):
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.fc1 = qnn.QuantLinear(32, 64, bias=True, weight_quant=WPC, weight_bit_width=bits)
            self.r1 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.fc2 = qnn.QuantLinear(64, 32, bias=True, weight_quant=WPC, weight_bit_width=bits)
            self.r2 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.fc3 = qnn.QuantLinear(32, 10, bias=True, weight_quant=WPT, weight_bit_width=bits)
            self.out = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)

        def forward(self, x):
            return self.out(self.fc3(self.r2(self.fc2(self.r1(self.fc1(self.inp(x)))))))
    return Net()


@_register("mlp_w4", (1, 32))
def mlp_w4():
    return _mlp(4)


@_register("mlp_w8", (1, 32))
def mlp_w8():
    return _mlp(8)


@_register("demo_cnn", (1, 3, 32, 32))
def demo_cnn():
    """A small ShuffleNet-flavoured CNN: stem conv + BN + ReLU, max pool, depthwise stride-2
    conv, 1x1 conv, residual add, global average pool, classifier."""
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.stem = _conv(qnn, WPC, 3, 16, 3, stride=2, bits=8)
            self.bn0 = nn.BatchNorm2d(16)
            self.r0 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.pool = nn.MaxPool2d(2)
            self.dw = _conv(qnn, WPC, 16, 16, 3, stride=2, groups=16, bits=4)
            self.bn1 = nn.BatchNorm2d(16)
            self.q1 = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.pw = _conv(qnn, WPC, 16, 16, 1, bits=4)
            self.bn2 = nn.BatchNorm2d(16)
            self.r2 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.q3 = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=True)
            self.r3 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=True)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.q4 = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=True)
            self.fc = qnn.QuantLinear(16, 10, bias=True, weight_quant=WPC, weight_bit_width=4)

        def forward(self, x):
            x = self.pool(self.r0(self.bn0(self.stem(self.inp(x)))))
            y = self.q1(self.bn1(self.dw(x)))
            z = self.r2(self.bn2(self.pw(y)))
            x = self.r3(self.q3(y) + self.q3(z))
            x = self.q4(self.gap(x))
            return self.fc(torch.flatten(x, 1))
    return Net()


@_register("shuffle_block", (1, 8, 8, 8))
def shuffle_block():
    """A ShuffleNetV2 unit and friends: Split, branch (1x1, dw3x3, 1x1), Concat with a shared
    quantizer, channel shuffle (view-transpose-view), nearest 2x upsample, Slice, and
    Brevitas' TruncAvgPool2d (QONNX Trunc)."""
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=False)
            self.pw1 = _conv(qnn, WPC, 4, 4, 1, bits=4)
            self.bn1 = nn.BatchNorm2d(4)
            self.r1 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)
            self.dw = _conv(qnn, WPC, 4, 4, 3, groups=4, bits=4)
            self.bn2 = nn.BatchNorm2d(4)
            self.q2 = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.pw2 = _conv(qnn, WPC, 4, 4, 1, bits=4)
            self.bn3 = nn.BatchNorm2d(4)
            self.shared = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)
            self.qpool = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=True)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.pool = qnn.TruncAvgPool2d(kernel_size=2, stride=2, bit_width=8, return_quant_tensor=True)
            self.out = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=False)

        def forward(self, x):
            x = self.inp(x)
            a, b = x.chunk(2, dim=1)
            b = self.pw2(self.q2(self.bn2(self.dw(self.r1(self.bn1(self.pw1(b)))))))
            y = torch.cat([self.shared(a), self.shared(self.bn3(b))], dim=1)
            n, c, h, w = y.shape
            y = y.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
            y = self.up(y)[:, :, 2:, :]
            return self.out(self.pool(self.qpool(y)))
    return Net()


@_register("two_ports", ((1, 4, 8, 8), (1, 4, 8, 8)))
def two_ports():
    """Two graph inputs and two graph outputs of different sizes (a detector's image and
    feature map in, its heads out): a 1x1 conv on the first input, added to the second, then a
    full-size head and a pooled, narrower head. Exercises the ports in0/in1, out0/out1 of the
    emitted kernels and `--io` per port."""
    torch, nn, qnn, WPC, WPT, A8, U8 = _imports()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inx = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.iny = qnn.QuantIdentity(act_quant=U8, return_quant_tensor=False)
            self.pw = _conv(qnn, WPC, 4, 4, 1, bits=4)
            self.bn = nn.BatchNorm2d(4)
            self.q = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.out0 = qnn.QuantReLU(act_quant=U8, return_quant_tensor=False)
            self.head = _conv(qnn, WPC, 4, 2, 1, bits=4)
            self.hq = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)
            self.pool = nn.MaxPool2d(2)
            self.out1 = qnn.QuantIdentity(act_quant=A8, return_quant_tensor=False)

        def forward(self, x, y):
            s = self.out0(self.q(self.bn(self.pw(self.inx(x)))) + self.q(self.iny(y)))
            return s, self.out1(self.pool(self.hq(self.head(s))))
    return Net()


def _shapes(shape) -> Tuple[Tuple[int, ...], ...]:
    """A net's input shapes: one shape, or a tuple of them for a net with several inputs."""
    return tuple(shape) if isinstance(shape[0], tuple) else (tuple(shape),)


def build(name: str, seed: int = 0):
    """Instantiate a test net with seeded weights and calibrated activation quantizers."""
    import torch

    fn, shape = NETS[name]
    torch.manual_seed(seed)
    net = fn()
    with torch.no_grad():
        # randomize BN statistics so folding is exercised, then calibrate quantizers
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.momentum = 0.0  # keep the randomized statistics during calibration
        net.train()
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()
        for _ in range(4):
            net(*[torch.randn(8, *s[1:]) for s in _shapes(shape)])
    net.eval()
    return net, shape


def export(name: str, path, fmt: str = "qonnx", dynamo: bool = False, seed: int = 0) -> Path:
    """Build test net `name` and export it with Brevitas: fmt 'qonnx' or 'qcdq'."""
    import torch
    from brevitas.export import export_onnx_qcdq, export_qonnx

    net, shape = build(name, seed)
    torch.manual_seed(seed)
    xs = tuple(torch.randn(*s) for s in _shapes(shape))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fn = {"qonnx": export_qonnx, "qcdq": export_onnx_qcdq}[fmt]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"dynamo": dynamo}
        if not dynamo and fmt == "qcdq":
            kwargs["opset_version"] = 13
        fn(net, xs if len(xs) > 1 else xs[0], export_path=str(path), **kwargs)
    return path


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m hlsgen.zoo.testnets", description="Export a small seeded Brevitas test network to ONNX.")
    ap.add_argument("name", choices=sorted(NETS))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--format", choices=["qonnx", "qcdq"], default="qonnx")
    ap.add_argument("--dynamo", action="store_true", help="use the torch.export (dynamo) exporter instead of TorchScript")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    p = export(a.name, a.output, a.format, a.dynamo, a.seed)
    print(f"wrote {p} ({a.name}, {a.format}, {'dynamo' if a.dynamo else 'torchscript'} exporter, seed {a.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
