# SPDX-License-Identifier: Apache-2.0
# Gate 1: libburtorch.a as the 8 target presets build it
# (cmake --preset P -DBURTORCH_ANALYSIS=ON: their own archive, plus -O0/-O2/-Os
# recompiled from their compile_commands.json with only -O changed); first
# fails if the gates' compile command of lib/tape.cpp differs from the
# preset's own build (build/P) in anything but -O and the analysis flags.
# Then: no heap, exceptions, RTTI, guards, atexit, libc I/O, time or process
# control referenced or defined, and no writable static data. Also builds
# what stages 31 and 32 read. ~30-60 s on 2 shared cores.
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py symbols
