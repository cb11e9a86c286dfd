#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's picture is current: docs/img/small_graph.png is a PNG that
# Graphviz renders from the demo's DOT export of the small graph (paper
# Fig. 2) at the same size as a fresh render. To remake it:
#   build/demo/targets/host/burtorch-demo --dot small_graph.dot
#   dot -Tpng -Gdpi=96 small_graph.dot -o docs/img/small_graph.png
# (Rendering and plotting are tested by ctest: pictures_dot, pictures_plots.)
# ~5 s when stage 13 has built the demo.
set -euo pipefail
cd "$(dirname "$0")/../.."
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
