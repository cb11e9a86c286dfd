// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape_impl.hpp): recording of the wide ops:
/// reductions, inner products, view lists, a layer's matrix-vector product,
/// scale-shift. Their values come from the rows of op.hpp and the loops of
/// detail/math.hpp.
#ifndef BURTORCH_DETAIL_TAPE_RECORD_HPP
#define BURTORCH_DETAIL_TAPE_RECORD_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/detail/math.hpp"
#include "burtorch/op.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {

template <class T>
Index Tape<T>::take_slots(std::size_t count) noexcept {
  if ((status_ != Status::kOk) || (count > static_cast<std::size_t>(slot_capacity_ - slots_used_))) {
    static_cast<void>(fail(Status::kCapacityExceeded));
    return kNoIndex;
  }
  const Index first = slots_used_;
  slots_used_ += static_cast<Index>(count);
  return first;
}

template <class T>
bool Tape<T>::store_operand(const Value<T>* xs, std::size_t n, Index* where, bool* is_range) noexcept {
  // One pass checks ownership and whether the nodes are consecutive.
  bool consecutive = true;
  for (std::size_t i = 0U; i < n; ++i) {
    if (!owns(xs[i])) {
      reject(xs[i].tape());
      return false;
    }
    consecutive = consecutive && (xs[i].index() == (xs[0].index() + static_cast<Index>(i)));
  }
  if (consecutive) {
    *where = xs[0].index();
    *is_range = true;
    return true;
  }
  const Index first = take_slots(n);
  if (first == kNoIndex) {
    return false;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    args_[first + static_cast<Index>(i)] = xs[i].index();
  }
  *where = first;
  *is_range = false;
  return true;
}

template <class T>
template <class Operand>
T Tape<T>::reduce_value(Op range_op, Operand at, Index n, Op* list_op) const noexcept {
  T out = T(0);
  visit_core_op_of_kind<OpKind::kRangeReduce>(range_op, [&](auto tag) noexcept {
    using D = typename decltype(tag)::Def;
    out = D::forward(values_, at, n);
    *list_op = D::kPair;
  });
  return out;
}

template <class T>
bool Tape<T>::reduce_operands(const Value<T>* xs, std::size_t n, Index* where, bool* is_range) noexcept {
  if ((xs == nullptr) || (n == 0U) || (n >= kNoIndex)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return false;
  }
  if (!room_for_interior()) {  // check before taking slots: a failed op takes none
    static_cast<void>(fail(Status::kCapacityExceeded));
    return false;
  }
  return store_operand(xs, n, where, is_range);
}

template <class T>
Value<T> Tape<T>::reduce(Op range_op, const Value<T>* xs, std::size_t n) noexcept {
  // reduce_operands' checks, written out: this function is in every
  // program that records a reduction, reduce_operands only where an op
  // linked on use is recorded.
  if ((xs == nullptr) || (n == 0U) || (n >= kNoIndex) || !is_run_reduction(range_op)) {
    return fail(Status::kInvalidArgument);
  }
  if (!room_for_interior()) {  // check before taking slots: a failed op takes none
    return fail(Status::kCapacityExceeded);
  }
  const Mark before = mark();
  Index where = kNoIndex;
  bool is_range = false;
  if (!store_operand(xs, n, &where, &is_range)) {
    return Value<T>(this, kNoIndex);
  }
  const Index count = static_cast<Index>(n);
  Op list_op = range_op;
  const T result = is_range ? reduce_value(range_op, detail::range_operand(where), count, &list_op)
                            : reduce_value(range_op, detail::list_operand(&args_[where]), count, &list_op);
  const Value<T> out = push(is_range ? range_op : list_op, result, where, count);
  if (!out.valid()) {
    slots_used_ = before.slots;
  }
  return out;
}

