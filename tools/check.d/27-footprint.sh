# SPDX-License-Identifier: Apache-2.0
# Flash and RAM per target (tools/footprint): library objects, every test
# firmware, and the tape core (probe firmware at -Os). Fails if the
# Cortex-M4 tape core grows past 12,160 B, or its libburtorch part past
# 7,680 B (what the core measured when those limits were set, 12,042 and
# 7,626 B, plus a little; the goal is a tape core of 8 KiB) (docs/footprint.md
# has the figures; regenerate it with
# `tools/footprint --write`). Incremental after stages 20-26: ~15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/footprint --output build/footprint.md --max-core 12160 --max-lib 7680
