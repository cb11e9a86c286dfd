# SPDX-License-Identifier: Apache-2.0
# Every source file carries the project's license line (Apache-2.0, LICENSE):
# tools/license/spdx.py lists any tracked file without it. ~1 s.
# suite: gates
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
test -s LICENSE
grep -q "Apache License" LICENSE
grep -q "Version 2.0, January 2004" LICENSE
python3 tools/license/spdx.py
