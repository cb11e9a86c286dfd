#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent reference encoder for libburtorch's update frames.

Written from the frame layout in include/burtorch/fleet/codec.hpp and
docs/fleet.md with Python's struct, zlib and numpy's float32 only, so it
shares no code with lib/fleet/. It makes

  * the frame fuzzer's seed corpus (fuzz/corpus-frame/, committed): valid
    frames of every codec and broken variants, some with a valid CRC;
  * with --cpp FILE, tests/golden/fleet_frames_golden.hpp: a test update and
    residual, the frames of each codec with and without error feedback, the
    residual each leaves, the dense update each decodes to, randk's indices
    and frames that are damaged behind a valid CRC.

Usage: fuzz/make_frame_corpus.py [--cpp FILE]   (writes fuzz/corpus-frame/)
"""
import argparse
import os
import struct
import sys
import zlib

import numpy as np

MAGIC = b"BTFU"
VERSION = 1
RAW, TOPK, RANDK, INT8 = 0, 1, 2, 3
F32 = np.float32
TINY = float(np.finfo(np.float32).tiny)  # FLT_MIN


def largest_scale():
    """The largest float32 s whose product s * 127 is finite in float32."""
    with np.errstate(over="ignore"):
        s = F32(np.finfo(np.float32).max) / F32(127.0)
        while not np.isfinite(s * F32(127.0)):
            s = np.nextafter(s, F32(0.0))
    return F32(s)


MAX_SCALE = largest_scale()


def crc(data):
    return zlib.crc32(data) & 0xFFFFFFFF


def frame(codec, block, n, k, samples, rnd, client, seed, payload):
    head = MAGIC + struct.pack("<BBHIIIIIII", VERSION, codec, block, n, k, samples, rnd, client, seed, len(payload))
    body = head + payload
    return body + struct.pack("<I", crc(body))


def f32_bytes(values):
    return b"".join(struct.pack("<f", float(v)) for v in values)


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def splitmix_selection(n, k, seed):
    """randk's indices: selection sampling, one SplitMix64 draw per index."""
    mask = (1 << 64) - 1
    state, remaining, needed, out = seed, n, k, []
    for i in range(n):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        u = z >> 32
        if (u * remaining) >> 32 < needed:
            out.append(i)
            needed -= 1
        remaining -= 1
    assert needed == 0
    return out


def carried(update, residual):
    if residual is None:
        return [F32(u) for u in update]
    return [F32(F32(u) + F32(r)) for u, r in zip(update, residual)]


def encode(codec, update, residual=None, kept=0, block=64, samples=0, rnd=0, client=0, seed=0):
    """(frame bytes, residual after, dense decoded update), as float32."""
    c = carried(update, residual)
    n = len(c)
    decoded = [F32(0.0)] * n
    if codec == RAW:
        payload, decoded, k = f32_bytes(c), list(c), n
    elif codec == TOPK:
        order = sorted(range(n), key=lambda i: (-abs(float(c[i])), i))
        chosen = sorted(order[:kept])
        gaps = [chosen[0]] + [b - a - 1 for a, b in zip(chosen, chosen[1:])]
        payload = b"".join(varint(g) for g in gaps) + f32_bytes(c[i] for i in chosen)
        for i in chosen:
            decoded[i] = c[i]
        k = kept
    elif codec == RANDK:
        chosen = splitmix_selection(n, kept, seed)
        payload = f32_bytes(c[i] for i in chosen)
        for i in chosen:
            decoded[i] = c[i]
        k = kept
    else:
        payload = b""
        for first in range(0, n, block):
            part = c[first:first + block]
            top = max(abs(float(v)) for v in part)
            s = F32(F32(top) / F32(127.0))
            s = min(s, MAX_SCALE)
            s = s if float(s) >= TINY else F32(0.0)
            payload += f32_bytes([s])
            for j, v in enumerate(part):
                q = 0
                if float(s) > 0.0:
                    t = F32(v / s)
                    q = int(float(t))  # toward zero
                    rest = float(F32(t - F32(q)))
                    q += 1 if rest >= 0.5 else (-1 if rest <= -0.5 else 0)
                    q = max(-127, min(127, q))
                payload += struct.pack("<b", q)
                decoded[first + j] = F32(s * F32(q))
        k = n
    after = None
    if residual is not None:
        after = [F32(cv - dv) for cv, dv in zip(c, decoded)]
    return (frame(codec, block if codec == INT8 else 0, n, k, samples, rnd, client, seed if codec == RANDK else 0,
                  payload), after, decoded)


