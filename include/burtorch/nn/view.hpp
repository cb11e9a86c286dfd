// SPDX-License-Identifier: Apache-2.0
/// @file
/// View: a run of consecutive nodes of a tape. A layer's outputs are a
/// view; so are a layer's or a model's parameters (params()), which is what
/// an optimizer step, a serial batch and gradient clipping take.
#ifndef BURTORCH_NN_VIEW_HPP
#define BURTORCH_NN_VIEW_HPP

#include "burtorch/tape.hpp"

namespace burtorch {
namespace nn {

// burtorch::View and burtorch::kNoView (tape.hpp) are the views: nn code,
// inside namespace burtorch, names them without a qualifier.

/// True if `v` is not empty and every node of it is recorded on `tape`.
template <class T>
inline bool is_recorded(const Tape<T>& tape, View v) noexcept {
  const std::size_t size = tape.size();
  return (v.count != 0U) && (v.first < size) && (v.count <= (size - v.first));
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_VIEW_HPP
