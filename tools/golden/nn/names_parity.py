# SPDX-License-Identifier: Apache-2.0
"""names.txt validation-loss comparison: burtorch-makemore against a PyTorch
reference trained with the same settings (same data split -- the same
shuffle, reimplemented from our PRNG --, same architecture and init scheme,
optimizer, learning rate, batch size and number of steps; each side draws
its own batches and initial weights). Prints both validation losses and
fails if they differ by more than 0.05.

  /usr/bin/python3 tools/golden/nn/names_parity.py BURTORCH_MAKEMORE NAMES_TXT [STEPS]
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
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from common import Xoshiro  # noqa: E402

SEED, HIDDEN, BATCH, LR, CONTEXT = 42, 64, 32, 0.1, 16


def split(words):
    rng = Xoshiro(SEED ^ 0x5EED)
    words = list(words)
    for i in range(len(words) - 1, 0, -1):
        j = rng.below(i + 1)
        words[i], words[j] = words[j], words[i]
    n_train = len(words) * 9 // 10
    return words[:n_train], words[n_train:]


def samples(words):
    xs, ys = [], []
    for w in words:
        ctx = [0] * CONTEXT
        for ch in list(w) + ["."]:
            y = 0 if ch == "." else ord(ch) - ord("a") + 1
            xs.append(list(ctx))
            ys.append(y)
            ctx = ctx[1:] + [y]
    return torch.tensor(xs), torch.tensor(ys)


def main():
    binary, names = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    words = [w.strip().lower() for w in open(names) if w.strip()]
    train_w, val_w = split(words)
    xtr, ytr = samples(train_w)
    xva, yva = samples(val_w)

    t0 = time.time()
    out = subprocess.run([binary, "--data", names, "--hidden", str(HIDDEN), "--batch", str(BATCH), "--lr", str(LR),
                          "--optimizer", "sgd", "--seed", str(SEED), "--steps", str(steps),
                          "--print-every", str(max(1, steps // 10)), "--samples", "5", "--csv", "none"],
                         check=True, capture_output=True, text=True).stdout
    ours = float(re.search(r"^val loss ([0-9.]+)", out, re.M).group(1))
    t_ours = time.time() - t0
    print(out.strip())

    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    m = models.Mlp(hidden=HIDDEN)
    with torch.no_grad():  # the same init scheme as MakemoreMlp::create
        m.C.normal_(0.0, 1.0)
        m.hidden.weight.normal_(0.0, (5.0 / 3.0) / math.sqrt(CONTEXT * 64))
        m.hidden.bias.uniform_(-0.01, 0.01)
        m.out.weight.normal_(0.0, 0.01)
        m.out.bias.zero_()
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    t0 = time.time()
    for _ in range(steps):
        ix = torch.randint(0, xtr.shape[0], (BATCH,))
        loss = m.loss(xtr[ix], ytr[ix])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        theirs = F.cross_entropy(m(xva), yva).item()
    t_theirs = time.time() - t0
    diff = abs(ours - theirs)
    print("names.txt, e=%d, %d SGD steps of batch %d, lr %g: val loss libburtorch %.4f (%.0f s), "
          "PyTorch %.4f (%.0f s), difference %.4f (limit 0.05)" % (HIDDEN, steps, BATCH, LR, ours, t_ours, theirs,
                                                                  t_theirs, diff))
    sys.exit(0 if diff <= 0.05 else 1)


if __name__ == "__main__":
    main()
