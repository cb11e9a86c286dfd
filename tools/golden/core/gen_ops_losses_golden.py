#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Golden data for the ops linked on use and the losses of nn/losses.hpp, evaluated by PyTorch.

Writes a C++ header (default: standard output) with
  * points of the elementwise ops (gelu_tanh, silu, abs, leaky_relu,
    bce_with_logits, huber): input x, the op's constant c, and PyTorch's
    value and derivative, in float64 and in float32 (on float32(x),
    float32(c));
  * windows of reduce_max: operand values and PyTorch's max_pool1d value
    and gradient (and, for the 2-D windows, max_pool2d's, which the
    generator requires to be the same as max_pool1d over the window read
    row by row);
  * loss cases: predictions (logits), targets (and Huber's delta) and
    PyTorch's mean loss and its gradient with respect to every prediction.
tests/core/test_ops_losses.cpp replays them on burtorch tapes.

Regenerate (needs Debian's python3-torch 1.13; the output is byte-identical,
which tools/check.d/16-golden-regen.sh verifies):

    /usr/bin/python3 tools/golden/core/gen_ops_losses_golden.py -o tests/golden/ops_losses_golden.hpp

PyTorch's own functions make every expected number:
torch.nn.functional.gelu(approximate='tanh'), silu, leaky_relu,
binary_cross_entropy_with_logits, huber_loss, l1_loss, max_pool1d,
max_pool2d, torch.abs, and torch.autograd.grad. Nothing here re-implements
burtorch's formulas. The edge points (0, -0, NaN, infinities, overflow of
x^2, |d| == delta, ties and NaN in a window) come first; with
BURTORCH_TEST_SMALL_TARGET=1 only they and the first loss cases are compiled.
"""

import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch  # noqa: E402

SEED = 0x6F70736C  # "opsl"
F = torch.nn.functional
F64 = torch.float64
F32 = torch.float32
NAN = float("nan")
INF = float("inf")

# --- elementwise ops ---------------------------------------------------------
# (code, uses the constant, PyTorch function of (x, c) on 1-element tensors)
OPS = [
    ("kGeluTanh", False, lambda x, c: F.gelu(x, approximate="tanh")),
    ("kSilu", False, lambda x, c: F.silu(x)),
    ("kAbs", False, lambda x, c: torch.abs(x)),
    ("kLeakyRelu", True, lambda x, c: F.leaky_relu(x, negative_slope=c)),
    ("kBceWithLogits", True,
     lambda x, c: F.binary_cross_entropy_with_logits(x, torch.full_like(x, c), reduction="none")),
    # The Huber function of a residual d = x: huber_loss(x, 0, delta=c).
    ("kHuber", True, lambda x, c: F.huber_loss(x, torch.zeros_like(x), reduction="none", delta=c)),
]
FN = {code: fn for code, _, fn in OPS}

EDGES = [
    ("kLeakyRelu", [(0.0, 0.01), (-0.0, 0.01), (NAN, 0.01), (-1000.0, 0.01), (-INF, 0.01), (INF, 0.01),
                    (0.0, 0.2), (-2.5, 0.2), (1e200, 0.01), (-1e200, 0.01)]),
    ("kGeluTanh", [(0.0, 0.0), (-0.0, 0.0), (30.0, 0.0), (-30.0, 0.0), (1e19, 0.0), (1e20, 0.0), (-1e20, 0.0),
                   (1e200, 0.0), (-1e200, 0.0), (INF, 0.0), (-INF, 0.0), (NAN, 0.0)]),
    ("kSilu", [(0.0, 0.0), (-1000.0, 0.0), (1000.0, 0.0), (30.0, 0.0), (-30.0, 0.0), (1e200, 0.0),
               (INF, 0.0), (-INF, 0.0), (NAN, 0.0)]),
    ("kAbs", [(0.0, 0.0), (-0.0, 0.0), (NAN, 0.0), (-INF, 0.0), (INF, 0.0), (-1e-300, 0.0)]),
    ("kBceWithLogits", [(0.0, 0.0), (0.0, 1.0), (0.0, 0.3), (40.0, 1.0), (-40.0, 0.0), (40.0, 0.0),
                        (-40.0, 1.0), (800.0, 1.0), (-800.0, 0.0), (800.0, 0.5), (3.0, 1.7), (-3.0, -0.5),
                        (INF, 1.0), (-INF, 0.0), (INF, 0.0), (-INF, 1.0), (NAN, 0.0), (1.0, NAN)]),
    ("kHuber", [(0.0, 1.0), (1.0, 1.0), (-1.0, 1.0), (0.3, 0.3), (-0.3, 0.3), (0.7 - 0.4, 0.3), (0.5, 0.5),
                (-0.5, 0.5), (2.0, 1.0), (-2.0, 1.0), (0.1, 1e-3), (INF, 1.0), (-INF, 1.0), (NAN, 1.0),
                (1e300, 1.0)]),
]


def f32(v):
    """v rounded to float32 (NaN and infinities kept)."""
    return torch.tensor(v, dtype=F32).item()


def elementwise(code, x, c, dtype):
    """PyTorch's value and derivative of op `code` at x (constant c)."""
    xv = x if dtype == F64 else f32(x)
    cv = c if dtype == F64 else f32(c)
    t = torch.tensor([xv], dtype=dtype, requires_grad=True)
    y = FN[code](t, cv)
    (g,) = torch.autograd.grad(y.sum(), [t])
    return y.item(), g.item()


