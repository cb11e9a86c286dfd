// SPDX-License-Identifier: Apache-2.0
// Semihosting: the call itself, console output, exit code and host clock.
// The port's default console backend (semihosting_backend.cpp) uses it.
#include "burtorch/port/semihosting.hpp"

namespace burtorch {
namespace port {
namespace semihosting {

namespace {
// ADP_Stopped_ApplicationExit and ADP_Stopped_RunTimeErrorUnknown.
constexpr std::uint32_t kApplicationExit = 0x20026U;
constexpr std::uint32_t kRunTimeError = 0x20023U;
constexpr std::size_t kChunk = 64U;
}  // namespace

std::uint32_t call(Op op, const void* argument) noexcept {
  std::uint32_t result = 0U;
  // BT-DEV-022: the semihosting trap is one instruction with a fixed
  // register convention (r0 = operation, r1 = argument, result in r0).
  __asm__ volatile(
      "mov r0, %1\n\t"
      "mov r1, %2\n\t"
      "bkpt 0xab\n\t"
      "mov %0, r0"
      : "=r"(result)
      : "r"(static_cast<std::uint32_t>(op)), "r"(argument)
      : "r0", "r1", "memory");
  return result;
}

void write(const char* text, std::size_t length) noexcept {
  // SYS_WRITE0 takes a NUL-terminated string: send the text in pieces.
  char chunk[kChunk + 1U];
  std::size_t at = 0U;
  while (at < length) {
    std::size_t n = length - at;
    if (n > kChunk) {
      n = kChunk;
    }
    for (std::size_t i = 0U; i < n; ++i) {
      // A NUL inside the text would end the piece early; show it as '?'.
      chunk[i] = (text[at + i] == '\0') ? '?' : text[at + i];
    }
    chunk[n] = '\0';
    static_cast<void>(call(Op::kWrite0, chunk));
    at += n;
  }
}

void exit(int code) noexcept {
  // SYS_EXIT_EXTENDED carries the code; a host that lacks it returns, and
  // plain SYS_EXIT still tells success from failure.
  const std::uint32_t extended[2] = {kApplicationExit, static_cast<std::uint32_t>(code)};
  static_cast<void>(call(Op::kExitExtended, extended));
  const std::uint32_t reason = (code == 0) ? kApplicationExit : kRunTimeError;
  // On 32-bit targets SYS_EXIT takes the reason itself, not a block.
  static_cast<void>(call(Op::kExit, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(reason))));  // BT-DEV-021: value passed in the pointer register
  for (;;) {
  }
}

std::uint32_t clock_centiseconds() noexcept { return call(Op::kClock, nullptr); }

}  // namespace semihosting

}  // namespace port
}  // namespace burtorch
