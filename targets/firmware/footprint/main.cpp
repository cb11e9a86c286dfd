// SPDX-License-Identifier: Apache-2.0
// Footprint probe, part 2: a firmware around the tape core. Inputs come
// from volatile memory so nothing is folded away at compile time; the exit
// code says whether the probe produced a finite result and non-zero
// gradients (a smoke run, CTest "footprint_tape_core"; correctness is the
// test suites' job).
#include <burtorch/port/port.hpp>

#include <cmath>

#include "tape_core_probe.hpp"

namespace {
volatile float g_inputs[4] = {0.75F, -0.5F, 1.25F, 2.0F};
}

int main() {
  float in[4];
  float grads[4];
  for (int i = 0; i < 4; ++i) {
    in[i] = g_inputs[i];
  }
  const float y = burtorch_footprint_tape_core(in, grads);
  bool ok = std::isfinite(y) && (y > 0.0F);
  for (float g : grads) {
    ok = ok && std::isfinite(g) && (g != 0.0F);
  }
  burtorch::port::write(ok ? "footprint probe: ok\n" : "footprint probe: FAILED\n");
  return ok ? 0 : 1;
}
