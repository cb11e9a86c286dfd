# SPDX-License-Identifier: Apache-2.0
# Gate 4a: cppcheck --enable=all --inconclusive with the MISRA
# addon on lib/ and every public header, two configurations (the host and
# cortex-m4 presets' -D/-I/-std flags). Zero findings;
# suppressions: tools/gates/cppcheck-suppressions.txt and inline ones next to
# a BT-DEV ID. ~10 s.
# suite: gates
# jobs: 1
# after: 31-gates-symbols
# trees: gates
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py cppcheck
