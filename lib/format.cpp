// SPDX-License-Identifier: Apache-2.0
// Numbers as text without libc stdio: format_unsigned, format_double and
// format_float (tools/stream.hpp). The digits are exact: a finite double or float
// is m * 2^e, whose decimal expansion is finite, and the digits come from
// integer arithmetic on limbs, a chunk of decimal digits at a time, rounded
// once at the end (to nearest, ties to even). format_float's limbs are 16
// bits wide and its chunks 4 digits, so it needs no 64-bit division and no
// floating-point arithmetic: a single-precision firmware links no
// soft-double code and no libgcc long division for it.
#include <cstring>

#include "burtorch/tools/stream.hpp"

namespace burtorch {
namespace {

// The decimal digits of an unsigned integer, most significant first, and a
// NUL; the length, or 0 if they do not fit.
template <class U>
std::size_t format_integer(U value, char* out, std::size_t capacity) noexcept {
  char digits[20];
  std::size_t n = 0U;
  do {
    digits[n] = static_cast<char>('0' + static_cast<int>(value % 10U));
    ++n;
    value /= 10U;
  } while (value != 0U);
  if (n >= capacity) {
    return 0U;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    out[i] = digits[n - 1U - i];
  }
  out[n] = '\0';
  return n;
}

// The first `wanted` significant digits of a number fed most significant
// digit first, the digit after them, and whether any later digit is
// nonzero. Kept: an unsigned type that holds `wanted` digits.
template <class Kept>
struct DigitCollector {
  Kept kept = 0U;       // the significant digits so far, as an integer
  int wanted = 1;
  int count = 0;        // digits in `kept`
  int next = -1;        // the digit after them (-1: not reached yet)
  bool sticky = false;  // a nonzero digit after `next`
  int exponent = 0;     // decimal exponent of the first significant digit
};

template <class Kept>
bool collector_full(const DigitCollector<Kept>& c) noexcept {
  return c.next >= 0;
}

// `chunk` holds the digits of one chunk, `top` is 10^(digits per chunk -
// 1), and its first digit is worth 10^position.
template <class Kept>
void push_chunk(DigitCollector<Kept>& c, std::uint32_t chunk, int position, std::uint32_t top) noexcept {
  if ((chunk == 0U) && ((c.count == 0) || collector_full(c))) {
    return;  // leading zeros, or zeros past the rounding digit
  }
  std::uint32_t rest = chunk;
  int at = position + 1;
  // The chunk's digits, most significant first.
  for (std::uint32_t divisor = top; divisor != 0U; divisor /= 10U) {
    const std::uint32_t digit = rest / divisor;
    rest %= divisor;
    --at;  // this digit is worth 10^at
    if ((c.count == 0) && (digit == 0U)) {
      continue;  // not significant yet
    }
    if (c.count == 0) {
      c.exponent = at;
    }
    if (c.count < c.wanted) {
      c.kept = static_cast<Kept>((c.kept * 10U) + digit);
      ++c.count;
    } else if (c.next < 0) {
      c.next = static_cast<int>(digit);
    } else if (digit != 0U) {
      c.sticky = true;
    } else {
      // a zero after the rounding digit changes nothing
    }
  }
}

// The collected digits rounded to `wanted` (to nearest, ties to even),
// trailing zeros dropped, into digits[]; returns their count, *exponent
// the decimal exponent of the first.
template <class Kept>
std::size_t rounded_digits(DigitCollector<Kept>& c, char* digits, std::size_t capacity, int* exponent) noexcept {
  const bool odd = (c.kept % 2U) != 0U;
  if ((c.next > 5) || ((c.next == 5) && (c.sticky || odd))) {
    ++c.kept;
    Kept limit = 1U;
    for (int i = 0; i < c.wanted; ++i) {
      limit = static_cast<Kept>(limit * 10U);
    }
    if (c.kept == limit) {  // 9.96 to two digits: 10, i.e. 1.0 one decimal place up
      c.kept = static_cast<Kept>(c.kept / 10U);
      ++c.exponent;
    }
  }
  std::size_t last = format_integer(c.kept, digits, capacity);
  while ((last > 1U) && (digits[last - 1U] == '0')) {
    --last;
  }
  *exponent = c.exponent;
  return last;
}

// --- doubles: 32-bit limbs, nine digits (one 10^9 chunk) at a time -------
constexpr std::uint32_t kChunk = 1000000000U;  // 10^9
constexpr int kChunkDigits = 9;
// The largest numbers held: a fraction with up to 1074 binary places, scaled
// to whole limbs (34 * 32 = 1088 bits), and an integer below 2^1024 (32 limbs).
constexpr std::size_t kLimbs = 34U;
constexpr int kLimbBits = 32;

// limbs[0..kLimbs) = m * 2^shift (m < 2^53, shift <= 971); returns the
// number of limbs up to the highest nonzero one.
std::size_t set_shifted(std::uint32_t* limbs, std::uint64_t m, int shift) noexcept {
  for (std::size_t i = 0U; i < kLimbs; ++i) {
    limbs[i] = 0U;
  }
  const std::size_t word = static_cast<std::size_t>(shift / kLimbBits);
  const unsigned bits = static_cast<unsigned>(shift % kLimbBits);
  const std::uint32_t low = static_cast<std::uint32_t>(m & 0xFFFFFFFFU);
  const std::uint32_t high = static_cast<std::uint32_t>(m >> 32U);
  limbs[word] = low << bits;
  limbs[word + 1U] = high << bits;
  if (bits > 0U) {
    limbs[word + 1U] |= low >> (32U - bits);
    limbs[word + 2U] = high >> (32U - bits);
  }
  std::size_t length = word + 3U;
  while ((length > 0U) && (limbs[length - 1U] == 0U)) {
    --length;
  }
  return length;
}

// The whole part of a number as its three most significant 10^9 chunks
// (top[0] first, leading zero chunks allowed), whether any chunk below them
// is nonzero, and the number of chunks (the decimal exponent of top[0]'s
// first digit is 9 * count - 1).
struct WholePart {
  std::uint32_t top[3] = {0U, 0U, 0U};
  bool lower_nonzero = false;
  int count = 3;
};

// Below 2^64: exactly three chunks.
void split_whole(WholePart& w, std::uint64_t whole) noexcept {
  std::uint64_t power = std::uint64_t{kChunk} * kChunk;
  for (std::size_t i = 0U; i < 3U; ++i) {
    w.top[i] = static_cast<std::uint32_t>((whole / power) % kChunk);
    power /= kChunk;
  }
}

// m * 2^e for e > 11 (at least 2^64, so at least three chunks): divides by
// 10^9 until nothing is left, keeping the last three remainders.
void split_big_integer(WholePart& w, std::uint32_t* limbs, std::uint64_t m, int e) noexcept {
  std::size_t length = set_shifted(limbs, m, e);
  w.count = 0;
  while (length > 0U) {
    std::uint32_t remainder = 0U;
    for (std::size_t i = length; i > 0U; --i) {
      const std::uint64_t current = (static_cast<std::uint64_t>(remainder) << 32U) | limbs[i - 1U];
      limbs[i - 1U] = static_cast<std::uint32_t>(current / kChunk);
      remainder = static_cast<std::uint32_t>(current % kChunk);
    }
    while ((length > 0U) && (limbs[length - 1U] == 0U)) {
      --length;
    }
    w.lower_nonzero = w.lower_nonzero || (w.top[2] != 0U);
    w.top[2] = w.top[1];
    w.top[1] = w.top[0];
    w.top[0] = remainder;
    ++w.count;
  }
}

// A fraction below 1 as limbs[low..high) / 2^(32 * words); each 10^9 chunk
// of digits is what a multiplication by 10^9 carries past the binary point.
// Each multiplication adds nine trailing zero bits, so the fraction ends
// after at most ceil(32 * words / 9) chunks.
struct Fraction {
  std::uint32_t* limbs;
  std::size_t words;
  std::size_t low;   // limbs below `low` are zero and stay zero
  std::size_t high;  // one past the highest nonzero limb
};

// The fraction of m * 2^-k (1 <= k <= 1074, m < 2^53).
Fraction make_fraction(std::uint32_t* limbs, std::uint64_t m, int k) noexcept {
  const std::uint64_t bits = (k >= 64) ? m : (m & ((std::uint64_t{1} << static_cast<unsigned>(k)) - 1U));
  const std::size_t words = static_cast<std::size_t>((k + (kLimbBits - 1)) / kLimbBits);
  Fraction f{limbs, words, 0U, set_shifted(limbs, bits, (static_cast<int>(words) * kLimbBits) - k)};
  while ((f.low < f.high) && (limbs[f.low] == 0U)) {
    ++f.low;
  }
  return f;
}

std::uint32_t next_fraction_chunk(Fraction& f) noexcept {
  std::uint32_t carry = 0U;
  for (std::size_t i = f.low; i < f.high; ++i) {
    const std::uint64_t product = (static_cast<std::uint64_t>(f.limbs[i]) * kChunk) + carry;
    f.limbs[i] = static_cast<std::uint32_t>(product & 0xFFFFFFFFU);
    carry = static_cast<std::uint32_t>(product >> 32U);
  }
  std::uint32_t chunk = 0U;
  if (f.high < f.words) {
    f.limbs[f.high] = carry;  // still below 1: this chunk is all zeros
    ++f.high;
  } else {
    chunk = carry;  // what moved past the binary point
  }
  while ((f.high > f.low) && (f.limbs[f.high - 1U] == 0U)) {
    --f.high;
  }
  while ((f.low < f.high) && (f.limbs[f.low] == 0U)) {
    ++f.low;
  }
  return chunk;
}

// Chunk i of a number, most significant first: the whole part's three,
// then the fraction's.
std::uint32_t chunk_at(const WholePart& w, Fraction& f, std::size_t i) noexcept {
  return (i < 3U) ? w.top[i] : next_fraction_chunk(f);
}

// The significant digits of a positive finite double (bits: its IEEE-754
// encoding), `wanted` of them correctly rounded (to nearest, ties to even),
// trailing zeros dropped. Returns the digit count; *exponent is the decimal
// exponent of the first digit.
std::size_t double_digits(std::uint64_t bits, int wanted, char* digits, std::size_t capacity, int* exponent) noexcept {
  constexpr std::uint64_t kHidden = std::uint64_t{1} << 52U;
  const int biased = static_cast<int>((bits >> 52U) & 0x7FFU);
  std::uint64_t m = bits & (kHidden - 1U);
  int e = -1074;  // subnormal: m * 2^-1074
  if (biased != 0) {
    m |= kHidden;
    e = biased - 1075;
  }
  // m * 2^e = whole part + fraction (the fraction is zero for e >= 0).
  std::uint32_t limbs[kLimbs];
  WholePart whole;
  Fraction fraction{limbs, 0U, 0U, 0U};
  if (e > 11) {
    split_big_integer(whole, limbs, m, e);
  } else if (e >= 0) {
    split_whole(whole, m << static_cast<unsigned>(e));
  } else {
    split_whole(whole, (e <= -64) ? 0U : (m >> static_cast<unsigned>(-e)));
    fraction = make_fraction(limbs, m, -e);
  }
  // The chunks most significant first: the whole part's top three (at least
  // 19 significant digits when more chunks follow them), then the
  // fraction's, until the rounding digit is known or the fraction ends.
  DigitCollector<std::uint64_t> c;
  c.wanted = wanted;
  int position = (whole.count * kChunkDigits) - 1;  // decimal exponent of the chunk's first digit
  for (std::size_t i = 0U; (i < 3U) || ((fraction.low < fraction.high) && !collector_full(c)); ++i) {
    push_chunk(c, chunk_at(whole, fraction, i), position, kChunk / 10U);
    position -= kChunkDigits;
  }
  c.sticky = c.sticky || whole.lower_nonzero || (fraction.low < fraction.high);
  return rounded_digits(c, digits, capacity, exponent);
}

// --- floats: 16-bit limbs (held in 32-bit words), four digits at a time --
// Every product and every partial dividend stays below 2^31: 32-bit
// arithmetic only.
constexpr std::uint32_t kSmallChunk = 10000U;  // 10^4
constexpr int kSmallChunkDigits = 4;
// A float is m * 2^e with m < 2^24 and -149 <= e <= 104: an integer below
// 2^128 or a fraction of at most 149 binary places, 10 limbs of 16 bits.
constexpr std::size_t kSmallLimbs = 10U;
constexpr unsigned kSmallLimbBits = 16U;
constexpr std::uint32_t kSmallLimbMask = 0xFFFFU;

// limbs[0..kSmallLimbs) = m * 2^shift (m < 2^24, shift <= 136); returns the
// number of limbs up to the highest nonzero one.
std::size_t set_shifted_small(std::uint32_t* limbs, std::uint32_t m, unsigned shift) noexcept {
  for (std::size_t i = 0U; i < kSmallLimbs; ++i) {
    limbs[i] = 0U;
  }
  const std::size_t word = shift / kSmallLimbBits;
  const unsigned bits = shift % kSmallLimbBits;
  // m's two limbs, shifted left by `bits` into three (each below 2^31).
  const std::uint32_t low = (m & kSmallLimbMask) << bits;
  const std::uint32_t high = (m >> kSmallLimbBits) << bits;
  limbs[word] = low & kSmallLimbMask;
  const std::uint32_t middle = (low >> kSmallLimbBits) + high;
  limbs[word + 1U] = middle & kSmallLimbMask;
  if ((word + 2U) < kSmallLimbs) {
    limbs[word + 2U] = middle >> kSmallLimbBits;
  }
  std::size_t length = (word + 3U < kSmallLimbs) ? (word + 3U) : kSmallLimbs;
  while ((length > 0U) && (limbs[length - 1U] == 0U)) {
    --length;
  }
  return length;
}

// The whole part of m * 2^e (m < 2^24) as 10^4 chunks, least significant
// first, into whole[] (below 2^128: at most ten chunks); returns how many.
std::size_t float_whole_chunks(std::uint32_t* limbs, std::uint32_t m, int e, std::uint32_t* whole) noexcept {
  std::size_t chunks = 0U;
  const std::uint32_t whole_part = (e >= 0) ? 0U : ((e <= -24) ? 0U : (m >> static_cast<unsigned>(-e)));
  std::size_t length = set_shifted_small(limbs, (e >= 0) ? m : whole_part, (e >= 0) ? static_cast<unsigned>(e) : 0U);
  while (length > 0U) {
    std::uint32_t remainder = 0U;
    for (std::size_t i = length; i > 0U; --i) {
      const std::uint32_t current = (remainder << kSmallLimbBits) | limbs[i - 1U];  // below 10^4 * 2^16
      limbs[i - 1U] = current / kSmallChunk;
      remainder = current % kSmallChunk;
    }
    while ((length > 0U) && (limbs[length - 1U] == 0U)) {
      --length;
    }
    whole[chunks] = remainder;
    ++chunks;
  }
  return chunks;
}

// The significant digits of a positive finite float (bits: its IEEE-754
// encoding), as double_digits().
std::size_t float_digits(std::uint32_t bits, int wanted, char* digits, std::size_t capacity, int* exponent) noexcept {
  constexpr std::uint32_t kHidden = std::uint32_t{1} << 23U;
  const int biased = static_cast<int>((bits >> 23U) & 0xFFU);
  std::uint32_t m = bits & (kHidden - 1U);
  int e = -149;  // subnormal: m * 2^-149
  if (biased != 0) {
    m |= kHidden;
    e = biased - 150;
  }
  std::uint32_t limbs[kSmallLimbs];
  std::uint32_t whole[kSmallLimbs] = {};
  const std::size_t chunks = float_whole_chunks(limbs, m, e, whole);
  DigitCollector<std::uint32_t> c;
  c.wanted = wanted;
  for (std::size_t i = chunks; i > 0U; --i) {
    push_chunk(c, whole[i - 1U], (static_cast<int>(i) * kSmallChunkDigits) - 1, kSmallChunk / 10U);
  }
  // The fraction m mod 2^k over 2^k (k = -e), scaled to whole limbs: each
  // multiplication by 10^4 carries the next four digits past the binary
  // point.
  std::size_t high = 0U;
  if (e < 0) {
    const unsigned k = static_cast<unsigned>(-e);
    const std::uint32_t fraction = (k >= 24U) ? m : (m & ((std::uint32_t{1} << k) - 1U));
    const std::size_t words = (k + (kSmallLimbBits - 1U)) / kSmallLimbBits;
    high = set_shifted_small(limbs, fraction, static_cast<unsigned>((words * kSmallLimbBits) - k));
    int position = -1;  // the decimal exponent of the next chunk's first digit
    while ((high > 0U) && !collector_full(c)) {
      std::uint32_t carry = 0U;
      for (std::size_t i = 0U; i < words; ++i) {
        const std::uint32_t product = (limbs[i] * kSmallChunk) + carry;  // below 2^16 * 10^4 + 10^4
        limbs[i] = product & kSmallLimbMask;
        carry = product >> kSmallLimbBits;
      }
      push_chunk(c, carry, position, kSmallChunk / 10U);
      position -= kSmallChunkDigits;
      high = words;  // a carry may have reached a limb above the highest nonzero one
      while ((high > 0U) && (limbs[high - 1U] == 0U)) {
        --high;
      }
    }
  }
  c.sticky = c.sticky || (high > 0U);
  return rounded_digits(c, digits, capacity, exponent);
}

// --- the layout both share ----------------------------------------------
// Copies count characters; returns count. A loop, not memcpy (on bare
// metal the archive is built so that it stays one: CMakeLists.txt): a
// firmware that formats numbers links no libc string function for it.
std::size_t copy_digits(char* out, const char* from, std::size_t count) noexcept {
  for (std::size_t k = 0U; k < count; ++k) {
    out[k] = from[k];
  }
  return count;
}

// 138.83381924198252 or 0.00123 (exponent in [-5, digits)).
std::size_t write_positional(const char* digits, std::size_t count, int exponent, char* out) noexcept {
  std::size_t n = 0U;
  if (exponent < 0) {
    out[0] = '0';
    out[1] = '.';
    n = 2U;
    for (int z = -1; z > exponent; --z) {
      out[n] = '0';
      ++n;
    }
    return n + copy_digits(&out[n], digits, count);
  }
  const std::size_t whole = static_cast<std::size_t>(exponent) + 1U;
  for (std::size_t k = 0U; k < whole; ++k) {
    out[n] = (k < count) ? digits[k] : '0';
    ++n;
  }
  if (count > whole) {
    out[n] = '.';
    ++n;
    n += copy_digits(&out[n], &digits[whole], count - whole);
  }
  return n;
}

// 1.5e-7
std::size_t write_scientific(const char* digits, std::size_t count, int exponent, char* out,
                             std::size_t capacity) noexcept {
  std::size_t n = 0U;
  out[n] = digits[0];
  ++n;
  if (count > 1U) {
    out[n] = '.';
    ++n;
    n += copy_digits(&out[n], &digits[1], count - 1U);
  }
  out[n] = 'e';
  ++n;
  if (exponent < 0) {
    out[n] = '-';
    ++n;
  }
  const int magnitude = (exponent < 0) ? -exponent : exponent;
  return n + format_integer(static_cast<std::uint32_t>(magnitude), &out[n], capacity - n);
}

// What a number's bits say before its digits.
enum class Shape : std::uint8_t { kNaN, kInfinity, kZero, kFinite };

// Writes a number of `shape` (its sign, and for kFinite the digits from
// digits(wanted, buffer, size, &exponent)) in the layout of
// format_double; returns the length.
template <class Digits>
std::size_t write_number(Shape shape, bool negative, int wanted, char* out, std::size_t capacity,
                         Digits digits) noexcept {
  if (shape == Shape::kNaN) {
    return copy_digits(out, "nan", 4U) - 1U;
  }
  std::size_t n = 0U;
  if (negative) {
    out[n] = '-';
    ++n;
  }
  if (shape == Shape::kInfinity) {
    n += copy_digits(&out[n], "inf", 4U) - 1U;
  } else if (shape == Shape::kZero) {
    out[n] = '0';
    out[n + 1U] = '\0';
    ++n;
  } else {
    char kept[24];
    int exponent = 0;
    const std::size_t count = digits(wanted, kept, sizeof(kept), &exponent);
    n += ((exponent >= -5) && (exponent < wanted)) ? write_positional(kept, count, exponent, &out[n])
                                                    : write_scientific(kept, count, exponent, &out[n], capacity - n);
    out[n] = '\0';
  }
  return n;
}

int clamp(int significant, int most) noexcept {
  return (significant < 1) ? 1 : ((significant > most) ? most : significant);
}

}  // namespace

std::size_t format_unsigned(std::uint64_t value, char* out, std::size_t capacity) noexcept {
  return format_integer(value, out, capacity);
}

std::size_t format_double(double value, char* out, std::size_t capacity, int significant) noexcept {
  // Worst cases: "-d.dddddddddddddddde-308" and "-0.0000ddddddddddddddddd", 24
  // characters plus NUL.
  constexpr std::size_t kNeeded = 26U;
  if (capacity < kNeeded) {
    return 0U;
  }
  std::uint64_t bits = 0U;
  std::memcpy(&bits, &value, sizeof(bits));  // BT-DEV-010
  constexpr std::uint64_t kSign = std::uint64_t{1} << 63U;
  constexpr std::uint64_t kInfinity = std::uint64_t{0x7FF} << 52U;
  const std::uint64_t magnitude = bits & ~kSign;
  const Shape shape = (magnitude > kInfinity)    ? Shape::kNaN
                      : (magnitude == kInfinity) ? Shape::kInfinity
                      : (magnitude == 0U)        ? Shape::kZero
                                                 : Shape::kFinite;
  return write_number(shape, (bits & kSign) != 0U, clamp(significant, 17), out, capacity,
                      [magnitude](int wanted, char* digits, std::size_t size, int* exponent) noexcept {
                        return double_digits(magnitude, wanted, digits, size, exponent);
                      });
}

std::size_t format_float(float value, char* out, std::size_t capacity, int significant) noexcept {
  // Worst cases: "-0.0000ddddddddd" and "-d.ddddddddde-45", 16 characters
  // plus NUL.
  constexpr std::size_t kNeeded = 17U;
  if (capacity < kNeeded) {
    return 0U;
  }
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &value, sizeof(bits));  // BT-DEV-010
  constexpr std::uint32_t kSign = std::uint32_t{1} << 31U;
  constexpr std::uint32_t kInfinity = std::uint32_t{0xFF} << 23U;
  const std::uint32_t magnitude = bits & ~kSign;
  const Shape shape = (magnitude > kInfinity)    ? Shape::kNaN
                      : (magnitude == kInfinity) ? Shape::kInfinity
                      : (magnitude == 0U)        ? Shape::kZero
                                                 : Shape::kFinite;
  return write_number(shape, (bits & kSign) != 0U, clamp(significant, 9), out, capacity,
                      [magnitude](int wanted, char* digits, std::size_t size, int* exponent) noexcept {
                        return float_digits(magnitude, wanted, digits, size, exponent);
                      });
}

}  // namespace burtorch
