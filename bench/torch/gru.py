# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of the GRU row: burtorch's nn::CharGru in FP32, time per SGD
step on B random windows of T + 1 characters, as bench_gru.
nn.Embedding(V, 16), nn.GRU(16, H, batch_first=True) from a zero state,
nn.Linear(H, V) at every position, fused F.cross_entropy over the B * T
positions (the mean: the batch mean of each sequence's mean), torch.optim.SGD,
zero_grad with set_to_none; torch.nn's default initialisation, the scheme
the library's layers reproduce. Vocabulary: the text's distinct bytes in
ascending order (names.txt: 27).

Usage: gru.py --hidden H --batch B [--seq T] [--steps N] [--warmup W] [--data FILE] [--lr X]
"""
import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Steps, emit, flag, now, step_flags

T0 = now()
EMBED = 16


class CharGru(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, EMBED)
        self.gru = nn.GRU(EMBED, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, targets):
        h, _ = self.gru(self.embed(idx))
        logits = self.head(h)
        b, t, v = logits.shape
        return F.cross_entropy(logits.reshape(b * t, v), targets.reshape(b * t))


def main():
    hidden = flag("--hidden", 32, int)
    seq = flag("--seq", 16, int)
    batch, steps, warmup, lr, path = step_flags(0.1)
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
    model = CharGru(len(chars), hidden)
    n_params = sum(p.numel() for p in model.parameters())
    offsets = torch.arange(seq)

    def step_loss():
        ix = torch.randint(0, data.numel() - seq - 1, (batch, 1)) + offsets
        return model(data[ix], data[ix + 1])

    run = Steps(T0, torch.optim.SGD(model.parameters(), lr=lr), step_loss, warmup, steps)
    emit({"bench": "gru", "hidden": hidden, "seq": seq, "batch": batch, "params": n_params, "vocab": len(chars),
          "steps": steps, **run.fields(), "samples": run.times})


if __name__ == "__main__":
    main()
