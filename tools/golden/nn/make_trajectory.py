# SPDX-License-Identifier: Apache-2.0
"""Trajectory parity golden data: PyTorch trains the MLP (e=4, e=64) and the
GPT-like model for 100 SGD steps and 100 Adam steps from the weights our
PRNG initialisation exported, on the samples our generator exported, in
FP64; the per-step mean losses go to tests/golden/test_nn_trajectory_golden.hpp.

Run (after building the host preset):
  /usr/bin/python3 tools/golden/nn/make_trajectory.py [build/host/tests/test_nn_export]
"""
import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", ".."))
import cli  # noqa: E402 (tools/cli.py: --help, unknown options)

if __name__ == "__main__":
    cli.check(__doc__)
import array
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from common import ROOT, Header  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)

STEPS = 100
MLP_BATCH, CONTEXT = 4, 16
GPT_BATCH = 2
LR = {"mlp_sgd": 0.1, "mlp_adam": 0.01, "gpt_sgd": 0.1, "gpt_adam": 0.001}


def read_f64(path):
    a = array.array("d")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    return torch.tensor(a.tolist())


def read_u8(path):
    with open(path, "rb") as f:
        return torch.tensor(list(f.read()), dtype=torch.long)


def train(model, params, batches, lr, adam, loss_of):
    models.load_flat(model, params)
    opt = (torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8) if adam
           else torch.optim.SGD(model.parameters(), lr=lr))
    losses = []
    for batch in batches:
        opt.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    exporter = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "host", "tests", "test_nn_export")
    h = Header(os.path.join(ROOT, "tests", "golden", "test_nn_trajectory_golden.hpp"),
               "BURTORCH_TESTS_NN_TRAJECTORY_GOLDEN_HPP", "tools/golden/nn/make_trajectory.py")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([exporter, tmp], check=True)
        mlp_samples = read_u8(os.path.join(tmp, "mlp.samples.u8")).view(STEPS, MLP_BATCH, CONTEXT + 1)
        gpt_samples = read_u8(os.path.join(tmp, "gpt.samples.u8")).view(STEPS, GPT_BATCH, 9)

        def mlp_loss(model, batch):
            return model.loss(batch[:, :CONTEXT], batch[:, CONTEXT])

        def gpt_loss(model, batch):
            return model.loss(batch[:, :8], batch[:, 1:])

        for e in (4, 64):
            params = read_f64(os.path.join(tmp, "mlp%d.params.f64" % e))
            h.integer("mlp%d_parameters" % e, params.numel())
            for name, adam in (("sgd", False), ("adam", True)):
                model = models.Mlp(hidden=e)
                losses = train(model, params, mlp_samples, LR["mlp_" + name], adam, mlp_loss)
                h.array("mlp%d_%s" % (e, name), losses)
        params = read_f64(os.path.join(tmp, "gpt.params.f64"))
        h.integer("gpt_parameters", params.numel())
        for name, adam in (("sgd", False), ("adam", True)):
            model = models.Gpt()
            losses = train(model, params, gpt_samples, LR["gpt_" + name], adam, gpt_loss)
            h.array("gpt_%s" % name, losses)
    h.write()


if __name__ == "__main__":
    main()
