# SPDX-License-Identifier: Apache-2.0
"""Golden values and gradients of libburtorch's nn layers, losses, models and
optimizers, computed by PyTorch in FP64 from seeded random weights and
inputs. Writes tests/golden/test_nn_golden.hpp (read by tests/nn/test_nn_layers.cpp).

Run: /usr/bin/python3 tools/golden/nn/make_layers.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from common import ROOT, Header  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.manual_seed(20250315)
H = Header(os.path.join(ROOT, "tests", "golden", "test_nn_golden.hpp"), "BURTORCH_TESTS_NN_GOLDEN_HPP",
           "tools/golden/nn/make_layers.py")


def leaf(*shape, scale=1.0, shift=0.0):
    return (torch.randn(*shape) * scale + shift).requires_grad_(True)


# --- Linear with each activation, with and without bias; root = sum(y * c)
ACTS = {"identity": lambda z: z, "tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid}
for name, fn in ACTS.items():
    for bias in (True, False):
        if not bias and name != "tanh":
            continue
        tag = "linear_%s%s" % (name, "" if bias else "_nobias")
        W, b, x, c = leaf(3, 5), leaf(3), leaf(5), torch.randn(3)
        y = fn(W @ x + (b if bias else 0.0))
        (y * c).sum().backward()
        H.array(tag + "_w", W)
        H.array(tag + "_b", b)
        H.array(tag + "_x", x)
        H.array(tag + "_c", c)
        H.array(tag + "_y", y)
        H.array(tag + "_gw", W.grad)
        H.array(tag + "_gb", b.grad if bias else torch.zeros(3))
        H.array(tag + "_gx", x.grad)

# --- LayerNorm(7)
g, beta, x, c = leaf(7, scale=0.2, shift=1.0), leaf(7, scale=0.2), leaf(7, scale=2.0, shift=0.5), torch.randn(7)
y = F.layer_norm(x, (7,), g, beta, 1e-5)
(y * c).sum().backward()
for k, v in (("x", x), ("g", g), ("beta", beta), ("c", c), ("y", y), ("gx", x.grad), ("gg", g.grad),
             ("gbeta", beta.grad)):
    H.array("layernorm_" + k, v)

# --- Causal self-attention, D=8, H=2, T=5; root = sum(out * c)
att = models.Attention(8, 2)
with torch.no_grad():
    for p in att.ordered():
        p.copy_(torch.randn_like(p) * 0.4)
x = leaf(5, 8)
c = torch.randn(5, 8)
out = att(x.unsqueeze(0))[0]
(out * c).sum().backward()
H.array("attention_params", models.flat_values(att))
H.array("attention_x", x)
H.array("attention_c", c)
H.array("attention_y", out)
H.array("attention_gparams", models.flat_grads(att))
H.array("attention_gx", x.grad)

# --- Cross-entropy with large logits (stability) and MSE
z = leaf(10, scale=3.0, shift=1000.0)
loss = F.cross_entropy(z.unsqueeze(0), torch.tensor([7]))
loss.backward()
H.array("ce_logits", z)
H.integer("ce_target", 7)
H.scalar("ce_loss", loss)
H.array("ce_grad", z.grad)
p, t = leaf(6), torch.randn(6)
loss = F.mse_loss(p, t)
loss.backward()
H.array("mse_pred", p)
H.array("mse_target", t)
H.scalar("mse_loss", loss)
H.array("mse_grad", p.grad)

# --- A small makemore MLP (V=7, context 3, E=4, hidden 5), a batch of two
mlp = models.Mlp(vocab=7, context=3, embed=4, hidden=5)
models.load_flat(mlp, torch.randn(models.count(mlp)) * 0.5)
ctx = torch.tensor([[2, 0, 2], [0, 0, 5]])
tgt = torch.tensor([3, 6])
losses = F.cross_entropy(mlp(ctx), tgt, reduction="none")
losses.mean().backward()
H.array("mlp_params", models.flat_values(mlp))
H.array("mlp_contexts", ctx.reshape(-1).tolist(), kind="int")
H.array("mlp_targets", tgt.tolist(), kind="int")
H.array("mlp_losses", losses)
H.array("mlp_grads", models.flat_grads(mlp))

# --- A small GPT (V=11, block 4, D=8, H=2, 1 layer; small boards hold it in FP64), one sequence
gpt = models.Gpt(vocab=11, block=4, width=8, heads=2, layers=1)
vals = torch.randn(models.count(gpt)) * 0.3
models.load_flat(gpt, vals)
with torch.no_grad():  # LayerNorm gains near 1
    for m in [gpt.lnf] + [b.ln1 for b in gpt.blocks] + [b.ln2 for b in gpt.blocks]:
        m.weight.copy_(1.0 + 0.1 * torch.randn(8))
idx = torch.tensor([[3, 1, 4, 1]])
tgt = torch.tensor([[5, 9, 2, 6]])
logits = gpt(idx)
loss = gpt.loss(idx, tgt)
loss.backward()
H.array("gpt_params", models.flat_values(gpt))
H.array("gpt_tokens", idx.reshape(-1).tolist(), kind="int")
H.array("gpt_targets", tgt.reshape(-1).tolist(), kind="int")
H.array("gpt_logits", logits)
H.scalar("gpt_loss", loss)
H.array("gpt_grads", models.flat_grads(gpt))

# --- Optimizers: 3 steps on 6 parameters with given gradients
w0 = torch.randn(6)
grads = [torch.randn(6) for _ in range(3)]
H.array("opt_w0", w0)
H.array("opt_grads", torch.cat(grads))
OPTS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1),
}
for name, make in OPTS.items():
    w = w0.clone().requires_grad_(True)
    opt = make([w])
    trace = []
    for g in grads:
        w.grad = g.clone()
        opt.step()
        trace.append(w.detach().clone())
    H.array("opt_%s" % name, torch.cat(trace))

# --- Gradient clipping by global norm (above and below the threshold)
for tag, max_norm in (("clip_above", 0.5), ("clip_below", 100.0)):
    w = torch.zeros(6, requires_grad=True)
    w.grad = grads[0].clone() * 3.0
    H.array(tag + "_in", w.grad)
    norm = torch.nn.utils.clip_grad_norm_([w], max_norm)
    H.scalar(tag + "_max", max_norm)
    H.scalar(tag + "_norm", norm)
    H.array(tag + "_out", w.grad)

# --- The library's PRNG vs an independent Python implementation (common.py)
from common import Xoshiro  # noqa: E402

r = Xoshiro(42)
u64 = [r.next() for _ in range(8)]
H.lines.append("constexpr unsigned long long rng_seed42_u64[] = {%s};" % ", ".join("%dULL" % v for v in u64))
H.lines.append("")
r = Xoshiro(7)
H.array("rng_seed7_uniform", [r.uniform() for _ in range(8)])
r = Xoshiro(7)
H.array("rng_seed7_normal", [r.normal() for _ in range(8)])

H.write()
