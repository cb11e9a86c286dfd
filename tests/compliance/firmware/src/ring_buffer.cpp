// SPDX-License-Identifier: Apache-2.0
#include "ring_buffer.hpp"

namespace fw {

void LossHistory::push(float x) noexcept {
  values_[next_] = x;
  next_ = (next_ + 1U) % kCapacity;
  count_ = (count_ < kCapacity) ? (count_ + 1U) : kCapacity;
}

float LossHistory::at(std::size_t i) const noexcept {
  const std::size_t oldest = (count_ < kCapacity) ? 0U : next_;
  return values_[(oldest + i) % kCapacity];
}

}  // namespace fw