template <class T>
Value<T> Tape<T>::dot(const Value<T>* w, const Value<T>* x, std::size_t n, const Value<T>* bias) noexcept {
  if ((w == nullptr) || (x == nullptr) || (n == 0U) || (n >= kNoIndex)) {
    return fail(Status::kInvalidArgument);
  }
  const Mark before = mark();
  const Index descriptor = dot_descriptor(kNoIndex, kNoIndex, bias);  // operands filled in below
  Index w_at = kNoIndex;
  Index x_at = kNoIndex;
  bool w_range = false;
  bool x_range = false;
  if ((descriptor == kNoIndex) || !store_operand(w, n, &w_at, &w_range) ||
      !store_operand(x, n, &x_at, &x_range)) {
    slots_used_ = before.slots;
    return Value<T>(this, kNoIndex);
  }
  // The product is symmetric: keep a range operand first (RL, never LR).
  if (!w_range && x_range) {
    const Index t = w_at;
    w_at = x_at;
    x_at = t;
    w_range = true;
    x_range = false;
  }
  const Index count = static_cast<Index>(n);
  args_[descriptor] = w_at;
  args_[descriptor + 1U] = x_at;
  T result = T(0);
  Op op = Op::kDotLL;
  if (w_range && x_range) {
    op = Op::kDotRR;
    result = detail::range_dot(values_, w_at, x_at, count);
  } else if (w_range) {
    op = Op::kDotRL;
    result = detail::dot_of(values_, detail::range_operand(w_at), detail::list_operand(&args_[x_at]), count);
  } else {
    result = detail::dot_of(values_, detail::list_operand(&args_[w_at]), detail::list_operand(&args_[x_at]), count);
  }
  const Value<T> out = push_dot(op, result, descriptor, count);
  if (!out.valid()) {
    slots_used_ = before.slots;
  }
  return out;
}

template <class T>
Index Tape<T>::reserve(Index nodes, Index slots) noexcept {
  if (!room_for_interior() || (nodes > (append_room_ - (size_ - param_region_)))) {
    static_cast<void>(fail(Status::kCapacityExceeded));
    return kNoIndex;
  }
  return take_slots(slots);
}

template <class T>
Index Tape<T>::dot_descriptor(Index w, Index x, const Value<T>* bias) noexcept {
  if ((bias != nullptr) && !owns(*bias)) {
    reject(bias->tape());
    return kNoIndex;
  }
  const Index descriptor = reserve(1U, 3U);
  if (descriptor != kNoIndex) {
    args_[descriptor] = w;
    args_[descriptor + 1U] = x;
    args_[descriptor + 2U] = (bias != nullptr) ? bias->index() : kNoIndex;
  }
  return descriptor;
}

template <class T>
Value<T> Tape<T>::push_dot(Op op, T product, Index descriptor, Index n) noexcept {
  const Index bias = args_[descriptor + 2U];
  return push(op, (bias != kNoIndex) ? (product + values_[bias]) : product, descriptor, n);
}

template <class T>
Value<T> Tape<T>::dot_ranges(Index w_first, Index x_first, Index n, const Value<T>* bias) noexcept {
  if (n == 0U) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(w_first, n) || !recorded(x_first, n)) {
    return fail(Status::kInvalidHandle);
  }
  const Index descriptor = dot_descriptor(w_first, x_first, bias);
  if (descriptor == kNoIndex) {
    return Value<T>(this, kNoIndex);
  }
  return push_dot(Op::kDotRR, detail::range_dot(values_, w_first, x_first, n), descriptor, n);
}

