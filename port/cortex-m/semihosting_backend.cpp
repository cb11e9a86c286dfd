// SPDX-License-Identifier: Apache-2.0
// The Cortex-M port's default console backend: semihosting. Alone in its
// object file on purpose: a firmware that defines console_write() and
// terminate() itself (a UART, an RTT buffer) never pulls this file out of
// libburtorch_port_semihosting.a, so there is no clash (docs/porting.md).
#include "burtorch/port/cortex_m.hpp"
#include "burtorch/port/semihosting.hpp"

namespace burtorch {
namespace port {
namespace cortex_m {

void console_write(const char* text, std::size_t length) noexcept { semihosting::write(text, length); }

void terminate(int code) noexcept { semihosting::exit(code); }

}  // namespace cortex_m
}  // namespace port
}  // namespace burtorch
