// Helpers shared by the on-device trainers: text output through the port
// layer (no stdio on the boards) and emulated-time measurement.
#ifndef BURTORCH_TARGETS_FIRMWARE_HPP
#define BURTORCH_TARGETS_FIRMWARE_HPP

#include <burtorch/port/port.hpp>
#include <burtorch/stream.hpp>

#include <cstddef>
#include <cstdint>

namespace firmware {

inline void print(const char* text) { burtorch::port::write(text); }

inline void print_number(double v) {
  char buffer[32];
  const std::size_t n = burtorch::format_double(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline void print_unsigned(std::uint64_t v) {
  char buffer[24];
  const std::size_t n = burtorch::format_unsigned(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline double seconds() {
  return static_cast<double>(burtorch::port::ticks()) / static_cast<double>(burtorch::port::ticks_per_second());
}

}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_HPP
