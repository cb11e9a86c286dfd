// SPDX-License-Identifier: Apache-2.0
// Exponential moving average of the loss, for the log.
#ifndef FW_FILTER_HPP
#define FW_FILTER_HPP

namespace fw {

class Smoother {
 public:
  /// weight: how much a new value counts (0 < weight <= 1).
  explicit Smoother(float weight) noexcept : weight_(weight) {}
  /// Adds x; returns the average so far.
  float add(float x) noexcept;
  float average() const noexcept { return average_; }

 private:
  float weight_;
  float average_ = 0.0F;
  bool started_ = false;
};

}  // namespace fw

#endif  // FW_FILTER_HPP
