// Byte streams: how the core reaches files, flash or memory without knowing
// which. The port layer (or the user) supplies the callbacks.
#ifndef BURTORCH_STREAM_HPP
#define BURTORCH_STREAM_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/status.hpp"

namespace burtorch {

// Receives bytes in order. Returns kOk or an error (kIoError) that stops
// the writer.
struct ByteSink {
  Status (*write)(void* context, const std::uint8_t* data, std::size_t size);
  void* context;
};

// Supplies bytes in order. Sets *got to the bytes read (0 at end of stream).
struct ByteSource {
  Status (*read)(void* context, std::uint8_t* data, std::size_t size, std::size_t* got);
  void* context;
};

// A sink and a source over caller memory: the MCU default, and the tests'.
struct MemoryStream {
  std::uint8_t* data;
  std::size_t capacity;
  std::size_t size;      // bytes written so far
  std::size_t position;  // next byte to read
};
ByteSink memory_sink(MemoryStream* stream) noexcept;
ByteSource memory_source(MemoryStream* stream) noexcept;

// Writes `text` (NUL-terminated) or `size` bytes to a sink; kOk if all went.
Status write_text(ByteSink sink, const char* text) noexcept;
Status write_bytes(ByteSink sink, const void* data, std::size_t size) noexcept;

// Formats a number into out[0..capacity) without libc stdio; returns the
// length written (0 if it does not fit). %.17g-like: enough digits to read
// back the same double.
std::size_t format_double(double value, char* out, std::size_t capacity) noexcept;
std::size_t format_unsigned(std::uint64_t value, char* out, std::size_t capacity) noexcept;

}  // namespace burtorch

#endif  // BURTORCH_STREAM_HPP
