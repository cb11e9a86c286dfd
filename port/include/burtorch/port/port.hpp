// SPDX-License-Identifier: Apache-2.0
/// @file
/// The port layer: everything platform-specific that libburtorch's programs,
/// tests and tools need. The core (lib/, include/burtorch/) never calls it
/// except through byte streams and the fault hook the caller hands in.
///
/// A port is one .cpp that defines the five functions below. Link exactly
/// one: burtorch_port_posix, burtorch_port_cortex_m, burtorch_port_null, or
/// your own (docs/porting.md). The inline helpers at the end are built on
/// those five, so every port has them.
///
/// Byte streams for files: burtorch/port/file.hpp (the POSIX port uses the
/// file system, the Cortex-M port the debug host's files via semihosting).
#ifndef BURTORCH_PORT_PORT_HPP
#define BURTORCH_PORT_PORT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"
#include "burtorch/tools/stream.hpp"

namespace burtorch {
namespace port {

/// Monotonic time: a tick counter and its frequency (ticks per second).
/// @{
std::uint64_t ticks() noexcept;
std::uint64_t ticks_per_second() noexcept;
/// @}

/// Text output for logs and test results: `length` bytes (need not be
/// NUL-terminated), or a NUL-terminated string.
/// @{
void write(const char* text, std::size_t length) noexcept;
void write(const char* text) noexcept;
/// @}

/// Ends the program with `code` (semihosting exit on boards, exit() on POSIX).
[[noreturn]] void exit(int code) noexcept;

// --- helpers every port gets ------------------------------------------------

/// Exit code of a program stopped by fail_fast().
constexpr int kFailFastExitCode = 70;

/// A burtorch::FaultHook for fail-fast builds: reports the status on the log
/// and ends the program with kFailFastExitCode. Usage:
///   tape.set_fault_hook(&burtorch::port::fail_fast, nullptr);
inline void fail_fast(Status status, void* context) noexcept {
  static_cast<void>(context);
  write("burtorch: fail-fast on error: ");
  write(status_name(status));
  write("\n");
  exit(kFailFastExitCode);
}

namespace detail {
inline Status console_bytes(void* context, const std::uint8_t* data, std::size_t size) {
  static_cast<void>(context);
  write(reinterpret_cast<const char*>(data), size);  // BT-DEV-020: bytes to characters
  return Status::kOk;
}
}  // namespace detail

/// The log output as a ByteSink (e.g. write_graphviz() on a board without files).
inline ByteSink console_sink() noexcept { return ByteSink{&detail::console_bytes, nullptr}; }

}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_PORT_HPP
