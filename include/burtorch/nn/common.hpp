// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the layers and losses of nn/ record with: handles of nodes (node,
/// gather), parameters drawn from an Init (make_params), the activation a
/// layer applies (Activation, activate), the element-wise sum of two views
/// (add, for residual connections) and the widest vector a layer reduces at
/// once (kMaxGather).
#ifndef BURTORCH_NN_COMMON_HPP
#define BURTORCH_NN_COMMON_HPP

#include <cstddef>

#include "burtorch/nn/init.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// Widest vector the layers reduce at once: a layer norm's width, the
/// logits of cross_entropy, the predictions of mse (read in place with
/// burtorch::reduce over a view, so the stack does not grow with it).
constexpr std::size_t kMaxGather = 128U;

/// The function a Linear applies to its outputs.
enum class Activation : unsigned char {
  kIdentity,  ///< none: act(x) = x
  kTanh,      ///< tanh
  kRelu,      ///< max(x, 0)
  kSigmoid,   ///< 1 / (1 + exp(-x))
};

/// Argument slots a constant of type T takes (x * c stores c).
template <class T>
constexpr std::size_t constant_slots() noexcept {
  return Recorder<T>::kConstantSlots;
}

/// The handle of node `i` of `tape`.
template <class T>
inline Value<T> node(Tape<T>& tape, Index i) noexcept {
  return Value<T>(&tape, i);
}

/// Handles of the nodes of a view, into out[0..v.count); false if too wide.
template <class T>
inline bool gather(Tape<T>& tape, View v, Value<T>* out, std::size_t capacity) noexcept {
  if (v.count > capacity) {
    return false;
  }
  for (Index i = 0U; i < v.count; ++i) {
    out[i] = Value<T>(&tape, v.first + i);
  }
  return true;
}

/// Whether `count` parameters made next lie inside the tape's parameter
/// region, when it has one (the tape of a plan: TrainingMemory, PlanTape,
/// a Tape given make_plan's parameters). A layer wider than its plan is
/// refused here, kCapacityExceeded with nothing recorded, not at the first
/// sample whose nodes its parameters would have taken. True on a tape
/// without a region.
template <class T>
inline bool fits_param_region(Tape<T>& tape, std::size_t count) noexcept {
  const TapeUsage u = tape.usage();
  const bool fits = (u.params == 0U) || ((u.nodes <= u.params) && (count <= (u.params - u.nodes)));
  if (!fits) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
  }
  return fits;
}

/// make_params() (below) with each value from draw() (a callable returning
/// T).
template <class T, class Draw>
inline Index make_params_by(Tape<T>& tape, std::size_t count, const char* name, Draw draw) noexcept {
  if (count >= kNoIndex) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoIndex;
  }
  if (!fits_param_region(tape, count)) {
    return kNoIndex;
  }
  const View made = burtorch::record_view(tape, static_cast<Index>(count),
                                          [&](Index /*k*/) noexcept { return tape.param(draw(), name); });
  return made.first;
}

/// Appends `count` parameters drawn from `init` (rows of `fan_in` inputs),
/// in T's precision (draw_as).
/// Returns the first index, or kNoIndex if the tape is full or failed, or
/// the parameters do not fit its parameter region (fits_param_region).
template <class T>
inline Index make_params(Tape<T>& tape, std::size_t count, const Init& init, std::size_t fan_in, Rng& rng,
                         const char* name) noexcept {
  return make_params_by(tape, count, name, [&]() noexcept { return draw_as<T>(init, fan_in, rng); });
}

/// One unary node per element of x; the results form a new view.
template <class T>
inline View activate(Tape<T>& tape, View x, Activation act) noexcept {
  if (act == Activation::kIdentity) {
    return x;
  }
  return burtorch::record_view(tape, x.count, [&](Index i) noexcept {
    const Value<T> v = node(tape, x.first + i);
    Value<T> y;
    if (act == Activation::kTanh) {
      y = tanh(v);
    } else if (act == Activation::kRelu) {
      y = relu(v);
    } else {
      y = sigmoid(v);
    }
    return y;
  });
}

/// activate() with the activation known at compile time: only A's op is
/// compiled in (a ReLU firmware links no tanhf or expf for it).
template <Activation A, class T>
inline View activate(Tape<T>& tape, View x) noexcept {
  if constexpr (A == Activation::kIdentity) {
    return x;
  } else {
    return burtorch::record_view(tape, x.count, [&](Index i) noexcept {
      const Value<T> v = node(tape, x.first + i);
      if constexpr (A == Activation::kTanh) {
        return tanh(v);
      } else if constexpr (A == Activation::kRelu) {
        return relu(v);
      } else {
        static_assert(A == Activation::kSigmoid, "an Activation");
        return sigmoid(v);
      }
    });
  }
}

/// Element-wise x + y of two views of one width (residual connections).
template <class T>
inline View add(Tape<T>& tape, View x, View y) noexcept {
  if (x.count != y.count) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  return burtorch::record_view(tape, x.count,
                          [&](Index i) noexcept { return node(tape, x.first + i) + node(tape, y.first + i); });
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_COMMON_HPP
