// SPDX-License-Identifier: Apache-2.0
// Worked example (docs/porting.md): the Cortex-M port's console on a UART
// instead of semihosting, without editing the library. This file defines
// the two backend functions of burtorch/port/cortex_m.hpp; because the
// firmware defines them, the linker never takes the semihosting backend out
// of libburtorch_port_semihosting.a.
//
// The UART is UART0 of the MPS2 board, an Arm CMSDK APB UART at 0x40004000
// (QEMU models it; `tools/qemu-run --serial` shows it on stdout). The test
// `api_uart` runs the whole API suite with all its output on this UART.
#include <cstddef>
#include <cstdint>

#include "burtorch/port/cortex_m.hpp"
#include "burtorch/port/semihosting.hpp"

namespace {

namespace cm = burtorch::port::cortex_m;

constexpr std::uintptr_t kUart0 = 0x40004000U;
constexpr std::uintptr_t kData = kUart0 + 0x00U;
constexpr std::uintptr_t kState = kUart0 + 0x04U;  // bit 0: transmit buffer full
constexpr std::uintptr_t kCtrl = kUart0 + 0x08U;   // bit 0: transmit enable
constexpr std::uintptr_t kBaudDiv = kUart0 + 0x10U;
constexpr std::uint32_t kTxFull = 1U << 0U;
constexpr std::uint32_t kTxEnable = 1U << 0U;

bool g_ready = false;

void put(char c) noexcept {
  while ((cm::read_register(kState) & kTxFull) != 0U) {
  }
  cm::write_register(kData, static_cast<std::uint8_t>(c));
}

}  // namespace

namespace burtorch {
namespace port {
namespace cortex_m {

void console_write(const char* text, std::size_t length) noexcept {
  if (!g_ready) {
    // 115200 baud from the 25 MHz peripheral clock; transmitter on.
    write_register(kBaudDiv, core_clock_hz() / 115200U);
    write_register(kCtrl, kTxEnable);
    g_ready = true;
  }
  for (std::size_t i = 0U; i < length; ++i) {
    if (text[i] == '\n') {
      put('\r');
    }
    put(text[i]);
  }
}

void terminate(int code) noexcept {
  // Report the code on the UART. Under a debugger or QEMU, also hand it to
  // the host so the run ends with it; a board running alone would reset
  // here instead (SCB AIRCR SYSRESETREQ) or sleep forever.
  const char digit = static_cast<char>('0' + ((code < 0) ? 9 : ((code > 9) ? 9 : code)));
  const char line[] = {'e', 'x', 'i', 't', ' ', digit, '\n'};
  console_write(line, sizeof(line));
  semihosting::exit(code);
}

}  // namespace cortex_m
}  // namespace port
}  // namespace burtorch
