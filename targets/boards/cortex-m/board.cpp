// SPDX-License-Identifier: Apache-2.0
// The C++ half of the Cortex-M startup (startup.S calls these): how a
// firmware ends, and what it says when an exception nobody handles occurs.
// Output and exit go through the port layer, so with a UART console backend
// the fault report appears on the UART.
#include <cstddef>
#include <cstdint>

#include "burtorch/port/cortex_m.hpp"
#include "burtorch/port/port.hpp"

// Linker-script symbols (targets/boards/cortex-m/sections.ld): only their
// addresses are used. BT-DEV-023: reserved (double-underscore) names.
extern "C" {
extern const std::uint8_t __burtorch_stack_limit[];
extern const std::uint8_t __burtorch_stack_top[];
void burtorch_board_init() noexcept;
[[noreturn]] void burtorch_board_exit(int code) noexcept;
[[noreturn]] void burtorch_board_fault(const std::uint32_t* frame, std::uint32_t ipsr) noexcept;
}

namespace {

namespace port = burtorch::port;

void write_hex(std::uint32_t value) noexcept {
  char text[11] = {'0', 'x', '0', '0', '0', '0', '0', '0', '0', '0', '\0'};
  for (std::size_t i = 0U; i < 8U; ++i) {
    const std::uint32_t nibble = (value >> (28U - (4U * i))) & 0xFU;
    text[2U + i] = static_cast<char>((nibble < 10U) ? ('0' + nibble) : (('a' - 10U) + nibble));
  }
  port::write(text, 10U);
}

const char* exception_name(std::uint32_t number) noexcept {
  const char* name = "interrupt";
  switch (number) {
    case 2U:
      name = "NMI";
      break;
    case 3U:
      name = "HardFault";
      break;
    case 4U:
      name = "MemManage";
      break;
    case 5U:
      name = "BusFault";
      break;
    case 6U:
      name = "UsageFault";
      break;
    case 7U:
      name = "SecureFault";
      break;
    case 11U:
      name = "SVCall";
      break;
    case 12U:
      name = "DebugMonitor";
      break;
    case 14U:
      name = "PendSV";
      break;
    case 15U:
      name = "SysTick";
      break;
    default:
      break;
  }
  return name;
}

std::uintptr_t address_of(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p);  // BT-DEV-021: address arithmetic on linker symbols
}

}  // namespace

extern "C" void burtorch_board_init() noexcept {
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__)
  // ARMv7-M has no stack limit register: make the lowest 32 bytes of the
  // thread stack a no-access MPU region, so running into it faults (and the
  // report below runs on the separate handler stack). PRIVDEFENA keeps the
  // default memory map everywhere else. Boards without an MPU report
  // DREGION = 0 and are left alone.
  namespace cm = port::cortex_m;
  constexpr std::uintptr_t kMpuType = 0xE000ED90U;
  constexpr std::uintptr_t kMpuCtrl = 0xE000ED94U;
  constexpr std::uintptr_t kMpuRnr = 0xE000ED98U;
  constexpr std::uintptr_t kMpuRbar = 0xE000ED9CU;
  constexpr std::uintptr_t kMpuRasr = 0xE000EDA0U;
  constexpr std::uint32_t kRasrNoAccessXn32Bytes = (1U << 28U) | (4U << 1U) | 1U;  // XN, AP=000, SIZE=2^(4+1)
  constexpr std::uint32_t kCtrlEnablePrivDefault = (1U << 2U) | 1U;
  if (((cm::read_register(kMpuType) >> 8U) & 0xFFU) != 0U) {
    cm::write_register(kMpuRnr, 0U);
    cm::write_register(kMpuRbar, static_cast<std::uint32_t>(address_of(__burtorch_stack_limit)));
    cm::write_register(kMpuRasr, kRasrNoAccessXn32Bytes);
    cm::write_register(kMpuCtrl, kCtrlEnablePrivDefault);
    __asm__ volatile("dsb\n\tisb" ::: "memory");  // BT-DEV-022: barrier after enabling the MPU
  }
#endif
}

extern "C" void burtorch_board_exit(int code) noexcept { port::exit(code); }

extern "C" void burtorch_board_fault(const std::uint32_t* frame, std::uint32_t ipsr) noexcept {
  const std::uint32_t number = ipsr & 0x1FFU;
  const std::uintptr_t at = address_of(frame);
  // The stacked frame (r0-r3, r12, lr, pc, xpsr) is readable only if the
  // thread stack pointer lies inside the thread stack, above the 32-byte
  // guard; otherwise the thread stack overflowed.
  bool overflow = (at < (address_of(__burtorch_stack_limit) + 32U)) || ((at + 32U) > address_of(__burtorch_stack_top));
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || \
    defined(__ARM_ARCH_8_1M_MAIN__)
  // Configurable and HardFault status registers (ARMv7-M and later).
  const std::uint32_t cfsr = port::cortex_m::read_register(0xE000ED28U);
  const std::uint32_t hfsr = port::cortex_m::read_register(0xE000ED2CU);
  // MSTKERR, STKERR (exception entry could not push), STKOF (ARMv8-M limit).
  constexpr std::uint32_t kStackErrors = (1U << 4U) | (1U << 12U) | (1U << 20U);
  overflow = overflow || ((cfsr & kStackErrors) != 0U);
#endif
  port::write("\n*** unexpected exception ");
  port::write(exception_name(number));
  port::write(" (");
  write_hex(number);
  port::write(")");
  if (overflow) {
    port::write(": thread stack overflow, psp=");
    write_hex(static_cast<std::uint32_t>(at));
  } else {
    port::write(" pc=");
    write_hex(frame[6]);
    port::write(" lr=");
    write_hex(frame[5]);
  }
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || \
    defined(__ARM_ARCH_8_1M_MAIN__)
  port::write(" cfsr=");
  write_hex(cfsr);
  port::write(" hfsr=");
  write_hex(hfsr);
#endif
  port::write("\n");
  port::exit(port::cortex_m::kUnexpectedExceptionExitCode);
}
