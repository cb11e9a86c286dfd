#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Parity of imported models with PyTorch (the oracle): models written and
trained here in PyTorch 1.13, exported with torch.onnx.export as a user
would, imported by burtorch-import and run by `burtorch-import validate`
against the installed library. Checks per model: the outputs within 1e-5
of PyTorch's (FP32 weights), the cross-entropy (or MSE) loss and the
gradients of every trainable parameter within 1e-4 relative (of the
largest gradient of that tensor), frozen int8/FP16/BF16 weights within
their quantisation bound, the memory plan exact. Usage:
parity.py IMPORTER PREFIX WORKDIR; prints one line per case and
"parity: N passed, N failed"."""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("importer", help="burtorch-import (the installed one)")
ap.add_argument("prefix", help="the installed library")
ap.add_argument("work", help="a directory for the models and results")
cli = ap.parse_args()
importer, prefix, work = cli.importer, cli.prefix, cli.work
torch.manual_seed(0)
torch.set_num_threads(1)
os.makedirs(work, exist_ok=True)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Kws1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 8, 3, stride=2, dilation=2)
        self.head = nn.Linear(8 * 2, 5)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = nn.functional.max_pool1d(x, 2)
        x = nn.functional.leaky_relu(self.conv2(x), 0.1)
        return torch.log_softmax(self.head(x.flatten(1)), 1)


class Cnn2dBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, (2, 3), stride=(1, 2))
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = nn.functional.avg_pool2d(x, 2)
        x = torch.sigmoid(self.conv2(x))
        x = x.mean(dim=(2, 3))
        return self.fc(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Dropout(0.2), nn.Linear(12, 2))

    def forward(self, x):
        return self.body(x)


class GruHead(nn.Module):
    """A sequence classifier as PyTorch users write one: batch_first GRU, the
    last step's output through a Linear."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 8, batch_first=True)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y[:, -1])


class GruState(nn.Module):
    """The same from the final hidden state h_n."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(2, 5, batch_first=True)
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        _, h = self.gru(x)
        return torch.log_softmax(self.fc(h[-1]), 1)


class NormMlp(nn.Module):
    """A Linear, a LayerNorm (LayerNormalization at opset 17; before it, the ReduceMean, Sub, Pow, Sqrt, Div,
    Mul, Add the exporter writes), a head."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.norm = nn.LayerNorm(10)
        self.fc2 = nn.Linear(10, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.norm(self.fc1(x))))


class GeluMlp(nn.Module):
    """nn.GELU() (exact: erf), exported as Div, Erf, Add, Mul, Mul."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 9)
        self.fc2 = nn.Linear(9, 3)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class EmbMlp(nn.Module):
    """A character-level MLP as makemore writes one: 3 context tokens through
    an Embedding, flattened (view), tanh hidden layer, logits over 27."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(27, 6)
        self.fc1 = nn.Linear(18, 20)
        self.fc2 = nn.Linear(20, 27)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(self.emb(x).view(x.shape[0], -1))))


class EmbGru(nn.Module):
    """Token ids through an Embedding into a batch_first GRU, the last step's
    output through a Linear."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y, _ = self.gru(self.emb(x))
        return self.fc(y[:, -1])


class EmbRelu(nn.Module):
    """An Embedding whose rows go through an activation before the head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 4)
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.emb(x)).flatten(1))


def randomise_bn(m):
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.5, 0.5)


