# SPDX-License-Identifier: Apache-2.0
# Host Debug build under ASan + UBSan: the whole test suite.
set -e
cmake --workflow --preset host-debug
