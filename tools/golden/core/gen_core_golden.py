#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Golden data for the core's ops: random expression graphs, evaluated by PyTorch.

Writes a C++ header (default: standard output) with, per graph, an
instruction program, its leaf values and constants, and PyTorch's float64
root value and leaf gradients. tests/core/test_golden.cpp replays each program on a
burtorch tape and compares.

Regenerate (needs Debian's python3-torch 1.13; the output is byte-identical):

    /usr/bin/python3 tools/golden/core/gen_core_golden.py -o tests/golden/core_golden.hpp

Debug one graph (per-register values and node paths):

    /usr/bin/python3 tools/golden/core/gen_core_golden.py --dump 17

How the expected numbers are made: every instruction is evaluated with
PyTorch's own operators on 0-d float64 tensors (torch.relu, torch.sigmoid,
torch.var(unbiased=...), torch.dot, torch.prod, ...); gradients come from
torch.autograd.grad. Nothing here re-implements burtorch's formulas.

Domains: the generator knows every value while it builds a graph, so log,
sqrt, inv_sqrt only see x >= 0.1, inv and divisions only |x| >= 0.25, relu
only |x| >= 0.05, exp only |x| <= 4, and every recorded value stays within
|v| <= 50. A finished graph is kept only if (a) its root and leaf gradients
are at most 1e3 in magnitude and (b) PyTorch's own float32 evaluation of the
same graph agrees with float64 to 1e-5 * max(1, |x|) for the root and every
leaf gradient. (b) bounds how much the graph amplifies rounding errors (at
most ~170 float32 unit roundoffs), which is what makes the float64 tolerance
of 1e-12 and the float32 tolerance of 1e-4 in the test meaningful for an
implementation that sums in a different order than PyTorch.
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_blas  # noqa: E402

reference_blas.ensure()
import torch  # noqa: E402

SEED = 0x6275727A  # "burz"
GRAPH_COUNT = 60
SMALL_TARGET_GRAPHS = 8
MIN_INSTRUCTIONS = 15
MAX_INSTRUCTIONS = 40
VALUE_BOUND = 50.0
GRAD_BOUND = 1e3
FP32_FILTER = 1e-5

F64 = torch.float64
F32 = torch.float32


# --- the instruction set ----------------------------------------------------
# (code, kind). Kinds:
#   leaf     a = leaf index
#   unary    a = register
#   binary   a, b = registers
#   const    a = register, b = constant index
#   reduce   n operands at operands[a .. a+n)
#   mean_ms  like reduce, defines two registers (mean, mean of squares)
#   dot      w at operands[a .. a+n), x at operands[b .. b+n)
#   dot_bias like dot, bias register at operands[b + n]
OPS = [
    ("kLeaf", "leaf"),
    ("kAdd", "binary"), ("kSub", "binary"), ("kMul", "binary"), ("kDiv", "binary"),
    ("kAddC", "const"), ("kCAdd", "const"), ("kSubC", "const"), ("kCSub", "const"),
    ("kMulC", "const"), ("kCMul", "const"), ("kDivC", "const"), ("kCDiv", "const"),
    ("kNeg", "unary"),
    ("kAddAssign", "binary"), ("kSubAssign", "binary"), ("kMulAssign", "binary"), ("kDivAssign", "binary"),
    ("kAddAssignC", "const"), ("kSubAssignC", "const"), ("kMulAssignC", "const"), ("kDivAssignC", "const"),
    ("kRelu", "unary"), ("kTanh", "unary"), ("kExp", "unary"), ("kLog", "unary"), ("kNegLog", "unary"),
    ("kSigmoid", "unary"), ("kInv", "unary"), ("kSqr", "unary"), ("kPow3", "unary"), ("kSqrt", "unary"),
    ("kInvSqrt", "unary"),
    ("kMulByConst", "const"),
    ("kMean2", "binary"), ("kAddSquares", "binary"), ("kMeanSquares", "binary"), ("kNegativeMean", "binary"),
    ("kReduceSum", "reduce"), ("kReduceSub", "reduce"), ("kReduceMul", "reduce"), ("kReduceMean", "reduce"),
    ("kReduceSumOfSquares", "reduce"), ("kReduceMeanSquares", "reduce"), ("kReduceNegativeMean", "reduce"),
    ("kVariance", "reduce"), ("kVarianceBiased", "reduce"),
    ("kReduceMeanAndMeanSquares", "mean_ms"),
    ("kInnerProduct", "dot"), ("kInnerProductWithBias", "dot_bias"),
]
KIND = dict(OPS)
CODES = [code for code, _ in OPS]


