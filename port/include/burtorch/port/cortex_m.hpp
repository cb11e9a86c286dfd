// SPDX-License-Identifier: Apache-2.0
/// @file
/// The Cortex-M port (port/cortex-m), split so a board can replace parts:
///
///   burtorch_port_cortex_m_core   ticks() from the DWT cycle counter or
///                                 SysTick; write() and exit() forward to the
///                                 console backend below.
///   burtorch_port_semihosting     the default console backend (semihosting:
///                                 output and exit code go to the debugger or
///                                 QEMU), and files (burtorch/port/file.hpp)
///                                 on the debug host.
///   burtorch_port_cortex_m        both of the above.
///
/// To print on a UART instead, define console_write() and terminate() in one
/// .cpp of your firmware: the linker then never takes the default backend
/// (port/cortex-m/semihosting_backend.cpp, an object of its own) out of the
/// archive. targets/boards/mps2-an386/uart_console.cpp is the worked example
/// (docs/porting.md).
#ifndef BURTORCH_PORT_CORTEX_M_HPP
#define BURTORCH_PORT_CORTEX_M_HPP

#include <cstddef>
#include <cstdint>

namespace burtorch {
namespace port {
namespace cortex_m {

// --- console backend (provided by burtorch_port_semihosting or by you) -----
/// Sends text to the log. Must not allocate; may block.
void console_write(const char* text, std::size_t length) noexcept;
/// Ends the program with `code` (0 = success). A board without a host to
/// report to may reset, or stop with the code in a register for a debugger.
[[noreturn]] void terminate(int code) noexcept;

// --- time ---------------------------------------------------------------------
/// What ticks() counts. The DWT cycle counter where the core has one that
/// runs (ARMv7-M/ARMv8-M Mainline; not Cortex-M0/M0+/M23, and not under
/// QEMU, which does not model it); otherwise the 24-bit SysTick timer on the
/// core clock, widened to 64 bits by its wrap interrupt (SysTick_Handler,
/// defined by this port).
enum class TickSource : std::uint8_t { kNone = 0, kDwtCycleCounter = 1, kSysTick = 2 };
/// The source ticks() uses; kNone until the first call to ticks() picks one.
TickSource tick_source() noexcept;
/// The core clock in Hz: ticks_per_second(). Set per board at build time
/// with BURTORCH_PORT_CORE_HZ (CMake cache variable of the same name).
std::uint32_t core_clock_hz() noexcept;

// --- memory-mapped registers -------------------------------------------------
/// One 32-bit read or write of a System Control Space register.
/// @{
std::uint32_t read_register(std::uintptr_t address) noexcept;
void write_register(std::uintptr_t address, std::uint32_t value) noexcept;
/// @}

/// Exit code of a firmware stopped by an exception nobody handles
/// (targets/boards/cortex-m/board.cpp reports the exception and the faulting PC).
constexpr int kUnexpectedExceptionExitCode = 71;

}  // namespace cortex_m
}  // namespace port
}  // namespace burtorch

#endif  // BURTORCH_PORT_CORTEX_M_HPP