# --- the test update ---------------------------------------------------------
# 40 values with ties in magnitude, zeros, a block of zeros, tiny and large
# magnitudes and values whose int8 quotient lands on a half.
def test_update():
    v = [0.0] * 40
    base = [0.75, -1.5, 0.5, -0.5, 2.0, 0.0, 3.25, -3.25, 1e-3, -7.0, 0.125, 6.5,
            -0.0625, 5.0, 1e-30, -2.5, 127.0, 63.5, -0.5, 0.25]
    for i, x in enumerate(base):
        v[i] = x
    # 20..27 zeros (an all-zero int8 block of 8 at 24..31 with the next line)
    for i in range(28, 40):
        v[i] = ((i * 37) % 23 - 11) / 8.0
    for i in range(24, 32):
        v[i] = 0.0
    return [F32(x) for x in v]


def test_residual():
    return [F32(((i * 13) % 9 - 4) / 16.0) for i in range(40)]


CASES = [
    # name, codec, kept, block, samples, round, client, seed, with residual
    ("Raw", RAW, 0, 64, 120, 3, 1, 0, False),
    ("TopK", TOPK, 7, 64, 80, 3, 2, 0, False),
    ("TopKResidual", TOPK, 7, 64, 80, 4, 2, 0, True),
    ("RandK", RANDK, 9, 64, 50, 3, 3, 0x1234ABCD, False),
    ("RandKResidual", RANDK, 9, 64, 50, 4, 3, 77, True),
    ("Int8", INT8, 0, 8, 33, 3, 4, 0, False),
    ("Int8Residual", INT8, 0, 8, 33, 4, 4, 0, True),
    ("Int8OneBlock", INT8, 0, 64, 1, 0, 0, 0, False),
]


def golden_frames():
    u, r = test_update(), test_residual()
    out = []
    for name, codec, kept, block, samples, rnd, client, seed, with_r in CASES:
        data, after, decoded = encode(codec, u, r if with_r else None, kept, block, samples, rnd, client, seed)
        out.append((name, codec, kept, block, samples, rnd, client, seed, with_r, data, after, decoded))
    return out


def recrc(data):
    body = data[:-4]
    return body + struct.pack("<I", crc(body))


def damaged_with_valid_crc():
    """Frames whose CRC is right and whose contents are not: each must be
    refused with kBadFormat."""
    u = test_update()
    raw = encode(RAW, u)[0]
    topk = encode(TOPK, u, kept=7)[0]
    randk = encode(RANDK, u, kept=9, seed=5)[0]
    int8 = encode(INT8, u, block=8)[0]
    cases = []

    def patch(data, offset, new):
        return recrc(data[:offset] + new + data[offset + len(new):])
    cases.append(("codec 4", patch(raw, 5, b"\x04")))
    cases.append(("version 2", patch(raw, 4, b"\x02")))
    cases.append(("raw with a block", patch(raw, 6, b"\x01\x00")))
    cases.append(("raw kept != count", patch(raw, 12, struct.pack("<I", 39))))
    cases.append(("count 0", patch(raw, 8, struct.pack("<I", 0))))
    cases.append(("raw NaN", patch(raw, 36, struct.pack("<f", float("nan")))))
    cases.append(("raw +inf", patch(raw, 40, struct.pack("<f", float("inf")))))
    cases.append(("raw with a seed", patch(raw, 28, struct.pack("<I", 1))))
    cases.append(("topk kept 0", patch(topk, 12, struct.pack("<I", 0))))
    cases.append(("topk kept > count", patch(topk, 12, struct.pack("<I", 41))))
    cases.append(("topk index past the end", patch(topk, 36, bytes([40]))))
    # A redundant varint group: the first gap 0 spelled 0x80 0x00 (payload one longer).
    body = topk[:36] + b"\x80\x00" + topk[37:-4]
    body = body[:32] + struct.pack("<I", len(body) - 36) + body[36:]
    cases.append(("topk redundant varint", body + struct.pack("<I", crc(body))))
    # Fewer value bytes than 4 kept: the last value cut, the size fields agree.
    body = topk[:-8]
    body = body[:32] + struct.pack("<I", len(body) - 36) + body[36:]
    cases.append(("topk short values", body + struct.pack("<I", crc(body))))
    cases.append(("randk kept 0", patch(randk, 12, struct.pack("<I", 0))))
    cases.append(("randk payload size", recrc(randk[:32] + struct.pack("<I", 4 * 8) + randk[36:-8] + b"\0\0\0\0")))
    cases.append(("int8 block 0", patch(int8, 6, b"\x00\x00")))
    cases.append(("int8 q -128", patch(int8, 40, b"\x80")))
    cases.append(("int8 negative scale", patch(int8, 36, struct.pack("<f", -1.0))))
    cases.append(("int8 -0 scale", patch(int8, 36, struct.pack("<f", -0.0))))
    cases.append(("int8 subnormal scale", patch(int8, 36, struct.pack("<f", 1e-40))))
    cases.append(("int8 huge scale", patch(int8, 36, struct.pack("<f", 3e36))))
    cases.append(("int8 NaN scale", patch(int8, 36, struct.pack("<f", float("nan")))))
    cases.append(("trailing byte", raw + b"\0"))
    # One ulp past the largest scale: fl(FLT_MAX / 127), whose q = 127 would decode to +inf.
    past = np.nextafter(MAX_SCALE, F32(np.inf))
    cases.append(("int8 scale one ulp past the limit", patch(patch(int8, 36, struct.pack("<f", float(past))), 40,
                                                             b"\x7f")))
    for name, data in cases:
        assert len(data) >= 40, name
    return cases


