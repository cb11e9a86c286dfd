#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of fuzz/fuzz_tape.cpp to fuzz/corpus-tape/ (or to
corpus-tape/ next to this script's copy when run elsewhere).

Each seed is a small program in the target's byte encoding (see
LLVMFuzzerTestOneInput and Driver::run in fuzz_tape.cpp) that uses the tape
the way its documentation says: parameters, a per-sample loop with a mark
and rewinds, every op kind, list and view-list operands, backward and
zero_grad. None of them misuses the tape: the fuzzer has to find the
misuse (stale marks, foreign handles, nodes a root does not reach) itself.
"""
import argparse
import os
import sys

# Action codes (first byte of an action, taken modulo 20).
LEAF, UNARY, BINARY, REDUCE, MEAN_MSQ, DOT, LSE = 0, 2, 4, 6, 7, 8, 9
SEGMENTS, DOT_VIEWS, MATVEC, RANGES, MARK, REWIND, BACKWARD, ZERO_GRAD, RESET = (
    10, 11, 12, 13, 14, 15, 17, 18, 19)

# Unary functions (second byte modulo 26) and binary ones (modulo 12).
U_NEG, U_ADDC, U_CADD, U_SUBC, U_CSUB, U_MULC, U_CMUL, U_DIVC, U_CDIV, U_MULBY = range(10)
U_RELU, U_TANH, U_EXP, U_LOG, U_NEGLOG, U_SIGMOID, U_INV, U_SQR, U_POW3, U_SQRT, U_INVSQRT = range(10, 21)
U_IADD, U_ISUB, U_IMUL, U_IDIV = range(21, 25)
B_ADD, B_SUB, B_MUL, B_DIV, B_MEAN, B_ADDSQ, B_MEANSQ, B_NEGMEAN = range(8)
B_IADD, B_ISUB, B_IMUL, B_IDIV = range(8, 12)


def num(x):
    """Byte for a number in [-7, 6.9375], a multiple of 1/16."""
    b = int(round(x * 16)) + 112
    assert 0 <= b < 224 and (b - 112) / 16 == x
    return b


def last(k=0):
    """Operand selector: the k-th most recent node of the home tape."""
    return k


OTHER = 176  # the most recent node of the other tape


def config(nodes, slots, params=0, kind=4, extra=0):
    # kind 4..7: exact size; 0 tiny; 1 misaligned; 2 larger; 3 null (extra % 4 == 0)
    return [nodes, slots, params, kind, extra]


def program(double, a, b, actions):
    out = [1 if double else 0] + a + b
    for act in actions:
        out += act
    return bytes(out)


def leaf(x, side=0, param=False, name=0):
    return [LEAF, side | (2 if param else 0) | (name << 2), num(x)]


def unary(fn, sel=0, c=1.0, side=0):
    return [UNARY, fn | (0x80 if side else 0), sel, num(c)]


def binary(fn, x=0, y=1, side=0):
    return [BINARY, fn | (0x80 if side else 0), x, y]


def range_list(n, back=0):
    """n consecutive nodes ending `back` nodes before the newest."""
    return [n - 1, back]


def pick_list(sels):
    return [0x80 | (len(sels) - 1)] + list(sels)


def reduce(kind, operands, side=0):
    return [REDUCE, kind | (0x80 if side else 0)] + operands


def mark(slot, side=0):
    return [MARK, slot | (0x80 if side else 0)]


def rewind(slot, side=0):
    return [REWIND, slot | (0x80 if side else 0)]


def backward(sel=0, side=0):
    return [BACKWARD, 0x80 if side else 0, sel]


def zero_grad(side=0):
    return [ZERO_GRAD, 0x80 if side else 0]


def seeds():
    out = {}
    for double in (False, True):
        t = "d" if double else "f"
        # A per-sample training loop: 3 parameters, a mark, 3 samples.
        sample = [leaf(0.5), binary(B_MUL, 0, 2), binary(B_ADD, 0, 3), unary(U_TANH), unary(U_SQR),
                  backward(0), rewind(0)]
        out[f"loop_{t}"] = program(double, config(32, 32, 3), config(8, 8), [
            leaf(0.25, param=True, name=1), leaf(-0.5, param=True, name=2), leaf(0.125, param=True, name=3),
            mark(0)] + sample * 3 + [zero_grad()])
        # Every unary function of one leaf, each followed by backward.
        acts = [leaf(1.5), mark(0)]
        for fn in range(25):
            acts += [unary(fn, c=0.75), backward(0), rewind(0)]
        out[f"unary_{t}"] = program(double, config(8, 8), config(4, 4), acts)
        # Every binary op of two leaves.
        acts = [leaf(1.25), leaf(-2.0)]
        for fn in range(12):
            acts += [binary(fn, 1, 0), backward(0), zero_grad(), rewind(1)]
        out[f"binary_{t}"] = program(double, config(16, 8), config(4, 4), acts[:2] + [mark(1)] + acts[2:])
        # Reductions over ranges and lists, then one root over all of them.
        acts = [leaf(x) for x in (0.5, -1.0, 2.0, 1.5, -0.25, 3.0)]
        for kind in range(9):
            acts += [reduce(kind, range_list(4, back=0)), mark(2), rewind(2)]
            acts += [reduce(kind, pick_list([1, 3, 5, 2]))]
        acts += [reduce(0, range_list(16, back=0)), backward(0)]
        acts += [[MEAN_MSQ, 0] + range_list(3, back=3), backward(0)]
        out[f"reduce_{t}"] = program(double, config(48, 96), config(4, 4), acts)
        # Inner products (range/list/bias) and log-sum-exp.
        acts = [leaf(x) for x in (0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 0.75)]
        acts += [[DOT, 0x00] + range_list(3, back=3) + range_list(3, back=0)]
        acts += [[DOT, 0x01] + pick_list([1, 3, 5]) + range_list(3, back=1) + [6]]
        acts += [[LSE, 0x00] + range_list(4, back=2)]
        acts += [[LSE, 0x00] + pick_list([2, 4, 6])]
        acts += [reduce(0, range_list(4, back=0)), backward(0)]
        out[f"dot_{t}"] = program(double, config(32, 64), config(4, 4), acts)
        # View lists: inner products, a matrix-vector product, ranges.
        acts = [leaf(x) for x in (0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 0.75, 1.0, -1.5, 0.25)]
        acts += [[SEGMENTS, 0x01, 0, 2, 4, 2]]          # runs {0,2} {4,2} (first = byte % (size+2))
        acts += [[DOT_VIEWS, 0x02, 0, 6, 0x02]]      # Tape::dot_views(6, list 0)
        acts += [[DOT_VIEWS, 0x01, 9, 5, 0x02]]      # inner_product_views_with_bias(w, list 0, bias)
        acts += [[MATVEC, 0x00, 2, 2, 0x01, 0x02]]      # matvec(2, 2 rows, list 0, no bias)
        acts += [[RANGES, 0x00, 0, 3, 3]]               # dot_ranges(0, 3, 3)
        acts += [[RANGES, 0x01, 0, 3, 3, 6]]            # scale_shift(0, 3, 6, 3)
        acts += [reduce(0, range_list(7, back=0)), backward(0)]
        out[f"segments_{t}"] = program(double, config(40, 64), config(4, 4), acts)
        # Nested marks used in order, a logged metric on the side.
        acts = [leaf(0.5), mark(0), leaf(2.0), unary(U_SQRT, sel=1), mark(1), binary(B_MUL, 2, 2),
                backward(0), rewind(1), binary(B_ADD, 1, 2), backward(0), rewind(0), leaf(1.0),
                unary(U_LOG, 0), backward(0), zero_grad()]
        out[f"marks_{t}"] = program(double, config(24, 24), config(8, 8), acts)
        # Two tapes, each with its own graph.
        acts = [leaf(1.0), leaf(2.0, side=1), leaf(-1.0, side=1), binary(B_MUL, 0, 1, side=1),
                unary(U_EXP, side=1), backward(0, side=1), unary(U_SIGMOID), backward(0), mark(3, side=1),
                leaf(0.5, side=1), rewind(3, side=1), [RESET, 0x80]]
        out[f"two_tapes_{t}"] = program(double, config(8, 8), config(12, 12, 1), acts)
    # Buffers the constructor must refuse: tiny, misaligned, null.
    out["tiny_buffer"] = program(False, config(16, 16, 0, 0, 3), config(4, 4, 0, 1, 7),
                                 [leaf(1.0), leaf(1.0, side=1), unary(U_EXP)])
    out["null_buffer"] = program(True, config(16, 16, 0, 3, 0), config(4, 4, 0, 2, 33),
                                 [leaf(1.0), leaf(1.0, side=1), unary(U_EXP, side=1), backward(0, side=1)])
    return out


def main():
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.path.join(here, "corpus-tape")
    os.makedirs(target, exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(target, name + ".bin"), "wb") as f:
            f.write(data)
    print(f"{len(seeds())} seeds in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
