# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of row 5 (paper Table 7): the GPT-like model in FP32, time
per SGD step on a batch of B sequences of 8 characters, as bench_gpt.
6 layers, 6 heads, width 24, pre-LayerNorm blocks, causal self-attention
(q, k, v without bias, projection with bias), feed-forward 24-96-24 with
ReLU, final LayerNorm and linear head; the same architecture and parameter
count (46,337 for 65 symbols) as burtorch::nn::Gpt. The idiomatic fast way:
batched (B, T, H, hs) attention with a causal mask, fused F.cross_entropy,
torch.optim.SGD, zero_grad with set_to_none.

Usage: gpt.py --batch B [--steps N] [--warmup W] [--data FILE] [--lr X]
"""
import math

import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Steps, emit, now, step_flags

T0 = now()
BLOCK, WIDTH, HEADS, LAYERS = 8, 24, 6, 6


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(WIDTH, WIDTH, bias=False)
        self.k = nn.Linear(WIDTH, WIDTH, bias=False)
        self.v = nn.Linear(WIDTH, WIDTH, bias=False)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.register_buffer("mask", torch.tril(torch.ones(BLOCK, BLOCK, dtype=torch.bool)))

    def forward(self, x):
        b, t, d = x.shape
        hs = d // HEADS
        q = self.q(x).view(b, t, HEADS, hs).transpose(1, 2)
        k = self.k(x).view(b, t, HEADS, hs).transpose(1, 2)
        v = self.v(x).view(b, t, HEADS, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(WIDTH)
        self.ff1 = nn.Linear(WIDTH, 4 * WIDTH)
        self.ff2 = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ff2(F.relu(self.ff1(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tok = nn.Embedding(vocab, WIDTH)
        self.pos = nn.Embedding(BLOCK, WIDTH)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.lnf = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, vocab)
        for name, p in self.named_parameters():  # nanoGPT-style init, as the C++ side
            if name.endswith("bias") or ".ln" in name or name.startswith("ln"):
                continue
            nn.init.normal_(p, 0.0, 0.02)

    def forward(self, idx, targets):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        logits = self.head(self.lnf(self.blocks(x)))
        return F.cross_entropy(logits.view(b * t, -1), targets.reshape(b * t))


def main():
    batch, steps, warmup, lr, path = step_flags(0.01)
    if path is None:
        g = torch.Generator().manual_seed(11)
        text = "".join(chr(32 + int(c)) for c in torch.randint(0, 65, (20000,), generator=g))
    else:
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
    chars = sorted(set(text))
    code = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([code[c] for c in text], dtype=torch.long)
    torch.manual_seed(1)
    model = Gpt(len(chars))
    n_params = sum(p.numel() for p in model.parameters())
    offsets = torch.arange(BLOCK)

    def step_loss():
        ix = torch.randint(0, data.numel() - BLOCK - 1, (batch, 1)) + offsets
        return model(data[ix], data[ix + 1])

    run = Steps(T0, torch.optim.SGD(model.parameters(), lr=lr), step_loss, warmup, steps)
    emit({"bench": "gpt", "batch": batch, "params": n_params, "vocab": len(chars), "steps": steps, **run.fields(),
          "samples": run.times})


if __name__ == "__main__":
    main()
