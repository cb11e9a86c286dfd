#include "burtorch/stream.hpp"

#include <cmath>
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

// value * 10^k with one rounding: powers of ten up to 10^22 are exact
// doubles, built here by multiplication rather than by libm's pow(), whose
// last bit differs between C libraries.
double scale_by_power_of_ten(double value, int k) noexcept {
  const int magnitude = (k < 0) ? -k : k;
  double power = 1.0;
  for (int i = 0; (i < magnitude) && (i < 22); ++i) {
    power *= 10.0;
  }
  double scaled = (k < 0) ? (value / power) : (value * power);
  for (int i = 22; i < magnitude; ++i) {  // beyond 1e22: extra roundings
    scaled = (k < 0) ? (scaled / 10.0) : (scaled * 10.0);
  }
  return scaled;
}

}  // namespace

namespace {

// The significant digits of a positive finite `value`: `wanted` of them,
// rounded, with trailing zeros dropped. Returns the digit count; *exponent is
// the decimal exponent of the first digit.
std::size_t decimal_digits(double value, int wanted, char* digits, std::size_t capacity, int* exponent) noexcept {
  const double limit = scale_by_power_of_ten(1.0, wanted);
  int e = static_cast<int>(std::floor(std::log10(value)));
  double scaled = scale_by_power_of_ten(value, (wanted - 1) - e);
  if (scaled >= limit) {
    scaled /= 10.0;
    ++e;
  } else if (scaled < (limit / 10.0)) {
    scaled *= 10.0;
    --e;
  } else {
    // already in range
  }
  // Round half up by hand: newlib-nano's llround() is wrong above 2^31.
  std::uint64_t mantissa = static_cast<std::uint64_t>(std::floor(scaled + 0.5));
  if (static_cast<double>(mantissa) >= limit) {
    mantissa /= 10U;
    ++e;
  }
  std::size_t last = format_unsigned(mantissa, digits, capacity);
  while ((last > 1U) && (digits[last - 1U] == '0')) {
    --last;
  }
  *exponent = e;
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
  if (std::isnan(value)) {
    std::memcpy(out, "nan", 4U);  // BT-DEV-010
    return 3U;
  }
  std::size_t n = 0U;
  if (std::signbit(value)) {
    out[n] = '-';
    ++n;
    value = -value;
  }
  const int wanted = (significant < 1) ? 1 : ((significant > 17) ? 17 : significant);
  if (std::isinf(value)) {
    std::memcpy(&out[n], "inf", 4U);  // BT-DEV-010
    n += 3U;
  } else if ((value < scale_by_power_of_ten(1.0, wanted)) && (std::floor(value) == value)) {  // BT-DEV-004
    // Integers that fit in `wanted` digits (zero included) print exactly.
    n += format_unsigned(static_cast<std::uint64_t>(value), &out[n], capacity - n);
  } else {
    char digits[24];
    int exponent = 0;
    const std::size_t count = decimal_digits(value, wanted, digits, sizeof(digits), &exponent);
    n += ((exponent >= -5) && (exponent < wanted)) ? write_positional(digits, count, exponent, &out[n])
                                                    : write_scientific(digits, count, exponent, &out[n], capacity - n);
    out[n] = '\0';
  }
  return n;
}

}  // namespace burtorch
