"""The model zoo: seeded Brevitas builders of the networks hlsgen is measured on, and their export.

So far: InTAR's MLP and CNN-4L benchmark kernels (sizes from the InTAR repository, see
../shared/anchors.md). CoDeNet, GPT-2 and the remaining InTAR kernels (attention, VAE, gating)
need ops the frontend does not have yet (issue 3).

Builders take the options of `hlsgen zoo` and return (torch module, example input shape).
Every model is randomly initialized from the seed (no downloads), its activation quantizers are
calibrated on seeded random inputs, and the TorchScript exporter makes the file byte-identical
for the same seed.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Tuple

from ..errors import HlsgenError
from . import codenet, deformconv, gpt2     # torch is imported inside their builders only

warnings.filterwarnings("ignore", message="fast_hadamard_transform")


@dataclass(frozen=True)
class ZooModel:
    name: str
    description: str
    configs: Tuple[str, ...]
    build: Callable            # (config, act_bits, weight_bits) -> (module, input shape)
    default_act_bits: int = 8
    default_weight_bits: int = 8
    opset: int = 0              # 0: the exporter's default (QCDQ at 13)
    prepare: Callable = None    # (module, input shape, seed) -> None, before calibration
    options: Tuple[str, ...] = ()   # extra builder options the model accepts (phase, seq_len)
    stats: Callable = None      # config -> {"params", "macs", "input"} without building (big models)


MODELS: Dict[str, ZooModel] = {}


def _plain(x):
    """A QuantTensor's float value (Brevitas returns plain tensors in calibration mode)."""
    return x.value if hasattr(x, "value") else x


def _quantizers(act_bits: int, weight_bits: int):
    """The InTAR kernels' layers: per-tensor weights of `weight_bits`, activations of `act_bits`."""
    from types import SimpleNamespace

    import brevitas.nn as qnn
    from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerTensorFloat, Uint8ActPerTensorFloat

    def act(unsigned=False, quant_tensor=False):
        return qnn.QuantIdentity(act_quant=Uint8ActPerTensorFloat if unsigned else Int8ActPerTensorFloat,
                                 bit_width=act_bits, return_quant_tensor=quant_tensor)

    def relu():
        return qnn.QuantReLU(act_quant=Uint8ActPerTensorFloat, bit_width=act_bits, return_quant_tensor=True)

    def linear(cin, cout):
        return qnn.QuantLinear(cin, cout, bias=False, weight_quant=Int8WeightPerTensorFloat, weight_bit_width=weight_bits)

    def conv(cin, cout, k, stride=1, padding=0, bias=False):
        return qnn.QuantConv2d(cin, cout, k, stride=stride, padding=padding, bias=bias,
                               weight_quant=Int8WeightPerTensorFloat, weight_bit_width=weight_bits)

    def convt(cin, cout, k, stride=1, output_padding=0):
        return qnn.QuantConvTranspose2d(cin, cout, k, stride=stride, output_padding=output_padding, bias=True,
                                        weight_quant=Int8WeightPerTensorFloat, weight_bit_width=weight_bits)
    return SimpleNamespace(inp=lambda: act(quant_tensor=True), act=act, relu=relu, linear=linear, conv=conv,
                           conv3x3=lambda cin, cout: conv(cin, cout, 3, padding=1), convt=convt)


def _intar_mlp(config: str, act_bits: int, weight_bits: int):
    """InTAR's FFN kernel: one 256-vector through 256 -> 1024 -> 2048 -> 256, ReLU after each."""
    import torch.nn as nn

    q = _quantizers(act_bits, weight_bits)

    class IntarMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = q.inp()
            self.fc1, self.act1 = q.linear(256, 1024), q.relu()
            self.fc2, self.act2 = q.linear(1024, 2048), q.relu()
            self.fc3, self.act3 = q.linear(2048, 256), q.relu()

        def forward(self, x):
            x = self.act1(self.fc1(self.inp(x)))
            x = self.act2(self.fc2(x))
            return _plain(self.act3(self.fc3(x)))
    return IntarMLP(), (1, 256)


