# SPDX-License-Identifier: Apache-2.0
# Host Debug build under ASan + UBSan (with float-cast-overflow, which
# -fsanitize=undefined leaves out): the whole test suite.
# suite: build
# trees: host-debug
set -e
cmake --workflow --preset host-debug
