// SPDX-License-Identifier: Apache-2.0
// Cortex-M port: time from the DWT cycle counter or SysTick, output and exit
// through the console backend (semihosting.cpp by default).
#include <cstring>

#include "burtorch/port/cortex_m.hpp"
#include "burtorch/port/port.hpp"

#ifndef BURTORCH_PORT_CORE_HZ
#error "BURTORCH_PORT_CORE_HZ (the core clock in Hz) must be defined by the board"
#endif

// ARMv6-M (M0/M0+) and ARMv8-M Baseline (M23) have no DWT cycle counter.
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define BURTORCH_PORT_HAS_DWT 0
#else
#define BURTORCH_PORT_HAS_DWT 1
#endif

namespace burtorch {
namespace port {
namespace cortex_m {

std::uint32_t read_register(std::uintptr_t address) noexcept {
  return *reinterpret_cast<volatile const std::uint32_t*>(address);  // BT-DEV-021: memory-mapped register
}

void write_register(std::uintptr_t address, std::uint32_t value) noexcept {
  *reinterpret_cast<volatile std::uint32_t*>(address) = value;  // BT-DEV-021: memory-mapped register
}

}  // namespace cortex_m
}  // namespace port
}  // namespace burtorch

namespace {

namespace cm = burtorch::port::cortex_m;

// System Control Space registers (ARMv6-M / ARMv7-M / ARMv8-M).
constexpr std::uintptr_t kSysTickCsr = 0xE000E010U;  // control and status
constexpr std::uintptr_t kSysTickRvr = 0xE000E014U;  // reload value
constexpr std::uintptr_t kSysTickCvr = 0xE000E018U;  // current value
constexpr std::uintptr_t kIcsr = 0xE000ED04U;        // interrupt control and state
constexpr std::uint32_t kIcsrPendSysTick = 1U << 26U;
constexpr std::uint32_t kSysTickEnable = 1U << 0U;
constexpr std::uint32_t kSysTickInterrupt = 1U << 1U;
constexpr std::uint32_t kSysTickCoreClock = 1U << 2U;
constexpr std::uint32_t kSysTickReload = 0x00FFFFFFU;  // 24-bit counter

#if BURTORCH_PORT_HAS_DWT
constexpr std::uintptr_t kDemcr = 0xE000EDFCU;  // debug exception and monitor control
constexpr std::uint32_t kDemcrTraceEnable = 1U << 24U;
constexpr std::uintptr_t kDwtCtrl = 0xE0001000U;
constexpr std::uintptr_t kDwtCyccnt = 0xE0001004U;
constexpr std::uint32_t kDwtCtrlCycleCountEnable = 1U << 0U;
constexpr std::uint32_t kDwtCtrlNoCycleCount = 1U << 25U;
#endif

// The port's only state: which counter, and the high bits that widen it.
// ticks() is meant for thread mode; SysTick_Handler is its one writer in
// handler mode.
cm::TickSource g_source = cm::TickSource::kNone;  // BT-DEV-024: the clock's state
#if BURTORCH_PORT_HAS_DWT
std::uint32_t g_dwt_last = 0U;  // BT-DEV-024: the clock's state
std::uint32_t g_dwt_high = 0U;  // BT-DEV-024: the clock's state
#endif
volatile std::uint32_t g_systick_wraps = 0U;  // BT-DEV-024: written by SysTick_Handler

#if BURTORCH_PORT_HAS_DWT
bool start_cycle_counter() noexcept {
  cm::write_register(kDemcr, cm::read_register(kDemcr) | kDemcrTraceEnable);
  if ((cm::read_register(kDwtCtrl) & kDwtCtrlNoCycleCount) != 0U) {
    return false;
  }
  cm::write_register(kDwtCyccnt, 0U);
  cm::write_register(kDwtCtrl, cm::read_register(kDwtCtrl) | kDwtCtrlCycleCountEnable);
  // A counter that is present but not clocked (QEMU models none) stays put.
  const std::uint32_t first = cm::read_register(kDwtCyccnt);
  for (volatile std::uint32_t spin = 0U; spin < 64U; spin = spin + 1U) {
  }
  return cm::read_register(kDwtCyccnt) != first;
}
#endif

void start_systick() noexcept {
  cm::write_register(kSysTickCsr, 0U);
  cm::write_register(kSysTickRvr, kSysTickReload);
  cm::write_register(kSysTickCvr, 0U);
  cm::write_register(kSysTickCsr, kSysTickEnable | kSysTickInterrupt | kSysTickCoreClock);
}

void pick_source() noexcept {
#if BURTORCH_PORT_HAS_DWT
  if (start_cycle_counter()) {
    g_source = cm::TickSource::kDwtCycleCounter;
    return;
  }
#endif
  start_systick();
  g_source = cm::TickSource::kSysTick;
}

// The counter runs RELOAD, ..., 1, 0, RELOAD, ...: 2^24 core cycles per
// period. The wrap interrupt fires as it reaches 0, so 0 is the first count
// of a period and the count c (c > 0) is 2^24 - c cycles into it.
std::uint64_t systick_ticks() noexcept {
  constexpr std::uint32_t kPeriod = kSysTickReload + 1U;
  std::uint32_t wraps = 0U;
  std::uint32_t current = 0U;
  std::uint32_t pending = 0U;
  do {
    wraps = g_systick_wraps;
    current = cm::read_register(kSysTickCvr) & kSysTickReload;
    pending = cm::read_register(kIcsr) & kIcsrPendSysTick;
  } while (wraps != g_systick_wraps);
  const std::uint32_t elapsed = (kPeriod - current) & kSysTickReload;
  // A wrap whose interrupt has not run yet (interrupts masked): the count
  // already belongs to the next period.
  if ((pending != 0U) && (elapsed < (kPeriod / 2U))) {
    wraps = wraps + 1U;
  }
  return (static_cast<std::uint64_t>(wraps) << 24U) + static_cast<std::uint64_t>(elapsed);
}

}  // namespace

