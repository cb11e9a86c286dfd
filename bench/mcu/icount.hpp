// SPDX-License-Identifier: Apache-2.0
// Shared by the instruction-count firmware (bench/mcu): the tick counter,
// the calibration loop and the machine-readable output lines that
// tools/icount parses.
//
// Under qemu-system-arm -icount shift=0 the emulated clock advances 1 ns per
// executed instruction, so the port's tick counter (the DWT cycle counter
// where QEMU clocks it, else SysTick at the board's core clock) counts
// instructions at a fixed rate: ticks = rate * instructions + offset.
// calibrate() times a loop whose instruction count is known exactly; the
// tool fits the rate and refuses to report anything if the fit is not a
// straight line.
#ifndef BURTORCH_BENCH_MCU_ICOUNT_HPP
#define BURTORCH_BENCH_MCU_ICOUNT_HPP

#include <burtorch/port/cortex_m.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstddef>
#include <cstdint>

namespace icount {

inline void print(const char* text) { burtorch::port::write(text); }

inline void print_u(std::uint64_t v) {
  char buffer[24];
  const std::size_t n = burtorch::format_unsigned(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline void print_d(double v) {
  char buffer[32];
  const std::size_t n = burtorch::format_double(v, buffer, sizeof(buffer), 9);
  burtorch::port::write(buffer, n);
}

inline std::uint64_t ticks() { return burtorch::port::ticks(); }

// Executes exactly 2 * iterations instructions between its two reads of the
// counter: `subs` and `bne` per iteration (Thumb, valid on ARMv6-M and up;
// the last `bne` falls through and counts too). Returns the ticks between
// the reads, which also include the fixed cost of one ticks() call.
__attribute__((noinline)) inline std::uint64_t time_loop(std::uint32_t iterations) {
  std::uint32_t n = iterations;
  const std::uint64_t t0 = ticks();
  // GCC reads Thumb-1 (ARMv6-M) inline assembly in divided syntax, where the
  // flag-setting 16-bit subtract is spelled `sub`.
#if defined(__ARM_ARCH_6M__)
#define ICOUNT_SUBS "sub %0, #1\n\t"
#else
#define ICOUNT_SUBS "subs %0, %0, #1\n\t"
#endif
  __asm__ volatile(
      "1:\n\t" ICOUNT_SUBS
      "bne 1b\n"
      : "+l"(n)
      :
      : "cc");
#undef ICOUNT_SUBS
  const std::uint64_t t1 = ticks();
  return t1 - t0;
}

// Executes exactly kMixedPerIteration * iterations instructions of other
// kinds (load, store, multiply, add, nop and, with an FPU, a floating-point
// add) and the loop's own `subs`, `bne` per iteration: a check that these
// kinds count as one instruction each, as the calibration loop's do.
#if defined(__ARM_ARCH_6M__)
#define ICOUNT_MIXED_BODY \
  "ldr %1, [%2]\n\t"      \
  "str %1, [%2]\n\t"      \
  "mul %1, %1\n\t"        \
  "add %1, #3\n\t"        \
  "nop\n\t"               \
  "sub %0, #1\n\t"
constexpr std::uint32_t kMixedPerIteration = 7U;
#elif defined(__ARM_FP)
#define ICOUNT_MIXED_BODY        \
  "ldr %1, [%2]\n\t"             \
  "str %1, [%2]\n\t"             \
  "muls %1, %1, %1\n\t"          \
  "adds %1, %1, #3\n\t"          \
  "nop\n\t"                      \
  "vadd.f32 s15, s15, s15\n\t"   \
  "subs %0, %0, #1\n\t"
constexpr std::uint32_t kMixedPerIteration = 8U;
#else
#define ICOUNT_MIXED_BODY \
  "ldr %1, [%2]\n\t"      \
  "str %1, [%2]\n\t"      \
  "muls %1, %1, %1\n\t"   \
  "adds %1, %1, #3\n\t"   \
  "nop\n\t"               \
  "subs %0, %0, #1\n\t"
constexpr std::uint32_t kMixedPerIteration = 7U;
#endif

// Not inlined (neither is time_loop): every call runs the same code around the
// loop, so only the iterations differ between two calls.
__attribute__((noinline)) inline std::uint64_t time_mixed(std::uint32_t iterations) {
  std::uint32_t n = iterations;
  std::uint32_t x = 1U;
  volatile std::uint32_t cell = 5U;
  const std::uint64_t t0 = ticks();
  __asm__ volatile(
      "1:\n\t" ICOUNT_MIXED_BODY
      "bne 1b\n"
      : "+l"(n), "+l"(x)
      : "l"(&cell)
#if defined(__ARM_FP) && !defined(__ARM_ARCH_6M__)
      : "cc", "memory", "s15");
#else
      : "cc", "memory");
#endif
  const std::uint64_t t1 = ticks();
  return t1 - t0;
}
#undef ICOUNT_MIXED_BODY

// "icount cal <loop instructions> <ticks>" for three loop lengths L, 2L, 4L
// (tools/icount fits ticks = rate * instructions + offset through the outer
// two and checks that the middle one lies on the line), then the mixed loop.
// First "icount source dwt|systick": the counter the port picked.
inline void calibrate(std::uint32_t iterations) {
  static_cast<void>(ticks());  // the port picks its counter on the first call
  const bool dwt = burtorch::port::cortex_m::tick_source() == burtorch::port::cortex_m::TickSource::kDwtCycleCounter;
  print(dwt ? "icount source dwt\n" : "icount source systick\n");
  for (std::uint32_t f = 1U; f <= 4U; f *= 2U) {
    const std::uint32_t n = iterations * f;
    const std::uint64_t t = time_loop(n);
    print("icount cal ");
    print_u(2ULL * n);
    print(" ");
    print_u(t);
    print("\n");
  }
  // "icount mix <instructions per iteration> <iterations> <ticks> <ticks
  // at twice the iterations>"
  const std::uint64_t m1 = time_mixed(iterations);
  const std::uint64_t m2 = time_mixed(2U * iterations);
  print("icount mix ");
  print_u(kMixedPerIteration);
  print(" ");
  print_u(iterations);
  print(" ");
  print_u(m1);
  print(" ");
  print_u(m2);
  print("\n");
}

// Instructions from ticks with the firmware's own fit of its calibration
// (two lengths: rate from their difference). For the firmware's human
// readable lines only; tools/icount recomputes from the raw ticks.
struct Rate {
  double ticks_per_instruction = 0.0;
};

inline Rate own_rate(std::uint32_t iterations) {
  const std::uint64_t a = time_loop(iterations);
  const std::uint64_t b = time_loop(iterations * 4U);
  Rate r;
  r.ticks_per_instruction = static_cast<double>(b - a) / (6.0 * static_cast<double>(iterations));
  return r;
}

}  // namespace icount

#endif  // BURTORCH_BENCH_MCU_ICOUNT_HPP