def stack(xs):
    return torch.stack(list(xs))


def torch_op(code, args, c):
    """PyTorch's value for one instruction. args: tensors; c: constant."""
    x = args[0] if args else None
    if code in ("kAdd", "kAddAssign"):
        return torch.add(args[0], args[1])
    if code in ("kSub", "kSubAssign"):
        return torch.sub(args[0], args[1])
    if code in ("kMul", "kMulAssign"):
        return torch.mul(args[0], args[1])
    if code in ("kDiv", "kDivAssign"):
        return torch.div(args[0], args[1])
    if code in ("kAddC", "kAddAssignC"):
        return x + c
    if code == "kCAdd":
        return c + x
    if code in ("kSubC", "kSubAssignC"):
        return x - c
    if code == "kCSub":
        return c - x
    if code in ("kMulC", "kMulAssignC", "kMulByConst"):
        return torch.mul(x, c)
    if code == "kCMul":
        return c * x
    if code in ("kDivC", "kDivAssignC"):
        return torch.div(x, c)
    if code == "kCDiv":
        return c / x
    unary = {
        "kNeg": torch.neg, "kRelu": torch.relu, "kTanh": torch.tanh, "kExp": torch.exp,
        "kLog": torch.log, "kNegLog": lambda t: torch.neg(torch.log(t)), "kSigmoid": torch.sigmoid,
        "kInv": torch.reciprocal, "kSqr": torch.square, "kPow3": lambda t: torch.pow(t, 3),
        "kSqrt": torch.sqrt, "kInvSqrt": torch.rsqrt,
    }
    if code in unary:
        return unary[code](x)
    if code == "kMean2":
        return torch.mean(stack(args))
    if code == "kAddSquares":
        return torch.sum(torch.square(stack(args)))
    if code == "kMeanSquares":
        return torch.mean(torch.square(stack(args)))
    if code == "kNegativeMean":
        return torch.neg(torch.mean(stack(args)))
    if code == "kReduceSum":
        return torch.sum(stack(args))
    if code == "kReduceSub":
        # x0 - x1 - ... - x(n-1)
        return torch.sub(args[0], torch.sum(stack(args[1:]))) if len(args) > 1 else torch.mul(args[0], 1.0)
    if code == "kReduceMul":
        return torch.prod(stack(args))
    if code == "kReduceMean":
        return torch.mean(stack(args))
    if code == "kReduceSumOfSquares":
        return torch.sum(torch.square(stack(args)))
    if code == "kReduceMeanSquares":
        return torch.mean(torch.square(stack(args)))
    if code == "kReduceNegativeMean":
        return torch.neg(torch.mean(stack(args)))
    if code == "kVariance":
        return torch.var(stack(args), unbiased=True)
    if code == "kVarianceBiased":
        return torch.var(stack(args), unbiased=False)
    if code == "kReduceMeanAndMeanSquares":
        s = stack(args)
        return (torch.mean(s), torch.mean(torch.square(s)))
    if code == "kInnerProduct":
        n = len(args) // 2
        return torch.dot(stack(args[:n]), stack(args[n:]))
    if code == "kInnerProductWithBias":
        n = (len(args) - 1) // 2
        return torch.add(torch.dot(stack(args[:n]), stack(args[n:2 * n])), args[2 * n])
    raise ValueError(code)


class Instr:
    def __init__(self, code, regs, const=None, n=0):
        self.code = code
        self.regs = regs      # operand registers, in order (dot: w..., x..., [bias])
        self.const = const    # Python float or None
        self.n = n            # arity of reduce/dot
        self.leaf = None


def evaluate(program, leaves, dtype):
    """Runs a program; returns (registers, leaf tensors)."""
    regs = []
    leaf_tensors = []
    for ins in program:
        if ins.code == "kLeaf":
            t = torch.tensor(leaves[ins.leaf], dtype=dtype, requires_grad=True)
            leaf_tensors.append(t)
            regs.append(t)
            continue
        out = torch_op(ins.code, [regs[r] for r in ins.regs], ins.const)
        if isinstance(out, tuple):
            regs.extend(out)
        else:
            regs.append(out)
    return regs, leaf_tensors


