// SPDX-License-Identifier: Apache-2.0
// Host only: format_float against the C library's printf("%.*g") of the
// float widened to double (exact: every float is a double; glibc converts
// exactly and rounds to nearest, ties to even), rewritten into the
// library's layout by printf_layout.hpp's parser, over millions of floats:
// every 509th bit pattern of all 2^32 (every binade, subnormals, NaN and
// infinities), every float of the binades [1, 2) and [2^-10, 2^-9) at 6
// significant digits (what a loss is printed at), every subnormal with a
// stride, decimals near ties and exact binary ties, powers of two and ten
// and their neighbours; every precision 1..9. 9-digit output must read back
// (strtof) as the same float. Fixed patterns and seeds: every run checks
// the same values.
#include <burtorch/tools/stream.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "harness.hpp"
#include "printf_layout.hpp"

namespace bt = burtorch;

namespace {

// A Debug build (the sanitizers' preset) checks every kThin-th value of the
// three long sweeps: the sanitizers look for memory and undefined-behaviour
// errors, which do not depend on the value, and the Release build checks
// every value. The other checks run whole in both.
#ifdef BT_TEST_THIN_SWEEP
constexpr std::uint32_t kThin = 7U;
#else
constexpr std::uint32_t kThin = 1U;
#endif

struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }
  int between(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
};

