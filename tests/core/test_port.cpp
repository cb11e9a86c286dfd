// SPDX-License-Identifier: Apache-2.0
// The port layer on every target: the monotonic clock, files as byte streams
// (the file system on POSIX, the debug host's files through semihosting on
// Cortex-M under QEMU). Heap-free like every suite.
#include <burtorch/burtorch.hpp>
#include <burtorch/port/file.hpp>
#include <burtorch/port/port.hpp>

#include <cstring>

#include "harness.hpp"

#if defined(__arm__) && !defined(__linux__)
#include <burtorch/port/cortex_m.hpp>
#define BT_TEST_CORTEX_M 1
#else
#define BT_TEST_CORTEX_M 0
#endif

namespace bt = burtorch;
namespace port = burtorch::port;

namespace {

void clock_is_monotonic_and_advances(bt_test::Context& t) {
  BT_CHECK(t, port::ticks_per_second() > 0U);
  std::uint64_t previous = port::ticks();
  bool monotonic = true;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t now = port::ticks();
    monotonic = monotonic && (now >= previous);
    previous = now;
  }
  BT_CHECK(t, monotonic);
  // Spin until the clock moves: a clock that never advances fails here.
  const std::uint64_t start = port::ticks();
  std::uint64_t now = start;
  volatile std::uint32_t work = 0U;
  for (long i = 0; (i < 20000000L) && (now == start); ++i) {
    work = work + 1U;
    now = port::ticks();
  }
  BT_CHECK(t, now > start);
#if BT_TEST_CORTEX_M
  namespace cm = port::cortex_m;
  BT_CHECK(t, cm::tick_source() != cm::TickSource::kNone);
  BT_CHECK(t, port::ticks_per_second() == cm::core_clock_hz());
  bt_test::print("  tick source: ");
  bt_test::print((cm::tick_source() == cm::TickSource::kDwtCycleCounter) ? "DWT cycle counter" : "SysTick");
  bt_test::print(", ");
  bt_test::print_int(static_cast<long>(cm::core_clock_hz()));
  bt_test::print(" Hz\n");
#endif
}

// Ticks across a wrap of the 24-bit SysTick counter (2^24 cycles) keep
// growing: the wrap interrupt carries into the high bits.
void clock_survives_counter_wrap(bt_test::Context& t) {
  const std::uint64_t span = 1ULL << 24U;
  const std::uint64_t start = port::ticks();
  std::uint64_t previous = start;
  std::uint64_t now = start;
  bool monotonic = true;
  for (long i = 0; (i < 100000000L) && ((now - start) < (span + (span / 2U))); ++i) {
    now = port::ticks();
    monotonic = monotonic && (now >= previous);
    previous = now;
  }
  BT_CHECK(t, monotonic);
  BT_CHECK(t, (now - start) >= (span + (span / 2U)));
}

const char kFileName[] = "burtorch_test_port.bin";

// The bytes 0..n-1 scrambled, so a shifted or truncated read is caught.
void fill(std::uint8_t* data, std::size_t n, std::uint8_t seed) {
  std::uint32_t x = seed;
  for (std::size_t i = 0U; i < n; ++i) {
    x = (x * 1103515245U) + 12345U;
    data[i] = static_cast<std::uint8_t>(x >> 16U);
  }
}

// Reads the whole file into `out`; returns bytes read or -1.
long read_back(const char* path, std::uint8_t* out, std::size_t capacity, bool rewind_first) {
  port::FileReader reader;
  if (reader.open(path) != bt::Status::kOk) {
    return -1;
  }
  bt::ByteSource source = reader.source();
  if (rewind_first) {
    std::size_t got = 0U;
    if ((source.read(source.context, out, 3U, &got) != bt::Status::kOk) || (source.rewind == nullptr) ||
        (source.rewind(source.context) != bt::Status::kOk)) {
      return -1;
    }
  }
  std::size_t total = 0U;
  for (;;) {
    std::size_t got = 0U;
    if (source.read(source.context, &out[total], capacity - total, &got) != bt::Status::kOk) {
      return -1;
    }
    if (got == 0U) {
      break;
    }
    total += got;
    if (total == capacity) {
      break;
    }
  }
  return static_cast<long>(total);
}

void files_round_trip(bt_test::Context& t) {
  static std::uint8_t written[300];
  static std::uint8_t read[512];
  fill(written, sizeof(written), 7U);
  {
    port::FileWriter writer;
    BT_CHECK(t, writer.open(kFileName, true) == bt::Status::kOk);
    const bt::ByteSink sink = writer.sink();
    // Two writes: a stream, not one block.
    BT_CHECK(t, bt::write_bytes(sink, written, 100U) == bt::Status::kOk);
    BT_CHECK(t, bt::write_bytes(sink, &written[100], 200U) == bt::Status::kOk);
    BT_CHECK(t, writer.commit() == bt::Status::kOk);
  }
  std::memset(read, 0, sizeof(read));
  BT_CHECK(t, read_back(kFileName, read, sizeof(read), false) == 300L);
  BT_CHECK(t, std::memcmp(read, written, sizeof(written)) == 0);
  // rewind() goes back to the first byte.
  std::memset(read, 0, sizeof(read));
  BT_CHECK(t, read_back(kFileName, read, sizeof(read), true) == 300L);
  BT_CHECK(t, std::memcmp(read, written, sizeof(written)) == 0);

  // An atomic writer that is never committed leaves the old file intact.
  {
    port::FileWriter writer;
    BT_CHECK(t, writer.open(kFileName, true) == bt::Status::kOk);
    static std::uint8_t other[40];
    fill(other, sizeof(other), 99U);
    BT_CHECK(t, bt::write_bytes(writer.sink(), other, sizeof(other)) == bt::Status::kOk);
  }
  std::memset(read, 0, sizeof(read));
  BT_CHECK(t, read_back(kFileName, read, sizeof(read), false) == 300L);
  BT_CHECK(t, std::memcmp(read, written, sizeof(written)) == 0);

  // A plain (non-atomic) writer replaces the contents.
  {
    port::FileWriter writer;
    BT_CHECK(t, writer.open(kFileName, false) == bt::Status::kOk);
    BT_CHECK(t, bt::write_bytes(writer.sink(), written, 10U) == bt::Status::kOk);
    BT_CHECK(t, writer.commit() == bt::Status::kOk);
  }
  BT_CHECK(t, read_back(kFileName, read, sizeof(read), false) == 10L);

  // Errors are values.
  port::FileReader missing;
  BT_CHECK(t, missing.open("burtorch_no_such_dir/none.bin") == bt::Status::kIoError);
  port::FileWriter nowhere;
  BT_CHECK(t, nowhere.open("burtorch_no_such_dir/none.bin", true) == bt::Status::kIoError);
  port::FileWriter unopened;
  BT_CHECK(t, unopened.commit() == bt::Status::kInvalidArgument);
}

const bt_test::TestCase kCases[] = {
    {"clock_is_monotonic_and_advances", clock_is_monotonic_and_advances},
    {"clock_survives_counter_wrap", clock_survives_counter_wrap},
    {"files_round_trip", files_round_trip},
};

}  // namespace

BT_TEST_MAIN("port", kCases)
