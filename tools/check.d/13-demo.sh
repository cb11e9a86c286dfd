# SPDX-License-Identifier: Apache-2.0
# The README's first command.
set -e
cmake --workflow --preset demo
