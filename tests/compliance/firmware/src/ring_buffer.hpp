// SPDX-License-Identifier: Apache-2.0
// The last few losses, oldest overwritten first.
#ifndef FW_RING_BUFFER_HPP
#define FW_RING_BUFFER_HPP

#include <array>
#include <cstddef>

namespace fw {

class LossHistory {
 public:
  static constexpr std::size_t kCapacity = 8U;
  void push(float x) noexcept;
  std::size_t size() const noexcept { return count_; }
  /// The i-th oldest value kept (i < size()).
  float at(std::size_t i) const noexcept;

 private:
  std::array<float, kCapacity> values_{};
  std::size_t next_ = 0U;
  std::size_t count_ = 0U;
};

}  // namespace fw

#endif  // FW_RING_BUFFER_HPP
