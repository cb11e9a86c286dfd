# SPDX-License-Identifier: Apache-2.0
# Checks of the plots the C++ code draws (stage 50-docs), each against an
# independent reader: the SVG through Python's XML parser, the PNG through
# zlib with every chunk's CRC, and the two drawings of one CSV against each
# other (the PNG's curve pixels where librsvg renders the SVG's curve).
#   plots.py svg FILE.svg FILE.csv [--mark]   curves = the CSV's columns, point for point
#   plots.py png FILE.png                     a valid 8-bit palette PNG, 800 x 500
#   plots.py agree OURS.png RSVG.png          the curve drawn in the same place
import csv
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def fail(message):
    sys.exit("FAIL: " + message)


def csv_points(path):
    """{column: [(x, y), ...]} of the numeric cells, the error-bar columns left out."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header, rows = rows[0], rows[1:]
    out = {}
    for i, name in enumerate(header[1:], 1):
        if name.endswith(":lo") or name.endswith(":hi"):
            continue
        pts = []
        for r in rows:
            try:
                x, y = float(r[0]), float(r[i])
            except (ValueError, IndexError):
                continue
            pts.append((x, y))
        out[name] = pts
    return out


def check_svg(svg_path, csv_path, want_mark):
    root = ET.parse(svg_path).getroot()  # raises on malformed XML
    if root.tag != SVG + "svg" or root.get("width") != "800.0" or root.get("height") != "500.0":
        fail("%s: root is %s %sx%s" % (svg_path, root.tag, root.get("width"), root.get("height")))
    curves = {p.get("data-column"): p.get("points") for p in root.iter(SVG + "polyline") if p.get("class") == "curve"}
    want = csv_points(csv_path)
    if sorted(curves) != sorted(want):
        fail("%s: curves %s, the CSV's columns %s" % (svg_path, sorted(curves), sorted(want)))
    frame = [r for r in root.iter(SVG + "rect") if r.get("fill") == "none"][0]
    left, top = float(frame.get("x")), float(frame.get("y"))
    right, bottom = left + float(frame.get("width")), top + float(frame.get("height"))
    for name, points in curves.items():
        xy = [tuple(map(float, p.split(","))) for p in points.split()]
        if len(xy) != len(want[name]):
            fail("%s: curve %s has %d points, the CSV %d" % (svg_path, name, len(xy), len(want[name])))
        xs = [p[0] for p in xy]
        if any(b <= a for a, b in zip(xs, xs[1:])):
            fail("%s: curve %s goes backwards in x" % (svg_path, name))
        if not all(left - 0.05 <= x <= right + 0.05 and top - 0.05 <= y <= bottom + 0.05 for x, y in xy):
            fail("%s: curve %s leaves the frame" % (svg_path, name))
        # Larger values are drawn higher: the order of the y coordinates is
        # the reverse of the CSV's values (linear or log axis alike).
        values = [v for _, v in want[name]]
        for (_, ya), (_, yb), va, vb in zip(xy, xy[1:], values, values[1:]):
            if (va - vb) * (yb - ya) < -1e-9 and abs(ya - yb) > 0.1:
                fail("%s: curve %s: y order differs from the CSV's values" % (svg_path, name))
        print("  %s: curve %s, %d points (the CSV has %d)" % (svg_path, name, len(xy), len(want[name])))
    texts = [t.text for t in root.iter(SVG + "text")]
    dashed = [l for l in root.iter(SVG + "line") if l.get("stroke-dasharray")]
    if want_mark and (not dashed or "resumed" not in texts):
        fail("%s: no 'resumed' mark" % svg_path)
    if not want_mark and dashed:
        fail("%s: a mark where none was asked for" % svg_path)
    return root


def read_png(path, want_pixels=True):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: no PNG signature" % path)
    at, chunks = 8, []
    while at < len(data):
        n, = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + n]
        crc, = struct.unpack(">I", data[at + 8 + n:at + 12 + n])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            fail("%s: bad CRC in a %s chunk" % (path, kind.decode()))
        chunks.append((kind, body))
        at += 12 + n
    if chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        fail("%s: chunks %s" % (path, [c[0] for c in chunks]))
    w, h, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))  # checks the Adler-32 too
    palette = b"".join(b for k, b in chunks if k == b"PLTE")
    channels = {2: 3, 3: 1, 6: 4}.get(colour)
    if depth != 8 or channels is None:
        fail("%s: depth %d colour type %d" % (path, depth, colour))
    stride = w * channels
    if len(raw) != h * (stride + 1):
        fail("%s: %d bytes of rows, want %d" % (path, len(raw), h * (stride + 1)))
    if not want_pixels:
        if any(raw[r * (stride + 1)] > 4 for r in range(h)):
            fail("%s: a row with an unknown filter" % path)
        return w, h, colour, None
    rows, prev = [], bytearray(stride)
    for r in range(h):
        kind, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], (prev[i - channels] if i >= channels else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            elif kind != 0:
                fail("%s: filter %d" % (path, kind))
        rows.append(bytes(line))
        prev = line
    pixels = []
    for line in rows:
        if colour == 3:
            pixels.append([tuple(palette[3 * i:3 * i + 3]) for i in line])
        else:
            pixels.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
    return w, h, colour, pixels


def near(p, q, tolerance):
    return all(abs(a - b) <= tolerance for a, b in zip(p, q))


CURVE = (31, 94, 180)  # the first curve's colour


def curve_rows(pixels, tolerance):
    """Per column: the mean row of the pixels of the first curve's colour."""
    out = {}
    for x in range(len(pixels[0])):
        ys = [y for y in range(len(pixels)) if near(pixels[y][x], CURVE, tolerance)]
        if ys:
            out[x] = sum(ys) / len(ys)
    return out


def main():
    mode = sys.argv[1]
    if mode == "svg":
        check_svg(sys.argv[2], sys.argv[3], "--mark" in sys.argv[4:])
    elif mode == "png":
        w, h, colour, _ = read_png(sys.argv[2], want_pixels=False)
        if (w, h, colour) != (800, 500, 3):
            fail("%s: %dx%d colour type %d, want 800x500 palette" % (sys.argv[2], w, h, colour))
        print("  %s: 800x500 palette PNG, every CRC and the zlib stream valid" % sys.argv[2])
    elif mode == "agree":
        _, _, _, ours = read_png(sys.argv[2])
        _, _, _, theirs = read_png(sys.argv[3])
        a, b = curve_rows(ours, 0), curve_rows(theirs, 40)
        both = sorted(set(a) & set(b))
        if len(both) < 300:
            fail("the first curve is in %d common columns of the two renderings; want 300" % len(both))
        # Steep segments spread a column's pixels differently in the two
        # renderers; the curve's place is what must agree: no systematic
        # offset, and most columns within a few pixels.
        signed = sorted(a[x] - b[x] for x in both)
        offset = signed[len(signed) // 2]
        close = sum(1 for d in signed if abs(d) <= 4.0) / len(signed)
        print("  first curve in %d common columns; median offset %.2f px, %.0f%% of columns within 4 px"
              % (len(both), offset, 100.0 * close))
        if abs(offset) > 1.5 or close < 0.8:
            fail("the PNG's curve is not where librsvg draws the SVG's (median offset %.2f px, %.0f%% within 4 px)"
                 % (offset, 100.0 * close))
    else:
        fail("unknown mode " + mode)


if __name__ == "__main__":
    main()
