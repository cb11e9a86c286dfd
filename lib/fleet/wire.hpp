// SPDX-License-Identifier: Apache-2.0
// The update codec's wire helpers, shared by lib/fleet/encode.cpp and
// lib/fleet/decode.cpp (library-internal: not installed): little-endian
// fields, FP32 bit patterns, randk's draw, LEB128 varints, int8 rounding.
#ifndef BURTORCH_LIB_FLEET_WIRE_HPP
#define BURTORCH_LIB_FLEET_WIRE_HPP

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "burtorch/fleet/codec.hpp"

namespace burtorch {
namespace fleet {
namespace wire {

constexpr std::uint8_t kMagic[4] = {0x42U, 0x54U, 0x46U, 0x55U};  // "BTFU"
// Largest int8 scale: the largest FP32 s whose product s * 127 is finite
// in FP32 (bits 0x7C010203). fl(FLT_MAX / 127) is one ulp above it: its
// product with 127 rounds past FLT_MAX to +inf.
constexpr float kMaxScale = 0x1.020406p+121F;

// --- work --------------------------------------------------------------------
// One step of a loop whose length comes from a frame. Nothing in a release
// build; the frame fuzzer (fuzz/fuzz_frame.cpp) compiles the codec with
// BURTORCH_FLEET_WORK_PROBE and counts the steps, to assert that what a
// receiver does for a frame is bounded by the frame's size and the
// receiver's capacity, never by a count the sender wrote.
#if defined(BURTORCH_FLEET_WORK_PROBE)
void work_probe() noexcept;
inline void count_work() noexcept { work_probe(); }
#else
inline void count_work() noexcept {}
#endif

// --- little-endian fields --------------------------------------------------
inline void put_u16(std::uint8_t* out, std::uint16_t v) noexcept {
  out[0] = static_cast<std::uint8_t>(v & 0xFFU);
  out[1] = static_cast<std::uint8_t>(v >> 8U);
}
inline void put_u32(std::uint8_t* out, std::uint32_t v) noexcept {
  for (std::size_t i = 0U; i < 4U; ++i) {
    out[i] = static_cast<std::uint8_t>((v >> (8U * i)) & 0xFFU);
  }
}
inline std::uint16_t get_u16(const std::uint8_t* in) noexcept {
  return static_cast<std::uint16_t>(static_cast<std::uint32_t>(in[0]) | (static_cast<std::uint32_t>(in[1]) << 8U));
}
inline std::uint32_t get_u32(const std::uint8_t* in) noexcept {
  std::uint32_t v = 0U;
  for (std::size_t i = 4U; i-- > 0U;) {
    v = (v << 8U) | in[i];
  }
  return v;
}
inline void put_f32(std::uint8_t* out, float v) noexcept {
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &v, sizeof(bits));  // BT-DEV-010: a float's bit pattern
  put_u32(out, bits);
}
inline float get_f32(const std::uint8_t* in) noexcept {
  const std::uint32_t bits = get_u32(in);
  float v = 0.0F;
  std::memcpy(&v, &bits, sizeof(v));  // BT-DEV-010: a float's bit pattern
  return v;
}

inline bool finite(float v) noexcept { return std::isfinite(v); }

// --- randk's draw: selection sampling over SplitMix64 ------------------------
// Visits i = 0 .. n-1 once each and selects exactly k of them, each subset
// equally likely up to the 32-bit draw's rounding; integer arithmetic only,
// so every target draws the same indices.
class RandkDraw {
 public:
  RandkDraw(std::uint32_t n, std::uint32_t k, std::uint32_t seed) noexcept
      : state_(seed), remaining_(n), needed_(k) {}
  // Whether the next index (in increasing order) is selected.
  bool next() noexcept {
    count_work();
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    z ^= (z >> 31U);
    const std::uint64_t u = z >> 32U;
    const bool take = ((u * remaining_) >> 32U) < needed_;
    --remaining_;
    needed_ -= take ? 1U : 0U;
    return take;
  }

 private:
  std::uint64_t state_;
  std::uint64_t remaining_;
  std::uint64_t needed_;
};

// --- LEB128 varints ----------------------------------------------------------
inline std::size_t put_varint(std::uint8_t* out, std::uint32_t v) noexcept {
  std::size_t n = 0U;
  while (v >= 0x80U) {
    out[n] = static_cast<std::uint8_t>((v & 0x7FU) | 0x80U);
    v >>= 7U;
    ++n;
  }
  out[n] = static_cast<std::uint8_t>(v);
  return n + 1U;
}
// Reads a canonical varint (no redundant zero groups, at most 32 bits) from
// in[*at, end); false if there is none.
inline bool get_varint(const std::uint8_t* in, std::size_t end, std::size_t* at, std::uint32_t* v) noexcept {
  std::uint32_t value = 0U;
  for (std::size_t i = 0U; i < kMaxVarintBytes; ++i) {
    if (*at >= end) {
      return false;
    }
    const std::uint8_t byte = in[*at];
    ++*at;
    const std::uint32_t group = static_cast<std::uint32_t>(byte & 0x7FU);
    if ((i == 4U) && (group > 0x0FU)) {
      return false;  // past 32 bits
    }
    value |= group << (7U * i);
    if ((byte & 0x80U) == 0U) {
      if ((i > 0U) && (group == 0U)) {
        return false;  // a redundant last group
      }
      *v = value;
      return true;
    }
  }
  return false;
}

// --- int8 --------------------------------------------------------------------
// The scale of a block whose largest magnitude is `top`: top / 127, at most
// kMaxScale (so that every s * q is finite: a block holding +-FLT_MAX is
// sent with q = +-127 and leaves a small finite residual), or 0 if that is
// not a normal float (the block is sent as zeros).
inline float block_scale(float top) noexcept {
  const float quotient = top / 127.0F;
  const float s = (quotient > kMaxScale) ? kMaxScale : quotient;
  return (s >= FLT_MIN) ? s : 0.0F;
}
// round(x / s) half away from zero, in [-127, 127]; 0 for s == 0.
inline std::int8_t quantize(float x, float s) noexcept {
  if (!(s > 0.0F)) {
    return 0;
  }
  const float t = x / s;
  std::int32_t q = static_cast<std::int32_t>(t);  // toward zero; |t| <= 127 + a rounding
  const float rest = t - static_cast<float>(q);   // exact
  q += (rest >= 0.5F) ? 1 : 0;
  q -= (rest <= -0.5F) ? 1 : 0;
  q = (q > 127) ? 127 : ((q < -127) ? -127 : q);
  return static_cast<std::int8_t>(q);
}

}  // namespace wire
}  // namespace fleet
}  // namespace burtorch

#endif  // BURTORCH_LIB_FLEET_WIRE_HPP