// The SysTick wrap interrupt (replaces the weak default in the vector table).
extern "C" void SysTick_Handler() noexcept;
extern "C" void SysTick_Handler() noexcept { g_systick_wraps = g_systick_wraps + 1U; }

namespace burtorch {
namespace port {

namespace cortex_m {
TickSource tick_source() noexcept { return g_source; }
std::uint32_t core_clock_hz() noexcept { return static_cast<std::uint32_t>(BURTORCH_PORT_CORE_HZ); }
}  // namespace cortex_m

std::uint64_t ticks() noexcept {
  if (g_source == cortex_m::TickSource::kNone) {
    pick_source();
  }
#if BURTORCH_PORT_HAS_DWT
  if (g_source == cortex_m::TickSource::kDwtCycleCounter) {
    const std::uint32_t now = cortex_m::read_register(kDwtCyccnt);
    if (now < g_dwt_last) {
      g_dwt_high = g_dwt_high + 1U;
    }
    g_dwt_last = now;
    return (static_cast<std::uint64_t>(g_dwt_high) << 32U) | static_cast<std::uint64_t>(now);
  }
#endif
  return systick_ticks();
}

std::uint64_t ticks_per_second() noexcept { return cortex_m::core_clock_hz(); }

void write(const char* text, std::size_t length) noexcept { cortex_m::console_write(text, length); }

// The length counted here rather than by libc's strlen (and this file is
// compiled so that the loop stays one: CMakeLists.txt): a firmware that
// prints through the console links no string function for it (flash).
void write(const char* text) noexcept {
  std::size_t length = 0U;
  while (text[length] != '\0') {
    ++length;
  }
  cortex_m::console_write(text, length);
}

void exit(int code) noexcept { cortex_m::terminate(code); }

}  // namespace port
}  // namespace burtorch
