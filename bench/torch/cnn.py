# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of the CNN row: burtorch-cnn's model (nn::SmallCnn) in FP32,
time per SGD step on a random batch, as bench_cnn. Conv2d(1 -> C/2, 3x3,
stride 2, padding 1) ReLU, Conv2d(C/2 -> C, same) ReLU, a global average
pool, Linear(C -> classes), fused F.cross_entropy, torch.optim.SGD,
zero_grad with set_to_none; inputs NCHW (1 channel). Initialisation:
torch.nn's defaults, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every weight
and bias, the scheme the library's layers reproduce. Data: burtorch-cnn's
--data text (tools/bench passes the file bench_cnn --write-data writes, so
both sides train on the same pictures); without --data random pictures of
4 classes (smoke runs).

Usage: cnn.py --hidden C --batch B [--steps N] [--warmup W] [--data FILE] [--lr X]
"""
import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch
import torch.nn.functional as F

from common import Steps, emit, flag, now, step_flags

T0 = now()
SIDE = 8


def load(path):
    if path is None:
        g = torch.Generator().manual_seed(7)
        return torch.rand((2000, 1, SIDE, SIDE), generator=g), torch.arange(2000) % 4
    xs, ys = [], []
    with open(path) as f:
        for line in f:
            v = line.replace(",", " ").split()
            if v:
                ys.append(int(float(v[0])))
                xs.append([float(p) for p in v[1:]])
    return torch.tensor(xs, dtype=torch.float32).view(-1, 1, SIDE, SIDE), torch.tensor(ys, dtype=torch.long)


class Cnn(torch.nn.Module):
    def __init__(self, hidden, classes):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, hidden // 2, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(hidden // 2, hidden, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        return self.head(torch.flatten(F.avg_pool2d(h, h.shape[-1]), 1))


def main():
    hidden = flag("--hidden", 8, int)
    batch, steps, warmup, lr, path = step_flags(0.1)
    X, Y = load(path)
    torch.manual_seed(1)
    model = Cnn(hidden, int(Y.max()) + 1)
    n_params = sum(p.numel() for p in model.parameters())

    def step_loss():
        ix = torch.randint(0, X.shape[0], (batch,))
        return F.cross_entropy(model(X[ix]), Y[ix])

    run = Steps(T0, torch.optim.SGD(model.parameters(), lr=lr), step_loss, warmup, steps)
    emit({"bench": "cnn", "hidden": hidden, "batch": batch, "params": n_params, "steps": steps, **run.fields(),
          "data_samples": int(X.shape[0]), "samples": run.times})


if __name__ == "__main__":
    main()
