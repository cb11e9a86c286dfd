// SPDX-License-Identifier: Apache-2.0
/// @file
/// Byte streams: how the core reaches files, flash or memory without knowing
/// which. The port layer (or the user) supplies the callbacks.
#ifndef BURTORCH_TOOLS_STREAM_HPP
#define BURTORCH_TOOLS_STREAM_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "burtorch/status.hpp"

namespace burtorch {

/// Receives bytes in order. Returns kOk or an error (kIoError) that stops
/// the writer.
struct ByteSink {
  /// Called with the next `size` bytes and `context`.
  Status (*write)(void* context, const std::uint8_t* data, std::size_t size) = nullptr;
  void* context = nullptr;  ///< passed to write unchanged
};

/// Supplies bytes in order. Sets *got to the bytes read (0 at end of stream).
/// A read may return fewer bytes than asked; readers call again until 0.
struct ByteSource {
  /// Reads up to `size` bytes into `data`; sets *got to the count (0: end).
  Status (*read)(void* context, std::uint8_t* data, std::size_t size, std::size_t* got) = nullptr;
  void* context = nullptr;  ///< passed to read and rewind unchanged
  /// Optional: goes back to the stream's first byte (nullptr if it cannot).
  /// load_checkpoint needs it for its verify-then-apply second pass.
  Status (*rewind)(void* context) = nullptr;
};

/// A sink and a source over caller memory: the MCU default, and the tests'.
struct MemoryStream {
  std::uint8_t* data;    ///< the caller's buffer
  std::size_t capacity;  ///< its size in bytes
  std::size_t size;      ///< bytes written so far
  std::size_t position;  ///< next byte to read
};
/// A sink that appends to stream->data (kIoError when full).
ByteSink memory_sink(MemoryStream* stream) noexcept;
/// A source that reads stream->data[position, size), with rewind.
ByteSource memory_source(MemoryStream* stream) noexcept;

/// Writes `text` (NUL-terminated) to a sink; kOk if all went.
Status write_text(ByteSink sink, const char* text) noexcept;
/// Writes `size` bytes to a sink; kOk if all went.
Status write_bytes(ByteSink sink, const void* data, std::size_t size) noexcept;

/// Formats a number into out[0..capacity) without libc stdio; returns the
/// length written (0 if capacity < 26). The digits are correctly rounded: the
/// first `significant` (clamped to 1..17) significant decimal digits of the
/// double's exact value, rounded to nearest with exact ties to even, i.e. the
/// digits C's printf("%.*g") prints under the default rounding mode; they
/// come from exact integer arithmetic, so every target prints the same. The
/// default 17 digits read back (strtod) as the same double. Layout like
/// `%.<significant>g`: positional for decimal exponents -5..significant-1
/// (0.00123, 0.000015, 138.83), else 1.5e-7 (no '+', no leading zeros in the
/// exponent); no trailing zeros; "nan", "inf", "-inf", "-0".
std::size_t format_double(double value, char* out, std::size_t capacity, int significant = 17) noexcept;
/// format_double() for a float, in single-precision and 32-bit integer
/// arithmetic only: no double, no soft-double code and no 64-bit division
/// in a firmware (a Cortex-M4F's or M0's console). The digits of the
/// float's exact value, `significant` (clamped to 1..9) of them, rounded as
/// format_double rounds, in its layout: format_float(x, out, n, d) writes
/// what format_double(double(x), out, n, d) writes. The default 9 digits
/// read back as the same float. Returns the length (0 if capacity < 17).
std::size_t format_float(float value, char* out, std::size_t capacity, int significant = 9) noexcept;
namespace detail {
/// format_double(double(value), ...) with the float widened to double in
/// integer arithmetic (no soft-double code).
std::size_t format_widened_float(float value, char* out, std::size_t capacity, int significant) noexcept;
}  // namespace detail
/// format_double() for a float argument: writes exactly what
/// format_double(double(value), out, capacity, significant) writes
/// (0 if capacity < 26), but converts no float to double: up to 9
/// significant digits it is format_float(), past 9 the double digits of the
/// float's exact value from integer arithmetic. A single-precision firmware
/// that prints its float loss with format_double links no soft-double
/// code (and with a constant `significant` <= 9, nothing but format_float).
/// Chosen for float arguments only (F = float); an integer still goes to
/// the double form.
template <class F, typename std::enable_if<std::is_same<F, float>::value, int>::type = 0>
inline std::size_t format_double(F value, char* out, std::size_t capacity, int significant = 17) noexcept {
  constexpr std::size_t kNeeded = 26U;  // format_double's own minimum
  if (capacity < kNeeded) {
    return 0U;
  }
  return ((significant >= 1) && (significant <= 9)) ? format_float(value, out, capacity, significant)
                                                     : detail::format_widened_float(value, out, capacity, significant);
}
/// Formats an unsigned integer in decimal into out[0..capacity); returns
/// the length written (0 if it does not fit). No libc stdio.
std::size_t format_unsigned(std::uint64_t value, char* out, std::size_t capacity) noexcept;

}  // namespace burtorch

#endif  // BURTORCH_TOOLS_STREAM_HPP
