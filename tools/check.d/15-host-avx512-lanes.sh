# SPDX-License-Identifier: Apache-2.0
# Lane batches at 16 float lanes (what tools/bench measures on a CPU with
# AVX-512): test_lanes, test_nn_trajectory and test_simd built in
# build/host-avx512. On a CPU with AVX-512F: -march=x86-64-v4, natively
# (kHardwareLanes 16 from __AVX512F__). Elsewhere (QEMU 7.2 cannot run
# AVX-512 code): -march=x86-64-v3 -DBURTORCH_LANES=16, the same 16-lane
# tiles, edges and folds on two AVX2 registers per lane vector; the
# AVX-512 instruction selection itself is then not exercised, and the stage
# says so. Fails unless the build's lane count is 16. About 1 minute.
# suite: build
# jobs: 1
# trees: host-avx512
set -eu
cd "$(dirname "$0")/../.."
build=build/host-avx512
if grep -qw avx512f /proc/cpuinfo; then
  cxxflags="-march=x86-64-v4"
  echo "AVX-512F on this CPU: native -march=x86-64-v4 build"
else
  cxxflags="-march=x86-64-v3 -DBURTORCH_LANES=16"
  echo "no AVX-512F on this CPU (and QEMU 7.2 cannot emulate it): 16 lanes on AVX2 (-DBURTORCH_LANES=16);" \
       "AVX-512 instruction selection not exercised here"
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=$cxxflags" -DBURTORCH_BUILD_BENCH=OFF \
      -DBURTORCH_BUILD_PROGRAMS=OFF >/dev/null
cmake --build "$build" -j2 --target test_lanes test_nn_trajectory test_simd
printf '#include <burtorch/lanes/lanes.hpp>\n#include <cstdio>\nint main() { std::printf("%%zu\\n", burtorch::kHardwareLanes); }\n' |
  g++ -std=c++17 $cxxflags -Iinclude -x c++ - -o "$build/lanes_probe"
lanes=$("$build/lanes_probe")
echo "lanes of this build: $lanes"
[ "$lanes" = 16 ] || { echo "expected 16 float lanes"; exit 1; }
"$build/tests/test_lanes"
"$build/tests/test_nn_trajectory"
"$build/tests/test_simd" | tail -1
