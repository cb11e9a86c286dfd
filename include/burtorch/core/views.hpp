// SPDX-License-Identifier: Apache-2.0
/// @file
/// Recording over views (consecutive nodes, burtorch::View) and view lists
/// (several views read as one operand, burtorch::ViewList): what layers are
/// made of. A layer's outputs are one view whose nodes share one descriptor
/// in argument slots (matvec, scale_shift); an inner product reads a view
/// list in place, without copying its nodes.
///
/// Every function checks its operands: a wrong op, a null pointer or an
/// empty list is kInvalidArgument; an operand that is empty (default or
/// from a call with no tape) kEmptyHandle, of another tape kForeignValue,
/// not (or no longer) recorded kInvalidHandle; a full tape
/// kCapacityExceeded. Nothing is recorded on an error (the tape keeps the
/// sticky status) and the result is invalid (kNoView, an invalid handle or
/// list). The recorders are compiled into the library for float and double
/// (core/detail/views.hpp; a tape of another scalar type instantiates them
/// where lanes/ops.hpp is included).
#ifndef BURTORCH_CORE_VIEWS_HPP
#define BURTORCH_CORE_VIEWS_HPP

#include <cstddef>

#include "burtorch/core/detail/step.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

namespace detail {
/// record_view's refusal: the nodes and slots its calls recorded are
/// discarded (a rewind to where it started), and kInvalidArgument recorded
/// unless the tape holds an error already.
template <class T>
BURTORCH_COLD View refuse_view(Tape<T>& tape, Index nodes, Index slots) noexcept {
  const Mark start{nodes, slots, &tape, Recorder<T>::generation(tape)};
  static_cast<void>(tape.rewind(start));  // refused only if the calls rewound past it: then nothing is left
  static_cast<void>(tape.report(Status::kInvalidArgument));
  return kNoView;
}
}  // namespace detail

/// Records n nodes by calling f(k) for k = 0 .. n-1, where each call
/// records one node (an op of core/ops.hpp) and returns its handle; the nodes
/// are consecutive, so they are returned as one View (a layer's
/// activations, its parameters). Refused with kNoView if a call failed
/// (the tape keeps that status) or if the calls did not record exactly n
/// nodes (kInvalidArgument): then the tape is as record_view found it, the
/// nodes and slots the calls recorded discarded. One check at the end: a
/// failed op records nothing and every later op fails too, so the node
/// count alone tells.
template <class T, class F>
inline View record_view(Tape<T>& tape, Index n, F f) noexcept {
  const std::size_t first = tape.size();
  const Index slots = Recorder<T>::slots_used(tape);
  for (Index k = 0U; k < n; ++k) {
    static_cast<void>(f(k));
  }
  if (BURTORCH_UNLIKELY((tape.status() != Status::kOk) || ((tape.size() - first) != n))) {
    return detail::refuse_view(tape, static_cast<Index>(first), slots);
  }
  return View{static_cast<Index>(first), n};
}

/// Stores `count` views once (1 + 2 * count slots) as one operand; see
/// ViewList. A list whose views are all inputs (Tape::input) is marked as
/// such: the inner products over it compute no gradient for them.
template <class T>
ViewList view_list(Tape<T>& tape, const View* views, std::size_t count) noexcept;
/// The view x as x.count / width views of `width` nodes each (1 + 2 *
/// x.count / width slots; x.count a multiple of width, else
/// kInvalidArgument): the same inputs as view_list(tape, &x, 1), in rows a
/// layer can tell apart (a lane tape's layer reads a gathered row that
/// every lane shares as shared scalars: lanes/lanes.hpp's lane_matvec).
template <class T>
ViewList view_list_rows(Tape<T>& tape, View x, Index width) noexcept;