def _intar_cnn4l(config: str, act_bits: int, weight_bits: int):
    """InTAR's CNN-4L kernel: a one-channel 224x224 image; four 3x3 convs (stride 1, same
    padding) with ReLU; nearest 2x upsampling before conv 2 and conv 3; 2x2 max pooling after
    conv 3 and conv 4 (224 -> 448 -> 896 -> 448 -> 224)."""
    import torch.nn as nn

    q = _quantizers(act_bits, weight_bits)

    class IntarCNN4L(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = q.inp()
            self.conv1, self.act1 = q.conv3x3(1, 1), q.relu()
            self.up2 = nn.Upsample(scale_factor=2, mode="nearest")
            self.conv2, self.act2 = q.conv3x3(1, 1), q.relu()
            self.up3 = nn.Upsample(scale_factor=2, mode="nearest")
            self.conv3, self.act3 = q.conv3x3(1, 1), q.relu()
            self.pool3 = nn.MaxPool2d(2)
            self.conv4, self.act4 = q.conv3x3(1, 1), q.relu()
            self.pool4 = nn.MaxPool2d(2)

        def forward(self, x):
            x = self.act1(self.conv1(self.inp(x)))
            x = self.act2(self.conv2(self.up2(x)))
            x = self.pool3(self.act3(self.conv3(self.up3(x))))
            return _plain(self.pool4(self.act4(self.conv4(x))))
    return IntarCNN4L(), (1, 1, 224, 224)


def _intar_attn(config: str, act_bits: int, weight_bits: int):
    """InTAR's self-attention kernel: 256 tokens of width 1024; Q, K, V projections, scaled
    QK^T, softmax, times V (one head)."""
    import torch.nn as nn

    q = _quantizers(act_bits, weight_bits)
    n, d = 256, 1024

    class IntarAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = q.act()
            self.wq, self.wk, self.wv = q.linear(d, d), q.linear(d, d), q.linear(d, d)
            self.q_q, self.k_q, self.v_q = q.act(), q.act(), q.act()
            self.s_q, self.p_q, self.o_q = q.act(), q.act(unsigned=True), q.act()

        def forward(self, x):
            import torch
            x = self.inp(x)
            q, k, v = self.q_q(self.wq(x)), self.k_q(self.wk(x)), self.v_q(self.wv(x))
            s = self.s_q(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / d ** 0.5))
            return self.o_q(torch.matmul(self.p_q(torch.softmax(s, dim=-1)), v))
    return IntarAttention(), (1, n, d)


