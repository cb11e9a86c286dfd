# SPDX-License-Identifier: Apache-2.0
# BURTORCH_CONFIG_PARAM_NAMES=0: the same sources compile and pass.
# suite: build
# trees: host-nonames
set -e
cmake --workflow --preset host-nonames