def random_points(rng):
    """Random points per op, float32-representable so both precisions see one input."""
    out = []
    for code, uses_c, _ in OPS:
        for _ in range(10):
            x = f32(rng.uniform(-6.0, 6.0))
            c = 0.0
            if code == "kLeakyRelu":
                c = f32(rng.choice((0.01, 0.1, 0.2, rng.uniform(0.0, 0.5))))
            elif code == "kBceWithLogits":
                c = f32(rng.choice((0.0, 1.0, rng.uniform(0.0, 1.0))))
            elif code == "kHuber":
                c = f32(rng.uniform(0.1, 3.0))
            out.append((code, x, c))
    return out


# --- reduce_max windows --------------------------------------------------------
MAX_EDGES = [
    [1.0, 3.0, 3.0, 2.0], [3.0, 3.0], [5.0, 1.0, 5.0], [NAN, 1.0, 2.0], [1.0, NAN, 3.0, NAN, 2.0],
    [NAN, NAN], [-INF, 2.0, NAN], [-INF, -INF, -INF], [2.0, INF, INF], [0.0, -0.0], [-0.0, 0.0],
    [7.0], [-4.0, -3.0, -7.0, -3.0, -9.0], [-0.0, -0.0, 0.0],
]
# (values row by row, rows, columns): 2-D windows of max_pool2d.
MAX2D_EDGES = [
    ([1.0, 4.0, 4.0, 2.0, 4.0, 0.0], 2, 3),
    ([1.0, NAN, 4.0, NAN, 4.0, 0.0], 2, 3),
    ([2.0, 1.0, 1.0, 2.0], 2, 2),
    ([0.0, 5.0, 1.0, 5.0, 5.0, 2.0, 3.0, 1.0, 5.0], 3, 3),
]


def max_pool(values, rows, cols, dtype):
    """max_pool1d (rows == 0) or max_pool2d over one window: value, gradient."""
    vals = [v if dtype == F64 else f32(v) for v in values]
    t = torch.tensor(vals, dtype=dtype, requires_grad=True)
    if rows == 0:
        y = F.max_pool1d(t.reshape(1, 1, len(vals)), len(vals))
    else:
        y = F.max_pool2d(t.reshape(1, 1, rows, cols), (rows, cols))
    (g,) = torch.autograd.grad(y.sum(), [t])
    return y.item(), g.tolist()


def random_windows(rng):
    out = []
    for _ in range(12):
        n = rng.randint(2, 9)
        # Few distinct values: ties are common.
        pool = [float(rng.randint(-3, 3)) for _ in range(3)] + [-0.0]
        out.append(([rng.choice(pool) for _ in range(n)], 0, 0))
    return out


# --- losses -----------------------------------------------------------------------
def loss(kind, preds, targets, delta, dtype):
    p = [v if dtype == F64 else f32(v) for v in preds]
    y = [v if dtype == F64 else f32(v) for v in targets]
    x = torch.tensor(p, dtype=dtype, requires_grad=True)
    yt = torch.tensor(y, dtype=dtype)
    if kind == "kBce":
        out = F.binary_cross_entropy_with_logits(x, yt)
    elif kind == "kHuberLoss":
        out = F.huber_loss(x, yt, delta=delta if dtype == F64 else f32(delta))
    else:
        out = F.l1_loss(x, yt)
    (g,) = torch.autograd.grad(out, [x])
    return out.item(), g.tolist()


