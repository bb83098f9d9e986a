"""GPT-2 in Brevitas: pre-LN blocks, causal multi-head attention, GELU FFN, learned position
embeddings, LM head tied to the token embedding.

Quantization (InTAR's GPT-2 precision by default): weights 4-bit per output channel (8 with
--weight-bits 8), every activation 8-bit per tensor, including the inputs of GELU, softmax and
LayerNorm and their outputs, so each of them is a function of an 8-bit tensor (integer-only
inference, I-BERT style). Two graphs per config:

- prefill: token ids (1, N) -> logits (1, N, vocab);
- decode: one token id (1, 1), its position (1, 1) and the K/V cache of every layer
  (1, heads, past, head_dim) -> logits (1, 1, vocab) and the updated caches
  (1, heads, past + 1, head_dim). The cache is quantized with the same quantizer as the new
  keys/values so the Concat needs no requantization.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gpt2Config:
    layers: int
    d_model: int
    heads: int
    ffn: int
    vocab: int
    context: int


CONFIGS = {
    "tiny": Gpt2Config(2, 64, 4, 256, 512, 64),
    "small": Gpt2Config(12, 768, 12, 3072, 50257, 1024),
    "medium": Gpt2Config(24, 1024, 16, 4096, 50257, 1024),
}


def _modules(cfg: Gpt2Config, weight_bits: int, act_bits: int, phase: str, seq_len: int, past: int):
    import torch
    import torch.nn as nn
    import brevitas.nn as qnn
    from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Int8WeightPerTensorFloat, Uint8ActPerTensorFloat

    def aq(unsigned=False):
        return qnn.QuantIdentity(act_quant=Uint8ActPerTensorFloat if unsigned else Int8ActPerTensorFloat,
                                 bit_width=act_bits, return_quant_tensor=False)

    def linear(cin, cout, bias=True):
        return qnn.QuantLinear(cin, cout, bias=bias, weight_quant=Int8WeightPerChannelFloat, weight_bit_width=weight_bits)

    hd = cfg.d_model // cfg.heads

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln1_q = nn.LayerNorm(cfg.d_model), aq()
            self.qkv, self.qkv_q = linear(cfg.d_model, 3 * cfg.d_model), aq()
            self.kv_q = aq()                     # keys and values (and the cache) share this grid
            self.scores_q = aq()
            self.probs_q = aq(unsigned=True)
            self.ctx_q = aq()
            self.proj, self.proj_q = linear(cfg.d_model, cfg.d_model), aq()
            self.res1_q = aq()
            self.ln2, self.ln2_q = nn.LayerNorm(cfg.d_model), aq()
            self.fc1, self.fc1_q = linear(cfg.d_model, cfg.ffn), aq()
            self.gelu, self.gelu_q = nn.GELU(), aq()
            self.fc2, self.fc2_q = linear(cfg.ffn, cfg.d_model), aq()
            self.res2_q = aq()

        def heads(self, t):
            b, n, _ = t.shape
            return t.reshape(b, n, cfg.heads, hd).transpose(1, 2)

        def forward(self, x, mask, past_k=None, past_v=None):
            h = self.ln1_q(self.ln1(x))
            qkv = self.qkv_q(self.qkv(h))
            q, k, v = qkv.split(cfg.d_model, dim=2)
            q, k, v = self.heads(q), self.kv_q(self.heads(k)), self.kv_q(self.heads(v))
            if past_k is not None:
                k = torch.cat([self.kv_q(past_k), k], dim=2)
                v = torch.cat([self.kv_q(past_v), v], dim=2)
            s = self.scores_q(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / hd ** 0.5))
            if mask is not None:
                s = s.masked_fill(mask, float("-inf"))
            p = self.probs_q(torch.softmax(s, dim=-1))
            c = self.ctx_q(torch.matmul(p, v))
            b, _, n, _ = c.shape
            c = c.transpose(1, 2).reshape(b, n, cfg.d_model)
            x = self.res1_q(x + self.proj_q(self.proj(c)))
            f = self.fc2_q(self.fc2(self.gelu_q(self.gelu(self.fc1_q(self.fc1(self.ln2_q(self.ln2(x))))))))
            return self.res2_q(x + f), k, v

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = qnn.QuantEmbedding(cfg.vocab, cfg.d_model, weight_quant=Int8WeightPerTensorFloat, weight_bit_width=8)
            self.wpe = qnn.QuantEmbedding(cfg.context, cfg.d_model, weight_quant=Int8WeightPerTensorFloat, weight_bit_width=8)
            self.emb_q = aq()
            self.blocks = nn.ModuleList([Block() for _ in range(cfg.layers)])
            self.ln_f, self.ln_f_q = nn.LayerNorm(cfg.d_model), aq()
            self.head = linear(cfg.d_model, cfg.vocab, bias=False)
            self.head.weight = self.wte.weight       # tied LM head (quantized per row here)
            self.logits_q = aq()
            if phase == "prefill":
                causal = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
                self.register_buffer("mask", causal.reshape(1, 1, seq_len, seq_len), persistent=False)
                self.register_buffer("positions", torch.arange(seq_len).reshape(1, seq_len), persistent=False)

        def forward(self, ids, *rest):
            if phase == "prefill":
                x = self.emb_q(self.wte(ids) + self.wpe(self.positions))
                for blk in self.blocks:
                    x, _, _ = blk(x, self.mask)
                return self.logits_q(self.head(self.ln_f_q(self.ln_f(x))))
            pos, caches = rest[0], rest[1:]
            x = self.emb_q(self.wte(ids) + self.wpe(pos))
            new = []
            for i, blk in enumerate(self.blocks):
                x, k, v = blk(x, None, caches[2 * i], caches[2 * i + 1])
                new += [k, v]
            return (self.logits_q(self.head(self.ln_f_q(self.ln_f(x)))), *new)

    return GPT2()


def build(config: str, act_bits: int, weight_bits: int, phase: str = "prefill", seq_len: int = None, past: int = None):
    """(module, example inputs) for one phase. seq_len: prefill tokens (default: the context,
    capped at 128 for small/medium); past: decode cache length (default seq_len - 1)."""
    import torch

    from ..errors import HlsgenError

    cfg = CONFIGS[config]
    n = seq_len or min(cfg.context, 128)
    if not (1 <= n <= cfg.context) or (phase == "decode" and n < 2):
        raise HlsgenError(f"gpt2 {config}: --seq-len {n} must be in [{1 if phase == 'prefill' else 2}, {cfg.context}] "
                          f"(the context length) for {phase}")
    net = _modules(cfg, weight_bits, act_bits, phase, n, past)
    g = torch.Generator().manual_seed(0)
    if phase == "prefill":
        example = (torch.randint(0, cfg.vocab, (1, n), generator=g),)
    else:
        p = past if past is not None else n - 1
        hd = cfg.d_model // cfg.heads
        caches = []
        for _ in range(cfg.layers):
            caches += [torch.randn(1, cfg.heads, p, hd, generator=g), torch.randn(1, cfg.heads, p, hd, generator=g)]
        example = (torch.randint(0, cfg.vocab, (1, 1), generator=g), torch.tensor([[p]]), *caches)
    return net, example


def stats(config: str, phase: str = "prefill", seq_len: int = None) -> dict:
    """Weights and MACs by formula (building GPT-2 medium just to count would take a minute)."""
    c = CONFIGS[config]
    n = seq_len or min(c.context, 128)
    d, f = c.d_model, c.ffn
    per_layer_w = d * 3 * d + d * d + d * f + f * d
    params = c.layers * per_layer_w + c.vocab * d + c.context * d
    tokens, keys = (n, n) if phase == "prefill" else (1, n)
    macs = c.layers * (tokens * per_layer_w + 2 * tokens * keys * d) + tokens * d * c.vocab
    return {"params": params, "macs": macs, "input": [1, tokens]}
