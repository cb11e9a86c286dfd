// SPDX-License-Identifier: Apache-2.0
#include "burtorch/tools/stream.hpp"

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

// format_double's float form past 9 digits: the float widened to double
// by integer arithmetic on the encodings (no soft-double code), then
// format_double's own digits.
namespace detail {

std::size_t format_widened_float(float value, char* out, std::size_t capacity, int significant) noexcept {
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &value, sizeof(bits));  // BT-DEV-010
  const std::uint64_t sign = static_cast<std::uint64_t>(bits >> 31U) << 63U;
  int biased = static_cast<int>((bits >> 23U) & 0xFFU);
  std::uint32_t m = bits & 0x7FFFFFU;
  std::uint64_t widened = sign;  // +-0
  if (biased == 0xFF) {
    widened |= (std::uint64_t{0x7FFU} << 52U) | (static_cast<std::uint64_t>(m) << 29U);
  } else if ((biased != 0) || (m != 0U)) {
    if (biased == 0) {  // subnormal: normal in double once its leading 1 is the hidden bit
      biased = 1;
      while ((m & 0x800000U) == 0U) {
        m <<= 1U;
        --biased;
      }
      m &= 0x7FFFFFU;
    }
    widened |= (static_cast<std::uint64_t>(biased + 896) << 52U) | (static_cast<std::uint64_t>(m) << 29U);
  } else {
    // zero
  }
  double wide = 0.0;
  std::memcpy(&wide, &widened, sizeof(wide));  // BT-DEV-010
  return format_double(wide, out, capacity, significant);
}

}  // namespace detail

}  // namespace burtorch
