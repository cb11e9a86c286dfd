# SPDX-License-Identifier: Apache-2.0
# Cortex-M4F on MPS2 AN386: all test suites as firmware under qemu-system-arm.
# cmake --workflow --preset cortex-m4: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m4
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m4 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m4
ctest --preset cortex-m4
# The library's gates on the compiled XOR step (examples/compiled_step: the
# generated xor_step.cpp and the firmware's main), as on the library's own
# code: no recursion, unbounded frame or forbidden symbol, main's worst
# stack within the firmware's (tools/gates/unit_gates.py; ~2 s).
elf=build/cortex-m4/tests/example_compiled_step.elf
stack=$((0x$(arm-none-eabi-nm "$elf" | awk '$3 == "__burtorch_stack_size" { print $1 }')))
python3 tools/gates/unit_gates.py --preset cortex-m4 --build build/cortex-m4 --target example_compiled_step \
  --unit example_compiled_step_steps/xor_step.cpp --unit examples/compiled_step/main.cpp --entry '^main$' \
  --budget "$stack"
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m4