def root_and_grads(program, leaves, dtype):
    regs, leaf_tensors = evaluate(program, leaves, dtype)
    root = regs[-1]
    grads = torch.autograd.grad(root, leaf_tensors, allow_unused=True)
    return root.item(), [0.0 if g is None else g.item() for g in grads], regs


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


# --- the generator -----------------------------------------------------------
class Generator:
    def __init__(self, rng):
        self.rng = rng
        self.uses = {code: 0 for code in CODES}
        self.paths = {}       # (code, "range"/"list" or dot pair) -> count
        self.tails = {}       # code -> count of n % 4 != 0 with n > 4
        self.zero_products = [0, 0]  # reduce_mul with exactly one / two or more zero operands
        self.rejected = 0

    # One graph, or None if the finished graph fails the filters.
    def graph(self):
        rng = self.rng
        self.program = []
        self.leaves = []
        self.vals = []        # float64 value of each register
        self.tensors = []     # float64 tensors, to evaluate candidates
        self.used = []        # register consumed by some later instruction
        uses_before = dict(self.uses)
        paths_before = dict(self.paths)
        tails_before = dict(self.tails)
        zeros_before = list(self.zero_products)

        target = rng.randint(MIN_INSTRUCTIONS, MAX_INSTRUCTIONS)
        for _ in range(rng.randint(4, 10)):
            self.add_leaf()
        attempts = 0
        while len(self.program) < target - 1 and attempts < 2000:
            attempts += 1
            if rng.random() < 0.06:
                self.add_leaf()
                continue
            self.try_op(self.pick_op())
        self.add_root()

        root, grads, _ = root_and_grads(self.program, self.leaves, F64)
        root32, grads32, _ = root_and_grads(self.program, self.leaves, F32)
        ok = abs(root) <= GRAD_BOUND and all(abs(g) <= GRAD_BOUND for g in grads)
        ok = ok and close(root32, root, FP32_FILTER)
        ok = ok and all(close(g32, g, FP32_FILTER) for g32, g in zip(grads32, grads))
        assert root == self.vals[-1], "incremental and fresh evaluation differ"
        if not ok:
            self.uses, self.paths, self.tails = uses_before, paths_before, tails_before
            self.zero_products = zeros_before
            self.rejected += 1
            return None
        return {"program": self.program, "leaves": self.leaves, "root": root, "grads": grads}

    def pick_op(self):
        candidates = [c for c in CODES if c != "kLeaf"]
        if self.rng.random() < 0.5:
            least = min(self.uses[c] for c in candidates)
            candidates = [c for c in candidates if self.uses[c] == least]
        return self.rng.choice(candidates)

    def add_leaf(self):
        rng = self.rng
        r = rng.random()
        if r < 0.07:
            v = 0.0
        elif r < 0.55:
            v = rng.uniform(0.2, 3.0)
        else:
            v = rng.uniform(-3.0, 3.0)
        ins = Instr("kLeaf", [])
        ins.leaf = len(self.leaves)
        self.leaves.append(v)
        self.program.append(ins)
        self.uses["kLeaf"] += 1
        t = torch.tensor(v, dtype=F64, requires_grad=True)
        self.push([t])

    def push(self, outs):
        for t in outs:
            self.tensors.append(t)
            self.vals.append(t.item())
            self.used.append(False)

    def constant(self, code):
        rng = self.rng
        c = rng.uniform(0.25, 3.0) * rng.choice((-1.0, 1.0))
        if code in ("kAddC", "kCAdd", "kSubC", "kCSub", "kAddAssignC", "kSubAssignC"):
            c = rng.uniform(-4.0, 4.0)
        return c

    # Registers whose values satisfy `pred`; prefers ones nothing uses yet.
    def pick(self, pred):
        regs = [i for i, v in enumerate(self.vals) if pred(v)]
        if not regs:
            return None
        fresh = [i for i in regs if not self.used[i]]
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(regs[-3:])  # recent: deep chains
        if fresh and r < 0.8:
            return self.rng.choice(fresh)
        return self.rng.choice(regs)

    def operand_list(self, n, pred, mode):
        """n registers satisfying pred: a consecutive run or an arbitrary list."""
        rng = self.rng
        if mode == "range":
            starts = [s for s in range(len(self.vals) - n + 1) if all(pred(v) for v in self.vals[s:s + n])]
            if not starts:
                return None
            s = rng.choice(starts)
            return list(range(s, s + n))
        regs = [i for i, v in enumerate(self.vals) if pred(v)]
        if not regs:
            return None
        if len(regs) >= n and rng.random() < 0.75:
            out = rng.sample(regs, n)
        else:
            out = [rng.choice(regs) for _ in range(n)]  # repeats allowed
        return out

    def arity(self, lo, hi):
        rng = self.rng
        if rng.random() < 0.5:
            return rng.choice([n for n in (5, 6, 7, 9, 10, 11) if lo <= n <= hi] or [hi])
        return rng.randint(lo, hi)

    def try_op(self, code):
        rng = self.rng
        kind = KIND[code]
        const = None
        n = 0
        path = None
        if kind in ("unary", "const"):
            pred = {
                "kRelu": lambda v: abs(v) >= 0.05,
                "kExp": lambda v: abs(v) <= 4.0,
                "kLog": lambda v: v >= 0.1, "kNegLog": lambda v: v >= 0.1,
                "kSqrt": lambda v: v >= 0.1, "kInvSqrt": lambda v: v >= 0.1,
                "kInv": lambda v: abs(v) >= 0.25, "kCDiv": lambda v: abs(v) >= 0.25,
                "kTanh": lambda v: abs(v) <= 6.0, "kSigmoid": lambda v: abs(v) <= 8.0,
                "kSqr": lambda v: abs(v) <= 7.0, "kPow3": lambda v: abs(v) <= 3.6,
            }.get(code, lambda v: True)
            r = self.pick(pred)
            if r is None:
                return False
            regs = [r]
            if kind == "const":
                const = self.constant(code)
        elif kind == "binary":
            a = self.pick(lambda v: True)
            if code in ("kDiv", "kDivAssign"):
                b = self.pick(lambda v: abs(v) >= 0.25)
            else:
                b = self.pick(lambda v: True)
            if b is None:
                return False
            regs = [a, b]
        elif kind in ("reduce", "mean_ms"):
            if code == "kReduceMul":
                n = self.arity(1, 6)
                zeros = [i for i, v in enumerate(self.vals) if v == 0.0]
                want_zeros = 0
                z = rng.random()
                if zeros and z < 0.3:
                    want_zeros = 1
                elif zeros and z < 0.4:
                    want_zeros = 2
                mode = "list" if want_zeros else rng.choice(("range", "list"))
                pred = lambda v: v == 0.0 or 0.3 <= abs(v) <= 3.0
                if want_zeros:
                    nonzero = self.operand_list(max(n - want_zeros, 0), lambda v: 0.3 <= abs(v) <= 3.0, "list")
                    if nonzero is None:
                        return False
                    regs = nonzero + [rng.choice(zeros) for _ in range(want_zeros)]
                    rng.shuffle(regs)
                    n = len(regs)
                else:
                    regs = self.operand_list(n, pred, mode)
            else:
                lo = 2 if code == "kVariance" else 1
                n = self.arity(lo, 11)
                mode = rng.choice(("range", "list"))
                regs = self.operand_list(n, lambda v: True, mode)
            if regs is None:
                return False
            path = "range" if regs == list(range(regs[0], regs[0] + n)) else "list"
        else:  # dot, dot_bias
            n = self.arity(1, 11)
            wmode = rng.choice(("range", "list"))
            xmode = rng.choice(("range", "list"))
            small = lambda v: abs(v) <= 6.0
            w = self.operand_list(n, small, wmode)
            x = self.operand_list(n, small, xmode)
            if w is None or x is None:
                return False
            regs = w + x
            if kind == "dot_bias":
                regs.append(self.pick(lambda v: True))
            wr = w == list(range(w[0], w[0] + n))
            xr = x == list(range(x[0], x[0] + n))
            path = ("R" if wr else "L") + ("R" if xr else "L")

        out = torch_op(code, [self.tensors[r] for r in regs], const)
        outs = list(out) if isinstance(out, tuple) else [out]
        for t in outs:
            v = t.item()
            if not (abs(v) <= VALUE_BOUND):
                return False
        if code == "kReduceMul":
            nz = [self.vals[r] for r in regs if self.vals[r] != 0.0]
            prod_nz = 1.0
            for v in nz:
                prod_nz *= v
            if abs(prod_nz) > VALUE_BOUND:
                return False
            zc = n - len(nz)
            if zc == 1:
                self.zero_products[0] += 1
            elif zc >= 2:
                self.zero_products[1] += 1
        ins = Instr(code, regs, const, n)
        self.program.append(ins)
        for r in regs:
            self.used[r] = True
        self.push(outs)
        self.uses[code] += 1
        if path is not None:
            self.paths[(code, path)] = self.paths.get((code, path), 0) + 1
        if n > 4 and n % 4 != 0:
            self.tails[code] = self.tails.get(code, 0) + 1
        return True

    def add_root(self):
        # Everything nothing uses yet flows into the root, so every
        # instruction's gradient matters.
        dangling = [i for i, u in enumerate(self.used) if not u]
        code = self.rng.choice(("kReduceSum", "kReduceMean", "kReduceNegativeMean"))
        out = torch_op(code, [self.tensors[r] for r in dangling], None)
        ins = Instr(code, dangling, None, len(dangling))
        self.program.append(ins)
        for r in dangling:
            self.used[r] = True
        self.push([out])
        self.uses[code] += 1
        path = "range" if dangling == list(range(dangling[0], dangling[0] + len(dangling))) else "list"
        self.paths[(code, path)] = self.paths.get((code, path), 0) + 1


