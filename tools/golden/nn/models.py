# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference models for libburtorch's nn (include/burtorch/nn/mlp.hpp, nn/gpt.hpp).

Same architectures and the same flat parameter order as the C++ side, so
weights exported by our PRNG initialisation load here unchanged:
  MLP: C[V][E], W1[e][C*E], b1[e], W2[V][e], b2[V]
  GPT: tok[V][D], pos[S][D], per block: ln1.g, ln1.b, Wq, Wk, Wv [D][D],
       proj.W[D][D], proj.b, ln2.g, ln2.b, ff1.W[4D][D], ff1.b[4D],
       ff2.W[D][4D], ff2.b[D]; then lnf.g, lnf.b, head.W[V][D], head.b[V].
"""
import torch
import torch.nn as tnn
import torch.nn.functional as F


class Mlp(tnn.Module):
    """makemore MLP (Bengio et al. 2003): embeddings -> tanh -> logits."""

    def __init__(self, vocab=27, context=16, embed=64, hidden=64):
        super().__init__()
        self.context, self.embed = context, embed
        self.C = tnn.Parameter(torch.zeros(vocab, embed))
        self.hidden = tnn.Linear(context * embed, hidden)
        self.out = tnn.Linear(hidden, vocab)

    def ordered(self):
        return [self.C, self.hidden.weight, self.hidden.bias, self.out.weight, self.out.bias]

    def forward(self, ctx):  # ctx: [B, context] long
        x = self.C[ctx].reshape(ctx.shape[0], self.context * self.embed)
        return self.out(torch.tanh(self.hidden(x)))

    def loss(self, ctx, targets):
        return F.cross_entropy(self(ctx), targets)


class Attention(tnn.Module):
    """Causal multi-head self-attention; Wq/Wk/Wv are [D][D], head h uses rows h*hs..h*hs+hs-1."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.q = tnn.Linear(width, width, bias=False)
        self.k = tnn.Linear(width, width, bias=False)
        self.v = tnn.Linear(width, width, bias=False)
        self.proj = tnn.Linear(width, width)

    def ordered(self):
        return [self.q.weight, self.k.weight, self.v.weight, self.proj.weight, self.proj.bias]

    def forward(self, x):  # [B, T, D]
        B, T, D = x.shape
        hs = D // self.heads
        q = self.q(x).view(B, T, self.heads, hs).transpose(1, 2)
        k = self.k(x).view(B, T, self.heads, hs).transpose(1, 2)
        v = self.v(x).view(B, T, self.heads, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * hs ** -0.5
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, D)
        return self.proj(y)


class Block(tnn.Module):
    def __init__(self, width, heads, eps):
        super().__init__()
        self.ln1 = tnn.LayerNorm(width, eps=eps)
        self.attn = Attention(width, heads)
        self.ln2 = tnn.LayerNorm(width, eps=eps)
        self.ff1 = tnn.Linear(width, 4 * width)
        self.ff2 = tnn.Linear(4 * width, width)

    def ordered(self):
        return ([self.ln1.weight, self.ln1.bias] + self.attn.ordered() +
                [self.ln2.weight, self.ln2.bias, self.ff1.weight, self.ff1.bias, self.ff2.weight, self.ff2.bias])

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ff2(F.relu(self.ff1(self.ln2(x))))


class Gpt(tnn.Module):
    """GPT-like model of the paper's section 2.5 (pre-LayerNorm, no dropout)."""

    def __init__(self, vocab=65, block=8, width=24, heads=6, layers=6, eps=1e-5):
        super().__init__()
        self.tok = tnn.Embedding(vocab, width)
        self.pos = tnn.Embedding(block, width)
        self.blocks = tnn.ModuleList([Block(width, heads, eps) for _ in range(layers)])
        self.lnf = tnn.LayerNorm(width, eps=eps)
        self.head = tnn.Linear(width, vocab)

    def ordered(self):
        out = [self.tok.weight, self.pos.weight]
        for b in self.blocks:
            out += b.ordered()
        return out + [self.lnf.weight, self.lnf.bias, self.head.weight, self.head.bias]

    def forward(self, idx):  # [B, T]
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        for b in self.blocks:
            x = b(x)
        return self.head(self.lnf(x))

    def loss(self, idx, targets):
        logits = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def count(model):
    return sum(p.numel() for p in model.ordered())


def load_flat(model, flat):
    flat = torch.as_tensor(flat, dtype=torch.float64)
    assert flat.numel() == count(model), (flat.numel(), count(model))
    at = 0
    with torch.no_grad():
        for p in model.ordered():
            n = p.numel()
            p.copy_(flat[at:at + n].view_as(p))
            at += n


def flat_values(model):
    return torch.cat([p.detach().reshape(-1) for p in model.ordered()])


def flat_grads(model):
    return torch.cat([p.grad.detach().reshape(-1) for p in model.ordered()])
