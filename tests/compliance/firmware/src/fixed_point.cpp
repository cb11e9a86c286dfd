// SPDX-License-Identifier: Apache-2.0
#include "fixed_point.hpp"

namespace fw {
namespace {
constexpr float kScale = 32768.0F;
constexpr float kHighest = 32767.0F;
constexpr float kLowest = -32768.0F;
}  // namespace

std::int16_t to_q15(float x) noexcept {
  const float scaled = x * kScale;
  const float clamped = (scaled > kHighest) ? kHighest : ((scaled < kLowest) ? kLowest : scaled);
  return static_cast<std::int16_t>(clamped);
}

float from_q15(std::int16_t q) noexcept {
  return static_cast<float>(q) / kScale;
}

}  // namespace fw
