# SPDX-License-Identifier: Apache-2.0
# Lane batches on AVX-512 (16 float lanes, what tools/bench measures on a
# CPU that has it): test_lanes and test_nn_trajectory built with
# -march=x86-64-v4 in build/host-avx512, run natively where the CPU has
# AVX-512F, else under qemu-x86_64 -cpu max. Fails unless the build's lane
# count is 16 (kHardwareLanes from __AVX512F__). About 1 minute.
set -eu
cd "$(dirname "$0")/../.."
build=build/host-avx512
run=()
flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-march=x86-64-v4 -DBURTORCH_BUILD_BENCH=OFF
       -DBURTORCH_BUILD_PROGRAMS=OFF)
if grep -qw avx512f /proc/cpuinfo && [ -z "${BURTORCH_FORCE_QEMU:-}" ]; then
  cmake -S . -B "$build" "${flags[@]}" >/dev/null
else
  echo "no AVX-512F on this CPU (or BURTORCH_FORCE_QEMU set): the tests run under qemu-x86_64 -cpu max"
  run=(qemu-x86_64 -cpu max)
  cmake -S . -B "$build" "${flags[@]}" >/dev/null
fi
cmake --build "$build" -j2 --target test_lanes test_nn_trajectory test_simd
printf '#include <burtorch/lanes.hpp>\n#include <cstdio>\nint main() { std::printf("%%zu\\n", burtorch::kHardwareLanes); }\n' |
  g++ -std=c++17 -march=x86-64-v4 -Iinclude -x c++ - -o "$build/lanes_probe"
lanes=$("${run[@]}" "$build/lanes_probe")
echo "lanes of this build: $lanes"
[ "$lanes" = 16 ] || { echo "expected 16 float lanes with -march=x86-64-v4"; exit 1; }
"${run[@]}" "$build/tests/test_lanes"
"${run[@]}" "$build/tests/test_nn_trajectory"
"${run[@]}" "$build/tests/test_simd" | tail -1