float from_bits(std::uint32_t bits) {
  float v = 0.0F;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

std::uint32_t to_bits(float v) {
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

struct Tally {
  long compared = 0;
  long mismatched = 0;
  long round_trips = 0;
  long round_trip_failures = 0;
};

void compare(Tally& tally, float v, int significant) {
  char got[24];
  char want[64];
  const std::size_t n = bt::format_float(v, got, sizeof(got), significant);
  printf_layout::reference(static_cast<double>(v), significant, want, sizeof(want));
  ++tally.compared;
  if ((n != std::strlen(want)) || (std::strcmp(got, want) != 0)) {
    if (tally.mismatched < 10) {
      std::printf("    %.9g (bits %08x) at %d digits: got '%s', want '%s'\n", static_cast<double>(v),
                  static_cast<unsigned>(to_bits(v)), significant, got, want);
    }
    ++tally.mismatched;
  }
  if ((significant == 9) && !std::isnan(v)) {
    ++tally.round_trips;
    if (to_bits(std::strtof(got, nullptr)) != to_bits(v)) {
      if (tally.round_trip_failures < 10) {
        std::printf("    %.9g does not read back from '%s'\n", static_cast<double>(v), got);
      }
      ++tally.round_trip_failures;
    }
  }
}

void compare_all_precisions(Tally& tally, float v) {
  for (int significant = 1; significant <= 9; ++significant) {
    compare(tally, v, significant);
  }
}

void report(bt_test::Context& t, const Tally& tally, long at_least) {
  std::printf("  %s: %ld compared, %ld mismatches; %ld 9-digit read-backs, %ld failed\n", t.test_name, tally.compared,
              tally.mismatched, tally.round_trips, tally.round_trip_failures);
  std::fflush(stdout);
  BT_CHECK(t, tally.compared >= at_least);
  BT_CHECK(t, tally.mismatched == 0);
  BT_CHECK(t, tally.round_trip_failures == 0);
}

// Every 509th of the 2^32 bit patterns (509 is prime: all residues of the
// low bits come up), precisions cycling 1..9.
void strided_bit_patterns(bt_test::Context& t) {
  Tally tally;
  long i = 0;
  for (std::uint64_t bits = 7U; bits <= 0xFFFFFFFFULL; bits += 509U * kThin, ++i) {
    compare(tally, from_bits(static_cast<std::uint32_t>(bits)), 1 + static_cast<int>(i % 9));
  }
  report(t, tally, 8000000L / static_cast<long>(kThin));
}

// Every float of two binades at 6 digits (the consoles' loss lines).
void whole_binades(bt_test::Context& t) {
  Tally tally;
  const int binades[] = {127, 117};  // [1, 2) and [2^-10, 2^-9)
  for (const int biased : binades) {
    for (std::uint32_t m = 0U; m < (1U << 23U); m += kThin) {
      compare(tally, from_bits((static_cast<std::uint32_t>(biased) << 23U) | m), 6);
    }
  }
  report(t, tally, (2L << 23) / static_cast<long>(kThin));
}

// Subnormals and the smallest normal binade: the longest fractions.
void tiny_values(bt_test::Context& t) {
  Tally tally;
  long i = 0;
  for (std::uint32_t bits = 1U; bits < (2U << 23U); bits += 13U * kThin, ++i) {
    compare(tally, from_bits(bits | ((i % 2) != 0 ? 0x80000000U : 0U)), 1 + static_cast<int>(i % 9));
  }
  report(t, tally, 1000000L / static_cast<long>(kThin));
}

// The float nearest to d.ddd...d5 x 10^e (the 5 one digit past the
// precision) lies just above, just below or on the tie.
void near_decimal_ties(bt_test::Context& t) {
  Random r{0x5EEDF001ULL};
  Tally tally;
  for (long i = 0; i < 400000; ++i) {
    const int significant = 1 + static_cast<int>(i % 9);
    char text[48];
    std::size_t n = 0U;
    for (int k = 0; k < significant; ++k) {
      text[n++] = static_cast<char>('0' + ((k == 0) ? r.between(1, 9) : r.between(0, 9)));
      if (k == 0) {
        text[n++] = '.';
      }
    }
    text[n++] = '5';
    const int exponent = ((i % 2) == 0) ? r.between(-7, 12) : r.between(-45, 38);
    std::snprintf(&text[n], sizeof(text) - n, "e%d", exponent);
    compare(tally, std::strtof(text, nullptr), significant);
  }
  report(t, tally, 400000);
}

// odd * 2^-j has exactly j decimal places, the last a 5: exact ties at one
// digit fewer (ties to even).
void exact_binary_ties(bt_test::Context& t) {
  Random r{0x5EEDF002ULL};
  Tally tally;
  for (long i = 0; i < 40000; ++i) {
    const int bits = r.between(1, 24);
    const std::uint32_t odd = (static_cast<std::uint32_t>(r.next() >> (64 - bits)) | 1U);
    compare_all_precisions(tally, std::ldexp(static_cast<float>(odd), r.between(-40, 30)));
  }
  float five_power = 5.0F;
  for (int k = 1; k <= 10; ++k) {
    for (int j = -60; j <= 60; ++j) {
      compare_all_precisions(tally, std::ldexp(five_power, j));
    }
    five_power *= 5.0F;
  }
  report(t, tally, 370000);
}

// Powers of two and of ten, their neighbours, and the extremes.
void boundaries(bt_test::Context& t) {
  Tally tally;
  for (int e = -149; e <= 127; ++e) {
    const float v = std::ldexp(1.0F, e);
    compare_all_precisions(tally, v);
    compare_all_precisions(tally, std::nextafter(v, 0.0F));
    compare_all_precisions(tally, -std::nextafter(v, 2.0F * v));
  }
  for (int e = -45; e <= 38; ++e) {
    char text[16];
    std::snprintf(text, sizeof(text), "1e%d", e);
    const float v = std::strtof(text, nullptr);
    compare_all_precisions(tally, v);
    compare_all_precisions(tally, std::nextafter(v, 0.0F));
    compare_all_precisions(tally, std::nextafter(v, std::numeric_limits<float>::infinity()));
  }
  const float extremes[] = {0.0F,
                            -0.0F,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            16777215.0F,
                            16777216.0F,
                            0.1F,
                            1.0F / 3.0F,
                            9.5F,
                            0.95F,
                            0.00001F,
                            123456789.0F};
  for (const float v : extremes) {
    compare_all_precisions(tally, v);
  }
  report(t, tally, 9000);
}

// Precisions outside 1..9 are clamped; the longest output fits in 17
// bytes, 16 are refused; the same text as format_double of the float.
void precision_capacity_and_double(bt_test::Context& t) {
  char a[24];
  char b[32];
  Random r{0x5EEDF003ULL};
  long mismatched = 0;
  for (int i = 0; i < 100000; ++i) {
    const float v = from_bits(static_cast<std::uint32_t>(r.next()));
    static_cast<void>(bt::format_float(v, a, sizeof(a), 0));
    static_cast<void>(bt::format_float(v, b, sizeof(b), 1));
    mismatched += (std::strcmp(a, b) != 0) ? 1 : 0;
    static_cast<void>(bt::format_float(v, a, sizeof(a), 40));
    static_cast<void>(bt::format_float(v, b, sizeof(b), 9));
    mismatched += (std::strcmp(a, b) != 0) ? 1 : 0;
    char exact[17];
    mismatched += ((bt::format_float(v, exact, sizeof(exact), 9) == std::strlen(b)) ? 0 : 1);
    mismatched += ((bt::format_float(v, exact, 16U, 9) == 0U) ? 0 : 1);
    const int digits = 1 + (i % 9);
    static_cast<void>(bt::format_float(v, a, sizeof(a), digits));
    static_cast<void>(bt::format_double(static_cast<double>(v), b, sizeof(b), digits));
    mismatched += (std::strcmp(a, b) != 0) ? 1 : 0;
  }
  BT_CHECK(t, mismatched == 0);
}

// format_double given a float (its float form: no conversion to double)
// writes what format_double writes for the float widened by the compiler,
// at every precision 1..17 (past 9 the widened float's exact digits), and
// refuses the same capacities.
void format_double_of_float(bt_test::Context& t) {
  char a[32];
  char b[32];
  Random r{0x5EEDF004ULL};
  long mismatched = 0;
  long checked = 0;
  const auto compare = [&](float v, int digits) {
    const std::size_t na = bt::format_double(v, a, sizeof(a), digits);  // the float overload
    const std::size_t nb = bt::format_double(static_cast<double>(v), b, sizeof(b), digits);
    mismatched += ((na == nb) && (std::strcmp(a, b) == 0)) ? 0 : 1;
    ++checked;
  };
  for (int i = 0; i < 200000; ++i) {
    compare(from_bits(static_cast<std::uint32_t>(r.next())), 1 + (i % 17));
  }
  for (std::uint32_t m = 1U; m < 0x800000U; m = (m * 3U) + 1U) {  // subnormals
    compare(from_bits(m), 17);
    compare(from_bits(m | 0x80000000U), 9);
  }
  const float extremes[] = {0.0F, -0.0F, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 0.1F};
  for (const float v : extremes) {
    for (int digits = 0; digits <= 18; ++digits) {
      compare(v, digits);
    }
  }
  BT_CHECK(t, mismatched == 0);
  BT_CHECK(t, checked > 200000);
  // format_double's minimum capacity, 26, for the float form as well.
  BT_CHECK(t, bt::format_double(0.1F, a, 25U, 6) == 0U);
  BT_CHECK(t, bt::format_double(0.1F, a, 26U, 6) == 3U);
  // An integer argument still takes the double form.
  BT_CHECK(t, (bt::format_double(7, a, sizeof(a), 6) == 1U) && (std::strcmp(a, "7") == 0));
}

const bt_test::TestCase kCases[] = {
    {"strided_bit_patterns", strided_bit_patterns},
    {"whole_binades", whole_binades},
    {"tiny_values", tiny_values},
    {"near_decimal_ties", near_decimal_ties},
    {"exact_binary_ties", exact_binary_ties},
    {"boundaries", boundaries},
    {"precision_capacity_and_double", precision_capacity_and_double},
    {"format_double_of_float", format_double_of_float},
};

}  // namespace

BT_TEST_MAIN("format_float", kCases)
