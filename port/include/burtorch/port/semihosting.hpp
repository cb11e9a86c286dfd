// SPDX-License-Identifier: Apache-2.0
/// @file
/// Arm semihosting (the debugger or QEMU performs the call for the target):
/// console output, host files and the exit code. Used by the Cortex-M port's
/// default backend; usable directly by a firmware that wants host files.
///
/// Semihosting needs a debugger or emulator attached: on a board running
/// alone, the trap instruction (BKPT 0xAB) faults. Use a UART backend there
/// (docs/porting.md).
#ifndef BURTORCH_PORT_SEMIHOSTING_HPP
#define BURTORCH_PORT_SEMIHOSTING_HPP

#include <cstddef>
#include <cstdint>

namespace burtorch {
namespace port {
namespace semihosting {

/// Operation numbers from the Arm semihosting specification (v2).
enum class Op : std::uint32_t {
  kOpen = 0x01U,
  kClose = 0x02U,
  kWrite0 = 0x04U,
  kWrite = 0x05U,
  kRead = 0x06U,
  kSeek = 0x0AU,
  kRemove = 0x0EU,
  kRename = 0x0FU,
  kClock = 0x10U,
  kExit = 0x18U,
  kExitExtended = 0x20U,
};

/// Performs one call with r0 = op and r1 = argument (usually the address of
/// a parameter block of 32-bit words); returns r0.
std::uint32_t call(Op op, const void* argument) noexcept;

/// Writes text to the host's console.
void write(const char* text, std::size_t length) noexcept;
/// Ends the emulation or debug session with `code` as the exit status.
[[noreturn]] void exit(int code) noexcept;
/// Centiseconds since the program started, from the host clock.
std::uint32_t clock_centiseconds() noexcept;

}  // namespace semihosting
}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_SEMIHOSTING_HPP