def cpp_bytes(data, indent="    "):
    lines = []
    for i in range(0, len(data), 12):
        lines.append(indent + ", ".join("0x%02X" % b for b in data[i:i + 12]) + ",")
    return "\n".join(lines)


def cpp_floats(values):
    bits = [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in values]
    lines = []
    for i in range(0, len(bits), 6):
        lines.append("    " + ", ".join("0x%08XU" % b for b in bits[i:i + 6]) + ",")
    return "\n".join(lines)


def write_cpp(path):
    u, r = test_update(), test_residual()
    w = []
    w.append("// SPDX-License-Identifier: Apache-2.0")
    w.append("// GENERATED by fuzz/make_frame_corpus.py --cpp - do not edit.")
    w.append("// Regenerate: /usr/bin/python3 fuzz/make_frame_corpus.py --cpp tests/golden/fleet_frames_golden.hpp")
    w.append("// An independent encoder (struct, zlib.crc32, numpy float32; no code shared with lib/fleet/).")
    w.append("// Floats are given as their IEEE-754 bit patterns.")
    w.append("#ifndef BURTORCH_TESTS_GOLDEN_FLEET_FRAMES_GOLDEN_HPP")
    w.append("#define BURTORCH_TESTS_GOLDEN_FLEET_FRAMES_GOLDEN_HPP")
    w.append("")
    w.append("#include <cstddef>")
    w.append("#include <cstdint>")
    w.append("")
    w.append("namespace golden_fleet {")
    w.append("")
    w.append("constexpr std::size_t kN = %d;" % len(u))
    w.append("const std::uint32_t kUpdate[kN] = {\n%s\n};" % cpp_floats(u))
    w.append("const std::uint32_t kResidual[kN] = {\n%s\n};" % cpp_floats(r))
    w.append("")
    w.append("struct Case {")
    w.append("  const char* name;")
    w.append("  std::uint8_t codec;")
    w.append("  std::uint32_t kept;")
    w.append("  std::uint16_t block;")
    w.append("  std::uint32_t samples;")
    w.append("  std::uint32_t round;")
    w.append("  std::uint32_t client;")
    w.append("  std::uint32_t seed;")
    w.append("  bool with_residual;")
    w.append("  const std::uint8_t* frame;")
    w.append("  std::size_t bytes;")
    w.append("  const std::uint32_t* residual_after;  // nullptr without a residual")
    w.append("  const std::uint32_t* decoded;")
    w.append("};")
    w.append("")
    frames = golden_frames()
    for (name, codec, kept, block, samples, rnd, client, seed, with_r, data, after, decoded) in frames:
        w.append("const std::uint8_t kFrame%s[%d] = {\n%s\n};" % (name, len(data), cpp_bytes(data)))
        if after is not None:
            w.append("const std::uint32_t kResidualAfter%s[kN] = {\n%s\n};" % (name, cpp_floats(after)))
        w.append("const std::uint32_t kDecoded%s[kN] = {\n%s\n};" % (name, cpp_floats(decoded)))
    w.append("")
    w.append("const Case kCases[] = {")
    for (name, codec, kept, block, samples, rnd, client, seed, with_r, data, after, decoded) in frames:
        w.append("    {\"%s\", %dU, %dU, %dU, %dU, %dU, %dU, 0x%08XU, %s, kFrame%s, %d, %s, kDecoded%s}," % (
            name, codec, kept, block, samples, rnd, client, seed, "true" if with_r else "false", name, len(data),
            ("kResidualAfter" + name) if with_r else "nullptr", name))
    w.append("};")
    w.append("")
    w.append("// randk_indices(n, k, seed) for a few draws.")
    w.append("struct Draw {")
    w.append("  std::uint32_t n, k, seed;")
    w.append("  std::uint32_t indices[12];")
    w.append("};")
    w.append("const Draw kDraws[] = {")
    for n, k, seed in [(40, 9, 0x1234ABCD), (12, 12, 1), (1000, 12, 0), (7, 1, 0xFFFFFFFF), (100000, 5, 42)]:
        idx = splitmix_selection(n, k, seed)
        w.append("    {%d, %d, 0x%08XU, {%s}}," % (n, k, seed, ", ".join(str(i) for i in idx)))
    w.append("};")
    w.append("")
    w.append("// Damaged behind a valid CRC: refused with kBadFormat.")
    w.append("struct Damaged {")
    w.append("  const char* what;")
    w.append("  const std::uint8_t* frame;")
    w.append("  std::size_t bytes;")
    w.append("};")
    damaged = damaged_with_valid_crc()
    for i, (what, data) in enumerate(damaged):
        w.append("const std::uint8_t kDamaged%d[%d] = {\n%s\n};" % (i, len(data), cpp_bytes(data)))
    w.append("const Damaged kDamaged[] = {")
    for i, (what, data) in enumerate(damaged):
        w.append("    {\"%s\", kDamaged%d, %d}," % (what, i, len(data)))
    w.append("};")
    w.append("")
    w.append("// zlib.crc32 of the ASCII bytes \"123456789\" (the CRC-32 check value).")
    w.append("constexpr std::uint32_t kCrcCheck = 0x%08XU;" % crc(b"123456789"))
    w.append("")
    w.append("}  // namespace golden_fleet")
    w.append("")
    w.append("#endif  // BURTORCH_TESTS_GOLDEN_FLEET_FRAMES_GOLDEN_HPP")
    with open(path, "w") as f:
        f.write("\n".join(w) + "\n")


