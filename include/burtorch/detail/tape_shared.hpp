// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape.hpp): the recorders of the lane ops, with
/// which a tape of Lanes reads parameters shared from an ordinary tape
/// (Tape::matvec_shared, scale_shift_shared, gather_shared, pick). Inline
/// member templates: compiled only into a program that records them, which
/// also gives the tape their backward (the ops are linked on use). Their
/// loops are in detail/lane_math.hpp.
#ifndef BURTORCH_DETAIL_TAPE_SHARED_HPP
#define BURTORCH_DETAIL_TAPE_SHARED_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/detail/lane_math.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/op.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {
namespace detail {
/// True if p has both arrays and [first, first + count) lies inside it
/// (64-bit: no wrap for any Index arguments).
template <class S>
inline bool shared_range(const SharedParams<S>& p, std::uint64_t first, std::uint64_t count) noexcept {
  return (p.values != nullptr) && (p.grads != nullptr) && (count != 0U) && (count <= p.count) &&
         (first <= (p.count - count));
}
}  // namespace detail

template <class T>
inline const typename Tape<T>::LaneScalar* Tape<T>::shared_row(Index first, Index count) const noexcept {
  // One row of a gather (Tape::gather_shared) whose lanes all read the same
  // table row, and its nodes still hold that row's values. (A tape of plain
  // scalars records no gathers.)
  const LaneScalar* row = nullptr;
  if constexpr (LaneTraits<T>::kIsLanes) {
    constexpr std::size_t kLanes = LaneTraits<T>::kLanes;
    const bool gathered = (first >= param_region_) && (ops_[first - param_region_] == Op::kGatherShared);
    const std::uint64_t link = gathered ? links_[first - param_region_] : 0U;
    const Index g = first_of(link);
    const Index element = second_of(link);
    const Index width = gathered ? args_[g + detail::kGsWidth] : 0U;
    if (gathered && (width == count) && ((element % width) == 0U)) {
      const Index* offsets = &args_[g + detail::kGsRows + ((element / width) * static_cast<Index>(kLanes))];
      bool same = true;
      for (std::size_t l = 1U; l < kLanes; ++l) {
        same = same && (offsets[l] == offsets[0]);
      }
      const LaneScalar* at = &detail::load_shared<LaneScalar>(args_, g + detail::kGsShared).values[offsets[0]];
      for (Index c = 0U; same && (c < count); ++c) {
        same = values_[first + c].lane[0] == at[c];  // BT-DEV-004: exact test, the gathered value itself
      }
      row = same ? at : nullptr;
    }
  } else {
    static_cast<void>(first);
    static_cast<void>(count);
  }
  return row;
}

template <class T>
template <Op K>
inline View Tape<T>::matvec_shared(const SharedParams<LaneScalar>& p, Index w_first, Index rows, ViewList x,
                                   Index bias_first) noexcept {
  static_assert(K == Op::kMatShared, "matvec_shared records kMatShared and its rows");
  static_assert(LaneTraits<T>::kIsLanes, "matvec_shared records on a tape of Lanes");
  if ((rows == 0U) || (rows >= (kNoIndex - 1U))) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  if (!list_valid(x)) {
    return kNoView;
  }
  const std::uint64_t weights = static_cast<std::uint64_t>(rows) * x.total;
  const bool bias_ok = (bias_first == kNoIndex) || detail::shared_range(p, bias_first, rows);
  if (!detail::shared_range(p, w_first, weights) || !bias_ok) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  const Index d = reserve(rows + 1U, detail::kMsSlots);  // the head and every row, or nothing
  if (d == kNoIndex) {
    return kNoView;
  }
  // The runs every lane shares (see "inputs every lane shares" in
  // detail/lane_math.hpp): row_of(r) is the table row run r holds in every
  // lane (shared_row), or null.
  const Index* list = &args_[x.slot];
  const auto row_of = [this, list](Index r) noexcept -> const LaneScalar* {
    return shared_row(list[1U + (2U * r)], list[2U + (2U * r)]);
  };
  std::uint64_t uniform = 0U;
  if constexpr (LaneTraits<T>::kLanes > 1U) {
    for (Index r = 0U; (r < detail::list_runs(list)) && (r < detail::kUniformRuns); ++r) {
      uniform |= (row_of(r) != nullptr) ? (static_cast<std::uint64_t>(1U) << r) : 0U;
    }
  }
  args_[d + detail::kMsList] = x.slot;
  args_[d + detail::kMsWidth] = x.total;
  args_[d + detail::kMsRows] = rows;
  args_[d + detail::kMsWeight] = w_first;
  args_[d + detail::kMsBias] = bias_first;
  detail::store_uniform(args_, d + detail::kMsUniform, uniform);
  detail::store_shared(args_, d + detail::kMsShared, p.values, p.grads);
  link<K>(linked_backward_);
  static_cast<void>(append(K, T(0), d, rows));  // the head: fits, room checked above
  const Index first = size_;
  for (Index o = 0U; o < rows; ++o) {
    static_cast<void>(append(Op::kMatRowShared, T(0), d, o));
  }
  detail::lanes_matvec(values_, list, uniform, row_of, &p.values[w_first],
                       (bias_first != kNoIndex) ? &p.values[bias_first] : nullptr, rows, x.total, &values_[first]);
  return View{first, rows};
}

