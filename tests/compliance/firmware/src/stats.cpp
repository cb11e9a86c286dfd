// SPDX-License-Identifier: Apache-2.0
#include "stats.hpp"

#include <cstddef>

namespace fw {

LossSummary summarize(const LossHistory& history) noexcept {
  LossSummary s{0.0F, 0.0F, 0.0F};
  const std::size_t n = history.size();
  if (n == 0U) {
    return s;
  }
  s.lowest = history.at(0U);
  s.highest = history.at(0U);
  float sum = 0.0F;
  for (std::size_t i = 0U; i < n; ++i) {
    const float x = history.at(i);
    s.lowest = (x < s.lowest) ? x : s.lowest;
    s.highest = (x > s.highest) ? x : s.highest;
    sum += x;
  }
  s.mean = sum / static_cast<float>(n);
  return s;
}

}  // namespace fw
