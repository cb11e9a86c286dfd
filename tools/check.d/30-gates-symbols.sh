# SPDX-License-Identifier: Apache-2.0
# Gate 1 (issue 4): libburtorch.a for 8 targets x -O0/-O2/-Os, compiled
# directly from lib/**/*.cpp; no heap, exceptions, RTTI, guards, atexit,
# libc I/O, time or process control referenced or defined, and no writable
# static data. Also builds what stages 31 and 32 read. ~20 s on 2 cores.
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py symbols
