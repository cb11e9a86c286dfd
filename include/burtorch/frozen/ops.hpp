// SPDX-License-Identifier: Apache-2.0
/// @file
/// Fine-tuning: a layer over frozen weights in caller memory (matvec_frozen,
/// an op family, ext/extension.hpp: its backward and the formats' readers are
/// in a program only if it records the layer), and stop_gradient, which
/// keeps backward out of a frozen backbone's forward pass. The weights'
/// formats are frozen/weights.hpp; docs/training.md, "Fine-tuning", shows
/// the whole path.
#ifndef BURTORCH_FROZEN_OPS_HPP
#define BURTORCH_FROZEN_OPS_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/ext/extension.hpp"
#include "burtorch/frozen/weights.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/simd.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {

namespace detail {
/// Readers of one format's weights as float (the loops below are
/// instantiated once per format: the format is chosen once per row).
/// @{
struct F32Reader {
  const float* p;
  float operator[](std::size_t k) const noexcept { return p[k]; }
};
struct F16Reader {
  const std::uint16_t* p;
  float operator[](std::size_t k) const noexcept { return f16_to_float(p[k]); }
};
struct BF16Reader {
  const std::uint16_t* p;
  float operator[](std::size_t k) const noexcept { return bf16_to_float(p[k]); }
};
struct I8Reader {
  const std::int8_t* p;
  float scale;
  float operator[](std::size_t k) const noexcept { return scale * static_cast<float>(p[k]); }
};
/// @}

/// Calls f(reader) with the reader of a's format (nothing for an unknown one).
template <class F>
inline void with_reader(const FrozenArray& a, F&& f) noexcept {
  switch (a.format) {
    case WeightFormat::kF32:
      f(F32Reader{a.f32});
      break;
    case WeightFormat::kF16:
      f(F16Reader{a.bits16});
      break;
    case WeightFormat::kBF16:
      f(BF16Reader{a.bits16});
      break;
    case WeightFormat::kI8:
      f(I8Reader{a.i8, a.scale});
      break;
    default:
      break;
  }
}

/// sum(T(w[at + k]) * v[first + k]) over k < n, in dot_of's order (four
/// accumulators); float weights on a float tape go to simd::dot.
template <class T, class R>
inline T frozen_run_dot(R w, std::size_t at, const T* v, Index first, Index n) noexcept {
  if constexpr (std::is_same<T, float>::value && std::is_same<R, F32Reader>::value) {
    return simd::dot(&w.p[at], &v[first], n);
  } else {
    T s0 = T(0);
    T s1 = T(0);
    T s2 = T(0);
    T s3 = T(0);
    Index k = 0U;
    for (; (k + 4U) <= n; k += 4U) {
      s0 += T(w[at + k]) * v[first + k];
      s1 += T(w[at + k + 1U]) * v[first + k + 1U];
      s2 += T(w[at + k + 2U]) * v[first + k + 2U];
      s3 += T(w[at + k + 3U]) * v[first + k + 3U];
    }
    for (; k < n; ++k) {
      s0 += T(w[at + k]) * v[first + k];
    }
    return (s0 + s1) + (s2 + s3);
  }
}

/// The descriptor of a frozen matvec in argument slots, from slot d:
/// [list, cols, format, scale, weights' address (kFrozenPointerSlots)],
/// the scale and the address stored as object representations.
/// @{
constexpr Index kFrozenList = 0U;
constexpr Index kFrozenCols = 1U;
constexpr Index kFrozenFormat = 2U;
constexpr Index kFrozenScale = 3U;
constexpr Index kFrozenPointer = 4U;
constexpr Index kFrozenPointerSlots = static_cast<Index>((sizeof(const void*) + sizeof(Index) - 1U) / sizeof(Index));
constexpr Index kFrozenSlots = kFrozenPointer + kFrozenPointerSlots;
/// @}

/// Writes a's description into slots[d, d + kFrozenSlots).
inline void store_frozen(Index* slots, Index d, const FrozenArray& a, Index list, Index cols) noexcept {
  slots[d + kFrozenList] = list;
  slots[d + kFrozenCols] = cols;
  slots[d + kFrozenFormat] = static_cast<Index>(a.format);
  std::memcpy(&slots[d + kFrozenScale], &a.scale, sizeof(float));  // BT-DEV-010
  switch (a.format) {
    case WeightFormat::kF32:
      std::memcpy(&slots[d + kFrozenPointer], &a.f32, sizeof(a.f32));  // BT-DEV-010
      break;
    case WeightFormat::kI8:
      std::memcpy(&slots[d + kFrozenPointer], &a.i8, sizeof(a.i8));  // BT-DEV-010
      break;
    default:
      std::memcpy(&slots[d + kFrozenPointer], &a.bits16, sizeof(a.bits16));  // BT-DEV-010
      break;
  }
}

/// The array a descriptor at slot d describes (what store_frozen wrote).
inline FrozenArray load_frozen(const Index* slots, Index d) noexcept {
  FrozenArray a{};
  a.format = static_cast<WeightFormat>(slots[d + kFrozenFormat]);
  std::memcpy(&a.scale, &slots[d + kFrozenScale], sizeof(float));  // BT-DEV-010
  switch (a.format) {
    case WeightFormat::kF32:
      std::memcpy(&a.f32, &slots[d + kFrozenPointer], sizeof(a.f32));  // BT-DEV-010
      break;
    case WeightFormat::kI8:
      std::memcpy(&a.i8, &slots[d + kFrozenPointer], sizeof(a.i8));  // BT-DEV-010
      break;
    default:
      std::memcpy(&a.bits16, &slots[d + kFrozenPointer], sizeof(a.bits16));  // BT-DEV-010
      break;
  }
  return a;
}

/// Row `row` of the frozen matvec described at slot d times its view list:
/// the runs in order, each run's terms in frozen_run_dot's order.
template <class T>
inline T frozen_row_dot(const T* v, const Index* slots, Index d, Index row) noexcept {
  const FrozenArray a = load_frozen(slots, d);
  const Index* list = &slots[slots[d + kFrozenList]];
  std::size_t at = static_cast<std::size_t>(row) * slots[d + kFrozenCols];
  T s = T(0);
  with_reader(a, [&](auto w) noexcept {
    const Index runs = list_views(list);
    for (Index r = 0U; r < runs; ++r) {
      const Index first = list[1U + (2U * r)];
      const Index count = list[2U + (2U * r)];
      s += frozen_run_dot(w, at, v, first, count);
      at += count;
    }
  });
  return s;
}

/// Its backward: every run of the list gets g times the row's weights; the
/// weights get nothing. One compact loop for every format (frozen_at
/// chooses per weight): a frozen backbone usually sits below
/// stop_gradient and is not swept, so speed matters less than flash; and
/// not inlined into the family's dispatch (FrozenOps::backward), whose
/// frame would grow by its locals. Only a program that records
/// matvec_frozen carries it.
template <class T>
BURTORCH_NOINLINE void frozen_row_backward(T* grads, const Index* slots, Index d, Index row, T g) noexcept {
  const FrozenArray a = load_frozen(slots, d);
  const Index* list = &slots[slots[d + kFrozenList]];
  std::size_t at = static_cast<std::size_t>(row) * slots[d + kFrozenCols];
  // A list of inputs gets no gradient: nothing to do (list_views is 0 then).
  const Index runs = list_of_inputs(list) ? 0U : list_views(list);
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    for (Index k = 0U; k < count; ++k) {
      grads[first + k] += g * T(frozen_at(a, at + k));
    }
    at += count;
  }
}
}  // namespace detail

