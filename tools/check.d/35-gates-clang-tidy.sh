# SPDX-License-Identifier: Apache-2.0
# Gate 4b: clang-tidy with the checked-in .clang-tidy profile
# (bugprone, cert, clang-analyzer, cppcoreguidelines, hicpp, misc incl.
# misc-no-recursion, performance, portability, readability) with the host
# preset's compile commands on lib/ and every
# public header. Zero findings. ~15 s on 2 cores.
# suite: gates
# after: 31-gates-symbols
# trees: gates
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py clang-tidy
