// SPDX-License-Identifier: Apache-2.0
// Summary of the kept losses.
#ifndef FW_STATS_HPP
#define FW_STATS_HPP

#include "ring_buffer.hpp"

namespace fw {

struct LossSummary {
  float lowest;
  float highest;
  float mean;
};

/// Lowest, highest and mean of the kept losses (all 0 when none is kept).
LossSummary summarize(const LossHistory& history) noexcept;

}  // namespace fw

#endif  // FW_STATS_HPP
