# SPDX-License-Identifier: Apache-2.0
# A failing test fails CTest on a Cortex-M target (QEMU + semihosting exit
# code) and on a Linux cross target (qemu-aarch64), and a hung firmware is
# stopped by tools/qemu-run's timeout. Builds the opt-in deliberate-failure
# programs (tests/targets/deliberate_failure.cpp) in scratch trees build/red-<preset>.
# About 20 seconds.
# suite: targets
# jobs: 1
# trees: red-cortex-m4 red-aarch64-linux red-cortex-m0
set -euo pipefail
cd "$(dirname "$0")/../.."

expect_ctest_failure() {  # preset test-name expected-output
  local preset=$1 name=$2 want=$3 dir="build/red-$1" out
  cmake --preset "$preset" -B "$dir" -DBURTORCH_TEST_DELIBERATE_FAILURE=ON >/dev/null
  cmake --build "$dir" -j2 --target "$name" >/dev/null
  if out=$(ctest --test-dir "$dir" -R "^$name\$" --output-on-failure --timeout 60 2>&1); then
    echo "$out"
    echo "FAIL: ctest passed $name on $preset, but it must fail"
    return 1
  fi
  if ! grep -q -- "$want" <<<"$out"; then
    echo "$out"
    echo "FAIL: $name on $preset failed without the expected '$want'"
    return 1
  fi
  echo "ok: $name on $preset makes ctest fail ($want)"
}

expect_ctest_failure cortex-m4 deliberate_failure "1 passed, 1 failed"
expect_ctest_failure aarch64-linux deliberate_failure "1 passed, 1 failed"
expect_ctest_failure cortex-m0 deliberate_failure "1 passed, 1 failed"

# A firmware that never ends: the wrapper's timeout ends it with 124.
cmake --build build/red-cortex-m4 -j2 --target deliberate_hang >/dev/null
set +e
tools/qemu-run --machine mps2-an386 --timeout 3 -- build/red-cortex-m4/tests/deliberate_hang.elf >/dev/null 2>&1
code=$?
set -e
if [ "$code" -ne 124 ]; then
  echo "FAIL: a hung firmware gave exit code $code, not 124"
  exit 1
fi
echo "ok: a hung firmware is stopped by tools/qemu-run --timeout (exit 124)"