namespace rows {
/// @cond OP_ROWS
/// Row b of a frozen weight matrix (caller memory, not on the tape) times a
/// view list; the rows share the descriptor of detail::store_frozen at
/// slot a. Only the input gets a gradient.
struct MatRowFrozen {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_frozen_row";
  template <class T>
  static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::frozen_row_backward(s.g, s.slots, a, b, g);
  }
};
/// @endcond
}  // namespace rows

/// The frozen layer's family.
using FrozenOps = OpFamily<family::kFrozen, rows::MatRowFrozen>;

/// Argument slots one matvec_frozen takes (its shared descriptor: the view
/// list's slot, the width, format, scale and the weights' address).
constexpr Index kFrozenSlots = detail::kFrozenSlots;

/// A layer whose weights are frozen in caller memory (frozen/weights.hpp,
/// e.g. an int8 or FP16 array in flash): `w.rows` consecutive nodes, row o
/// = sum(T(w(o, k)) * x[k]) (+ T(bias(o)) if bias is not null) over the
/// x.total = w.cols elements of x, the weights dequantized to float and the
/// products summed in T. The weights are not copied: they must stay where
/// they are while the nodes are recorded. They have no node and no
/// gradient; backward adds to x's gradients only. The rows share one
/// descriptor of kFrozenSlots slots. kInvalidArgument, nothing recorded,
/// for weights with no data, an unknown format or a non-finite int8 scale,
/// zero rows or columns, rows * cols past an Index, x.total != w.cols, or
/// a bias that is invalid or not w.rows long. Returns the rows (kNoView on
/// error). Replay refuses a recording that holds it (its bias is not kept).
template <class T>
inline View matvec_frozen(Tape<T>& tape, const FrozenMatrix& w, ViewList x, const FrozenVector* bias) noexcept {
  using R = Recorder<T>;
  // 64-bit: rows * cols must address the weights with an Index.
  const std::uint64_t weights = static_cast<std::uint64_t>(w.rows) * w.cols;
  const bool bias_ok = (bias == nullptr) || (frozen_valid(bias->data) && (bias->size == w.rows));
  if (!frozen_valid(w.data) || (weights == 0U) || (weights >= kNoIndex) || !bias_ok) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  if (!R::list_valid(tape, x)) {
    return kNoView;
  }
  if (x.total != w.cols) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return kNoView;
  }
  const Index descriptor = R::reserve(tape, w.rows, kFrozenSlots);  // room for all rows, or none is recorded
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  if (!FrozenOps::enable(tape)) {
    R::release_slots(tape, descriptor);
    return kNoView;
  }
  detail::store_frozen(R::slots(tape), descriptor, w.data, x.slot, w.cols);
  constexpr Op kRow = FrozenOps::op<rows::MatRowFrozen>();
  const auto first = static_cast<Index>(tape.size());
  for (Index o = 0U; o < w.rows; ++o) {
    T result = detail::frozen_row_dot(R::values(tape), R::slots(tape), descriptor, o);
    if (bias != nullptr) {
      result += T(frozen_at(bias->data, o));
    }
    static_cast<void>(R::append(tape, kRow, result, descriptor, o));  // fits: room checked above
  }
  return View{first, w.rows};
}

/// From now on backward sweeps stop at the current end of the tape: the
/// nodes recorded so far propagate no gradient (torch.no_grad() around a
/// frozen backbone's forward pass). Newer nodes still add their share to
/// the gradients of older operands (the head's weights, the backbone's
/// outputs) but the older nodes pass nothing on, so the backbone's
/// backward costs nothing. The gradient of an interior node below the stop
/// is not meaningful (it may hold partial sums of earlier sweeps). A root
/// below the stop gets its own gradient and propagates nothing. Stays until
/// a rewind discards a node below it, or reset(); calling it again moves it.
template <class T>
inline void stop_gradient(Tape<T>& tape) noexcept {
  Recorder<T>::stop_at_end(tape);
}
/// Where backward stops (0: it runs down to the oldest interior node).
template <class T>
inline Index gradient_stop(const Tape<T>& tape) noexcept {
  return Recorder<T>::stop(tape);
}

}  // namespace burtorch

#endif  // BURTORCH_FROZEN_OPS_HPP
