# SPDX-License-Identifier: Apache-2.0
# BURTORCH_CONFIG_PARAM_NAMES=0: the same sources compile and pass.
set -e
cmake --workflow --preset host-nonames