# name, model, one sample's shape (("tokens", rows, *shape): token ids), loss, export options, import flags,
# frozen layers and their format
CASES = [
    ("mlp", Mlp(), (16,), "ce", {}, [], None),
    ("mlp-double", Mlp(), (16,), "ce", {}, ["--precision", "double"], None),
    ("kws1d", Kws1d(), (3, 16), "ce", {}, [], None),
    ("cnn2d-bn-folded", Cnn2dBn(), (1, 6, 8), "ce", {}, [], None),
    ("cnn2d-bn-node", Cnn2dBn(), (1, 6, 8), "ce", {"training": torch.onnx.TrainingMode.PRESERVE}, [], None),
    ("regressor", Regressor(), (6,), "mse", {}, [], None),
    ("layernorm", NormMlp(), (6,), "ce", {"opset_version": 17}, [], None),
    ("layernorm-opset14", NormMlp(), (6,), "ce", {"opset_version": 14}, [], None),
    ("embedding-mlp", EmbMlp(), ("tokens", 27, 3), "ce", {"opset_version": 14}, [], None),
    ("embedding-gru", EmbGru(), ("tokens", 10, 6), "ce", {}, [], None),
    ("embedding-int8", EmbRelu(), ("tokens", 12, 3), "ce", {}, ["--train", "fc", "--weights", "int8"], {"emb": "int8"}),
    ("gelu", GeluMlp(), (5,), "ce", {}, [], None),
    ("gru-last-step", GruHead(), (7, 3), "ce", {}, [], None),
    ("gru-h-n", GruState(), (5, 2), "ce", {}, [], None),
    ("gru-head-only", GruHead(), (7, 3), "ce", {}, ["--train", "fc"], {}),
    ("mlp-head-int8", Mlp(), (16,), "ce", {}, ["--train", "last:1", "--weights", "int8"], {"fc1": "int8"}),
    ("kws1d-head-fp16", Kws1d(), (3, 16), "ce", {}, ["--train", "head", "--weights", "fp16"],
     {"conv1": "fp16", "conv2": "fp16"}),
    ("cnn2d-bf16", Cnn2dBn(), (1, 6, 8), "ce", {}, ["--train", "fc", "--weights", "bf16,conv=fp32"],
     {"conv2": "bf16"}),
]

passed = failed = 0


def check(name, ok, what):
    global passed, failed
    print("%-18s %s %s" % (name, "ok  " if ok else "FAIL", what))
    if ok:
        passed += 1
    else:
        failed += 1


def dequantised(w, fmt):
    """The weights a frozen layer computes with, by the rule
    burtorch/frozen/weights.hpp documents (written here from that text):
    int8 = float(max|w| / 127) * round-half-even(w / scale), FP16 and BF16
    rounded to nearest even. PyTorch then runs on these weights, so the
    comparison stays at FP32 tolerance."""
    if fmt == "fp16":
        return w.half().float()
    if fmt == "bf16":
        return w.bfloat16().float()
    wd = w.double()
    scale = torch.tensor(float(wd.abs().max()) / 127.0).float()
    q = torch.clamp(torch.round(wd / scale.double()), -127, 127).float()
    return scale * q