LOSS_EDGES = [
    # logits at 0, large of both signs, targets 0, 1 and soft
    ("kBce", [0.0, 40.0, -40.0, 2.5, -1.25], [0.0, 1.0, 0.0, 0.25, 1.0], 0.0),
    ("kBce", [0.0], [0.5], 0.0),
    # |d| == delta exactly (dyadic values: exact in float and double), d == 0
    ("kHuberLoss", [0.75, -0.25, 0.25, 3.0, 0.5], [0.25, 0.25, 0.25, 0.0, -1.0], 0.5),
    ("kHuberLoss", [1.0, -1.0, 0.0, 2.5], [0.0, 0.0, 0.0, 0.5], 1.0),
    # d == 0 (derivative 0), both signs
    ("kL1", [0.5, -2.0, 1.0, 4.0], [0.5, 1.0, -1.0, 4.0], 0.0),
]
SMALL_TARGET_LOSSES = len(LOSS_EDGES)


def random_losses(rng):
    out = []
    for kind in ("kBce", "kHuberLoss", "kL1") * 3:
        n = rng.randint(1, 12)
        preds = [f32(rng.uniform(-4.0, 4.0)) for _ in range(n)]
        if kind == "kBce":
            targets = [f32(rng.choice((0.0, 1.0, rng.uniform(0.0, 1.0)))) for _ in range(n)]
        else:
            targets = [f32(rng.uniform(-4.0, 4.0)) for _ in range(n)]
        delta = f32(rng.uniform(0.25, 2.0)) if kind == "kHuberLoss" else 0.0
        out.append((kind, preds, targets, delta))
    return out


# --- output -----------------------------------------------------------------------
def lit(v):
    """A C++ double literal (kNaN / kInf for the non-finite)."""
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    r = repr(float(v))
    return r


def wrap(items, sep, width=112):
    lines = []
    line = "   "
    for it in items:
        piece = " " + it + sep
        if len(line) + len(piece) > width:
            lines.append(line)
            line = "   "
        line += piece
    lines.append(line)
    return "\n".join(lines) + "\n"


def generate():
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    points_edge = [(code, x, c) for code, pts in EDGES for x, c in pts]
    points_random = random_points(rng)
    windows_edge = [(v, 0, 0) for v in MAX_EDGES] + MAX2D_EDGES
    windows_random = random_windows(rng)
    losses = LOSS_EDGES + random_losses(rng)
    return points_edge, points_random, windows_edge, windows_random, losses