template <class T>
template <Op K>
inline View Tape<T>::scale_shift_shared(const SharedParams<LaneScalar>& p, Index scale_first, Index x_first,
                                        Index shift_first, Index n) noexcept {
  static_assert(K == Op::kScaleShiftShared, "scale_shift_shared records kScaleShiftShared");
  static_assert(LaneTraits<T>::kIsLanes, "scale_shift_shared records on a tape of Lanes");
  if (n == 0U) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  if (!recorded(x_first, n)) {
    static_cast<void>(fail(Status::kInvalidHandle));
    return kNoView;
  }
  if (!detail::shared_range(p, scale_first, n) || !detail::shared_range(p, shift_first, n)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  const Index d = reserve(n, detail::kSsSlots);
  if (d == kNoIndex) {
    return kNoView;
  }
  args_[d + detail::kSsX] = x_first;
  args_[d + detail::kSsScale] = scale_first;
  args_[d + detail::kSsShift] = shift_first;
  detail::store_shared(args_, d + detail::kSsShared, p.values, p.grads);
  link<K>(linked_backward_);
  const Index first = size_;
  for (Index o = 0U; o < n; ++o) {
    static_cast<void>(append(
        K, detail::lanes_scale_shift_value(values_[x_first + o], p.values[scale_first + o], p.values[shift_first + o]),
        d, o));
  }
  return View{first, n};
}

template <class T>
template <Op K>
inline View Tape<T>::gather_shared(const SharedParams<LaneScalar>& p, Index table, Index table_rows, Index width,
                                   const Index* rows, Index count) noexcept {
  static_assert(K == Op::kGatherShared, "gather_shared records kGatherShared");
  static_assert(LaneTraits<T>::kIsLanes, "gather_shared records on a tape of Lanes");
  constexpr std::uint64_t kLanes = LaneTraits<T>::kLanes;
  const std::uint64_t nodes = static_cast<std::uint64_t>(count) * width;
  const std::uint64_t slots = detail::kGsRows + (static_cast<std::uint64_t>(count) * kLanes);
  if ((rows == nullptr) || (nodes == 0U) || (nodes >= kNoIndex) || (slots >= kNoIndex) ||
      !detail::shared_range(p, table, static_cast<std::uint64_t>(table_rows) * width)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  const std::size_t entries = static_cast<std::size_t>(count) * LaneTraits<T>::kLanes;
  for (std::size_t q = 0U; q < entries; ++q) {
    if (rows[q] >= table_rows) {
      static_cast<void>(fail(Status::kInvalidArgument));
      return kNoView;
    }
  }
  const Index d = reserve(static_cast<Index>(nodes), static_cast<Index>(slots));
  if (d == kNoIndex) {
    return kNoView;
  }
  args_[d + detail::kGsWidth] = width;
  args_[d + detail::kGsCount] = count;
  detail::store_shared(args_, d + detail::kGsShared, p.values, p.grads);
  for (std::size_t q = 0U; q < entries; ++q) {
    args_[d + detail::kGsRows + static_cast<Index>(q)] = table + (rows[q] * width);
  }
  link<K>(linked_backward_);
  const Index first = size_;
  for (Index q = 0U; q < count; ++q) {
    const Index* offsets = &args_[d + detail::kGsRows + (q * static_cast<Index>(kLanes))];
    for (Index e = 0U; e < width; ++e) {
      static_cast<void>(append(K, detail::lanes_gather_value<LaneScalar, LaneTraits<T>::kLanes>(p.values, offsets, e),
                               d, (q * width) + e));
    }
  }
  return View{first, static_cast<Index>(nodes)};
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::pick(View x, const Index* at) noexcept {
  static_assert(K == Op::kPickLanes, "pick records kPickLanes");
  static_assert(LaneTraits<T>::kIsLanes, "pick records on a tape of Lanes");
  if ((at == nullptr) || (x.count == 0U)) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(x.first, x.count)) {
    return fail(Status::kInvalidHandle);
  }
  for (std::size_t l = 0U; l < LaneTraits<T>::kLanes; ++l) {
    if (at[l] >= x.count) {
      return fail(Status::kInvalidArgument);
    }
  }
  const Index d = reserve(1U, kPickSlots);
  if (d == kNoIndex) {
    return Value<T>(this, kNoIndex);
  }
  args_[d + detail::kPkFirst] = x.first;
  for (std::size_t l = 0U; l < LaneTraits<T>::kLanes; ++l) {
    args_[d + detail::kPkAt + static_cast<Index>(l)] = at[l];
  }
  link<K>(linked_backward_);
  return push(K, detail::lanes_pick_value(values_, x.first, &args_[d + detail::kPkAt]), d, 0U);
}

}  // namespace burtorch

#endif  // BURTORCH_DETAIL_TAPE_SHARED_HPP
