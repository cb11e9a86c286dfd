# SPDX-License-Identifier: Apache-2.0
"""Golden data of libburtorch's GRU (include/burtorch/nn/gru.hpp), computed by
PyTorch's own torch.nn.GRU in FP64. Writes tests/golden/test_nn_gru_golden.hpp (read by
tests/nn/test_nn_gru.cpp):

* steps: values and gradients of a few GRU steps (with and without biases)
  for seeded random weights, inputs and initial state; the root is
  sum_t h_t . c_t for fixed c.
* trajectories: a GRU followed by a Linear head (one output per step) trained
  by truncated back-propagation through time on a generated stream, one window
  of W steps per optimizer step, 100 SGD steps and 100 Adam steps. The initial
  weights are those nn::Gru::create and nn::Linear::create draw from the
  library's PRNG (reimplemented in common.py: xoshiro256**, fan-in uniform
  U(-1/sqrt(H), 1/sqrt(H)) in parameter order), the stream is drawn from the
  same PRNG, and between windows the hidden state is carried with detach().
  Recorded: the loss of every window, and every parameter and the carried
  state after windows 25, 50, 75 and 100. Two sizes: "small" (all targets,
  also the 16 KB micro:bit) and "main" (every other target).

Run: /usr/bin/python3 tools/golden/nn/make_gru.py
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
H = Header(os.path.join(ROOT, "tests", "golden", "test_nn_gru_golden.hpp"), "BURTORCH_TESTS_NN_GRU_GOLDEN_HPP",
           "tools/golden/nn/make_gru.py")


def flat_params(module):
    """Parameters in state_dict order, flattened row-major (the library's layout)."""
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def flat_grads(module):
    return torch.cat([p.grad.reshape(-1) for p in module.parameters()])


# --- Steps: GRU(I -> H) over T steps from h0; root = sum_t h_t . c_t
STEP_CASES = (("gru_bias", 3, 4, 3, True, 0.6), ("gru_nobias", 2, 3, 3, False, 1.5))
for tag, inputs, hidden, steps, bias, scale in STEP_CASES:
    gru = torch.nn.GRU(inputs, hidden, bias=bias)
    with torch.no_grad():
        for p in gru.parameters():
            p.copy_(torch.randn_like(p) * scale)
    x = torch.randn(steps, 1, inputs, requires_grad=True)
    h0 = (torch.randn(1, 1, hidden) * 0.8).requires_grad_(True)
    c = torch.randn(steps, hidden)
    out, hn = gru(x, h0)
    assert torch.equal(out[-1], hn[0])
    (out[:, 0, :] * c).sum().backward()
    H.integer(tag + "_input", inputs)
    H.integer(tag + "_hidden", hidden)
    H.integer(tag + "_steps", steps)
    H.array(tag + "_params", flat_params(gru))
    H.array(tag + "_x", x)
    H.array(tag + "_h0", h0)
    H.array(tag + "_c", c)
    H.array(tag + "_h", out)
    H.array(tag + "_gparams", flat_grads(gru))
    H.array(tag + "_gx", x.grad)
    H.array(tag + "_gh0", h0.grad)

# --- Trajectories
GAIN_LINEAR_DEFAULT = 0.57735026918962576451  # nn::kGainLinearDefault: 1/sqrt(3)
INIT_SEED, DATA_SEED = 1234, 99
WINDOWS, SNAPSHOT_EVERY = 100, 25
SGD_LR, ADAM_LR = 0.3, 0.02


def draw_fan_in_uniform(rng, n, fan_in):
    """nn::draw(Init::fan_in_uniform(kGainLinearDefault), fan_in, rng), n times."""
    bound = GAIN_LINEAR_DEFAULT * math.sqrt(3.0 / float(fan_in))
    lo, hi = -bound, bound
    return [lo + ((hi - lo) * rng.uniform()) for _ in range(n)]


def initial_params(inputs, hidden):
    """Gru::create (weight_ih, weight_hh, bias_ih, bias_hh; fan-in H), then the
    head's Linear::create (weight [1][H], bias; fan-in H), from one Rng."""
    rng = Xoshiro(INIT_SEED)
    rows = 3 * hidden
    out = []
    for count in (rows * inputs, rows * hidden, rows, rows, hidden, 1):
        out += draw_fan_in_uniform(rng, count, hidden)
    return out


def stream(inputs, length):
    """x_t[k] = Rng(DATA_SEED).uniform(-1, 1) in order of t then k;
    y_t = 0.5 x_{t-1}[0] - 0.25 x_{t-2}[1] + 0.125 x_t[I-1] (x before 0 is 0)."""
    rng = Xoshiro(DATA_SEED)
    xs = [[-1.0 + (2.0 * rng.uniform()) for _ in range(inputs)] for _ in range(length)]

    def at(t, k):
        return xs[t][k] if t >= 0 else 0.0

    ys = [((0.5 * at(t - 1, 0)) - (0.25 * at(t - 2, 1))) + (0.125 * at(t, inputs - 1)) for t in range(length)]
    return xs, ys


def train(inputs, hidden, window, init, xs, ys, adam):
    gru = torch.nn.GRU(inputs, hidden)
    head = torch.nn.Linear(hidden, 1)
    params = list(gru.parameters()) + list(head.parameters())
    flat = torch.tensor(init)
    at = 0
    with torch.no_grad():
        for p in params:
            p.copy_(flat[at:at + p.numel()].view_as(p))
            at += p.numel()
    assert at == len(init)
    opt = (torch.optim.Adam(params, lr=ADAM_LR, betas=(0.9, 0.999), eps=1e-8) if adam
           else torch.optim.SGD(params, lr=SGD_LR))
    h = torch.zeros(1, 1, hidden)
    losses, snapshots, carries = [], [], []
    for w in range(WINDOWS):
        opt.zero_grad()
        x = torch.tensor(xs[w * window:(w + 1) * window]).view(window, 1, inputs)
        y = torch.tensor(ys[w * window:(w + 1) * window])
        out, hn = gru(x, h.detach())  # truncation: no gradient into earlier windows
        loss = F.mse_loss(head(out).view(window), y)
        loss.backward()
        opt.step()
        h = hn.detach()
        losses.append(loss.item())
        if (w + 1) % SNAPSHOT_EVERY == 0:
            snapshots.append(torch.cat([p.detach().reshape(-1) for p in params]))
            carries.append(h.reshape(-1).clone())
    return losses, torch.cat(snapshots), torch.cat(carries)


H.integer("gru_init_seed", INIT_SEED)
H.integer("gru_data_seed", DATA_SEED)
H.integer("gru_windows", WINDOWS)
H.integer("gru_snapshot_every", SNAPSHOT_EVERY)
H.scalar("gru_sgd_lr", SGD_LR)
H.scalar("gru_adam_lr", ADAM_LR)
H.lines.append("")
for tag, inputs, hidden, window in (("traj_small", 2, 4, 3), ("traj_main", 4, 8, 6)):
    if tag == "traj_main":
        H.lines += ["// Not on the tiny boards (flash): BURTORCH_TEST_SMALL_TARGET.",
                    "#if !BURTORCH_TEST_SMALL_TARGET", ""]
    init = initial_params(inputs, hidden)
    xs, ys = stream(inputs, WINDOWS * window)
    H.integer(tag + "_input", inputs)
    H.integer(tag + "_hidden", hidden)
    H.integer(tag + "_window", window)
    H.array(tag + "_init", init)
    for name, adam in (("sgd", False), ("adam", True)):
        losses, snapshots, carries = train(inputs, hidden, window, init, xs, ys, adam)
        H.array("%s_%s_loss" % (tag, name), losses)
        H.array("%s_%s_params" % (tag, name), snapshots)
        H.array("%s_%s_carry" % (tag, name), carries)
    if tag == "traj_main":
        H.lines += ["#endif  // !BURTORCH_TEST_SMALL_TARGET", ""]
H.write()