template <class T>
ViewList Tape<T>::view_list(const View* parts, std::size_t count) noexcept {
  ViewList out;
  if ((parts == nullptr) || (count == 0U) || (count >= (kNoIndex / 4U))) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return out;
  }
  std::uint64_t total = 0U;  // 64 bits: count < 2^30 runs of < 2^32 nodes each cannot wrap it
  for (std::size_t r = 0U; r < count; ++r) {
    const Index first = parts[r].first;
    const Index n = parts[r].count;
    if ((n == 0U) || (first >= size_) || (n > (size_ - first))) {
      static_cast<void>(fail(Status::kInvalidHandle));
      return out;
    }
    total += n;
  }
  if (total >= kNoIndex) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return out;
  }
  const Index slot = take_slots(1U + (2U * count));
  if (slot == kNoIndex) {
    return out;
  }
  // Inputs only (op kInput): the inner products over the list compute no
  // gradient for them (detail::kListOfInputs).
  // (The runs were checked above: every node is recorded.)
  Index inputs = detail::kListOfInputs;
  for (std::size_t r = 0U; (inputs != 0U) && (r < count); ++r) {
    for (Index i = parts[r].first; (inputs != 0U) && (i < (parts[r].first + parts[r].count)); ++i) {
      inputs = ((i >= param_region_) && (ops_[i - param_region_] == Op::kInput)) ? inputs : 0U;
    }
  }
  args_[slot] = static_cast<Index>(count) | inputs;
  for (std::size_t r = 0U; r < count; ++r) {
    args_[slot + 1U + (2U * static_cast<Index>(r))] = parts[r].first;
    args_[slot + 2U + (2U * static_cast<Index>(r))] = parts[r].count;
  }
  out.slot = slot;
  out.total = static_cast<Index>(total);
  return out;
}

template <class T>
ViewList Tape<T>::view_list_rows(View x, Index width) noexcept {
  if ((width == 0U) || (x.count == 0U) || ((x.count % width) != 0U)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return ViewList{};
  }
  if ((x.first >= size_) || (x.count > (size_ - x.first))) {
    static_cast<void>(fail(Status::kInvalidHandle));
    return ViewList{};
  }
  const Index runs = x.count / width;
  if (runs >= (kNoIndex / 4U)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return ViewList{};
  }
  const Index slot = take_slots(1U + (2U * runs));
  if (slot == kNoIndex) {
    return ViewList{};
  }
  Index inputs = detail::kListOfInputs;  // as view_list()
  for (Index i = x.first; (inputs != 0U) && (i < (x.first + x.count)); ++i) {
    inputs = ((i >= param_region_) && (ops_[i - param_region_] == Op::kInput)) ? inputs : 0U;
  }
  args_[slot] = runs | inputs;
  for (Index r = 0U; r < runs; ++r) {
    args_[slot + 1U + (2U * r)] = x.first + (r * width);
    args_[slot + 2U + (2U * r)] = width;
  }
  ViewList out;
  out.slot = slot;
  out.total = x.count;
  return out;
}

template <class T>
bool Tape<T>::list_valid(ViewList x) noexcept {
  if ((x.slot == kNoIndex) || (x.total == 0U) || (x.slot >= slots_used_)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return false;
  }
  // The list must still be on the tape, and every run still recorded. Runs
  // only end below size_, which grows until the next rewind: a list checked
  // since then needs no new check.
  if ((x.slot != checked_list_) || (x.total != checked_total_)) {
    const Index runs = detail::list_runs(&args_[x.slot]);
    if ((runs == 0U) || (runs > ((slots_used_ - x.slot - 1U) / 2U))) {
      static_cast<void>(fail(Status::kInvalidArgument));
      return false;
    }
    // 64-bit sum: the runs of a stale list (its slots reused since) could
    // otherwise wrap an Index back to x.total.
    std::uint64_t total = 0U;
    for (Index r = 0U; r < runs; ++r) {
      const Index first = args_[x.slot + 1U + (2U * r)];
      const Index n = args_[x.slot + 2U + (2U * r)];
      // An empty run is never stored by view_list(): this is no list of ours.
      if ((n == 0U) || (first >= size_) || (n > (size_ - first))) {
        static_cast<void>(fail(Status::kInvalidHandle));
        return false;
      }
      total += n;
    }
    if (total != x.total) {
      static_cast<void>(fail(Status::kInvalidArgument));
      return false;
    }
    checked_list_ = x.slot;
    checked_total_ = x.total;
  }
  return true;
}

