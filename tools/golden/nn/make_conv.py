# SPDX-License-Identifier: Apache-2.0
"""Golden values and gradients of libburtorch's convolutions and pooling
(include/burtorch/nn/conv.hpp, pool.hpp), and the trajectory of a small CNN,
computed by PyTorch in FP64. Writes tests/golden/test_nn_conv_golden.hpp (read by
tests/nn/test_nn_conv.cpp).

Layouts. libburtorch is channels-last: a 1-D activation is [L][C], a 2-D one
[H][W][C]; convolution weights are [C_out][k][C_in] ([C_out][kH][kW][C_in]).
PyTorch is channels-first ([C][L], weights [C_out][C_in][k]): every array
is computed on PyTorch's layout and written in ours (the permutations below).
A Linear after a flatten sees (position, channel) order in ours and
(channel, position) order in PyTorch: its weights are permuted too.

Layer cases: the root is sum(y * c) for fixed random c; each case writes its
geometry, weights, biases, input, c, output and the gradients of all three.

Trajectory: the CNN's initial parameters are drawn here by the library's
PRNG (common.Xoshiro, the same draws as nn::Init::fan_in_uniform in the
library's parameter order), so the test checks create() against them too; it
is trained for 100 SGD and 100 Adam steps on a generated data set (in the
header). Losses of every step and all parameters after steps 1, 10 and 100
are written.

Run: /usr/bin/python3 tools/golden/nn/make_conv.py
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, Header, Xoshiro  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
torch.manual_seed(20250611)
H = Header(os.path.join(ROOT, "tests", "golden", "test_nn_conv_golden.hpp"), "BURTORCH_TESTS_NN_CONV_GOLDEN_HPP",
           "tools/golden/nn/make_conv.py")


# --- layout conversions (ours <-> PyTorch) ------------------------------------
def ours_1d(t):  # [C][L] -> [L][C]
    return t.permute(1, 0).contiguous()


def ours_2d(t):  # [C][H][W] -> [H][W][C]
    return t.permute(1, 2, 0).contiguous()


def ours_w1d(w):  # [O][C][k] -> [O][k][C]
    return w.permute(0, 2, 1).contiguous()


def ours_w2d(w):  # [O][C][kH][kW] -> [O][kH][kW][C]
    return w.permute(0, 2, 3, 1).contiguous()


def torch_w1d(flat, o, c, k):  # ours [O][k][C] -> [O][C][k]
    return flat.reshape(o, k, c).permute(0, 2, 1).contiguous()


def torch_flatten_weight(flat, out, length, channels):  # ours [out][L*C] (t, c) -> PyTorch [out][C*L] (c, t)
    return flat.reshape(out, length, channels).permute(0, 2, 1).reshape(out, channels * length).contiguous()


def write_case(tag, geometry, arrays):
    H.array(tag + "_geometry", geometry, kind="int")
    for name, values in arrays:
        H.array(tag + "_" + name, values)


# --- Conv1d: [C_in, C_out, kernel, stride, padding, dilation, length, bias]
CONV1D = {
    "conv1d_plain": (2, 3, 3, 1, 0, 1, 7, 1),
    "conv1d_stride_pad": (2, 3, 3, 2, 1, 1, 8, 1),
    "conv1d_dilation": (3, 2, 3, 1, 2, 2, 7, 1),
    "conv1d_wide_pad": (1, 2, 2, 3, 3, 1, 4, 0),       # padding > kernel: windows all padding
    "conv1d_long_kernel": (2, 2, 5, 1, 2, 1, 3, 1),    # kernel longer than the input
    "conv1d_stride_gap": (2, 2, 2, 3, 0, 1, 8, 1),     # stride > kernel: inputs skipped
}
for tag, (cin, cout, k, s, p, d, length, bias) in CONV1D.items():
    w = torch.randn(cout, cin, k).requires_grad_(True)
    b = torch.randn(cout).requires_grad_(True)
    x = torch.randn(cin, length).requires_grad_(True)
    y = F.conv1d(x.unsqueeze(0), w, b if bias else None, stride=s, padding=p, dilation=d)[0]
    c = torch.randn_like(y)
    (y * c).sum().backward()
    write_case(tag, (cin, cout, k, s, p, d, length, bias), [
        ("w", ours_w1d(w)), ("b", b), ("x", ours_1d(x)), ("c", ours_1d(c)), ("y", ours_1d(y)),
        ("gw", ours_w1d(w.grad)), ("gb", b.grad if bias else torch.zeros(cout)), ("gx", ours_1d(x.grad))])

# --- Conv2d: [C_in, C_out, kH, kW, sH, sW, pH, pW, dH, dW, height, width, bias]
CONV2D = {
    "conv2d_plain": (2, 3, 3, 3, 1, 1, 0, 0, 1, 1, 5, 6, 1),
    "conv2d_stride_pad": (2, 2, 3, 2, 2, 1, 1, 1, 1, 1, 5, 4, 1),
    "conv2d_dilation": (1, 2, 2, 3, 1, 2, 2, 1, 2, 1, 4, 5, 0),
}
for tag, g in CONV2D.items():
    cin, cout, kh, kw, sh, sw, ph, pw, dh, dw, height, width, bias = g
    w = torch.randn(cout, cin, kh, kw).requires_grad_(True)
    b = torch.randn(cout).requires_grad_(True)
    x = torch.randn(cin, height, width).requires_grad_(True)
    y = F.conv2d(x.unsqueeze(0), w, b if bias else None, stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw))[0]
    c = torch.randn_like(y)
    (y * c).sum().backward()
    write_case(tag, g, [
        ("w", ours_w2d(w)), ("b", b), ("x", ours_2d(x)), ("c", ours_2d(c)), ("y", ours_2d(y)),
        ("gw", ours_w2d(w.grad)), ("gb", b.grad if bias else torch.zeros(cout)), ("gx", ours_2d(x.grad))])


# --- Pooling. 1-D: [channels, kernel, stride (0: kernel), length];
# 2-D: [channels, kH, kW, sH, sW (0: kernel), height, width]. Ties: inputs
# drawn from a few values, so windows hold equal maxima (PyTorch sends the
# gradient to the first).
def pool_input(shape, ties):
    if ties:
        return (torch.randint(-2, 3, shape).double() * 0.5).requires_grad_(True)
    return torch.randn(*shape).requires_grad_(True)


POOL1D = {
    "avgpool1d_plain": ("avg", (3, 3, 0, 9), False),
    "avgpool1d_overlap": ("avg", (2, 3, 1, 8), False),
    "avgpool1d_gap": ("avg", (2, 2, 3, 9), False),          # stride > kernel
    "avgpool1d_one_channel": ("avg", (1, 3, 2, 7), False),  # windows are runs: no slots
    "maxpool1d_plain": ("max", (3, 3, 2, 8), False),
    "maxpool1d_ties": ("max", (2, 2, 1, 8), True),
    "maxpool1d_one_channel": ("max", (1, 2, 0, 7), False),
}
for tag, (kind, g, ties) in POOL1D.items():
    ch, k, s, length = g
    x = pool_input((ch, length), ties)
    fn = F.max_pool1d if kind == "max" else F.avg_pool1d
    y = fn(x.unsqueeze(0), k, s if s else k)[0]
    c = torch.randn_like(y)
    (y * c).sum().backward()
    write_case(tag, g, [("x", ours_1d(x)), ("c", ours_1d(c)), ("y", ours_1d(y)), ("gx", ours_1d(x.grad))])

POOL2D = {
    "avgpool2d_plain": ("avg", (2, 2, 2, 0, 0, 5, 5), False),  # floor: the last row and column dropped
    "avgpool2d_rect": ("avg", (1, 2, 3, 1, 2, 4, 6), False),
    "maxpool2d_plain": ("max", (2, 2, 2, 1, 2, 5, 4), False),
    "maxpool2d_ties": ("max", (2, 3, 3, 2, 2, 5, 5), True),
}
for tag, (kind, g, ties) in POOL2D.items():
    ch, kh, kw, sh, sw, height, width = g
    x = pool_input((ch, height, width), ties)
    fn = F.max_pool2d if kind == "max" else F.avg_pool2d
    y = fn(x.unsqueeze(0), (kh, kw), (sh if sh else kh, sw if sw else kw))[0]
    c = torch.randn_like(y)
    (y * c).sum().backward()
    write_case(tag, g, [("x", ours_2d(x)), ("c", ours_2d(c)), ("y", ours_2d(y)), ("gx", ours_2d(x.grad))])


# --- The small CNN ---------------------------------------------------------------
# Conv1d(C_in -> c1, k 3, padding 1) ReLU, MaxPool1d(2), Conv1d(c1 -> c2, k 3,
# padding 1) ReLU, AvgPool1d(2), flatten, Linear(c2 * L/4 -> classes);
# softmax cross-entropy. Configurations: [length, C_in, c1, c2, classes].
CNNS = {"cnn": (16, 2, 6, 8, 3), "cnn_small": (12, 1, 4, 4, 3)}
GAIN = 0.57735026918962576451  # nn::kGainLinearDefault: U(-1/sqrt(fan_in), 1/sqrt(fan_in))


class Cnn(torch.nn.Module):
    def __init__(self, length, cin, c1, c2, classes):
        super().__init__()
        self.shape = (length, cin, c1, c2, classes)
        self.conv1 = torch.nn.Conv1d(cin, c1, 3, padding=1)
        self.conv2 = torch.nn.Conv1d(c1, c2, 3, padding=1)
        self.head = torch.nn.Linear(c2 * (length // 4), classes)

    def sizes(self):  # (parameter, ours' shape) in the library's order
        length, cin, c1, c2, classes = self.shape
        return [(c1 * 3 * cin), c1, (c2 * 3 * c1), c2, classes * c2 * (length // 4), classes]

    def fan_ins(self):
        length, cin, c1, c2, classes = self.shape
        return [cin * 3, cin * 3, c1 * 3, c1 * 3, c2 * (length // 4), c2 * (length // 4)]

    def load(self, flat):  # flat: the library's order and layouts
        length, cin, c1, c2, classes = self.shape
        parts = torch.split(flat, self.sizes())
        with torch.no_grad():
            self.conv1.weight.copy_(torch_w1d(parts[0], c1, cin, 3))
            self.conv1.bias.copy_(parts[1])
            self.conv2.weight.copy_(torch_w1d(parts[2], c2, c1, 3))
            self.conv2.bias.copy_(parts[3])
            self.head.weight.copy_(torch_flatten_weight(parts[4], classes, length // 4, c2))
            self.head.bias.copy_(parts[5])

    def flat(self, grads=False):  # the library's order and layouts
        length, cin, c1, c2, classes = self.shape

        def get(p):
            return p.grad if grads else p.detach()
        head = get(self.head.weight).reshape(classes, c2, length // 4).permute(0, 2, 1).reshape(-1)
        return torch.cat([ours_w1d(get(self.conv1.weight)).reshape(-1), get(self.conv1.bias),
                          ours_w1d(get(self.conv2.weight)).reshape(-1), get(self.conv2.bias), head,
                          get(self.head.bias)])

    def forward(self, x):  # x: [B][L][C] (ours) -> logits [B][classes]
        h = x.permute(0, 2, 1)
        h = F.max_pool1d(torch.relu(self.conv1(h)), 2)
        h = F.avg_pool1d(torch.relu(self.conv2(h)), 2)
        return self.head(torch.flatten(h, 1))


def library_init(model, seed):
    """The draws of nn::Init::fan_in_uniform(kGainLinearDefault) in the
    library's parameter order (include/burtorch/nn/init.hpp: draw())."""
    r = Xoshiro(seed)
    out = []
    for n, fan_in in zip(model.sizes(), model.fan_ins()):
        bound = GAIN * math.sqrt(3.0 / fan_in)
        out += [-bound + (bound - -bound) * r.uniform() for _ in range(n)]
    return torch.tensor(out)


