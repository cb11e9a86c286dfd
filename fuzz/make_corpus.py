#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Independent reference encoder for the libburtorch checkpoint format.

Written from docs/checkpoint-format.md with Python's struct and zlib only, so
it shares no code with lib/checkpoint.cpp. It makes

  * the fuzzer's seed corpus (fuzz/corpus/, committed): valid checkpoints
    for the layouts fuzz/fuzz_checkpoint.cpp loads, and broken variants;
  * with --cpp, the golden byte arrays pasted into tests/core/test_checkpoint.cpp.

Usage: fuzz/make_corpus.py [--cpp]   (writes fuzz/corpus/ next to this file)
"""
import argparse
import os
import struct
import sys
import zlib

MAGIC = b"BTCK"
VERSION = 1
KIND_BYTES, KIND_F32, KIND_F64 = 0, 1, 2
SCALAR_SIZE = {KIND_BYTES: 1, KIND_F32: 4, KIND_F64: 8}
LITTLE_ENDIAN = 1


def tag(text):
    assert len(text) == 4
    return struct.unpack("<I", text.encode("ascii"))[0]


def encode(kind, sections):
    """sections: list of (tag text, payload bytes)."""
    out = MAGIC + struct.pack("<BBBBI", VERSION, kind, SCALAR_SIZE[kind], LITTLE_ENDIAN, len(sections))
    for name, payload in sections:
        out += struct.pack("<IQ", tag(name), len(payload))
    for _, payload in sections:
        out += payload
    return out + struct.pack("<I", zlib.crc32(out) & 0xFFFFFFFF)


def f64(values):
    return struct.pack("<%dd" % len(values), *values)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


# The paper's tiny graph: a=-41, b=2, c=a+b, d=a*b+b^3, e=c-d, f=e^2, g=f/2,
# and dg/d(each) worked by hand: g = e^2/2, dg/de = e = 35, dg/dc = 35,
# dg/dd = -35, dg/da = dg/dc + b*dg/dd = -35, dg/db = 35 + (a + 3b^2)(-35).
TINY_VALUES = [-41.0, 2.0, -39.0, -74.0, 35.0, 1225.0, 612.5]
TINY_GRADS = [-35.0, 1050.0, 35.0, -35.0, 35.0, 0.5, 1.0]


def goldens():
    return {
        "kGoldenTinyF64": encode(KIND_F64, [("VALU", f64(TINY_VALUES))]),
        "kGoldenTinyF64Grads": encode(KIND_F64, [("VALU", f64(TINY_VALUES)), ("GRAD", f64(TINY_GRADS))]),
        "kGoldenTinyF32": encode(KIND_F32, [("VALU", f32(TINY_VALUES))]),
    }


def trainer_like():
    params = f64([0.125 * i - 0.5 for i in range(8)])
    moments = f64([0.01 * i for i in range(8)])
    step = struct.pack("<Q", 1234)
    return encode(KIND_F64, [("PARM", params), ("ADAM", moments), ("STEP", step)])


def corpus():
    g = goldens()
    valid = {
        "tiny_f64": g["kGoldenTinyF64"],
        "tiny_f64_grads": g["kGoldenTinyF64Grads"],
        "tiny_f32": g["kGoldenTinyF32"],
        "trainer_f64": trainer_like(),
        "empty_bytes": encode(KIND_BYTES, []),
    }
    out = dict(valid)
    base = valid["tiny_f64"]
    out["bad_magic"] = b"XTCK" + base[4:]
    out["bad_version"] = base[:4] + bytes([2]) + base[5:]
    flipped = bytearray(base)
    flipped[40] ^= 0x10
    out["bad_crc"] = bytes(flipped)
    out["truncated"] = base[: len(base) - 9]
    out["header_only"] = base[:12]
    out["big_endian_flag"] = base[:7] + bytes([2]) + base[8:]
    out["empty"] = b""
    return out


def cpp_array(name, data):
    lines = ["const std::uint8_t %s[%d] = {" % (name, len(data))]
    for i in range(0, len(data), 12):
        lines.append("    " + ", ".join("0x%02X" % b for b in data[i : i + 12]) + ",")
    lines.append("};")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpp", action="store_true", help="print the golden seeds as C++ arrays instead")
    if parser.parse_args().cpp:
        for name, data in goldens().items():
            print(cpp_array(name, data))
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(here, "corpus")
    os.makedirs(folder, exist_ok=True)
    for name, data in sorted(corpus().items()):
        with open(os.path.join(folder, name + ".bin"), "wb") as f:
            f.write(data)
        print("%-18s %4d bytes" % (name, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
