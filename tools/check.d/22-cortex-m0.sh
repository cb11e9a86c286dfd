# SPDX-License-Identifier: Apache-2.0
# Cortex-M0 on the BBC micro:bit (16 KB RAM, soft float): every suite, tables
# trimmed where they would not fit (BURTORCH_TEST_SMALL_TARGET, docs/porting.md),
# under qemu-system-arm.
# cmake --workflow --preset cortex-m0: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m0
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m0 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m0
# The runner writes nothing of its own on stderr: the micro:bit has no NIC,
# so QEMU must not be given a network backend either (tools/qemu-run).
elf=build/cortex-m0/tests/example_firmware_start.elf
tools/qemu-run --machine microbit -- "$elf" >/dev/null 2>build/cortex-m0/qemu-run.err
if [ -s build/cortex-m0/qemu-run.err ]; then
  cat build/cortex-m0/qemu-run.err
  echo "FAIL: tools/qemu-run wrote on stderr for $elf"
  exit 1
fi
echo "tools/qemu-run on microbit: $elf passed, nothing on stderr"
ctest --preset cortex-m0
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m0
