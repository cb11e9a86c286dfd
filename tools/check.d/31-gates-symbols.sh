# SPDX-License-Identifier: Apache-2.0
# Gate 1: libburtorch.a as the 8 target presets build it (the archive of
# build/P, which stages 10 and 20-26 build with -DBURTORCH_ANALYSIS=ON, plus
# -O0/-O2/-Os recompiled from its compile_commands.json with only -O
# changed); first fails if the gates' compile command of lib/tape.cpp
# differs from the preset's own build (build/P) in anything but -O and the
# analysis flags.
# Then: no heap, exceptions, RTTI, guards, atexit, libc I/O, time or process
# control referenced or defined, and no writable static data. Also builds
# what stages 32 and 33 read. ~30-60 s on 2 shared cores.
# suite: gates
# after: 10-host 20-aarch64-linux 21-armv7-linux 22-cortex-m0 23-cortex-m4 24-cortex-m7 25-cortex-m33 26-cortex-m55
# trees: gates host aarch64-linux armv7-linux cortex-m0 cortex-m4 cortex-m7 cortex-m33 cortex-m55
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py symbols
