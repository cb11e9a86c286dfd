// SPDX-License-Identifier: Apache-2.0
#include "dataset.hpp"

#include <array>

namespace fw {

Sample sample_at(std::size_t i) noexcept {
  constexpr std::array<Sample, kSamples> kCases = {
      Sample{0.0F, 0.0F, 0.0F}, Sample{0.0F, 1.0F, 1.0F}, Sample{1.0F, 0.0F, 1.0F}, Sample{1.0F, 1.0F, 0.0F}};
  return kCases[i % kSamples];
}

}  // namespace fw
