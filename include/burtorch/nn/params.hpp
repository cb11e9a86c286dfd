// SPDX-License-Identifier: Apache-2.0
/// @file
/// View: consecutive nodes of a tape. A layer's outputs are a view; so are a
/// layer's or a model's parameters (params()), which is what an optimizer
/// step, a serial batch and gradient clipping take; params_view() makes one
/// of parameters recorded by hand. all_or_nothing() is how a layer's call
/// leaves nothing behind when it fails part-way.
#ifndef BURTORCH_NN_PARAMS_HPP
#define BURTORCH_NN_PARAMS_HPP

#include <cstddef>

#include "burtorch/core/record.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

// burtorch::View and burtorch::kNoView (core/tape.hpp) are the views: nn code,
// inside namespace burtorch, names them without a qualifier.

/// True if `v` is not empty and every node of it is recorded on `tape`.
template <class T>
inline bool is_recorded(const Tape<T>& tape, View v) noexcept {
  const std::size_t size = tape.size();
  return (v.count != 0U) && (v.first < size) && (v.count <= (size - v.first));
}

/// What a layer's or a model's call keeps of its recording when it fails
/// part-way, after its checks (a tape too small, an op's error): nothing.
/// Runs record() and, if the tape's status is not kOk afterwards and the
/// call recorded nodes or slots, rewinds the tape to where the call found
/// it: the same nodes (values and gradients untouched) and slots as before,
/// the status kept (and TapeUsage's nodes_needed and slots_needed after
/// kCapacityExceeded). Returns record()'s result, or `failed` if the
/// status is not kOk. Marks taken before the call stay valid, as after any
/// rewind (Tape::rewind: with kMarkLevels nested marks, take the oldest again).
template <class T, class R, class F>
inline R all_or_nothing(Tape<T>& tape, R failed, F&& record) noexcept {
  const Mark start = tape.mark();
  const R result = record();
  if (BURTORCH_UNLIKELY(tape.status() != Status::kOk)) {
    if ((tape.size() != start.nodes) || (tape.usage().slots != start.slots)) {
      static_cast<void>(tape.rewind(start));
    }
    return failed;
  }
  return result;
}

/// The view of n parameters recorded by hand (`tape.param(x)` n times, one
/// after another): what an optimizer steps when the parameters are not a
/// layer's. `params[k]` must be node params[0].index() + k of `tape`, and a
/// leaf (a parameter), for every k. Otherwise kNoView, with kInvalidArgument
/// recorded on the tape (nothing else changes):
///
///   bt::Value<double> p[3] = {tape.param(1.0), tape.param(2.0), tape.param(3.0)};
///   const bt::View v = nn::params_view(tape, p, 3);   // {p[0].index(), 3}
///   opt.step(tape, v);
template <class T>
inline View params_view(Tape<T>& tape, const Value<T>* params, std::size_t n) noexcept {
  bool ok = (params != nullptr) && (n != 0U) && (n < kNoIndex);
  for (std::size_t k = 0U; ok && (k < n); ++k) {
    ok = Recorder<T>::owns(tape, params[k]) && (params[k].index() == (params[0].index() + static_cast<Index>(k))) &&
         (Recorder<T>::op(tape, params[k].index()) == Op::kLeaf);
  }
  if (!ok) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  return View{params[0].index(), static_cast<Index>(n)};
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_PARAMS_HPP
