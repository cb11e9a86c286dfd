// SPDX-License-Identifier: Apache-2.0
/// @file
/// The out-of-line members of Recorder<T> (core/record.hpp): argument slots,
/// the operands of wide ops, view lists' checks, op families' registration.
/// lib/tape.cpp compiles them for float and double.
#ifndef BURTORCH_CORE_DETAIL_RECORDER_HPP
#define BURTORCH_CORE_DETAIL_RECORDER_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/detail/math.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

template <class T>
Index Recorder<T>::take_slots(Tape<T>& t, std::size_t count) noexcept {
  if ((t.status_ != Status::kOk) || (count > static_cast<std::size_t>(t.slot_capacity_ - t.slots_used_))) {
    static_cast<void>(t.fail_capacity(0U, (count < kNoIndex) ? static_cast<Index>(count) : (kNoIndex - 1U)));
    return kNoIndex;
  }
  const Index first = t.slots_used_;
  t.slots_used_ += static_cast<Index>(count);
  return first;
}

template <class T>
bool Recorder<T>::store_operand(Tape<T>& t, const Value<T>* xs, std::size_t n, Index* where, bool* is_view) noexcept {
  // One pass checks ownership and whether the nodes are consecutive.
  bool consecutive = true;
  for (std::size_t i = 0U; i < n; ++i) {
    if (!t.owns(xs[i])) {
      t.reject(xs[i].tape());
      return false;
    }
    consecutive = consecutive && (xs[i].index() == (xs[0].index() + static_cast<Index>(i)));
  }
  if (consecutive) {
    *where = xs[0].index();
    *is_view = true;
    return true;
  }
  const Index first = take_slots(t, n);
  if (first == kNoIndex) {
    return false;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    t.args_[first + static_cast<Index>(i)] = xs[i].index();
  }
  *where = first;
  *is_view = false;
  return true;
}

template <class T>
bool Recorder<T>::reduce_operands(Tape<T>& t, const Value<T>* xs, std::size_t n, Index* where,
                                  bool* is_view) noexcept {
  if ((xs == nullptr) || (n == 0U) || (n >= kNoIndex)) {
    static_cast<void>(t.fail(Status::kInvalidArgument));
    return false;
  }
  if (!room_for_interior(t)) {  // check before taking slots: a failed op takes none
    static_cast<void>(t.fail_capacity(1U, 0U));
    return false;
  }
  return store_operand(t, xs, n, where, is_view);
}

template <class T>
Index Recorder<T>::reserve(Tape<T>& t, Index nodes, Index slots) noexcept {
  if (!room_for_interior(t) || (nodes > (t.append_room_ - (t.size_ - t.param_region_)))) {
    static_cast<void>(t.fail_capacity(nodes, slots));
    return kNoIndex;
  }
  return take_slots(t, slots);
}

template <class T>
bool Recorder<T>::list_valid(Tape<T>& t, ViewList x) noexcept {
  if ((x.slot == kNoIndex) || (x.total == 0U) || (x.slot >= t.slots_used_)) {
    static_cast<void>(t.fail(Status::kInvalidArgument));
    return false;
  }
  // The list must still be on the tape, and every view still recorded.
  // Views only end below size_, which grows until the next rewind: a list
  // checked since then needs no new check.
  if ((x.slot != t.checked_list_) || (x.total != t.checked_total_)) {
    const Index views = detail::list_views(&t.args_[x.slot]);
    if ((views == 0U) || (views > ((t.slots_used_ - x.slot - 1U) / 2U))) {
      static_cast<void>(t.fail(Status::kInvalidArgument));
      return false;
    }
    // 64-bit sum: the views of a stale list (its slots reused since) could
    // otherwise wrap an Index back to x.total.
    std::uint64_t total = 0U;
    for (Index r = 0U; r < views; ++r) {
      const Index first = t.args_[x.slot + 1U + (2U * r)];
      const Index n = t.args_[x.slot + 2U + (2U * r)];
      // An empty view is never stored by view_list(): this is no list of ours.
      if ((n == 0U) || (first >= t.size_) || (n > (t.size_ - first))) {
        static_cast<void>(t.fail(Status::kInvalidHandle));
        return false;
      }
      total += n;
    }
    if (total != x.total) {
      static_cast<void>(t.fail(Status::kInvalidArgument));
      return false;
    }
    t.checked_list_ = x.slot;
    t.checked_total_ = x.total;
  }
  return true;
}

template <class T>
const char* Recorder<T>::param_name(const Tape<T>& t, Index i) noexcept {
#if BURTORCH_CONFIG_PARAM_NAMES
  // Only leaves store a name: an interior node's entry is never written.
  return ((i < t.size_) && (t.op_at(i) == Op::kLeaf)) ? t.names_[i] : nullptr;
#else
  static_cast<void>(t);
  static_cast<void>(i);
  return nullptr;
#endif
}

template <class T>
bool Recorder<T>::enable_other(Tape<T>& t, std::uint8_t id, detail::FamilyBackward<T> backward) noexcept {
  const detail::Arrays<T> none{nullptr, nullptr, nullptr};
  for (std::size_t e = 0U; e < kTapeFamilies; ++e) {
    const detail::FamilyBackward<T> held = t.families_[e];
    if (held == backward) {
      return true;
    }
    if (held == nullptr) {
      t.families_[e] = backward;
      return true;
    }
    // Asked with Op::kNone, a family's backward gives its id.
    if (held(none, Op::kNone, 0U, 0U, 0U, T(0), 0U) == id) {  // BT-DEV-005
      static_cast<void>(t.fail(Status::kInvalidArgument));  // two families claim one id's codes
      return false;
    }
  }
  static_cast<void>(t.fail(Status::kCapacityExceeded));  // kTapeFamilies families on one tape already
  return false;
}

}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_RECORDER_HPP
