# Host Debug build under ASan + UBSan: the whole test suite.
set -e
cmake --workflow --preset host-debug
