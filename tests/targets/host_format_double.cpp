// SPDX-License-Identifier: Apache-2.0
// Host only: format_double against the C library's printf("%.*g") (glibc
// converts exactly and rounds to nearest, ties to even) over millions of
// doubles: random bit patterns across the whole range (subnormals, NaN and
// infinities included), random values whose decimal exponent is -5..16,
// short decimals and decimals that end in a 5 one digit past the precision
// (nearest doubles to decimal ties), exact binary ties, powers of two and
// ten and their neighbours, for every precision 1..17. The reference string
// is rewritten into the library's layout (positional for exponents
// -5..significant-1, exponent without '+' or leading zeros) by a small
// parser below, independent of the library's code; the whole strings are
// compared (the parser: printf_layout.hpp). 17-digit output must also read
// back (strtod) as the same double.
// Fixed seeds: every run checks the same values.
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

// SplitMix64: a fixed, portable sequence.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
  }
  // Uniform in [lo, hi].
  int between(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
};

double from_bits(std::uint64_t bits) {
  double v = 0.0;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

std::uint64_t to_bits(double v) {
  std::uint64_t bits = 0U;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

struct Tally {
  long compared = 0;
  long mismatched = 0;
  long round_trips = 0;
  long round_trip_failures = 0;
};

void compare(Tally& tally, double v, int significant) {
  char got[32];
  char want[64];
  const std::size_t n = bt::format_double(v, got, sizeof(got), significant);
  printf_layout::reference(v, significant, want, sizeof(want));
  ++tally.compared;
  if ((n != std::strlen(want)) || (std::strcmp(got, want) != 0)) {
    if (tally.mismatched < 10) {
      std::printf("    %.17g (bits %016llx) at %d digits: got '%s', want '%s'\n", v,
                  static_cast<unsigned long long>(to_bits(v)), significant, got, want);
    }
    ++tally.mismatched;
  }
  if ((significant == 17) && !std::isnan(v)) {
    ++tally.round_trips;
    if (to_bits(std::strtod(got, nullptr)) != to_bits(v)) {
      if (tally.round_trip_failures < 10) {
        std::printf("    %.17g does not read back from '%s'\n", v, got);
      }
      ++tally.round_trip_failures;
    }
  }
}

void compare_all_precisions(Tally& tally, double v) {
  for (int significant = 1; significant <= 17; ++significant) {
    compare(tally, v, significant);
  }
}

void report(bt_test::Context& t, const Tally& tally, long at_least) {
  std::printf("  %s: %ld compared, %ld mismatches; %ld 17-digit read-backs, %ld failed\n", t.test_name,
              tally.compared, tally.mismatched, tally.round_trips, tally.round_trip_failures);
  std::fflush(stdout);  // before the harness's own lines
  BT_CHECK(t, tally.compared >= at_least);
  BT_CHECK(t, tally.mismatched == 0);
  BT_CHECK(t, tally.round_trip_failures == 0);
}

// Any 64-bit pattern: every binade, subnormals, NaN and infinities.
void random_bit_patterns(bt_test::Context& t) {
  Random r{0x5EED0001ULL};
  Tally tally;
  for (long i = 0; i < 1000000; ++i) {
    compare(tally, from_bits(r.next()), 1 + static_cast<int>(i % 17));
  }
  report(t, tally, 1000000);
}

// Only subnormals and the smallest normal binades (the longest fractions).
void random_tiny_values(bt_test::Context& t) {
  Random r{0x5EED0002ULL};
  Tally tally;
  for (long i = 0; i < 200000; ++i) {
    const std::uint64_t exponent = r.next() % 4U;  // biased 0 (subnormal) .. 3
    const std::uint64_t bits = (r.next() & 0x800FFFFFFFFFFFFFULL) | (exponent << 52U);
    compare(tally, from_bits(bits), 1 + static_cast<int>(i % 17));
  }
  report(t, tally, 200000);
}

// Decimal exponents -5..16 (what DOT labels and plots mostly show): binary
// exponents -17..56, random 52-bit fractions.
void random_everyday_values(bt_test::Context& t) {
  Random r{0x5EED0003ULL};
  Tally tally;
  for (long i = 0; i < 1000000; ++i) {
    const std::uint64_t biased = static_cast<std::uint64_t>(1023 + r.between(-17, 56));
    const std::uint64_t bits = (r.next() & 0x800FFFFFFFFFFFFFULL) | (biased << 52U);
    compare(tally, from_bits(bits), 1 + static_cast<int>(i % 17));
  }
  report(t, tally, 1000000);
}

// A random decimal with `length` digits (first nonzero) and the given
// decimal exponent, read by strtod: the double nearest to it.
double nearest_to_decimal(Random& r, int length, int exponent, char last) {
  char text[64];
  std::size_t n = 0U;
  for (int k = 0; k < length; ++k) {
    const int digit = (k == 0) ? r.between(1, 9) : r.between(0, 9);
    text[n++] = static_cast<char>('0' + digit);
    if (k == 0) {
      text[n++] = '.';
    }
  }
  if (last != '\0') {
    text[n++] = last;
  }
  std::snprintf(&text[n], sizeof(text) - n, "e%d", exponent);
  return std::strtod(text, nullptr);
}

// Short decimals such as 0.1, 2.675, 1e23: exactly their digits come back
// at enough precision; at less, they round near decimal ties.
void short_decimals(bt_test::Context& t) {
  Random r{0x5EED0004ULL};
  Tally tally;
  for (long i = 0; i < 400000; ++i) {
    const int exponent = ((i % 2) == 0) ? r.between(-7, 18) : r.between(-324, 308);
    const double v = nearest_to_decimal(r, r.between(1, 17), exponent, '\0');
    compare(tally, v, 1 + static_cast<int>(i % 17));
  }
  report(t, tally, 400000);
}

// d.ddd...d5 x 10^e with the 5 one digit past the precision: the double
// nearest to a decimal tie lies just above it, just below it, or on it.
void near_decimal_ties(bt_test::Context& t) {
  Random r{0x5EED0005ULL};
  Tally tally;
  for (long i = 0; i < 400000; ++i) {
    const int significant = 1 + static_cast<int>(i % 17);
    const int exponent = ((i % 2) == 0) ? r.between(-7, 22) : r.between(-324, 308);
    const double v = nearest_to_decimal(r, significant, exponent, '5');
    compare(tally, v, significant);
  }
  report(t, tally, 400000);
}

// r * 2^-j (r odd) has exactly j decimal places, the last a 5: at one digit
// fewer than it has, every such value is an exact tie (ties to even). Also
// odd multiples of 5 x 10^k scaled by powers of two.
void exact_binary_ties(bt_test::Context& t) {
  Random r{0x5EED0006ULL};
  Tally tally;
  for (long i = 0; i < 40000; ++i) {
    const int bits = r.between(1, 53);
    const std::uint64_t odd = ((r.next() >> (64 - bits)) | 1U);
    compare_all_precisions(tally, std::ldexp(static_cast<double>(odd), r.between(-60, 40)));
  }
  // Integers ending in 5 below 2^53, and 5^k x 2^j.
  for (long i = 0; i < 20000; ++i) {
    const std::uint64_t n = ((r.next() >> 11U) / 10U) * 10U + 5U;
    compare_all_precisions(tally, static_cast<double>(n));
  }
  double five_power = 5.0;
  for (int k = 1; k <= 22; ++k) {
    for (int j = -80; j <= 80; ++j) {
      compare_all_precisions(tally, std::ldexp(five_power, j));
    }
    five_power *= 5.0;
  }
  report(t, tally, 1000000);
}

// Powers of two and of ten, their neighbours, and the extremes.
void boundaries(bt_test::Context& t) {
  Tally tally;
  for (int e = -1074; e <= 1023; ++e) {
    const double v = std::ldexp(1.0, e);
    compare_all_precisions(tally, v);
    compare_all_precisions(tally, std::nextafter(v, 0.0));
    compare_all_precisions(tally, std::nextafter(v, 2.0 * v));
  }
  for (int e = -323; e <= 308; ++e) {
    char text[16];
    std::snprintf(text, sizeof(text), "1e%d", e);
    const double v = std::strtod(text, nullptr);
    compare_all_precisions(tally, v);
    compare_all_precisions(tally, -std::nextafter(v, 0.0));
    compare_all_precisions(tally, std::nextafter(v, std::numeric_limits<double>::infinity()));
  }
  const double extremes[] = {0.0,
                             -0.0,
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::min(),
                             std::nextafter(std::numeric_limits<double>::min(), 0.0),
                             std::numeric_limits<double>::max(),
                             -std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             9007199254740991.0,
                             9007199254740992.0,
                             18446744073709551616.0,
                             0.1,
                             1.0 / 3.0,
                             2.675,
                             0.000015,
                             99999999999999999.0,
                             9.5,
                             0.95,
                             0.00001};
  for (const double v : extremes) {
    compare_all_precisions(tally, v);
  }
  report(t, tally, 139000);
}

// Precisions outside 1..17 are clamped; small buffers get nothing.
void precision_and_capacity(bt_test::Context& t) {
  char a[32];
  char b[32];
  Random r{0x5EED0007ULL};
  long mismatched = 0;
  for (int i = 0; i < 10000; ++i) {
    const double v = from_bits(r.next());
    static_cast<void>(bt::format_double(v, a, sizeof(a), 0));
    static_cast<void>(bt::format_double(v, b, sizeof(b), 1));
    mismatched += (std::strcmp(a, b) != 0) ? 1 : 0;
    static_cast<void>(bt::format_double(v, a, sizeof(a), 40));
    static_cast<void>(bt::format_double(v, b, sizeof(b), 17));
    mismatched += (std::strcmp(a, b) != 0) ? 1 : 0;
    // The longest output fits in 26 bytes; 25 are refused.
    char exact[26];
    mismatched += ((bt::format_double(v, exact, sizeof(exact), 17) == std::strlen(b)) ? 0 : 1);
    mismatched += ((bt::format_double(v, exact, 25U, 17) == 0U) ? 0 : 1);
  }
  BT_CHECK(t, mismatched == 0);
}

const bt_test::TestCase kCases[] = {
    {"random_bit_patterns", random_bit_patterns},
    {"random_tiny_values", random_tiny_values},
    {"random_everyday_values", random_everyday_values},
    {"short_decimals", short_decimals},
    {"near_decimal_ties", near_decimal_ties},
    {"exact_binary_ties", exact_binary_ties},
    {"boundaries", boundaries},
    {"precision_and_capacity", precision_and_capacity},
};

}  // namespace

BT_TEST_MAIN("format_double", kCases)