def write_corpus(directory):
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    files = {}
    for entry in golden_frames():
        files["valid_%s" % entry[0].lower()] = entry[9]
    u = test_update()
    files["valid_topk_all"] = encode(TOPK, u, kept=40)[0]
    files["valid_int8_block1"] = encode(INT8, u, block=1)[0]
    for i, (what, data) in enumerate(damaged_with_valid_crc()):
        files["damaged_%02d" % i] = data
    # At the limits: an int8 block at the largest scale with q = +-127 (decodes
    # to finite values), and frames claiming 2^32 - 1 values in 44 (randk) and
    # 49 (topk) bytes, which a receiver of fewer values refuses from the header.
    s = struct.pack("<f", float(MAX_SCALE))
    files["valid_int8_maxscale"] = frame(INT8, 2, 2, 2, 1, 0, 0, 0, s + b"\x7f\x81")
    files["hostile_randk_count"] = frame(RANDK, 0, 0xFFFFFFFF, 1, 1, 0, 0, 9, struct.pack("<f", 1.0))
    files["hostile_topk_count"] = frame(TOPK, 0, 0xFFFFFFFF, 1, 1, 0, 0, 0, varint(0xFFFFFFFE) + struct.pack("<f", 1.0))
    raw = files["valid_raw"]
    files["bad_crc"] = raw[:-1] + bytes([raw[-1] ^ 1])
    files["truncated"] = raw[:-5]
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return len(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpp", metavar="FILE", help="also write the golden C++ header to FILE")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    count = write_corpus(os.path.join(here, "corpus-frame"))
    print("fuzz/corpus-frame: %d frames" % count)
    if args.cpp:
        write_cpp(args.cpp)
        print("wrote %s" % args.cpp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
