#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares the parameter sections of two trainer checkpoints
(docs/checkpoint-format.md: a 12-byte header "BTCK", version, kind, scalar
size, byte order, section count u32; a table of (tag u32, size u64); the
payloads in order; a CRC-32). Prints the largest absolute difference and the
largest magnitude, and exits 1 if the difference exceeds --tolerance."""
import argparse
import struct
import sys
import zlib


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"BTCK" or zlib.crc32(data[:-4]) != struct.unpack("<I", data[-4:])[0]:
        sys.exit(f"{path}: not a checkpoint (magic or CRC)")
    kind, size = data[5], data[6]
    (count,) = struct.unpack_from("<I", data, 8)
    at = 12
    table = []
    for _ in range(count):
        tag, nbytes = struct.unpack_from("<IQ", data, at)
        table.append((tag, nbytes))
        at += 12
    out = {}
    for tag, nbytes in table:
        out[struct.pack("<I", tag).decode("latin-1")] = data[at:at + nbytes]
        at += nbytes
    return kind, size, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tolerance", type=float, default=0.0)
    args = ap.parse_args()
    ka, sa, a = sections(args.a)
    kb, sb, b = sections(args.b)
    if (ka, sa) != (kb, sb) or a.keys() != b.keys():
        sys.exit("the checkpoints have different kinds or sections")
    fmt = "<d" if sa == 8 else "<f"
    tag = "VALU"  # the parameters (kTagValues)
    pa = [v for (v,) in struct.iter_unpack(fmt, a[tag])]
    pb = [v for (v,) in struct.iter_unpack(fmt, b[tag])]
    if len(pa) != len(pb):
        sys.exit("different parameter counts")
    diff = max(abs(x - y) for x, y in zip(pa, pb))
    top = max(abs(x) for x in pa)
    equal = sum(1 for x, y in zip(pa, pb) if x == y)
    print(f"parameters {len(pa)}: max |a - b| {diff:.3e}, max |a| {top:.3e}, bitwise equal {equal}")
    return 1 if diff > args.tolerance else 0


if __name__ == "__main__":
    sys.exit(main())