def _intar_gating(config: str, act_bits: int, weight_bits: int):
    """InTAR's gating network (LLaMA-style FFN): 32 tokens, 4096 -> 11008 gate and up
    projections, SiLU(gate) * up, 11008 -> 4096 down projection."""
    import torch.nn as nn

    q = _quantizers(act_bits, weight_bits)
    n, d, f = 32, 4096, 11008

    class IntarGating(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = q.act()
            self.gate, self.up, self.down = q.linear(d, f), q.linear(d, f), q.linear(f, d)
            self.gate_q, self.up_q, self.silu_q, self.h_q, self.out_q = q.act(), q.act(), q.act(), q.act(), q.act()
            self.silu = nn.SiLU()

        def forward(self, x):
            x = self.inp(x)
            h = self.h_q(self.silu_q(self.silu(self.gate_q(self.gate(x)))) * self.up_q(self.up(x)))
            return self.out_q(self.down(h))
    return IntarGating(), (1, n, d)


def _intar_vae(config: str, act_bits: int, weight_bits: int):
    """InTAR's VAE kernel as the anchors describe it: a 28x28x2 input, an 8x8 then a 4x4/2
    convolution to a 4 x 9 x 9 = 324 latent (the mean; no sampling), and a transposed-conv
    decoder back to 28x28x2. Channel counts (16) are hlsgen's choice."""
    import torch.nn as nn

    q = _quantizers(act_bits, weight_bits)

    class IntarVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = q.inp()
            self.enc1, self.act1 = q.conv(2, 16, 8, bias=True), q.relu()                      # 28 -> 21
            self.enc2, self.latent = q.conv(16, 4, 4, stride=2, bias=True), q.inp()           # 21 -> 9: 4 x 9 x 9 = 324
            self.dec1, self.act3 = q.convt(4, 16, 4, stride=2, output_padding=1), q.relu()    # 9 -> 21
            self.dec2, self.out = q.convt(16, 2, 8), q.inp()                                  # 21 -> 28

        def forward(self, x):
            z = self.latent(self.enc2(self.act1(self.enc1(self.inp(x)))))
            return _plain(self.out(self.dec2(self.act3(self.dec1(z)))))
    return IntarVAE(), (1, 2, 28, 28)


def _deformconv_stats(config):
    """Weights and MACs of the onnx.helper model, counted by hlsgen's own frontend."""
    from ..frontend import lower
    from ..ops import OPS
    model = deformconv.build(0)
    g = lower(model)
    weights = sum(t.size for t in g.tensors.values() if t.is_const)
    x = next(i for i in model.graph.input if i.name == "x")
    return {"params": int(weights), "macs": int(sum(OPS[t.op].macs(t, g) for t in g.tasks)),
            "input": [d.dim_value for d in x.type.tensor_type.shape.dim]}


# built with onnx.helper, not Brevitas: export() writes it directly
MODELS["deformconv"] = ZooModel("deformconv", "ONNX DeformConv, general form: fractional offsets, mask, bias, groups 2, "
                                "offset groups 2 (QCDQ, onnx.helper)", ("default",), None, stats=_deformconv_stats)

MODELS["intar-vae"] = ZooModel("intar-vae", "InTAR VAE: 28x28x2 -> conv 8x8, conv 4x4/2 -> 324 latent -> two transposed convs",
                               ("default",), _intar_vae)

MODELS["intar-attn"] = ZooModel("intar-attn", "InTAR self-attention: 256 x 1024, QKV projections, softmax(QK^T)V",
                                ("default",), _intar_attn)
MODELS["intar-gating"] = ZooModel("intar-gating", "InTAR gating FFN: 32 x 4096 -> 11008, SiLU(gate) * up -> 4096",
                                  ("default",), _intar_gating)

MODELS["intar-mlp"] = ZooModel("intar-mlp", "InTAR FFN kernel: 256->1024->2048->256 + ReLU, batch 1", ("default",),
                               _intar_mlp)
MODELS["intar-cnn4l"] = ZooModel("intar-cnn4l", "InTAR CNN-4L: 1-channel 224x224, 4 x (3x3 conv + ReLU), upsample x2 x2, maxpool x2",
                                 ("default",), _intar_cnn4l)


MODELS["gpt2"] = ZooModel("gpt2", "GPT-2: pre-LN decoder, causal MHA, GELU FFN, tied LM head; W4A8 (prefill/decode)",
                          ("tiny", "small", "medium"), gpt2.build, default_act_bits=8, default_weight_bits=4, opset=17,
                          options=("phase", "seq_len"), stats=gpt2.stats)

MODELS["codenet"] = ZooModel("codenet", "CoDeNet: ShuffleNetV2 + CenterNet, depthwise deformable decoder, W4A8",
                             ("a", "b", "c", "d", "e", "tiny"), codenet.build, default_act_bits=8, default_weight_bits=4,
                             opset=19,   # ONNX DeformConv exists from opset 19
                             prepare=codenet.spread_offsets)


def model_stats(name: str, config: str, act_bits: int, weight_bits: int) -> Dict:
    """Parameter count and MACs from the PyTorch module (no export)."""
    import torch

    if MODELS[name].stats is not None:
        return MODELS[name].stats(config)

    torch.manual_seed(0)
    net, shape = MODELS[name].build(config, act_bits, weight_bits)     # no calibration: shapes only
    net.eval()
    params = sum(p.numel() for n, p in net.named_parameters() if n.endswith("weight") and p.dim() > 1)
    macs = 0

    def hook(mod, inp, out):
        nonlocal macs
        w = mod.weight
        o = out.value if hasattr(out, "value") else out
        if w.dim() == 4:
            macs += o.numel() * w.shape[1] * w.shape[2] * w.shape[3]
        else:
            macs += o.numel() * w.shape[1]
    def deform_hook(mod, inp, out):
        nonlocal macs
        w = mod.weight_holder.weight
        macs += out.numel() * w.shape[1] * w.shape[2] * w.shape[3]
    def transposed_hook(mod, inp, out):
        nonlocal macs
        x = inp[0].value if hasattr(inp[0], "value") else inp[0]
        w = mod.weight                                     # (C_in, C_out/groups, KH, KW)
        macs += x.numel() * w.shape[1] * w.shape[2] * w.shape[3]

    def matmul_count(a, b):
        # activation x activation products (attention) are not modules: count them here
        nonlocal macs
        macs += int(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]).numel()) * a.shape[-2] * a.shape[-1] * b.shape[-1]
    hooks = [m.register_forward_hook(hook) for m in net.modules()
             if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)) and not _is_weight_holder(net, m)]
    hooks += [m.register_forward_hook(transposed_hook) for m in net.modules() if isinstance(m, torch.nn.ConvTranspose2d)]
    hooks += [m.register_forward_hook(deform_hook) for m in net.modules() if hasattr(m, "weight_holder")]
    real_matmul = torch.matmul

    def counting_matmul(a, b, *args, **kw):
        matmul_count(a, b)
        return real_matmul(a, b, *args, **kw)
    torch.matmul = counting_matmul
    try:
        with torch.no_grad():
            out = net(torch.zeros(*shape)) if isinstance(shape[0], int) else net(*shape)
    finally:
        torch.matmul = real_matmul
    for h in hooks:
        h.remove()
    return {"params": int(params), "macs": int(macs), "input": list(shape)}