/// A reduction over xs[0..n): `view_op` is the view variant of a core
/// reduction (Op::kSumR, kMeanR, kLogSumExpR, ...: op_kind() kViewReduce;
/// a family's reduction, such as reduce_max, is recorded by its function);
/// stored as a view if the nodes are consecutive, else as a list (the op's
/// L variant). Over no operands (n == 0; xs may be null) it records the
/// reduction's value of nothing, as PyTorch gives it (the row's kEmpty: sum
/// 0, product 1, mean and variance NaN, log-sum-exp -inf), as a constant
/// node, and no error. core/ops.hpp's reduce_sum and the others call it.
template <class T>
Value<T> reduce(Tape<T>& tape, Op view_op, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept;
/// The same reduction of the view x read in place (a layer's outputs): no
/// handle array to gather, the same node and bits; an empty view gives the
/// value of nothing. kInvalidArgument for another op or kNoView (a failed
/// layer's), kInvalidHandle if a node is not recorded.
template <class T>
Value<T> reduce(Tape<T>& tape, Op view_op, View x) noexcept;

/// reduce() with the reduction chosen at compile time: K is a core view
/// reduction (Op::kSumR, ..., Op::kLogSumExpR). The same checks, node and
/// bits; a program that calls it links K's code alone (reduce() above
/// chooses at run time, so it links every reduction's, log-sum-exp's expf
/// and logf included). core/ops.hpp's reduce_sum and the others call it.
template <Op K, class T>
inline Value<T> reduce(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  static_assert(op_kind(K) == OpKind::kViewReduce, "reduce<K>: K is a core view reduction (Op::kSumR, ...)");
  Recorder<T>::template enable_wide<K>(tape);
  return Recorder<T>::template reduce<K, OpDef<K>::kPair>(tape, xs, n);
}
/// The same over the view x, read in place (reduce(tape, op, x) above).
template <Op K, class T>
inline Value<T> reduce(Tape<T>& tape, View x) noexcept {
  static_assert(op_kind(K) == OpKind::kViewReduce, "reduce<K>: K is a core view reduction (Op::kSumR, ...)");
  Recorder<T>::template enable_wide<K>(tape);
  return Recorder<T>::template reduce<K>(tape, x);
}

/// sum(w[i] * x[i]) (+ *bias if bias is not null); each side stored as a
/// view when its nodes are consecutive, else as a list of slots.
template <class T>
Value<T> inner_product(Tape<T>& tape, const detail::PlainT<Value<T>>* w, const detail::PlainT<Value<T>>* x, std::size_t n,
                       const detail::PlainT<Value<T>>* bias) noexcept;
/// The same for two views of equal length (kInvalidArgument otherwise, or
/// if they are empty): no handle array to gather and scan (attention
/// scores).
template <class T>
Value<T> inner_product(Tape<T>& tape, View w, View x, const detail::PlainT<Value<T>>* bias = nullptr) noexcept;
/// sum(value[w_first + i] * x[i]) (+ bias) over the x.total elements of the
/// view list x (one neuron of a layer).
template <class T>
Value<T> inner_product(Tape<T>& tape, Index w_first, ViewList x, const detail::PlainT<Value<T>>* bias = nullptr) noexcept;

/// A layer's outputs: `rows` consecutive nodes, row o = sum(value[w_first +
/// o * x.total + k] * x[k]) (+ value[bias_first + o]; kNoIndex: no bias).
/// The weights are row-major from w_first. All rows share one 4-slot
/// descriptor (an inner product per output stores 3 slots each). Returns
/// the rows (kNoView on error). ext/fused.hpp's matvec<Act> fuses an
/// activation into every row.
template <class T>
View matvec(Tape<T>& tape, Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
/// n consecutive nodes, output o = value[x_first + o] * value[scale_first +
/// o] + value[shift_first + o], sharing one 3-slot descriptor (a layer
/// norm's gain and bias). Returns the outputs (kNoView on error).
template <class T>
View scale_shift(Tape<T>& tape, Index scale_first, Index x_first, Index shift_first, Index n) noexcept;

namespace detail {
/// A matvec's checks (matvec()) and its 4-slot descriptor [w_first, list
/// slot, bias_first, x.total] with room for its rows: the descriptor's
/// first slot, or kNoIndex (status set, nothing taken). ext/fused.hpp's rows
/// share it.
template <class T>
Index matvec_descriptor(Tape<T>& tape, Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
}  // namespace detail

/// @cond INTERNAL
// Compiled into the library (lib/tape.cpp).
extern template ViewList view_list<float>(Tape<float>&, const View*, std::size_t) noexcept;
extern template ViewList view_list_rows<float>(Tape<float>&, View, Index) noexcept;
extern template Value<float> reduce<float>(Tape<float>&, Op, const Value<float>*, std::size_t) noexcept;
extern template Value<float> reduce<float>(Tape<float>&, Op, View) noexcept;
extern template Value<float> inner_product<float>(Tape<float>&, const Value<float>*, const Value<float>*, std::size_t,
                                                const Value<float>*) noexcept;
extern template Value<float> inner_product<float>(Tape<float>&, View, View, const Value<float>*) noexcept;
extern template Value<float> inner_product<float>(Tape<float>&, Index, ViewList, const Value<float>*) noexcept;
extern template View matvec<float>(Tape<float>&, Index, Index, ViewList, Index) noexcept;
extern template View scale_shift<float>(Tape<float>&, Index, Index, Index, Index) noexcept;
extern template Index detail::matvec_descriptor<float>(Tape<float>&, Index, Index, ViewList, Index) noexcept;
extern template ViewList view_list<double>(Tape<double>&, const View*, std::size_t) noexcept;
extern template ViewList view_list_rows<double>(Tape<double>&, View, Index) noexcept;
extern template Value<double> reduce<double>(Tape<double>&, Op, const Value<double>*, std::size_t) noexcept;
extern template Value<double> reduce<double>(Tape<double>&, Op, View) noexcept;
extern template Value<double> inner_product<double>(Tape<double>&, const Value<double>*, const Value<double>*, std::size_t,
                                                const Value<double>*) noexcept;
extern template Value<double> inner_product<double>(Tape<double>&, View, View, const Value<double>*) noexcept;
extern template Value<double> inner_product<double>(Tape<double>&, Index, ViewList, const Value<double>*) noexcept;
extern template View matvec<double>(Tape<double>&, Index, Index, ViewList, Index) noexcept;
extern template View scale_shift<double>(Tape<double>&, Index, Index, Index, Index) noexcept;
extern template Index detail::matvec_descriptor<double>(Tape<double>&, Index, Index, ViewList, Index) noexcept;
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_CORE_VIEWS_HPP
