// SPDX-License-Identifier: Apache-2.0
/// @file
/// The recorders of core/views.hpp, out of line (lib/tape.cpp compiles them for
/// float and double): reductions, inner products, view lists, a layer's
/// matrix-vector product, scale-shift. Their values come from the rows of
/// core/op_wide.hpp and the loops of core/detail/math.hpp; they reach the tape
/// through Recorder<T> alone.
#ifndef BURTORCH_CORE_DETAIL_VIEWS_HPP
#define BURTORCH_CORE_DETAIL_VIEWS_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/detail/step.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace detail {

/// True if op is a view reduction of the core set (what reduce() takes).
inline bool is_view_reduction(Op op) noexcept {
  bool found = false;
  visit_op_of_kind<OpKind::kViewReduce>(op, [&found](auto /*tag*/) noexcept { found = true; });
  return found;
}

/// The value of the view reduction view_op over n operands; *list_op is
/// set to its list variant.
template <class T, class Operand>
T reduce_value(const T* v, Op view_op, Operand at, Index n, Op* list_op) noexcept {
  T out = T(0);
  visit_op_of_kind<OpKind::kViewReduce>(view_op, [&](auto tag) noexcept {
    using D = typename decltype(tag)::Def;
    out = D::forward(v, at, n);
    *list_op = D::kPair;
  });
  return out;
}

/// The backward of the view reduction view_op and its list variant (what
/// reduce() registers: Recorder::enable_wide). The reduction is chosen at
/// run time, so every reduction's backward is in a program that calls it;
/// core/ops.hpp's functions and reduce<K>() register K's alone.
template <class T>
FamilyBackward<T> reduction_backward(Op view_op) noexcept {
  FamilyBackward<T> backward = nullptr;
  visit_op_of_kind<OpKind::kViewReduce>(
      view_op, [&backward](auto tag) noexcept { backward = &wide_backward<decltype(tag)::kOp, T>; });
  return backward;
}

/// The reduction view_op over no operands: its row's value of nothing
/// (kEmpty) as a constant node.
template <class T>
Value<T> empty_reduction(Tape<T>& tape, Op view_op) noexcept {
  Empty e = Empty::kZero;
  visit_op_of_kind<OpKind::kViewReduce>(view_op, [&e](auto tag) noexcept { e = decltype(tag)::Def::kEmpty; });
  return Recorder<T>::constant_node(tape, e);
}

/// An inner product's 3-slot descriptor [w, x, bias] after checking the
/// bias handle and the room for one node; kNoIndex (status set) if not.
template <class T>
Index dot_descriptor(Tape<T>& tape, Index w, Index x, const detail::PlainT<Value<T>>* bias) noexcept {
  using R = Recorder<T>;
  if ((bias != nullptr) && !R::owns(tape, *bias)) {
    R::reject(tape, *bias);
    return kNoIndex;
  }
  const Index descriptor = R::reserve(tape, 1U, 3U);
  if (descriptor != kNoIndex) {
    Index* const slots = R::slots(tape);
    slots[descriptor] = w;
    slots[descriptor + 1U] = x;
    slots[descriptor + 2U] = (bias != nullptr) ? bias->index() : kNoIndex;
  }
  return descriptor;
}

/// Records an inner product node: its product plus the descriptor's bias.
template <class T>
Value<T> push_dot(Tape<T>& tape, Op op, T product, Index descriptor, Index n) noexcept {
  using R = Recorder<T>;
  const Index bias = R::slots(tape)[descriptor + 2U];
  return R::push(tape, op, (bias != kNoIndex) ? (product + R::values(tape)[bias]) : product, descriptor, n);
}

/// The view-list flag of views[0..count) (detail::kListOfInputs if every
/// node is an input, else 0); the views are recorded (checked by caller).
template <class T>
BURTORCH_ALWAYS_INLINE inline Index inputs_flag(const Tape<T>& tape, const View* views, std::size_t count) noexcept {
  using R = Recorder<T>;
  const Op* const ops = R::ops(tape);
  const Index base = R::param_region(tape);
  Index inputs = kListOfInputs;
  for (std::size_t r = 0U; (inputs != 0U) && (r < count); ++r) {
    for (Index i = views[r].first; (inputs != 0U) && (i < (views[r].first + views[r].count)); ++i) {
      inputs = ((i >= base) && (ops[i - base] == Op::kInput)) ? inputs : 0U;
    }
  }
  return inputs;
}

