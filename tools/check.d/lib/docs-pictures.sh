#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pictures: the README's graph and the plots drawn in C++. docs/img/small_graph.png
# is a PNG that Graphviz renders from
# the demo's DOT export of the small graph (paper Fig. 2) at the same size as
# a fresh render. To remake it:
#   build/demo/targets/host/burtorch-demo --dot small_graph.dot
#   dot -Tpng -Gdpi=96 small_graph.dot -o docs/img/small_graph.png
# The plots drawn in C++ (no Python): a demo run of burtorch-makemore, 600
# steps then resumed to 1200, writes its loss CSV and SVG; the SVG parses as
# XML with one curve per CSV column and one point per row (lib/plots.py),
# librsvg renders it into docs/img/loss_curve.png (rewritten when its pixels
# change); the PNG burtorch-plot draws of the same CSV is a valid PNG whose
# curve lies where librsvg draws the SVG's. tools/bench's plots, drawn from
# a small made-up results file (tools/bench --replot), have both
# implementations' curves, one point per configuration, and error bars.
# (Rendering and the matplotlib scripts are tested by ctest: pictures_dot,
# pictures_plots.) ~20 s when stage 13 has built the demo.
set -euo pipefail
cd "$(dirname "$0")/../../.."
cmake --preset demo >/dev/null
cmake --build --preset demo >/dev/null
out=build/pictures
mkdir -p "$out"
build/demo/targets/host/burtorch-demo --dot "$out/small_graph.dot" >/dev/null
dot -Tpng -Gdpi=96 "$out/small_graph.dot" -o "$out/small_graph.png"
/usr/bin/python3 - "$out/small_graph.png" docs/img/small_graph.png <<'PY'
import struct, sys
def size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        sys.exit("%s: not a PNG" % path)
    return struct.unpack(">II", head[16:24])
fresh, committed = size(sys.argv[1]), size(sys.argv[2])
print("fresh render %dx%d, docs/img/small_graph.png %dx%d" % (fresh + committed))
if fresh != committed:
    sys.exit("docs/img/small_graph.png is stale: remake it (see this script's header)")
PY

echo "== a demo run's loss curve, drawn in C++"
cmake --build --preset demo --target burtorch-plot >/dev/null
mm=build/demo/targets/host/burtorch-makemore
plotter=build/demo/targets/host/burtorch-plot
rm -f "$out"/demo_loss.* "$out"/demo.ckpt
common=(--batch 32 --hidden 32 --optimizer adam --print-every 20 --val-every 100 --eval-samples 400 --samples 0
        --csv "$out/demo_loss.csv")
"$mm" "${common[@]}" --steps 600 --save "$out/demo.ckpt" > "$out/demo_run1.out"
"$mm" "${common[@]}" --steps 1200 --resume "$out/demo.ckpt" > "$out/demo_run2.out"
grep -q "^resumed at step 600, trained 600 steps to step 1200 in .*; wrote $out/demo_loss.csv, $out/demo_loss.svg\$" \
  "$out/demo_run2.out" || { cat "$out/demo_run2.out"; echo "the summary line does not name the CSV and its plot"; exit 1; }
python3 tools/check.d/lib/plots.py svg "$out/demo_loss.svg" "$out/demo_loss.csv" --mark
rsvg-convert --version
rsvg-convert "$out/demo_loss.svg" -o "$out/loss_curve.png"
"$plotter" --title "burtorch-makemore: loss (demo_loss.csv)" --x-label step --y-label "mean loss" \
  --mark 600 --mark-label resumed "$out/demo_loss.csv" "$out/ours.png" >/dev/null
python3 tools/check.d/lib/plots.py png "$out/ours.png"
python3 tools/check.d/lib/plots.py agree "$out/ours.png" "$out/loss_curve.png"
# rsvg-convert writes the same bytes for the same picture.
if cmp -s "$out/loss_curve.png" docs/img/loss_curve.png; then
  echo "  docs/img/loss_curve.png: current"
else
  cp "$out/loss_curve.png" docs/img/loss_curve.png
  echo "  docs/img/loss_curve.png: rewritten (the picture changed, or another librsvg drew it; commit it)"
fi

echo "== tools/bench's plots, from a made-up results file"
python3 - "$out/fake_results.json" <<'PY'
import json, sys
results = {}
def row(ms, mib):
    return {"stats": {"median": ms, "p10": ms * 0.9, "p90": ms * 1.2, "n": 5}, "peak_rss_bytes": int(mib * 1048576)}
for b in (1, 64):
    for i, e in enumerate((4, 16, 32, 64, 128, 512, 1024)):
        results["mlp_e%d_b%d" % (e, b)] = {"ours": row(0.01 * (i + 1) * b, 2 + i), "pytorch": row(0.2 * (i + 1) * b, 200 + i)}
for i, b in enumerate((1, 2, 4, 8, 16, 17, 32, 33, 48, 49, 64)):
    results["gpt_b%d" % b] = {"ours": row(0.5 + i, 3), "pytorch": row(3 + 2 * i, 250)}
json.dump({"results": results}, open(sys.argv[1], "w"))
PY
rm -rf "$out/bench"
tools/bench --replot "$out/fake_results.json" --plot-dir "$out/bench" --plotter "$plotter"
python3 - "$out/bench" <<'PY'
import sys
import xml.etree.ElementTree as ET
svg = "{http://www.w3.org/2000/svg}"
want = {"mlp_time_b1": 7, "mlp_time_b64": 7, "mlp_rss_b1": 7, "mlp_rss_b64": 7, "gpt_time": 11, "gpt_rss": 11}
for name, points in want.items():
    root = ET.parse("%s/%s.svg" % (sys.argv[1], name)).getroot()
    curves = [p for p in root.iter(svg + "polyline") if p.get("class") == "curve"]
    names = sorted(p.get("data-column") for p in curves)
    assert names == ["PyTorch 1.13 eager", "libburtorch"], (name, names)
    for p in curves:
        assert len(p.get("points").split()) == points, (name, p.get("data-column"), len(p.get("points").split()))
    markers = len([c for c in root.iter(svg + "circle")])
    assert markers == 2 * points, (name, markers)
    # Error bars: three short lines per point of a time plot, none on RSS.
    coloured = [l for l in root.iter(svg + "line") if l.get("stroke") in ("#1f5eb4", "#d66800")]
    bars = len(coloured) - 2  # the legend's two samples
    assert bars == (6 * points if "time" in name else 0), (name, bars)
    print("  %s.svg: 2 curves of %d points, %d markers, %d error-bar lines" % (name, points, markers, bars))
PY
for name in mlp_time_b1 mlp_time_b64 mlp_rss_b1 mlp_rss_b64 gpt_time gpt_rss; do
  python3 tools/check.d/lib/plots.py png "$out/bench/$name.png"
done