def generate():
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    gen = Generator(rng)
    graphs = []
    while len(graphs) < GRAPH_COUNT:
        g = gen.graph()
        if g is not None:
            graphs.append(g)
    return graphs, gen


# --- output ------------------------------------------------------------------
def f(x):
    r = repr(float(x))
    assert r not in ("nan", "inf", "-inf")
    return r


def operand_ref(operands, regs):
    at = len(operands)
    operands.extend(regs)
    return at


def emit_graph(out, k, g):
    consts = []
    operands = []
    rows = []
    slots = 0
    for ins in g["program"]:
        kind = KIND[ins.code]
        a = b = 0
        n = 0
        if kind == "leaf":
            a = ins.leaf
        elif kind == "unary":
            a = ins.regs[0]
        elif kind == "binary":
            a, b = ins.regs
        elif kind == "const":
            a = ins.regs[0]
            b = len(consts)
            consts.append(ins.const)
            slots += 2  # a double constant takes two 32-bit slots
        elif kind in ("reduce", "mean_ms"):
            n = ins.n
            a = operand_ref(operands, ins.regs)
            slots += n * (2 if kind == "mean_ms" else 1)
        else:
            n = ins.n
            a = operand_ref(operands, ins.regs[:n])
            b = operand_ref(operands, ins.regs[n:])
            slots += 2 * n + 3
        assert n < 256 and a < 65536 and b < 65536
        rows.append("{%s, %d, %d, %d}" % (ins.code, n, a, b))
    out.append("constexpr Instr kProgram%d[] = {\n%s};\n" % (k, wrap(rows, ",")))
    out.append("constexpr double kLeaves%d[] = {\n%s};\n" % (k, wrap([f(v) for v in g["leaves"]], ",")))
    out.append("constexpr double kGrads%d[] = {\n%s};\n" % (k, wrap([f(v) for v in g["grads"]], ",")))
    if consts:
        out.append("constexpr double kConstants%d[] = {\n%s};\n" % (k, wrap([f(v) for v in consts], ",")))
    if operands:
        out.append("constexpr std::uint16_t kOperands%d[] = {\n%s};\n" % (k, wrap([str(v) for v in operands], ",")))
    registers = sum(2 if KIND[i.code] == "mean_ms" else 1 for i in g["program"])
    entry = "    {kProgram%d, %d, kLeaves%d, kGrads%d, %d, %s, %d, %s, %d, %d, %s}," % (
        k, len(g["program"]), k, k, len(g["leaves"]),
        ("kConstants%d" % k) if consts else "nullptr", len(consts),
        ("kOperands%d" % k) if operands else "nullptr", len(operands),
        registers, f(g["root"]))
    return entry, registers, slots


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


