// SPDX-License-Identifier: Apache-2.0
// Programs that must stop, and say why: the port's fail-fast fault hook on
// every target and, on Cortex-M, the startup code's report of an exception
// nobody handles (an undefined instruction; a thread-stack overflow).
// cmake/BurtorchPortTests.cmake builds one program per BT_DEATH_MODE and
// passes a test only if its output shows the expected report.
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <cstdint>

#ifndef BT_DEATH_MODE
#error "BT_DEATH_MODE: 1 fail-fast, 2 undefined instruction, 3 stack overflow"
#endif

namespace bt = burtorch;

namespace {

#if BT_DEATH_MODE == 1
// A tape of two nodes asked for a third: the hook ends the program.
bt::FixedTape<double, 2> g_tape;
int run() {
  g_tape.set_fault_hook(&bt::port::fail_fast, nullptr);
  auto a = g_tape.leaf(1.0);
  auto b = g_tape.leaf(2.0);
  auto c = a + b;
  static_cast<void>(c);
  bt::port::write("not reached: the fault hook returned\n");
  return 0;
}
#elif BT_DEATH_MODE == 2
int run() {
  bt::port::write("executing an undefined instruction\n");
  __asm__ volatile("udf #0");
  bt::port::write("not reached: no fault\n");
  return 0;
}
#elif BT_DEATH_MODE == 3
// Recurses with small frames (a word and a return address each, the way
// stacks usually overflow) until the thread stack runs out.
__attribute__((noinline)) void touch(volatile std::uint32_t* word) { *word = *word + 1U; }
__attribute__((noinline)) std::uint32_t overflow(std::uint32_t depth) {
  volatile std::uint32_t word = depth;
  touch(&word);
  if (depth != 0U) {
    word = word + overflow(depth - 1U);  // deliberate deep recursion (test only)
  }
  return word;
}
int run() {
  bt::port::write("overflowing the thread stack\n");
  const std::uint32_t r = overflow(1000000U);
  bt::port::write("not reached: no fault\n");
  return static_cast<int>(r & 1U);
}
#else
#error "unknown BT_DEATH_MODE"
#endif

}  // namespace

int main() {
  static_cast<void>(run());
  return 0;  // reached only if nothing stopped the program: the test fails
}
