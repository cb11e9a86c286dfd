// SPDX-License-Identifier: Apache-2.0
// POSIX port: clock_gettime, stdout through write(2), exit().
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>  // clock_gettime and CLOCK_MONOTONIC (POSIX, declared by <time.h>, which it includes)

#include "burtorch/port/port.hpp"

namespace burtorch {
namespace port {

std::uint64_t ticks() noexcept {
  struct timespec now {};
  static_cast<void>(clock_gettime(CLOCK_MONOTONIC, &now));
  return (static_cast<std::uint64_t>(now.tv_sec) * 1000000000ULL) + static_cast<std::uint64_t>(now.tv_nsec);
}

std::uint64_t ticks_per_second() noexcept { return 1000000000ULL; }

void write(const char* text, std::size_t length) noexcept {
  while (length > 0U) {
    const ssize_t done = ::write(1, text, length);
    if (done <= 0) {
      return;
    }
    text += done;
    length -= static_cast<std::size_t>(done);
  }
}

void write(const char* text) noexcept { write(text, std::strlen(text)); }

void exit(int code) noexcept { std::exit(code); }

}  // namespace port
}  // namespace burtorch