def header(graphs, gen):
    out = []
    entries = []
    max_regs = 0
    max_slots = 0
    max_arity = 0
    instructions = sum(len(g["program"]) for g in graphs)
    body = []
    for k, g in enumerate(graphs):
        if k == SMALL_TARGET_GRAPHS:
            body.append("#if !BURTORCH_TEST_SMALL_TARGET\n")
        body.append("\n// graph %d\n" % k)
        entry, regs, slots = emit_graph(body, k, g)
        entries.append(entry)
        max_regs = max(max_regs, regs)
        max_slots = max(max_slots, slots)
        for ins in g["program"]:
            max_arity = max(max_arity, ins.n)
    body.append("#endif  // !BURTORCH_TEST_SMALL_TARGET\n")

    out.append("// SPDX-License-Identifier: Apache-2.0\n")
    out.append("// GENERATED by tools/golden/core/gen_core_golden.py - do not edit.\n")
    out.append("// Regenerate (Debian python3-torch 1.13; byte-identical output):\n")
    out.append("//   /usr/bin/python3 tools/golden/core/gen_core_golden.py -o tests/golden/core_golden.hpp\n")
    out.append("// %d random expression graphs, %d instructions, seed 0x%X. Expected root\n" % (
        len(graphs), instructions, SEED))
    out.append("// values and leaf gradients are PyTorch %s float64 autograd results.\n" % torch.__version__)
    out.append("// With BURTORCH_TEST_SMALL_TARGET=1 only the first %d graphs are compiled.\n" % SMALL_TARGET_GRAPHS)
    out.append("#ifndef BURTORCH_TESTS_GOLDEN_CORE_GOLDEN_HPP\n#define BURTORCH_TESTS_GOLDEN_CORE_GOLDEN_HPP\n\n")
    out.append("#include <cstddef>\n#include <cstdint>\n\n")
    out.append("#ifndef BURTORCH_TEST_SMALL_TARGET\n#define BURTORCH_TEST_SMALL_TARGET 0\n#endif\n")
    out.append("#if (BURTORCH_TEST_SMALL_TARGET != 0) && (BURTORCH_TEST_SMALL_TARGET != 1)\n")
    out.append("#error \"BURTORCH_TEST_SMALL_TARGET must be 0 or 1\"\n#endif\n\n")
    out.append("namespace golden_core {\n\n")
    out.append("// Instruction codes. Each instruction defines the next register (kReduceMeanAndMeanSquares\n")
    out.append("// defines two: mean, then mean of squares); registers are numbered from 0 in order.\n")
    out.append("//   kLeaf            a = leaf index (leaves are created in index order)\n")
    out.append("//   unary            a = register\n")
    out.append("//   binary, +=..     a, b = registers\n")
    out.append("//   with a constant  a = register, b = index into constants (kCSub: c - a, kCDiv: c / a, ...)\n")
    out.append("//   reductions       n operands: registers operands[a .. a+n)\n")
    out.append("//   inner products   w = operands[a .. a+n), x = operands[b .. b+n), bias = operands[b+n]\n")
    out.append("enum Code : std::uint8_t {\n%s  kCodeCount\n};\n\n" % "".join("  %s,\n" % c for c in CODES))
    out.append("struct Instr {\n  Code op;\n  std::uint8_t n;\n  std::uint16_t a;\n  std::uint16_t b;\n};\n\n")
    out.append("struct Graph {\n  const Instr* program;\n  std::uint16_t instructions;\n"
               "  const double* leaves;\n  const double* leaf_grads;  // d(root)/d(leaf), PyTorch float64\n"
               "  std::uint16_t leaf_count;\n  const double* constants;\n  std::uint16_t constant_count;\n"
               "  const std::uint16_t* operands;\n  std::uint16_t operand_count;\n"
               "  std::uint16_t registers;  // the root is the last one\n  double root;  // PyTorch float64\n};\n\n")
    out.append("constexpr std::size_t kMaxRegisters = %d;\n" % max_regs)
    out.append("constexpr std::size_t kMaxSlots = %d;  // FP64 upper bound: every operand a list\n" % max_slots)
    out.append("constexpr std::size_t kMaxArity = %d;\n" % max_arity)
    out.append("".join(body))
    out.append("\nconstexpr Graph kGraphs[] = {\n")
    for k, e in enumerate(entries):
        if k == SMALL_TARGET_GRAPHS:
            out.append("#if !BURTORCH_TEST_SMALL_TARGET\n")
        out.append(e + "\n")
    out.append("#endif  // !BURTORCH_TEST_SMALL_TARGET\n};\n\n}  // namespace golden_core\n\n")
    out.append("#endif  // BURTORCH_TESTS_GOLDEN_CORE_GOLDEN_HPP\n")
    return "".join(out)


