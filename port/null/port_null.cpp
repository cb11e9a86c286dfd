// SPDX-License-Identifier: Apache-2.0
// Null port: no clock, no output. For users who need none of it.
#include "burtorch/port/port.hpp"

namespace burtorch {
namespace port {

std::uint64_t ticks() noexcept { return 0U; }
std::uint64_t ticks_per_second() noexcept { return 1U; }
void write(const char* text, std::size_t length) noexcept {
  static_cast<void>(text);
  static_cast<void>(length);
}
void write(const char* text) noexcept { static_cast<void>(text); }
void exit(int code) noexcept {
  static_cast<void>(code);
  for (;;) {
  }
}

}  // namespace port
}  // namespace burtorch
