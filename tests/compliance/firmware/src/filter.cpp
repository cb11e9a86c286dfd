// SPDX-License-Identifier: Apache-2.0
#include "filter.hpp"

namespace fw {

float Smoother::add(float x) noexcept {
  average_ = started_ ? (average_ + (weight_ * (x - average_))) : x;
  started_ = true;
  return average_;
}

}  // namespace fw
