// SPDX-License-Identifier: Apache-2.0
#include "burtorch/stream.hpp"

#include <cstring>

namespace burtorch {
namespace {

Status memory_write(void* context, const std::uint8_t* data, std::size_t size) {
  MemoryStream* s = static_cast<MemoryStream*>(context);
  if (size == 0U) {
    return Status::kOk;  // nothing to copy (data and s->data may be null)
  }
  if ((s->data == nullptr) || (data == nullptr) || (s->size > s->capacity) || (size > (s->capacity - s->size))) {
    return Status::kIoError;  // full or unusable: nothing is written past the buffer
  }
  std::memcpy(&s->data[s->size], data, size);  // BT-DEV-010
  s->size += size;
  return Status::kOk;
}

Status memory_read(void* context, std::uint8_t* data, std::size_t size, std::size_t* got) {
  MemoryStream* s = static_cast<MemoryStream*>(context);
  // An empty, null or inconsistent stream reads as ended: the caller then
  // reports kTruncated. Nothing is read outside [data, data + size).
  const bool readable = (s->data != nullptr) && (data != nullptr) && (s->size <= s->capacity) && (s->position < s->size);
  const std::size_t left = readable ? (s->size - s->position) : 0U;
  const std::size_t n = (size < left) ? size : left;
  if (n > 0U) {
    std::memcpy(data, &s->data[s->position], n);  // BT-DEV-010
    s->position += n;
  }
  *got = n;
  return Status::kOk;
}

Status memory_rewind(void* context) {
  static_cast<MemoryStream*>(context)->position = 0U;
  return Status::kOk;
}

}  // namespace

ByteSink memory_sink(MemoryStream* stream) noexcept { return ByteSink{&memory_write, stream}; }
ByteSource memory_source(MemoryStream* stream) noexcept { return ByteSource{&memory_read, stream, &memory_rewind}; }

Status write_bytes(ByteSink sink, const void* data, std::size_t size) noexcept {
  if (sink.write == nullptr) {
    return Status::kInvalidArgument;
  }
  return sink.write(sink.context, static_cast<const std::uint8_t*>(data), size);  // BT-DEV-003
}

Status write_text(ByteSink sink, const char* text) noexcept {
  std::size_t length = 0U;  // strlen without <cstring>'s string functions (MISRA C++:2023 Rule 21.2.2)
  while (text[length] != '\0') {
    ++length;
  }
  return write_bytes(sink, text, length);
}

std::size_t format_unsigned(std::uint64_t value, char* out, std::size_t capacity) noexcept {
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

namespace {

// Exact decimal conversion. A finite double is m * 2^e with m < 2^53 and
// -1074 <= e <= 971, so its decimal expansion is finite; the digits below
// come from integer arithmetic on 32-bit limbs, nine decimal digits (one
// 10^9 chunk) at a time, and are rounded once, at the end.
constexpr std::uint32_t kChunk = 1000000000U;  // 10^9
constexpr int kChunkDigits = 9;
// The largest numbers held: a fraction with up to 1074 binary places, scaled
// to whole limbs (34 * 32 = 1088 bits), and an integer below 2^1024 (32 limbs).
constexpr std::size_t kLimbs = 34U;
constexpr int kLimbBits = 32;

// The first `wanted` significant digits of a number fed most significant
// digit first, the digit after them, and whether any later digit is nonzero.
struct DigitCollector {
  std::uint64_t kept = 0U;  // the significant digits so far, as an integer
  int wanted = 17;
  int count = 0;       // digits in `kept`
  int next = -1;       // the digit after them (-1: not reached yet)
  bool sticky = false;  // a nonzero digit after `next`
  int exponent = 0;    // decimal exponent of the first significant digit
};

bool collector_full(const DigitCollector& c) noexcept { return c.next >= 0; }

// `chunk` (< 10^9) holds nine digits; the first is worth 10^position.
void push_chunk(DigitCollector& c, std::uint32_t chunk, int position) noexcept {
  if ((chunk == 0U) && ((c.count == 0) || collector_full(c))) {
    return;  // leading zeros, or zeros past the rounding digit
  }
  std::uint32_t rest = chunk;
  int at = position + 1;
  // Nine digits, most significant first.
  for (std::uint32_t divisor = kChunk / 10U; divisor != 0U; divisor /= 10U) {
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
      c.kept = (c.kept * 10U) + digit;
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

// The significant digits of a positive finite `value` (bits: its IEEE-754
// encoding), `wanted` of them correctly rounded (to nearest, ties to even),
// trailing zeros dropped. Returns the digit count; *exponent is the decimal
// exponent of the first digit.
std::size_t decimal_digits(std::uint64_t bits, int wanted, char* digits, std::size_t capacity, int* exponent) noexcept {
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
  DigitCollector c;
  c.wanted = wanted;
  int position = (whole.count * kChunkDigits) - 1;  // decimal exponent of the chunk's first digit
  for (std::size_t i = 0U; (i < 3U) || ((fraction.low < fraction.high) && !collector_full(c)); ++i) {
    push_chunk(c, chunk_at(whole, fraction, i), position);
    position -= kChunkDigits;
  }
  c.sticky = c.sticky || whole.lower_nonzero || (fraction.low < fraction.high);
  const bool odd = (c.kept % 2U) != 0U;
  if ((c.next > 5) || ((c.next == 5) && (c.sticky || odd))) {
    ++c.kept;
    std::uint64_t limit = 1U;
    for (int i = 0; i < c.wanted; ++i) {
      limit *= 10U;
    }
    if (c.kept == limit) {  // 9.96 to two digits: 10, i.e. 1.0 one decimal place up
      c.kept /= 10U;
      ++c.exponent;
    }
  }
  std::size_t last = format_unsigned(c.kept, digits, capacity);
  while ((last > 1U) && (digits[last - 1U] == '0')) {
    --last;
  }
  *exponent = c.exponent;
  return last;
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
    std::memcpy(&out[n], digits, count);  // BT-DEV-010
    return n + count;
  }
  const std::size_t whole = static_cast<std::size_t>(exponent) + 1U;
  for (std::size_t k = 0U; k < whole; ++k) {
    out[n] = (k < count) ? digits[k] : '0';
    ++n;
  }
  if (count > whole) {
    out[n] = '.';
    ++n;
    std::memcpy(&out[n], &digits[whole], count - whole);  // BT-DEV-010
    n += count - whole;
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
    std::memcpy(&out[n], &digits[1], count - 1U);  // BT-DEV-010
    n += count - 1U;
  }
  out[n] = 'e';
  ++n;
  if (exponent < 0) {
    out[n] = '-';
    ++n;
  }
  const int magnitude = (exponent < 0) ? -exponent : exponent;
  return n + format_unsigned(static_cast<std::uint64_t>(magnitude), &out[n], capacity - n);
}

}  // namespace

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
  if (magnitude > kInfinity) {
    std::memcpy(out, "nan", 4U);  // BT-DEV-010
    return 3U;
  }
  std::size_t n = 0U;
  if ((bits & kSign) != 0U) {
    out[n] = '-';
    ++n;
  }
  const int wanted = (significant < 1) ? 1 : ((significant > 17) ? 17 : significant);
  if (magnitude == kInfinity) {
    std::memcpy(&out[n], "inf", 4U);  // BT-DEV-010
    n += 3U;
  } else if (magnitude == 0U) {
    out[n] = '0';
    out[n + 1U] = '\0';
    ++n;
  } else {
    char digits[24];
    int exponent = 0;
    const std::size_t count = decimal_digits(magnitude, wanted, digits, sizeof(digits), &exponent);
    n += ((exponent >= -5) && (exponent < wanted)) ? write_positional(digits, count, exponent, &out[n])
                                                    : write_scientific(digits, count, exponent, &out[n], capacity - n);
    out[n] = '\0';
  }
  return n;
}

}  // namespace burtorch
