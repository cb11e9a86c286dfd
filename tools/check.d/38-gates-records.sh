# SPDX-License-Identifier: Apache-2.0
# Records: every BT-DEV ID at a site (lib/, include/, port/,
# targets/, tools/gates/, .clang-tidy) has a row in docs/misra/deviations.md
# and every row is used; every std::memcpy/memcmp/memmove in lib/ and
# include/ carries BT-DEV-010, every #pragma there BT-DEV-015. < 1 s.
# suite: gates
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py records
