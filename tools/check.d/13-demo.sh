# SPDX-License-Identifier: Apache-2.0
# The README's first command.
# suite: build
# trees: demo
set -e
cmake --workflow --preset demo
