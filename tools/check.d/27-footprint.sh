# SPDX-License-Identifier: Apache-2.0
# Flash and RAM per target (tools/footprint): library objects, every test
# firmware, and the tape core (probe firmware at -Os). Fails if the
# Cortex-M4 tape core grows past 13,650 B, or its libburtorch part past
# 7,680 B (what the core measured when those limits were set, 13,124 and
# 5,294 B, plus a little; the goal is a tape core of 8 KiB). The probe
# records every op: since each wide op's backward is its own function,
# reached through the tape's entry (linked only where recorded: stage
# 54), the probe pays about 1 KB more than with one dispatch over all of
# them (12,042 B) (docs/footprint.md has the figures; regenerate it with
# `tools/footprint --write`). The limit was 13,300 B until float tanh became
# the library's own (lib/tanh_float.cpp, 336 B): it now counts in the core,
# where libm's tanhf and expm1f (972 B) did not, though the whole probe
# firmware shrank from 17,196 to 16,584 B. Incremental after stages 20-26: ~15 s.
# The training firmware's flash and RAM in docs/footprint.md are checked
# against the trees (tools/firmware-footprint; --write rewrites them).
# suite: targets
# after: 22-cortex-m0 23-cortex-m4 24-cortex-m7 25-cortex-m33 26-cortex-m55
# trees: cortex-m0 cortex-m4 cortex-m7 cortex-m33 cortex-m55
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/footprint --output build/footprint.md --max-core 13650 --max-lib 7680
# docs/footprint.md's training-firmware block: this run's flash and RAM.
tools/firmware-footprint --rows | tools/docs-numbers --verify tools/firmware-footprint
