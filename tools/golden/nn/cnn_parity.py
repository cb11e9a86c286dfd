# SPDX-License-Identifier: Apache-2.0
"""burtorch-cnn against PyTorch, step by step: the trainer's first steps
equal a PyTorch FP64 twin of its model trained from the same initial
weights on the same batches.

The twin (torch.nn.Conv2d x 2, avg_pool2d, Linear, F.cross_entropy,
torch.optim.SGD / Adam) gets:
  * the initial parameters create() draws: nn::Init::fan_in_uniform(
    kGainLinearDefault) from nn::Rng(--seed) in the library's order (conv1
    weights [C_out][3][3][C_in], its biases, conv2's, the head's),
    reimplemented by common.Xoshiro, and permuted to PyTorch's layouts;
  * the batches the trainer draws: nn::Rng(--seed + 1).below(training
    pictures) per picture;
  * the same pictures: a --data file written here (the first 90 % of its
    lines train).
Each step's mean loss (the trainer's 'step <n> loss <x>' lines with
--print-every 1, printed with 10 significant digits) must equal the twin's
to 1e-9 relative, for SGD and for Adam.

Run: /usr/bin/python3 tools/golden/nn/cnn_parity.py <burtorch-cnn> [steps]
"""
import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", ".."))
import cli  # noqa: E402 (tools/cli.py: --help, unknown options)

if __name__ == "__main__":
    cli.check(__doc__)
import math
import os
import re
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Xoshiro  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
GAIN = 0.57735026918962576451  # nn::kGainLinearDefault
SIDE = 8


def pictures(n, classes):
    """n pictures [8][8] with a bright row/column/diagonal per class, in noise."""
    g = torch.Generator().manual_seed(11)
    xs = torch.randn(n, SIDE, SIDE, generator=g) * 0.2
    ys = [i % classes for i in range(n)]
    for i, y in enumerate(ys):
        k = int(torch.randint(1, SIDE - 1, (1,), generator=g))
        if y == 0:
            xs[i, k, :] += 1.0
        elif y == 1:
            xs[i, :, k] += 1.0
        else:
            xs[i] += torch.eye(SIDE) if y == 2 else torch.eye(SIDE).flip(1)
    return xs, ys


def library_init(seed, c1, c2, classes):
    r = Xoshiro(seed)
    parts = []
    for n, fan_in in ((c1 * 9, 9), (c1, 9), (c2 * 9 * c1, 9 * c1), (c2, 9 * c1), (classes * c2, c2), (classes, c2)):
        bound = GAIN * math.sqrt(3.0 / fan_in)
        parts.append(torch.tensor([-bound + (bound - -bound) * r.uniform() for _ in range(n)]))
    return parts


class Twin(torch.nn.Module):
    def __init__(self, seed, c1, c2, classes):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, c1, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(c1, c2, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(c2, classes)
        w1, b1, w2, b2, hw, hb = library_init(seed, c1, c2, classes)
        with torch.no_grad():  # ours [O][kH][kW][C] -> PyTorch [O][C][kH][kW]
            self.conv1.weight.copy_(w1.reshape(c1, 3, 3, 1).permute(0, 3, 1, 2))
            self.conv1.bias.copy_(b1)
            self.conv2.weight.copy_(w2.reshape(c2, 3, 3, c1).permute(0, 3, 1, 2))
            self.conv2.bias.copy_(b2)
            self.head.weight.copy_(hw.reshape(classes, c2))
            self.head.bias.copy_(hb)

    def forward(self, x):  # x: [B][8][8]
        h = torch.relu(self.conv1(x.unsqueeze(1)))
        h = torch.relu(self.conv2(h))
        return self.head(torch.flatten(F.avg_pool2d(h, h.shape[-1]), 1))


def run(program, optimizer, lr, steps, workdir):
    hidden, batch, seed, n, classes = 6, 5, 9, 80, 4
    xs, ys = pictures(n, classes)
    path = os.path.join(workdir, "pictures.txt")
    with open(path, "w") as f:
        for x, y in zip(xs, ys):
            f.write("%d,%s\n" % (y, ",".join(repr(float(v)) for v in x.reshape(-1))))
    # The trainer reads the pictures as floats.
    xs = xs.float().double()
    out = subprocess.run([program, "--data", path, "--steps", str(steps), "--batch", str(batch), "--hidden",
                          str(hidden), "--optimizer", optimizer, "--lr", repr(lr), "--seed", str(seed),
                          "--print-every", "1", "--csv", "none", "--samples", "0", "--eval-samples", "1"],
                         capture_output=True, text=True, check=True).stdout
    ours = [float(v) for v in re.findall(r"^step \d+ loss (\S+)$", out, re.M)]
    model = Twin(seed, hidden // 2, hidden, classes)
    opt = (torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8) if optimizer == "adam"
           else torch.optim.SGD(model.parameters(), lr=lr))
    n_train = n * 9 // 10
    batches = Xoshiro(seed + 1)
    theirs = []
    for _ in range(steps):
        idx = [batches.below(n_train) for _ in range(batch)]
        opt.zero_grad()
        loss = F.cross_entropy(model(xs[idx]), torch.tensor([ys[i] for i in idx]))
        loss.backward()
        opt.step()
        theirs.append(loss.item())
    if len(ours) != steps:
        sys.exit("cnn_parity: burtorch-cnn printed %d step lines, want %d:\n%s" % (len(ours), steps, out))
    worst = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))
    print("cnn_parity %s lr %g: %d steps, first loss %.10g (PyTorch %.10g), last %.10g (PyTorch %.10g), "
          "worst relative difference %.2e" % (optimizer, lr, steps, ours[0], theirs[0], ours[-1], theirs[-1], worst), flush=True)
    first, last = sum(ours[:5]) / 5, sum(ours[-5:]) / 5
    if not last < 0.9 * first:
        sys.exit("cnn_parity: the loss did not fall (mean of the first 5 steps %g, of the last 5 %g)" % (first, last))
    return worst


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with tempfile.TemporaryDirectory() as d:
        worst = max(run(program, "sgd", 0.5, steps, d), run(program, "adam", 0.01, steps, d))
    if worst > 1e-9:
        sys.exit("cnn_parity: burtorch-cnn and PyTorch differ by %.2e (relative) > 1e-9" % worst)
    print("cnn_parity: burtorch-cnn's losses equal PyTorch's to %.2e relative" % worst)


if __name__ == "__main__":
    main()