for name, model, shape, loss_kind, export_opts, flags, frozen in CASES:
    model.eval()
    randomise_bn(model)
    tol = 1e-5
    batch = 5
    if shape[0] == "tokens":
        x = torch.randint(0, shape[1], (batch,) + shape[2:])
    else:
        x = torch.randn((batch,) + shape)
    path = os.path.join(work, name + ".onnx")
    opts = dict({"opset_version": 13}, **export_opts)
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, **opts)
    if frozen:  # PyTorch on the weights the frozen layers hold
        with torch.no_grad():
            for mod_name, fmt in frozen.items():
                w = dict(model.named_modules())[mod_name].weight
                w.copy_(dequantised(w, fmt))
    with torch.no_grad():
        ref_out = model(x).double().numpy()
    n_out = ref_out.shape[1]
    if loss_kind == "ce":
        target = torch.randint(0, n_out, (batch,))
    else:
        target = torch.randn(batch, n_out)
    np.savez(os.path.join(work, name + "-in.npz"), x=x.numpy())
    np.savez(os.path.join(work, name + "-t.npz"), target=target.numpy())
    out_npz = os.path.join(work, name + "-out.npz")
    cmd = [importer, "validate", path, "--inputs", os.path.join(work, name + "-in.npz"), "--targets",
           os.path.join(work, name + "-t.npz"), "--loss", loss_kind, "--save", out_npz, "--prefix", prefix,
           "--namespace", "m"] + flags
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        check(name, False, "validate exit %d: %s" % (r.returncode, r.stdout.strip().splitlines()[-1:]))
        continue
    got = np.load(out_npz)
    # PyTorch's loss and gradients (mean over the batch) on the same module.
    model.zero_grad()
    y = model(x)
    if loss_kind == "ce":
        logits = y
        if isinstance(model, (Kws1d, GruState)):  # ends in log_softmax: cross-entropy of its input logits = nll of it
            loss = nn.functional.nll_loss(y, target)
        else:
            loss = nn.functional.cross_entropy(logits, target)
    else:
        loss = nn.functional.mse_loss(y, target)
    loss.backward()
    trained_all = "--train" not in flags
    err = np.abs(got["y"] - ref_out).max()
    check(name, err <= tol * (1 + np.abs(ref_out).max()), "outputs: max error %.2e against PyTorch" % err)
    lerr = abs(float(got["loss"]) - loss.item())
    check(name, lerr <= 1e-5 * (1 + abs(loss.item())), "loss %.6f, PyTorch %.6f" % (float(got["loss"]), loss.item()))
    # PyTorch's gradient of every tensor the export wrote, by its ONNX name.
    expected = {k: v.grad.double().numpy() for k, v in model.named_parameters()}
    grads = [k[5:] for k in got.files if k.startswith("grad/")]
    gru = getattr(model, "gru", None)
    if gru is not None:
        # The exporter writes the GRU's tensors as W, R, B in ONNX's gate
        # order (z, r, h) under onnx:: names: PyTorch's (r, z, n) reordered.
        hs = gru.hidden_size
        zr = lambda t: np.concatenate([t[hs:2 * hs], t[:hs], t[2 * hs:]])
        g = lambda t: t.grad.double().numpy()
        by_shape = {(1, 3 * hs, gru.input_size): zr(g(gru.weight_ih_l0))[None],
                    (1, 3 * hs, hs): zr(g(gru.weight_hh_l0))[None],
                    (1, 6 * hs): np.concatenate([zr(g(gru.bias_ih_l0)), zr(g(gru.bias_hh_l0))])[None]}
        for k in grads:
            if k.startswith("onnx::GRU") and tuple(got["grad/" + k].shape) in by_shape:
                expected[k] = by_shape[tuple(got["grad/" + k].shape)]
                for old in ("gru.weight_ih_l0", "gru.weight_hh_l0", "gru.bias_ih_l0", "gru.bias_hh_l0"):
                    expected.pop(old, None)
    if trained_all and not export_opts.get("training"):
        missing = [k for k in expected if k not in grads and not k.startswith("bn.") and not k.startswith("conv.")]
        check(name, not missing and grads, "gradients reported for %s" % ", ".join(sorted(grads)))
    worst = 0.0
    compared = 0
    for k in grads:
        if k not in expected:
            continue  # a folded tensor PyTorch's export renamed (onnx::Conv_*)
        e = np.abs(got["grad/" + k] - expected[k]).max() / max(np.abs(expected[k]).max(), 1e-12)
        worst = max(worst, e)
        compared += 1
    if compared:
        gtol = 1e-4
        check(name, worst <= gtol, "gradients of %d tensors: max relative error %.2e (PyTorch autograd)" % (compared, worst))
    plan = [l.replace(",", "").split() for l in r.stdout.splitlines() if l.startswith("plan:")]
    exact = bool(plan) and plan[0][2] == plan[0][4] and plan[0][6] == plan[0][8]
    check(name, exact, "memory plan exact: " + (" ".join(plan[0]) if plan else "no plan line"))

print("parity: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
