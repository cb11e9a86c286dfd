// SPDX-License-Identifier: Apache-2.0
// The training samples: the four cases of XOR.
#ifndef FW_DATASET_HPP
#define FW_DATASET_HPP

#include <cstddef>

namespace fw {

struct Sample {
  float a;
  float b;
  float target;
};

/// Number of samples.
constexpr std::size_t kSamples = 4U;
/// Sample i modulo kSamples.
Sample sample_at(std::size_t i) noexcept;

}  // namespace fw

#endif  // FW_DATASET_HPP