def _is_weight_holder(net, m) -> bool:
    return any(getattr(x, "weight_holder", None) is m for x in net.modules())


def _random_like(example, seed: int):
    """Calibration inputs like the example: N(0,1) floats, integer tensors (token ids) drawn
    from [0, max + 1) of the example, scalars (positions) kept."""
    import torch

    if isinstance(example, tuple) and example and isinstance(example[0], int):
        return (torch.randn(*example),)
    g = torch.Generator().manual_seed(seed + 7)
    out = []
    for t in example:
        if t.dtype.is_floating_point:
            out.append(torch.randn(t.shape, generator=g))
        elif t.numel() == 1:
            out.append(t.clone())
        else:
            out.append(torch.randint(0, int(t.max()) + 1, t.shape, generator=g))
    return tuple(out)


def build(name: str, config: str, seed: int, act_bits: int, weight_bits: int, calibrated: bool = True, **options):
    """(module, example): the example is an input shape (float input) or a tuple of tensors.
    calibrated=False skips the activation quantizers' calibration and the model's own
    adjustment on it (`prepare`): the structure alone, in a fraction of the time. Its
    convolutions and linear layers, and so its MACs, are the calibrated model's; its scales are
    Brevitas's initial ones, so some requantizations fold differently (CoDeNet config e: 136
    tasks where the calibrated export has 149)."""
    import torch

    if name not in MODELS:
        raise HlsgenError(f"unknown zoo model {name!r}; `hlsgen zoo --list` shows them")
    m = MODELS[name]
    if m.build is None:
        raise HlsgenError(f"zoo model {name} is not a PyTorch model; export it with `hlsgen zoo {name}`")
    if config not in m.configs:
        raise HlsgenError(f"zoo model {name}: unknown config {config!r}; choose one of {', '.join(m.configs)}")
    for what, bits in (("--act-bits", act_bits), ("--weight-bits", weight_bits)):
        if not 2 <= bits <= 16:
            raise HlsgenError(f"{what} {bits}: use 2..16 bits")
    unknown = sorted(k for k, v in options.items() if v is not None and k not in m.options)
    if unknown:
        raise HlsgenError(f"zoo model {name}: option --{unknown[0].replace('_', '-')} does not apply to it")
    torch.manual_seed(seed)
    net, shape = m.build(config, act_bits, weight_bits, **{k: v for k, v in options.items() if v is not None})
    bns = [b for b in net.modules() if isinstance(b, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        # random BN statistics (so folding is exercised), fixed: BN stays in eval mode while
        # the activation quantizers calibrate in training mode
        for b in bns:
            b.weight.uniform_(0.5, 1.5)
            b.bias.uniform_(-0.3, 0.3)
            b.running_mean.uniform_(-0.2, 0.2)
            b.running_var.uniform_(0.5, 2.0)

    def calibrate():
        # Brevitas' calibration mode collects activation statistics over the batches and
        # finalizes them on exit (no momentum, so a second calibration does not drift)
        from brevitas.graph.calibrate import calibration_mode as brevitas_calibration
        net.eval()
        with torch.no_grad(), brevitas_calibration(net):
            for k in range(4):
                net(*_random_like(shape, seed + k))
        net.eval()
    if not calibrated:
        net.eval()
        return net, shape
    calibrate()
    if m.prepare is not None:
        # model-specific adjustment on calibrated activations, then calibrate again
        m.prepare(net, shape, seed)
        calibrate()
    net.eval()
    return net, shape


def export(name: str, config: str, path, fmt: str = "qonnx", seed: int = 0, act_bits: int = None,
           weight_bits: int = None, opset: int = None, calibrated: bool = True, **options) -> Path:
    """Build, calibrate and export one zoo model with the TorchScript exporter (byte-stable).
    calibrated=False: its structure alone, uncalibrated (build)."""
    import torch
    from brevitas.export import export_onnx_qcdq, export_qonnx

    m = MODELS.get(name)
    if name == "deformconv":
        from ..pipeline import write_atomic
        if fmt != "qcdq":
            raise HlsgenError("zoo model deformconv is built with onnx.helper in QCDQ form only; use --format qcdq")
        model = deformconv.build(seed)
        data = model.SerializeToString()
        write_atomic(Path(path), lambda f: f.write(data))
        return Path(path)
    act_bits = act_bits or (m.default_act_bits if m else 8)
    weight_bits = weight_bits or (m.default_weight_bits if m else 8)
    if fmt == "qcdq" and max(act_bits, weight_bits) > 8:
        raise HlsgenError(f"zoo model {name}: QCDQ export holds at most 8-bit integers (QuantizeLinear at opset 13); "
                          f"use --format qonnx for {max(act_bits, weight_bits)} bits")
    net, shape = build(name, config, seed, act_bits, weight_bits, calibrated, **options)
    torch.manual_seed(seed)
    x = torch.randn(*shape) if isinstance(shape[0], int) else tuple(shape)
    fn = {"qonnx": export_qonnx, "qcdq": export_onnx_qcdq}[fmt]
    kwargs = {"dynamo": False}
    if opset:
        kwargs["opset_version"] = opset          # e.g. 13: LayerNorm exports decomposed
    elif m is not None and m.opset:
        kwargs["opset_version"] = m.opset
    elif fmt == "qcdq":
        kwargs["opset_version"] = 13
    from ..pipeline import write_atomic
    import tempfile
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmp_path = Path(tmp) / "model.onnx"
        fn(net, x, export_path=str(tmp_path), **kwargs)
        data = tmp_path.read_bytes()
    path = Path(path)
    write_atomic(path, lambda f: f.write(data))
    return path
