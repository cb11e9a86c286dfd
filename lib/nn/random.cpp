// SPDX-License-Identifier: Apache-2.0
// xoshiro256** (Blackman and Vigna, public domain algorithm description),
// splitmix64 seeding, polar normals, and a portable logarithm.
#include "burtorch/nn/random.hpp"

#include <cmath>
#include <cstring>

namespace burtorch {
namespace nn {
namespace {

std::uint64_t rotl(std::uint64_t x, unsigned k) noexcept { return (x << k) | (x >> (64U - k)); }

std::uint64_t splitmix64(std::uint64_t* x) noexcept {
  *x += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = *x;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

constexpr double kLn2 = 0.6931471805599453094;
constexpr double kSqrtHalf = 0.7071067811865475244;

}  // namespace

void Rng::reseed(std::uint64_t seed) noexcept {
  std::uint64_t x = seed;
  for (std::uint64_t& word : s_) {
    word = splitmix64(&x);
  }
}

std::uint64_t Rng::next_u64() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5U, 7U) * 9U;
  const std::uint64_t t = s_[1] << 17U;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45U);
  return result;
}

double Rng::uniform() noexcept {
  return static_cast<double>(next_u64() >> 11U) * (1.0 / 9007199254740992.0);  // 2^-53
}

std::uint32_t Rng::below(std::uint32_t n) noexcept {
  if (n == 0U) {
    return 0U;
  }
  // Rejection from the top 32 bits: accept below the largest multiple of n.
  const std::uint64_t range = 0x100000000ULL;
  const std::uint64_t limit = range - (range % n);
  std::uint64_t r = next_u64() >> 32U;
  while (r >= limit) {
    r = next_u64() >> 32U;
  }
  return static_cast<std::uint32_t>(r % n);
}

double Rng::normal() noexcept {
  double u = 0.0;
  double s = 0.0;
  do {
    u = uniform(-1.0, 1.0);
    const double v = uniform(-1.0, 1.0);
    s = (u * u) + (v * v);
  } while ((s >= 1.0) || (s <= 0.0));
  return u * std::sqrt((-2.0 * portable_log(s)) / s);
}

float Rng::normal_float() noexcept {
  float u = 0.0F;
  float s = 0.0F;
  do {
    u = uniform_float(-1.0F, 1.0F);
    const float v = uniform_float(-1.0F, 1.0F);
    s = (u * u) + (v * v);
  } while ((s >= 1.0F) || (s <= 0.0F));
  return u * std::sqrt((-2.0F * portable_logf(s)) / s);
}

float portable_logf(float x) noexcept {
  if (!(x > 0.0F)) {
    return -3e38F;
  }
  // x = m * 2^k with m in [sqrt(1/2), sqrt(2)), from the encoding (no
  // frexpf: integer operations only; subnormals scaled up by 2^24 first).
  constexpr float kLn2f = 0.693147180559945309F;
  constexpr float kSqrtHalff = 0.707106781186547524F;
  int k = 0;
  float scaled = x;
  if (scaled < 1.17549435e-38F) {  // FLT_MIN
    scaled *= 16777216.0F;          // 2^24, exact
    k = -24;
  }
  std::uint32_t bits = 0U;
  std::memcpy(&bits, &scaled, sizeof(bits));  // BT-DEV-010
  k += static_cast<int>((bits >> 23U) & 0xFFU) - 126;
  bits = (bits & 0x807FFFFFU) | 0x3F000000U;  // m in [0.5, 1)
  float m = 0.0F;
  std::memcpy(&m, &bits, sizeof(m));  // BT-DEV-010
  if (m < kSqrtHalff) {
    m *= 2.0F;
    --k;
  }
  // log(m) = 2 atanh(z), |z| < 0.1716: the odd series to z^11 reaches
  // single precision.
  const float z = (m - 1.0F) / (m + 1.0F);
  const float z2 = z * z;
  float sum = 0.0F;
  for (int n = 11; n >= 3; n -= 2) {
    sum = (sum + (1.0F / static_cast<float>(n))) * z2;
  }
  return (2.0F * z * (1.0F + sum)) + (static_cast<float>(k) * kLn2f);
}

double portable_log(double x) noexcept {
  if (!(x > 0.0)) {
    return -1e308;
  }
  // x = m * 2^k with m in [sqrt(1/2), sqrt(2)): frexp and the scaling by 2
  // are exact.
  int k = 0;
  double m = std::frexp(x, &k);  // m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;
    --k;
  }
  // log(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.1716: the odd series
  // 2 (z + z^3/3 + z^5/5 + ...) converges to double precision in 12 terms.
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  double sum = 0.0;
  for (int n = 23; n >= 3; n -= 2) {
    sum = (sum + (1.0 / static_cast<double>(n))) * z2;
  }
  return (2.0 * z * (1.0 + sum)) + (static_cast<double>(k) * kLn2);
}

}  // namespace nn
}  // namespace burtorch
