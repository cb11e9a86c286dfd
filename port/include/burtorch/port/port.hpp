// The port layer: everything platform-specific that libburtorch's programs,
// tests and tools need. The core (lib/, include/burtorch/) never calls it
// except through byte streams and the fault hook the caller hands in.
//
// A port is one .cpp that defines the functions below. Link exactly one:
// burtorch_port_posix, burtorch_port_cortex_m, burtorch_port_null, or your
// own (docs/porting.md).
#ifndef BURTORCH_PORT_PORT_HPP
#define BURTORCH_PORT_PORT_HPP

#include <cstddef>
#include <cstdint>

namespace burtorch {
namespace port {

// Monotonic time: a tick counter and its frequency (ticks per second).
std::uint64_t ticks() noexcept;
std::uint64_t ticks_per_second() noexcept;

// Text output for logs and test results. Need not be NUL-terminated.
void write(const char* text, std::size_t length) noexcept;
void write(const char* text) noexcept;

// Ends the program with `code` (semihosting exit on boards, exit() on POSIX).
[[noreturn]] void exit(int code) noexcept;

}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_PORT_HPP