template <class T>
Index matvec_descriptor(Tape<T>& tape, Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  using R = Recorder<T>;
  if (rows == 0U) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoIndex;
  }
  if (!R::list_valid(tape, x)) {
    return kNoIndex;
  }
  // Every weight and bias must be recorded (64-bit: rows * length may
  // exceed an Index; then it exceeds the tape's size too).
  const std::uint64_t weights = static_cast<std::uint64_t>(rows) * x.total;
  if (!R::recorded(tape, w_first, weights)) {
    static_cast<void>(R::fail(tape, Status::kInvalidHandle));
    return kNoIndex;
  }
  if ((bias_first != kNoIndex) && !R::recorded(tape, bias_first, rows)) {
    static_cast<void>(R::fail(tape, Status::kInvalidHandle));
    return kNoIndex;
  }
  const Index descriptor = R::reserve(tape, rows, 4U);  // room for all rows, or none is recorded
  if (descriptor != kNoIndex) {
    Index* const slots = R::slots(tape);
    slots[descriptor] = w_first;
    slots[descriptor + 1U] = x.slot;
    slots[descriptor + 2U] = bias_first;
    slots[descriptor + 3U] = x.total;
  }
  return descriptor;
}

}  // namespace detail

template <class T>
ViewList view_list(Tape<T>& tape, const View* views, std::size_t count) noexcept {
  using R = Recorder<T>;
  ViewList out;
  if ((views == nullptr) || (count == 0U) || (count >= (kNoIndex / 4U))) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return out;
  }
  std::uint64_t total = 0U;  // 64 bits: count < 2^30 views of < 2^32 nodes each cannot wrap it
  for (std::size_t r = 0U; r < count; ++r) {
    if ((views[r].count == 0U) || !R::recorded(tape, views[r].first, views[r].count)) {
      static_cast<void>(R::fail(tape, Status::kInvalidHandle));
      return out;
    }
    total += views[r].count;
  }
  if (total >= kNoIndex) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return out;
  }
  const Index slot = R::take_slots(tape, 1U + (2U * count));
  if (slot == kNoIndex) {
    return out;
  }
  // Inputs only (op kInput): the inner products over the list compute no
  // gradient for them (detail::kListOfInputs).
  Index* const slots = R::slots(tape);
  slots[slot] = static_cast<Index>(count) | detail::inputs_flag(tape, views, count);
  for (std::size_t r = 0U; r < count; ++r) {
    slots[slot + 1U + (2U * static_cast<Index>(r))] = views[r].first;
    slots[slot + 2U + (2U * static_cast<Index>(r))] = views[r].count;
  }
  out.slot = slot;
  out.total = static_cast<Index>(total);
  return out;
}

template <class T>
ViewList view_list_rows(Tape<T>& tape, View x, Index width) noexcept {
  using R = Recorder<T>;
  if ((width == 0U) || (x.count == 0U) || ((x.count % width) != 0U)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return ViewList{};
  }
  if (!R::recorded(tape, x.first, x.count)) {
    static_cast<void>(R::fail(tape, Status::kInvalidHandle));
    return ViewList{};
  }
  const Index rows = x.count / width;
  if (rows >= (kNoIndex / 4U)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return ViewList{};
  }
  const Index slot = R::take_slots(tape, 1U + (2U * rows));
  if (slot == kNoIndex) {
    return ViewList{};
  }
  Index* const slots = R::slots(tape);
  slots[slot] = rows | detail::inputs_flag(tape, &x, 1U);  // as view_list()
  for (Index r = 0U; r < rows; ++r) {
    slots[slot + 1U + (2U * r)] = x.first + (r * width);
    slots[slot + 2U + (2U * r)] = width;
  }
  ViewList out;
  out.slot = slot;
  out.total = x.count;
  return out;
}