def header(points_edge, points_random, windows_edge, windows_random, losses):
    out = []
    out.append("// SPDX-License-Identifier: Apache-2.0\n")
    out.append("// GENERATED by tools/golden/core/gen_ops_losses_golden.py - do not edit.\n")
    out.append("// Regenerate (Debian python3-torch 1.13; byte-identical output):\n")
    out.append("//   /usr/bin/python3 tools/golden/core/gen_ops_losses_golden.py -o "
               "tests/golden/ops_losses_golden.hpp\n")
    out.append("// PyTorch %s values and gradients (float64, and float32 on float32 inputs) of the ops\n"
               % torch.__version__)
    out.append("// linked on use and of the losses of nn/losses.hpp; seed 0x%X. %d op points, %d max windows,\n"
               % (SEED, len(points_edge) + len(points_random), len(windows_edge) + len(windows_random)))
    out.append("// %d loss cases. With BURTORCH_TEST_SMALL_TARGET=1 only the edge cases are compiled.\n"
               % len(losses))
    out.append("#ifndef BURTORCH_TESTS_GOLDEN_OPS_LOSSES_GOLDEN_HPP\n#define BURTORCH_TESTS_GOLDEN_OPS_LOSSES_GOLDEN_HPP\n\n")
    out.append("#include <cstddef>\n#include <cstdint>\n#include <limits>\n\n")
    out.append("#ifndef BURTORCH_TEST_SMALL_TARGET\n#define BURTORCH_TEST_SMALL_TARGET 0\n#endif\n\n")
    out.append("namespace golden_ops_losses {\n\n")
    out.append("constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();\n")
    out.append("constexpr double kInf = std::numeric_limits<double>::infinity();\n\n")
    out.append("enum Code : std::uint8_t { %s };\n\n" % ", ".join(code for code, _, _ in OPS))
    out.append("// One point of an elementwise op: op(x; c). value/grad: PyTorch float64 at (x, c);\n"
               "// value32/grad32: PyTorch float32 at (float(x), float(c)).\n")
    out.append("struct Point {\n  Code op;\n  double x;\n  double c;\n  double value;\n  double grad;\n"
               "  double value32;\n  double grad32;\n};\n\n")
    rows = []
    for k, (code, x, c) in enumerate(points_edge + points_random):
        if k == len(points_edge):
            rows.append("#if !BURTORCH_TEST_SMALL_TARGET\n")
        v, g = elementwise(code, x, c, F64)
        v32, g32 = elementwise(code, x, c, F32)
        rows.append("    {%s, %s, %s, %s, %s, %s, %s},\n" % (code, lit(x), lit(c), lit(v), lit(g), lit(v32), lit(g32)))
    rows.append("#endif  // !BURTORCH_TEST_SMALL_TARGET\n")
    out.append("constexpr Point kPoints[] = {\n%s};\n\n" % "".join(rows))

    # Windows: values, then PyTorch's value and gradient per operand.
    out.append("// One window of reduce_max: values[first .. first + n) in operand order (a 2-D window\n"
               "// row by row); PyTorch max_pool1d (rows == 0) or max_pool2d: the maximum and the\n"
               "// gradient of each operand, float64 and float32.\n")
    out.append("struct Window {\n  std::uint16_t first;\n  std::uint8_t n;\n  std::uint8_t rows;\n"
               "  double value;\n  double value32;\n};\n\n")
    values = []
    grads = []
    grads32 = []
    wrows = []
    for k, (vals, rows_, cols) in enumerate(windows_edge + windows_random):
        if k == len(windows_edge):
            wrows.append("#if !BURTORCH_TEST_SMALL_TARGET\n")
        v, g = max_pool(vals, rows_, cols, F64)
        v32, g32 = max_pool(vals, rows_, cols, F32)
        if rows_ != 0:
            # max_pool2d picks as max_pool1d over the window read row by row.
            v1, g1 = max_pool(vals, 0, 0, F64)
            assert (v1 == v or (math.isnan(v1) and math.isnan(v))) and g1 == g, vals
        first = len(values)
        values.extend(vals)
        grads.extend(g)
        grads32.extend(g32)
        wrows.append("    {%d, %d, %d, %s, %s},\n" % (first, len(vals), rows_, lit(v), lit(v32)))
    wrows.append("#endif  // !BURTORCH_TEST_SMALL_TARGET\n")
    out.append("constexpr double kWindowValues[] = {\n%s};\n" % wrap([lit(v) for v in values], ","))
    out.append("constexpr double kWindowGrads[] = {\n%s};\n" % wrap([lit(v) for v in grads], ","))
    out.append("constexpr double kWindowGrads32[] = {\n%s};\n" % wrap([lit(v) for v in grads32], ","))
    out.append("constexpr Window kWindows[] = {\n%s};\n\n" % "".join(wrows))

    # Losses.
    out.append("enum LossKind : std::uint8_t { kBce, kHuberLoss, kL1 };\n\n")
    out.append("// One loss call: predictions and targets at data[first .. first + n) and\n"
               "// data[first + n .. first + 2n); PyTorch's mean loss and d(loss)/d(prediction i) at\n"
               "// grads[first_grad + i], float64 and float32.\n")
    out.append("struct LossCase {\n  LossKind kind;\n  std::uint16_t first;\n  std::uint8_t n;\n  double delta;\n"
               "  double value;\n  double value32;\n};\n\n")
    data = []
    lgrads = []
    lgrads32 = []
    lrows = []
    for k, (kind, preds, targets, delta) in enumerate(losses):
        if k == SMALL_TARGET_LOSSES:
            lrows.append("#if !BURTORCH_TEST_SMALL_TARGET\n")
        v, g = loss(kind, preds, targets, delta, F64)
        v32, g32 = loss(kind, preds, targets, delta, F32)
        assert len(lgrads) == len(data) // 2
        first = len(data)
        data.extend(preds)
        data.extend(targets)
        lgrads.extend(g)
        lgrads32.extend(g32)
        lrows.append("    {%s, %d, %d, %s, %s, %s},\n" % (kind, first, len(preds), lit(delta), lit(v), lit(v32)))
    lrows.append("#endif  // !BURTORCH_TEST_SMALL_TARGET\n")
    out.append("constexpr double kLossData[] = {\n%s};\n" % wrap([lit(v) for v in data], ","))
    out.append("// d(loss)/d(prediction): case k's at kLossGrads[kLossCases[k].first / 2 ..].\n")
    out.append("constexpr double kLossGrads[] = {\n%s};\n" % wrap([lit(v) for v in lgrads], ","))
    out.append("constexpr double kLossGrads32[] = {\n%s};\n" % wrap([lit(v) for v in lgrads32], ","))
    out.append("constexpr LossCase kLossCases[] = {\n%s};\n\n" % "".join(lrows))
    out.append("}  // namespace golden_ops_losses\n\n#endif  // BURTORCH_TESTS_GOLDEN_OPS_LOSSES_GOLDEN_HPP\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="header to write (default: standard output)")
    args = ap.parse_args()
    text = header(*generate())
    if args.output:
        with open(args.output, "w", encoding="ascii", newline="\n") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