def dataset(length, cin, classes, n):
    """n samples [L][C]: class k is pattern k (C x 4, random) at a random
    position, in noise; labels cycle through the classes."""
    g = torch.Generator().manual_seed(7)
    patterns = torch.randn(classes, 4, cin, generator=g) * 1.5
    xs = torch.randn(n, length, cin, generator=g) * 0.3
    ys = []
    for i in range(n):
        k = i % classes
        at = int(torch.randint(0, length - 4 + 1, (1,), generator=g))
        xs[i, at:at + 4, :] += patterns[k]
        ys.append(k)
    return xs, torch.tensor(ys)


STEPS, BATCH, SAMPLES, SEED = 100, 4, 12, 2025
LR = {"sgd": 0.1, "adam": 0.01}
SNAPSHOTS = (1, 10, 100)
H.integer("cnn_steps", STEPS)
H.integer("cnn_batch", BATCH)
H.integer("cnn_samples", SAMPLES)
H.integer("cnn_seed", SEED)
H.scalar("cnn_sgd_lr", LR["sgd"])
H.scalar("cnn_adam_lr", LR["adam"])
for tag, shape in CNNS.items():
    length, cin, c1, c2, classes = shape
    model = Cnn(*shape)
    init = library_init(model, SEED)
    xs, ys = dataset(length, cin, classes, SAMPLES)
    H.array(tag + "_shape", shape, kind="int")
    H.array(tag + "_init", init)
    H.array(tag + "_inputs", xs)
    H.array(tag + "_labels", ys.tolist(), kind="int")
    # One sample's loss and gradients (the FP32 check).
    model.load(init)
    loss = F.cross_entropy(model(xs[:1]), ys[:1])
    loss.backward()
    H.scalar(tag + "_loss0", loss)
    H.array(tag + "_grads0", model.flat(grads=True))
    for name in ("sgd", "adam"):
        model = Cnn(*shape)
        model.load(init)
        opt = (torch.optim.Adam(model.parameters(), lr=LR[name], betas=(0.9, 0.999), eps=1e-8) if name == "adam"
               else torch.optim.SGD(model.parameters(), lr=LR[name]))
        losses, snaps = [], []
        for step in range(STEPS):
            idx = [(step * BATCH + i) % SAMPLES for i in range(BATCH)]
            opt.zero_grad()
            loss = F.cross_entropy(model(xs[idx]), ys[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if step + 1 in SNAPSHOTS:
                snaps.append(model.flat())
        H.array("%s_%s_losses" % (tag, name), losses)
        H.array("%s_%s_params" % (tag, name), torch.cat(snaps))
H.array("cnn_snapshots", SNAPSHOTS, kind="int")

H.write()
