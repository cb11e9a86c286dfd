// SPDX-License-Identifier: Apache-2.0
// A suite that must FAIL: one passing and one failing check (mode 1), or a
// program that never ends (mode 2). Built only with
// -DBURTORCH_TEST_DELIBERATE_FAILURE=ON, by tools/check.d/28-failures-reach-ctest.sh,
// to prove that on every kind of target a failing test makes CTest fail and
// a hung firmware is stopped by the QEMU wrapper's timeout.
#include "harness.hpp"

#ifndef BT_RED_MODE
#error "BT_RED_MODE: 1 failing check, 2 hang"
#endif

namespace {

void passes(bt_test::Context& t) { BT_CHECK(t, 1 + 1 == 2); }

#if BT_RED_MODE == 1
void fails(bt_test::Context& t) { BT_CHECK(t, 1 + 1 == 3); }
#else
void fails(bt_test::Context& t) {
  volatile bool forever = true;
  while (forever) {
  }
  BT_CHECK(t, false);
}
#endif

const bt_test::TestCase kCases[] = {
    {"passes", passes},
    {"deliberately_fails", fails},
};

}  // namespace

BT_TEST_MAIN("deliberate_failure", kCases)
