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

}  // namespace burtorch
