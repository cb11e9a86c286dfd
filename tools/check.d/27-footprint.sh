# SPDX-License-Identifier: Apache-2.0
# Flash and RAM per target (tools/footprint): library objects, every test
# firmware, and the tape core (probe firmware at -Os). Fails if the
# Cortex-M4 tape core grows past 12 KiB, or its libburtorch part past the
# 8 KiB goal (docs/footprint.md has the figures; regenerate it with
# `tools/footprint --write`). Incremental after stages 20-26: ~15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/footprint --output build/footprint.md --max-core 12288 --max-lib 8192
