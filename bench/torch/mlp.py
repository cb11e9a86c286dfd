# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of row 4 (paper Tables 5/6): the makemore MLP in FP32, time
per SGD step on a random batch, as bench_mlp. Vocabulary 27, context 16,
embedding 64, tanh hidden layer of width e, linear output; d = 1,755 +
1,052 e parameters. The idiomatic fast way: embedding by indexing, one
matmul per layer, fused F.cross_entropy, torch.optim.SGD, zero_grad with
set_to_none. Same initialisation scheme as the C++ side (makemore's).

Usage: mlp.py --hidden E --batch B [--steps N] [--warmup W] [--data FILE] [--lr X] [--contexts data|random]

--contexts random: every context token drawn at random (as bench_mlp's
flag; the targets still from the data).
"""
import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch
import torch.nn.functional as F

from common import Steps, emit, flag, now, step_flags

T0 = now()
CONTEXT = 16
EMBED = 64
VOCAB = 27


def load(path):
    if path is None:
        g = torch.Generator().manual_seed(7)
        words = ["".join(chr(97 + int(c)) for c in torch.randint(0, 26, (int(n),), generator=g))
                 for n in torch.randint(3, 9, (2000,), generator=g)]
    else:
        with open(path) as f:
            words = [w.strip().lower() for w in f if w.strip()]
    xs, ys = [], []
    for w in words:
        ctx = [0] * CONTEXT
        for ch in w + ".":
            y = 0 if ch == "." else ord(ch) - 96
            xs.append(ctx)
            ys.append(y)
            ctx = ctx[1:] + [y]
    return torch.tensor(xs, dtype=torch.long), torch.tensor(ys, dtype=torch.long)


def main():
    hidden = flag("--hidden", 64, int)
    batch, steps, warmup, lr, path = step_flags(0.1)
    X, Y = load(path)
    contexts = flag("--contexts", "data", str)
    if contexts not in ("data", "random"):
        raise SystemExit("mlp.py: --contexts must be data or random")
    if contexts == "random":
        X = torch.randint(0, VOCAB, tuple(X.shape), generator=torch.Generator().manual_seed(3))
    g = torch.Generator().manual_seed(1)
    C = torch.randn((VOCAB, EMBED), generator=g)
    W1 = torch.randn((CONTEXT * EMBED, hidden), generator=g) * (5.0 / 3.0) / (CONTEXT * EMBED) ** 0.5
    b1 = (torch.rand(hidden, generator=g) * 2.0 - 1.0) * 0.01
    W2 = torch.randn((hidden, VOCAB), generator=g) * 0.01
    b2 = torch.zeros(VOCAB)
    params = [C, W1, b1, W2, b2]
    for p in params:
        p.requires_grad_(True)
    n_params = sum(p.numel() for p in params)
    assert n_params == 1755 + 1052 * hidden

    def step_loss():
        ix = torch.randint(0, X.shape[0], (batch,))
        emb = C[X[ix]]                                   # (B, 16, 64)
        h = torch.tanh(emb.view(batch, -1) @ W1 + b1)    # (B, e)
        logits = h @ W2 + b2                             # (B, 27)
        return F.cross_entropy(logits, Y[ix])

    run = Steps(T0, torch.optim.SGD(params, lr=lr), step_loss, warmup, steps)
    emit({"bench": "mlp", "e": hidden, "batch": batch, "params": n_params, "steps": steps, **run.fields(),
          "data_samples": int(X.shape[0]), "contexts": contexts, "samples": run.times})


if __name__ == "__main__":
    main()
