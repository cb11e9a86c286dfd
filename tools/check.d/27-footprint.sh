# SPDX-License-Identifier: Apache-2.0
# Flash and RAM per target (tools/footprint): library objects, every test
# firmware, and the tape core (probe firmware at -Os). Fails if the
# Cortex-M4 tape core grows past 13 KiB, or its libburtorch part past
# 8.5 KiB (docs/footprint.md has the figures; regenerate it with
# `tools/footprint --write`). The limits were 12 KiB and 8 KiB until the
# backward sweep learnt frozen weights (the frozen matvec's backward over
# four formats, the freeze checks of the inner products: about 600 B; the
# core was then 12,148 B). Incremental after stages 20-26: ~15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/footprint --output build/footprint.md --max-core 13312 --max-lib 8704