def stats(graphs, gen):
    lines = []
    lines.append("graphs %d (rejected by the filters: %d)" % (len(graphs), gen.rejected))
    lines.append("instructions %d" % sum(len(g["program"]) for g in graphs))
    small = {}
    for g in graphs[:SMALL_TARGET_GRAPHS]:
        for ins in g["program"]:
            small[ins.code] = small.get(ins.code, 0) + 1
    lines.append("op uses (all / first %d graphs):" % SMALL_TARGET_GRAPHS)
    for c in CODES:
        lines.append("  %-28s %4d %4d" % (c, gen.uses[c], small.get(c, 0)))
    lines.append("paths:")
    for key in sorted(gen.paths):
        lines.append("  %-28s %-6s %4d" % (key[0], key[1], gen.paths[key]))
    lines.append("n > 4 and n %% 4 != 0: %s" % ", ".join("%s %d" % kv for kv in sorted(gen.tails.items())))
    depths = []
    for g in graphs:
        depth = []
        for ins in g["program"]:
            d = 1 + max((depth[r] for r in ins.regs), default=-1)
            depth.extend([d] * (2 if KIND[ins.code] == "mean_ms" else 1))
        depths.append(depth[-1])
    lines.append("root depth (ops on the longest leaf-to-root path): min %d, mean %.1f, max %d" % (
        min(depths), sum(depths) / len(depths), max(depths)))
    lines.append("reduce_mul with one zero: %d, two or more zeros: %d" % tuple(gen.zero_products))
    return "\n".join(lines) + "\n"


