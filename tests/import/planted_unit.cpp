// SPDX-License-Identifier: Apache-2.0
// Planted violations for tools/gates/unit_gates.py (stage 57): compiled with
// the imported firmware's own command, each must be reported: a recursion,
// a heap allocation, an unbounded stack frame and an unjustified indirect
// call reached from the entry `planted_entry`.
#include <cstddef>
#include <new>

namespace planted {

int* volatile kept = nullptr;

__attribute__((noinline)) int tock(int n);
__attribute__((noinline)) int tick(int n) { return (n <= 0) ? 0 : (tock(n - 1) * 3) + n; }
__attribute__((noinline)) int tock(int n) { return (n <= 0) ? 1 : (tick(n - 2) * 5) - n; }

__attribute__((noinline)) int on_heap(int n) {
  kept = new int(n);
  return *kept;
}

int unbounded_frame(std::size_t n) {
  volatile char* buffer = static_cast<volatile char*>(__builtin_alloca(n));
  buffer[0] = 1;
  return buffer[0];
}

int (*volatile hook)(int) = &on_heap;

}  // namespace planted

extern "C" int planted_entry(int n) {
  return planted::tick(n) + planted::on_heap(n) + planted::unbounded_frame(static_cast<std::size_t>(n)) +
         planted::hook(n);
}