template <class T>
Value<T> reduce(Tape<T>& tape, Op view_op, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  using R = Recorder<T>;
  // Recorder::reduce_operands' checks, written out: this function is in
  // every program that records a reduction, reduce_operands only where a
  // family's reduction is recorded.
  if (!detail::is_view_reduction(view_op)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  if (n == 0U) {
    return detail::empty_reduction(tape, view_op);
  }
  if ((xs == nullptr) || (n >= kNoIndex)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  if (!R::room_for_interior(tape)) {  // check before taking slots: a failed op takes none
    return R::fail_capacity(tape, 1U, 0U);
  }
  const Index before = R::slots_used(tape);
  Index where = kNoIndex;
  bool is_view = false;
  if (!R::store_operand(tape, xs, n, &where, &is_view)) {
    return Value<T>(&tape, kNoIndex);
  }
  const auto count = static_cast<Index>(n);
  const T* const v = R::values(tape);
  Op list_op = view_op;
  const T result = is_view ? detail::reduce_value(v, view_op, detail::view_operand(where), count, &list_op)
                           : detail::reduce_value(v, view_op, detail::list_operand(&R::slots(tape)[where]), count,
                                                  &list_op);
  R::enable_wide(tape, view_op, detail::reduction_backward<T>(view_op));
  const Value<T> out = R::push(tape, is_view ? view_op : list_op, result, where, count);
  if (!out.valid()) {
    R::release_slots(tape, before);
  }
  return out;
}

template <class T>
Value<T> reduce(Tape<T>& tape, Op view_op, View x) noexcept {
  using R = Recorder<T>;
  if ((x.first == kNoIndex) || !detail::is_view_reduction(view_op)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  if (x.count == 0U) {
    return detail::empty_reduction(tape, view_op);
  }
  if (!R::recorded(tape, x.first, x.count)) {
    return R::fail(tape, Status::kInvalidHandle);
  }
  Op list_op = view_op;
  const T result = detail::reduce_value(R::values(tape), view_op, detail::view_operand(x.first), x.count, &list_op);
  R::enable_wide(tape, view_op, detail::reduction_backward<T>(view_op));
  return R::push(tape, view_op, result, x.first, x.count);
}

template <class T>
Value<T> inner_product(Tape<T>& tape, const detail::PlainT<Value<T>>* w, const detail::PlainT<Value<T>>* x, std::size_t n,
                       const detail::PlainT<Value<T>>* bias) noexcept {
  using R = Recorder<T>;
  if ((w == nullptr) || (x == nullptr) || (n == 0U) || (n >= kNoIndex)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  const Index before = R::slots_used(tape);
  const Index descriptor = detail::dot_descriptor(tape, kNoIndex, kNoIndex, bias);  // operands filled in below
  Index w_at = kNoIndex;
  Index x_at = kNoIndex;
  bool w_view = false;
  bool x_view = false;
  if ((descriptor == kNoIndex) || !R::store_operand(tape, w, n, &w_at, &w_view) ||
      !R::store_operand(tape, x, n, &x_at, &x_view)) {
    R::release_slots(tape, before);
    return Value<T>(&tape, kNoIndex);
  }
  // The product is symmetric: keep a view operand first (RL, never LR).
  if (!w_view && x_view) {
    const Index t = w_at;
    w_at = x_at;
    x_at = t;
    w_view = true;
    x_view = false;
  }
  const auto count = static_cast<Index>(n);
  Index* const slots = R::slots(tape);
  const T* const v = R::values(tape);
  slots[descriptor] = w_at;
  slots[descriptor + 1U] = x_at;
  T result = T(0);
  Op op = Op::kDotLL;
  if (w_view && x_view) {
    op = Op::kDotRR;
    result = detail::view_dot(v, w_at, x_at, count);
    R::template enable_wide<Op::kDotRR>(tape);
  } else if (w_view) {
    op = Op::kDotRL;
    result = detail::dot_of(v, detail::view_operand(w_at), detail::list_operand(&slots[x_at]), count);
    R::template enable_wide<Op::kDotRL>(tape);
  } else {
    result = detail::dot_of(v, detail::list_operand(&slots[w_at]), detail::list_operand(&slots[x_at]), count);
    R::template enable_wide<Op::kDotLL>(tape);
  }
  const Value<T> out = detail::push_dot(tape, op, result, descriptor, count);
  if (!out.valid()) {
    R::release_slots(tape, before);
  }
  return out;
}

template <class T>
Value<T> inner_product(Tape<T>& tape, View w, View x, const detail::PlainT<Value<T>>* bias) noexcept {
  using R = Recorder<T>;
  if ((x.count == 0U) || (w.count != x.count)) {
    return R::fail(tape, Status::kInvalidArgument);
  }
  if (!R::recorded(tape, w.first, w.count) || !R::recorded(tape, x.first, x.count)) {
    return R::fail(tape, Status::kInvalidHandle);
  }
  const Index descriptor = detail::dot_descriptor(tape, w.first, x.first, bias);
  if (descriptor == kNoIndex) {
    return Value<T>(&tape, kNoIndex);
  }
  R::template enable_wide<Op::kDotRR>(tape);
  return detail::push_dot(tape, Op::kDotRR, detail::view_dot(R::values(tape), w.first, x.first, x.count), descriptor,
                          x.count);
}

template <class T>
Value<T> inner_product(Tape<T>& tape, Index w_first, ViewList x, const detail::PlainT<Value<T>>* bias) noexcept {
  using R = Recorder<T>;
  if (!R::list_valid(tape, x)) {
    return Value<T>(&tape, kNoIndex);
  }
  if (!R::recorded(tape, w_first, x.total)) {
    return R::fail(tape, Status::kInvalidHandle);
  }
  const Index descriptor = detail::dot_descriptor(tape, w_first, x.slot, bias);
  if (descriptor == kNoIndex) {
    return Value<T>(&tape, kNoIndex);
  }
  R::template enable_wide<Op::kDotRV>(tape);
  return detail::push_dot(tape, Op::kDotRV, detail::dot_list_of(R::values(tape), w_first, &R::slots(tape)[x.slot]),
                          descriptor, x.total);
}

template <class T>
View matvec(Tape<T>& tape, Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  using R = Recorder<T>;
  const Index descriptor = detail::matvec_descriptor(tape, w_first, rows, x, bias_first);
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  R::template enable_wide<Op::kMatRow>(tape);
  const auto first = static_cast<Index>(tape.size());
  const T* const v = R::values(tape);
  const Index* const list = &R::slots(tape)[x.slot];
  for (Index o = 0U; o < rows; ++o) {
    // OpDef<kMatRow>::value (what replay computes), with the descriptor's
    // fields in registers: the same operations, so the same bits.
    T result = detail::dot_list_of(v, w_first + (o * x.total), list);
    if (bias_first != kNoIndex) {
      result += v[bias_first + o];
    }
    static_cast<void>(R::append(tape, Op::kMatRow, result, descriptor, o));  // fits: room checked above
  }
  return View{first, rows};
}

template <class T>
View scale_shift(Tape<T>& tape, Index scale_first, Index x_first, Index shift_first, Index n) noexcept {
  using R = Recorder<T>;
  if (n == 0U) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  if (!R::recorded(tape, scale_first, n) || !R::recorded(tape, x_first, n) || !R::recorded(tape, shift_first, n)) {
    static_cast<void>(R::fail(tape, Status::kInvalidHandle));
    return kNoView;
  }
  const Index descriptor = R::reserve(tape, n, 3U);  // room for all outputs, or none is recorded
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  Index* const slots = R::slots(tape);
  slots[descriptor] = scale_first;
  slots[descriptor + 1U] = x_first;
  slots[descriptor + 2U] = shift_first;
  R::template enable_wide<Op::kScaleShift>(tape);
  const auto first = static_cast<Index>(tape.size());
  for (Index o = 0U; o < n; ++o) {
    const T y = OpDef<Op::kScaleShift>::value(R::values(tape), slots, first, descriptor, o);
    static_cast<void>(R::append(tape, Op::kScaleShift, y, descriptor, o));  // fits: room checked above
  }
  return View{first, n};
}

}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_VIEWS_HPP
