# SPDX-License-Identifier: Apache-2.0
# The gates can fail: tools/gates/selftest/ plants a heap call,
# new/delete, printf, time, abort, a guard, typeinfo, a vtable, writable
# globals, a cross-TU recursion, an unjustified indirect call, an alloca
# frame and an 8 KiB frame (built with the host and cortex-m4 presets'
# compile commands), plus a drifted compile command; stages 31-33's checks
# must report every one.
# ~5 s.
# suite: gates
# after: 31-gates-symbols
# jobs: 1
# trees: gates-selftest
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py selftest
