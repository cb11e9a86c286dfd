// SPDX-License-Identifier: Apache-2.0
/* Callgrind client requests for Python scripts (bench/torch/graphs.py
 * --callgrind): tools/bench compiles this into build/bench/cgtoggle.so and
 * runs the script under valgrind --tool=callgrind --instr-atstart=no, so
 * only the measured loop is counted (not the interpreter start-up and the
 * import of torch). Needs valgrind's callgrind.h. */
#include <valgrind/callgrind.h>

void bt_callgrind_start(void) {
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
}

void bt_callgrind_stop(void) {
  CALLGRIND_STOP_INSTRUMENTATION;
}
