// SPDX-License-Identifier: Apache-2.0
/// @file
/// The members of Tape<T> in libburtorch 0.2 that are free functions since
/// 0.3 (recorders, replay, inspection, fine-tuning, lanes), kept callable
/// for one minor version and deprecated: each says what replaces it, and is
/// removed in 0.4. Declared here, in a base class of Tape<T> that has no
/// data (so Tape's size is unchanged); each is defined beside what
/// replaces it (views.hpp, fused.hpp, frozen.hpp, replay.hpp, inspect.hpp,
/// lane_ops.hpp, nn/losses.hpp), so calling one needs that header, and the
/// core includes none of them.
#ifndef BURTORCH_TAPE_DEPRECATED_HPP
#define BURTORCH_TAPE_DEPRECATED_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/index.hpp"
#include "burtorch/op.hpp"
#include "burtorch/status.hpp"

namespace burtorch {

template <class T>
class Tape;
template <class T>
class Value;
struct Mark;
struct View;
struct ViewList;
struct Replay;
struct FrozenMatrix;
struct FrozenVector;

namespace detail {

/// Tape<T>'s deprecated members (see the file comment).
template <class T>
class DeprecatedTapeMembers {
 public:
  [[deprecated("use burtorch::kTooLarge")]] static constexpr std::size_t kTooLarge =
      std::numeric_limits<std::size_t>::max();
  [[deprecated("use burtorch::Recorder<T>::kConstantSlots")]] static constexpr Index kConstantSlots =
      static_cast<Index>((sizeof(T) + sizeof(Index) - 1U) / sizeof(Index));
  [[deprecated("use burtorch::kMarkLevels")]] static constexpr Index kMarkLevels = 4U;

  [[deprecated("use tape.usage().node_capacity")]] std::size_t capacity() const noexcept;
  [[deprecated("use tape.usage().slots")]] std::size_t slots_used() const noexcept;
  [[deprecated("use tape.usage().slot_capacity")]] std::size_t slot_capacity() const noexcept;
  [[deprecated("use tape.usage().params")]] std::size_t param_capacity() const noexcept;

  [[deprecated("use burtorch::param_name(tape, i) (inspect.hpp)")]] const char* name(Index i) const noexcept;
  [[deprecated("use burtorch::all_finite(tape) (inspect.hpp)")]] bool all_finite() const noexcept;
  [[deprecated("use burtorch::node_op(tape, i) (inspect.hpp)")]] Op op(Index i) const noexcept;
  [[deprecated("use burtorch::node_operands(tape, i).a (inspect.hpp)")]] Index arg_a(Index i) const noexcept;
  [[deprecated("use burtorch::node_operands(tape, i).b (inspect.hpp)")]] Index arg_b(Index i) const noexcept;
  [[deprecated("use burtorch::slot_at(tape, k) (inspect.hpp)")]] Index slot(Index k) const noexcept;
  [[deprecated("use burtorch::node_constant(tape, i) (inspect.hpp)")]] T constant(Index i) const noexcept;

  [[deprecated("use burtorch::stop_gradient(tape) (frozen.hpp)")]] void stop_gradient() noexcept;
  [[deprecated("use burtorch::gradient_stop(tape) (frozen.hpp)")]] Index gradient_stop() const noexcept;

  template <class F>
  [[deprecated("use burtorch::record_view(tape, n, f) (views.hpp)")]] View record_view(Index n, F f) noexcept;
  [[deprecated("use burtorch::reduce(tape, op, xs, n) (views.hpp)")]] Value<T> reduce(Op range_op, const Value<T>* xs,
                                                                                       std::size_t n) noexcept;
  [[deprecated("use burtorch::inner_product(tape, w, x, n, bias) (views.hpp)")]] Value<T> dot(
      const Value<T>* w, const Value<T>* x, std::size_t n, const Value<T>* bias) noexcept;
  [[deprecated("use burtorch::inner_product(tape, View w, View x, bias) (views.hpp)")]] Value<T> dot_ranges(
      Index w_first, Index x_first, Index n, const Value<T>* bias) noexcept;
  [[deprecated("use burtorch::view_list(tape, views, count) (views.hpp)")]] ViewList view_list(
      const View* parts, std::size_t count) noexcept;
  [[deprecated("use burtorch::view_list_rows(tape, x, width) (views.hpp)")]] ViewList view_list_rows(
      View x, Index width) noexcept;
  [[deprecated("use burtorch::inner_product(tape, w_first, list, bias) (views.hpp)")]] Value<T> dot_views(
      Index w_first, ViewList x, const Value<T>* bias) noexcept;
  [[deprecated("use burtorch::matvec(tape, ...) (views.hpp)")]] View matvec(Index w_first, Index rows, ViewList x,
                                                                             Index bias_first) noexcept;
  template <Op Act>
  [[deprecated("use burtorch::matvec<Act>(tape, ...) (fused.hpp)")]] View matvec(Index w_first, Index rows,
                                                                                  ViewList x,
                                                                                  Index bias_first) noexcept;
  [[deprecated("use burtorch::scale_shift(tape, ...) (views.hpp)")]] View scale_shift(
      Index scale_first, Index x_first, Index shift_first, Index n) noexcept;
  [[deprecated("use burtorch::reduce(tape, op, View) (views.hpp)")]] Value<T> reduce_range(Op range_op, Index first,
                                                                                            Index n) noexcept;
  [[deprecated("use burtorch::matvec_frozen(tape, ...) (frozen.hpp)")]] View matvec_frozen(
      const FrozenMatrix& w, ViewList x, const FrozenVector* bias) noexcept;

  [[deprecated("use burtorch::replayable(tape, mark, root) (replay.hpp)")]] Replay replayable(
      Mark from, Value<T> root) noexcept;
  [[deprecated("use burtorch::set_value(tape, source, x) (replay.hpp)")]] Status set(Value<T> source, T x) noexcept;
  [[deprecated("use burtorch::set_values(tape, view, x) (replay.hpp)")]] Status set(View sources,
                                                                                    const T* x) noexcept;
  [[deprecated("use burtorch::nn::set_target(tape, loss, target) (nn/losses.hpp)")]] Status set_target(
      Value<T> loss, Index target) noexcept;
  [[deprecated("use burtorch::replay(tape, r) (replay.hpp)")]] Status replay(const Replay& r) noexcept;
  [[deprecated("use burtorch::replay_forward(tape, r) (replay.hpp)")]] Status replay_forward(
      const Replay& r) noexcept;

  template <class P>
  [[deprecated("use burtorch::matvec_shared(tape, p, ...) (lane_ops.hpp)")]] View matvec_shared(
      const P& p, Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
  template <class P>
  [[deprecated("use burtorch::scale_shift_shared(tape, p, ...) (lane_ops.hpp)")]] View scale_shift_shared(
      const P& p, Index scale_first, Index x_first, Index shift_first, Index n) noexcept;
  template <class P>
  [[deprecated("use burtorch::gather_shared(tape, p, ...) (lane_ops.hpp)")]] View gather_shared(
      const P& p, Index table, Index table_rows, Index width, const Index* rows, Index count) noexcept;
  template <class A = Index>
  [[deprecated("use burtorch::pick(tape, x, at) (lane_ops.hpp)")]] Value<T> pick(View x, const A* at) noexcept;

 protected:
  DeprecatedTapeMembers() noexcept = default;

 private:
  Tape<T>& self() noexcept { return static_cast<Tape<T>&>(*this); }
  const Tape<T>& self() const noexcept { return static_cast<const Tape<T>&>(*this); }
};

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_TAPE_DEPRECATED_HPP