template <class T>
Value<T> Tape<T>::dot_views(Index w_first, ViewList x, const Value<T>* bias) noexcept {
  if (!list_valid(x)) {
    return Value<T>(this, kNoIndex);
  }
  if ((w_first >= size_) || (x.total > (size_ - w_first))) {
    return fail(Status::kInvalidHandle);
  }
  const Index descriptor = dot_descriptor(w_first, x.slot, bias);
  if (descriptor == kNoIndex) {
    return Value<T>(this, kNoIndex);
  }
  return push_dot(Op::kDotRV, detail::dot_list_of(values_, w_first, &args_[x.slot]), descriptor, x.total);
}

template <class T>
Index Tape<T>::matvec_descriptor(Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  if (rows == 0U) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoIndex;
  }
  if (!list_valid(x)) {
    return kNoIndex;
  }
  // Every weight and bias must be recorded (64-bit: rows * length may
  // exceed an Index; then it exceeds size_ too).
  const std::uint64_t weights = static_cast<std::uint64_t>(rows) * x.total;
  if ((w_first >= size_) || (weights > (size_ - w_first))) {
    static_cast<void>(fail(Status::kInvalidHandle));
    return kNoIndex;
  }
  if ((bias_first != kNoIndex) && ((bias_first >= size_) || (rows > (size_ - bias_first)))) {
    static_cast<void>(fail(Status::kInvalidHandle));
    return kNoIndex;
  }
  const Index descriptor = reserve(rows, 4U);  // room for all rows, or none is recorded
  if (descriptor != kNoIndex) {
    args_[descriptor] = w_first;
    args_[descriptor + 1U] = x.slot;
    args_[descriptor + 2U] = bias_first;
    args_[descriptor + 3U] = x.total;
  }
  return descriptor;
}

template <class T>
View Tape<T>::matvec(Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  const Index descriptor = matvec_descriptor(w_first, rows, x, bias_first);
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  const Index first = size_;
  for (Index o = 0U; o < rows; ++o) {
    // OpDef<kMatRow>::value (what replay computes), with the descriptor's
    // fields in registers: the same operations, so the same bits.
    T result = detail::dot_list_of(values_, w_first + (o * x.total), &args_[x.slot]);
    if (bias_first != kNoIndex) {
      result += values_[bias_first + o];
    }
    static_cast<void>(append(Op::kMatRow, result, descriptor, o));  // fits: room checked above
  }
  return View{first, rows};
}

template <class T>
View Tape<T>::scale_shift(Index scale_first, Index x_first, Index shift_first, Index n) noexcept {
  if (n == 0U) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  if (!recorded(scale_first, n) || !recorded(x_first, n) || !recorded(shift_first, n)) {
    static_cast<void>(fail(Status::kInvalidHandle));
    return kNoView;
  }
  const Index descriptor = reserve(n, 3U);  // room for all outputs, or none is recorded
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  args_[descriptor] = scale_first;
  args_[descriptor + 1U] = x_first;
  args_[descriptor + 2U] = shift_first;
  const Index first = size_;
  for (Index o = 0U; o < n; ++o) {
    const T y = OpDef<Op::kScaleShift>::value(values_, args_, size_, descriptor, o);
    static_cast<void>(append(Op::kScaleShift, y, descriptor, o));  // fits: room checked above
  }
  return View{first, n};
}

template <class T>
Value<T> Tape<T>::reduce_range(Op range_op, Index first, Index n) noexcept {
  if ((n == 0U) || !is_run_reduction(range_op)) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(first, n)) {
    return fail(Status::kInvalidHandle);
  }
  Op list_op = range_op;
  return push(range_op, reduce_value(range_op, detail::range_operand(first), n, &list_op), first, n);
}

}  // namespace burtorch

#endif  // BURTORCH_DETAIL_TAPE_RECORD_HPP
