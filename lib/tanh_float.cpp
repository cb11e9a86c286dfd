// SPDX-License-Identifier: Apache-2.0
// tanh of a float in IEEE single-precision arithmetic only (see
// burtorch/scalar.hpp). Compiled with -ffp-contract=off
// (CMakeLists.txt): no product here is fused, so every target gives the
// same bits.
#include "burtorch/scalar.hpp"

#include <cstdint>
#include <cstring>

namespace burtorch {

float tanh_float(float x) noexcept {
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &x, sizeof(bits));  // BT-DEV-010
  const std::uint32_t sign = bits & 0x80000000U;
  const std::uint32_t magnitude = bits ^ sign;
  if (magnitude > 0x7F800000U) {
    return x;  // NaN
  }
  float a = 0.0F;
  std::memcpy(&a, &magnitude, sizeof(a));  // BT-DEV-010: |x|
  float t = 1.0F;
  if (a < 0.5F) {
    // x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - 1382x^11/155925
    // + 21844x^13/6081075 - 929569x^15/638512875.
    const float z = a * a;
    float q = (z * (-929569.0F / 638512875.0F)) + (21844.0F / 6081075.0F);
    q = (q * z) + (-1382.0F / 155925.0F);
    q = (q * z) + (62.0F / 2835.0F);
    q = (q * z) + (-17.0F / 315.0F);
    q = (q * z) + (2.0F / 15.0F);
    q = (q * z) + (-1.0F / 3.0F);
    t = a + ((a * z) * q);
  } else if (a < 9.5F) {
    // e^y, y = 2|x| in [1, 19): n = round(y / ln 2) in [1, 27].
    constexpr float kLog2e = 1.44269504088896341F;
    constexpr float kLn2High = 0.693145751953125F;       // ln 2 to 16 bits: n * kLn2High is exact
    constexpr float kLn2Low = 1.428606820309417232e-6F;  // ln 2 - kLn2High
    constexpr float kRound = 12582912.0F;                // 1.5 * 2^23: adding it rounds to an integer
    const float y = a + a;
    const float shifted = (y * kLog2e) + kRound;
    const float n = shifted - kRound;
    const float r = (y - (n * kLn2High)) - (n * kLn2Low);
    float p = (r * (1.0F / 5040.0F)) + (1.0F / 720.0F);
    p = (p * r) + (1.0F / 120.0F);
    p = (p * r) + (1.0F / 24.0F);
    p = (p * r) + (1.0F / 6.0F);
    p = (p * r) + 0.5F;
    p = (p * r) + 1.0F;
    p = (p * r) + 1.0F;
    std::uint32_t n_bits = 0U;
    std::memcpy(&n_bits, &shifted, sizeof(n_bits));  // BT-DEV-010: n in the low bits
    const std::uint32_t scale_bits = ((n_bits & 0xFFU) + 127U) << 23U;
    float scale = 0.0F;
    std::memcpy(&scale, &scale_bits, sizeof(scale));  // BT-DEV-010: 2^n
    t = 1.0F - (2.0F / ((p * scale) + 1.0F));
  } else {
    // tanh(|x|) rounds to 1 (infinity included).
  }
  std::uint32_t t_bits = 0U;
  std::memcpy(&t_bits, &t, sizeof(t_bits));  // BT-DEV-010
  t_bits |= sign;
  std::memcpy(&t, &t_bits, sizeof(t));  // BT-DEV-010
  return t;
}

}  // namespace burtorch
