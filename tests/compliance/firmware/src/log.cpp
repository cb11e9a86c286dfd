// SPDX-License-Identifier: Apache-2.0
#include "log.hpp"

#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <array>
#include <cstddef>

namespace fw {

void log_value(const char* label, double value) noexcept {
  std::array<char, 32U> text{};
  const std::size_t n = burtorch::format_double(value, text.data(), text.size(), 6);
  burtorch::port::write(label);
  burtorch::port::write(text.data(), n);
}

void log_text(const char* text) noexcept {
  burtorch::port::write(text);
}

}  // namespace fw
