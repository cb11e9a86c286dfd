# SPDX-License-Identifier: Apache-2.0
# The AVX2 + FMA kernels (what tools/bench and -march=native builds use):
# the host suite built with -march=x86-64-v3, so test_simd checks those
# kernels against the reference and every other suite runs on them. On a
# CPU without AVX2/FMA the tests run under qemu-x86_64 -cpu max instead of
# being skipped. About 1 minute.
# suite: build
# trees: host-avx2
set -eu
cd "$(dirname "$0")/../.."
run=()
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && [ -z "${BURTORCH_FORCE_QEMU:-}" ]; then
  cmake --workflow --preset host-avx2
else
  echo "no AVX2/FMA on this CPU (or BURTORCH_FORCE_QEMU set): the tests run under qemu-x86_64 -cpu max"
  run=(qemu-x86_64 -cpu max)
  cmake --preset host-avx2 -DCMAKE_SYSTEM_NAME=Linux "-DCMAKE_CROSSCOMPILING_EMULATOR=qemu-x86_64;-cpu;max"
  cmake --build --preset host-avx2
  ctest --preset host-avx2
fi
# The suite ran on the AVX2 + FMA kernels, not on a fallback.
kernels=$("${run[@]}" ./build/host-avx2/tests/test_simd | head -1)
echo "$kernels"
case "$kernels" in
  *"selected: float avx2+fma, double avx2+fma"*) ;;
  *) echo "test_simd did not select the avx2+fma kernels"; exit 1 ;;
esac