def check_coverage(graphs, gen):
    for c in CODES:
        assert gen.uses[c] > 0, c
        small = any(ins.code == c for g in graphs[:SMALL_TARGET_GRAPHS] for ins in g["program"])
        assert small, "first graphs miss " + c
    for c, kind in OPS:
        if kind in ("reduce", "mean_ms"):
            assert gen.paths.get((c, "range"), 0) > 0 and gen.paths.get((c, "list"), 0) > 0, c
        if kind in ("dot", "dot_bias"):
            for p in ("RR", "RL", "LR", "LL"):
                assert gen.paths.get((c, p), 0) > 0, (c, p)
    assert gen.zero_products[0] > 0 and gen.zero_products[1] > 0


def dump(graphs, k):
    g = graphs[k]
    root, grads, regs = root_and_grads(g["program"], g["leaves"], F64)
    r = 0
    for ins in g["program"]:
        count = 2 if KIND[ins.code] == "mean_ms" else 1
        vals = " ".join(f(regs[r + j].item()) for j in range(count))
        extra = "" if ins.const is None else " c=" + f(ins.const)
        arg = ("leaf %d" % ins.leaf) if ins.code == "kLeaf" else ("regs %s" % ins.regs)
        print("r%-3d %-28s %s%s -> %s" % (r, ins.code, arg, extra, vals))
        r += count
    print("root", f(root))
    for i, gr in enumerate(grads):
        print("d/dleaf%d %s" % (i, f(gr)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="header to write (default: standard output)")
    ap.add_argument("--stats", action="store_true", help="print coverage statistics to standard error")
    ap.add_argument("--dump", type=int, metavar="K", help="print graph K register by register, write nothing")
    args = ap.parse_args()
    graphs, gen = generate()
    check_coverage(graphs, gen)
    if args.dump is not None:
        dump(graphs, args.dump)
        return
    text = header(graphs, gen)
    if args.stats:
        sys.stderr.write(stats(graphs, gen))
    if args.output:
        with open(args.output, "w", encoding="ascii", newline="\n") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
