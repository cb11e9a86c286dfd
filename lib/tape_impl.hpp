// SPDX-License-Identifier: Apache-2.0
// Out-of-line members of Tape<T>: layout, list operands, reductions, inner
// products and the backward sweep. lib/tape.cpp instantiates them for float
// and double; a build that needs another scalar type includes this file in
// one of its own translation units and instantiates Tape<ThatType>.
#ifndef BURTORCH_LIB_TAPE_IMPL_HPP
#define BURTORCH_LIB_TAPE_IMPL_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "burtorch/simd.hpp"
#include "simd/select.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {
namespace detail {

// Operand i of a reduction: consecutive nodes or a list in argument slots.
struct RangeOperand {
  Index first;
  Index operator[](Index i) const noexcept { return first + i; }
};
struct ListOperand {
  const Index* slots;
  Index operator[](Index i) const noexcept { return slots[i]; }
};

constexpr std::size_t kSlotBytes = sizeof(Index);

template <class T>
constexpr std::size_t slots_for_constant() noexcept {
  return (sizeof(T) + (kSlotBytes - 1U)) / kSlotBytes;
}

// Sum of v[at[i]] with four accumulators: independent add chains keep the
// FPU pipeline full, and the fixed order gives the same bits on every target.
template <class T, class Operand>
T sum_of(const T* v, Operand at, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  Index i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    s0 += v[at[i]];
    s1 += v[at[i + 1U]];
    s2 += v[at[i + 2U]];
    s3 += v[at[i + 3U]];
  }
  for (; i < n; ++i) {
    s0 += v[at[i]];
  }
  return (s0 + s1) + (s2 + s3);
}

template <class T, class Operand>
T sum_of_squares(const T* v, Operand at, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  Index i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    const T a = v[at[i]];
    const T b = v[at[i + 1U]];
    const T c = v[at[i + 2U]];
    const T d = v[at[i + 3U]];
    s0 += a * a;
    s1 += b * b;
    s2 += c * c;
    s3 += d * d;
  }
  for (; i < n; ++i) {
    const T a = v[at[i]];
    s0 += a * a;
  }
  return (s0 + s1) + (s2 + s3);
}

template <class T, class WOperand, class XOperand>
T dot_of(const T* v, WOperand w, XOperand x, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  Index i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    s0 += v[w[i]] * v[x[i]];
    s1 += v[w[i + 1U]] * v[x[i + 1U]];
    s2 += v[w[i + 2U]] * v[x[i + 2U]];
    s3 += v[w[i + 3U]] * v[x[i + 3U]];
  }
  for (; i < n; ++i) {
    s0 += v[w[i]] * v[x[i]];
  }
  return (s0 + s1) + (s2 + s3);
}

// Sum of (x - m)^2, two-pass for accuracy.
template <class T, class Operand>
T centered_squares(const T* v, Operand at, Index n, T m) noexcept {
  T s = T(0);
  for (Index i = 0U; i < n; ++i) {
    const T d = v[at[i]] - m;
    s += d * d;
  }
  return s;
}

template <class T, class Operand>
T product_of(const T* v, Operand at, Index n) noexcept {
  T p = T(1);
  for (Index i = 0U; i < n; ++i) {
    p *= v[at[i]];
  }
  return p;
}

// Forward value of a reduction. `range_op` is the R variant of the op.
template <class T, class Operand>
T reduce_value(Op range_op, const T* v, Operand at, Index n) noexcept {
  const T count = static_cast<T>(n);
  T out = T(0);
  switch (range_op) {
    case Op::kSumR:
      out = sum_of(v, at, n);
      break;
    // x0 - (x1 + ... + x(n-1))
    case Op::kSubR: {
      T rest = T(0);
      for (Index i = 1U; i < n; ++i) {
        rest += v[at[i]];
      }
      out = v[at[0U]] - rest;
      break;
    }
    case Op::kProdR:
      out = product_of(v, at, n);
      break;
    case Op::kMeanR:
      out = sum_of(v, at, n) / count;
      break;
    case Op::kSumSqR:
      out = sum_of_squares(v, at, n);
      break;
    case Op::kMeanSqR:
      out = sum_of_squares(v, at, n) / count;
      break;
    case Op::kNegMeanR:
      out = -sum_of(v, at, n) / count;
      break;
    case Op::kVarR:
      out = centered_squares(v, at, n, sum_of(v, at, n) / count) / (count - T(1));
      break;
    case Op::kVarBiasedR:
      out = centered_squares(v, at, n, sum_of(v, at, n) / count) / count;
      break;
    default:
      out = T(0);
      break;
  }
  return out;
}

// d(x_0 * ... * x_(n-1))/dx_i = product of the others, times g, into grads.
template <class T, class Operand>
void product_backward(const T* v, T* grads, Operand at, Index n, T g) noexcept {
  if constexpr (ScalarOps<T>::kSingleLane) {
    // Without scratch memory: count zeros; with none, divide the product;
    // with one, only that operand gets the product of the rest; with two
    // or more, every term is zero.
    Index zeros = 0U;
    Index zero_at = 0U;
    T rest = T(1);
    for (Index i = 0U; i < n; ++i) {
      const T x = v[at[i]];
      if (x == T(0)) {  // BT-DEV-004: exact zero test, not a tolerance
        ++zeros;
        zero_at = i;
      } else {
        rest *= x;
      }
    }
    if (zeros == 0U) {
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += g * (rest / v[at[i]]);
      }
    } else if (zeros == 1U) {
      grads[at[zero_at]] += g * rest;
    } else {
      // Every partial derivative has a zero factor.
    }
  } else {
    // Lanes may have zeros in different places: multiply the others out
    // (O(n^2), no scratch memory, no test).
    for (Index i = 0U; i < n; ++i) {
      T others = T(1);
      for (Index j = 0U; j < n; ++j) {
        others = (j == i) ? others : (others * v[at[j]]);
      }
      grads[at[i]] += g * others;
    }
  }
}

// d(reduction)/d(x_i) times `g`, accumulated into grads. `range_op` is the
// R variant; `out` is the node's forward value.
template <class T, class Operand>
// NOLINTNEXTLINE(readability-function-cognitive-complexity): one flat case per reduction
void reduce_backward(Op range_op, const T* v, T* grads, Operand at, Index n, T g, T out) noexcept {
  const T count = static_cast<T>(n);
  switch (range_op) {
    case Op::kSumR:
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += g;
      }
      break;
    case Op::kSubR:
      grads[at[0U]] += g;
      for (Index i = 1U; i < n; ++i) {
        grads[at[i]] -= g;
      }
      break;
    case Op::kMeanR:
    case Op::kNegMeanR: {
      const T share = ((range_op == Op::kMeanR) ? g : -g) / count;
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += share;
      }
      break;
    }
    case Op::kSumSqR:
    case Op::kMeanSqR: {
      const T scale = (range_op == Op::kSumSqR) ? (T(2) * g) : ((T(2) * g) / count);
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += scale * v[at[i]];
      }
      break;
    }
    case Op::kVarR:
    case Op::kVarBiasedR: {
      const T m = sum_of(v, at, n) / count;
      const T denominator = (range_op == Op::kVarR) ? (count - T(1)) : count;
      const T scale = (T(2) * g) / denominator;
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += scale * (v[at[i]] - m);
      }
      break;
    }
    case Op::kProdR:
      static_cast<void>(out);
      product_backward(v, grads, at, n, g);
      break;
    default:
      break;
  }
}

template <class T, class WOperand, class XOperand>
void dot_backward(const T* v, T* grads, WOperand w, XOperand x, Index n, T g) noexcept {
  for (Index i = 0U; i < n; ++i) {
    grads[w[i]] += g * v[x[i]];
  }
  for (Index i = 0U; i < n; ++i) {
    grads[x[i]] += g * v[w[i]];
  }
}

// The range variant of a reduction op: R and L alternate, R first.
inline Op range_variant(Op op) noexcept {
  const auto code = static_cast<std::uint32_t>(op);
  const auto first = static_cast<std::uint32_t>(Op::kSumR);
  return static_cast<Op>(static_cast<std::uint8_t>(code - ((code - first) & 1U)));
}
inline Op list_variant(Op range_op) noexcept {
  return static_cast<Op>(static_cast<std::uint8_t>(static_cast<std::uint8_t>(range_op) + 1U));
}
inline bool is_reduction(Op op) noexcept { return (op >= Op::kSumR) && (op <= Op::kVarBiasedL); }
// Inner products of two runs of consecutive nodes, and their backward
// (two axpy updates), go to the vector kernels of burtorch/simd.hpp for
// float and double; other scalar types use the generic loops above.
template <class T>
inline T range_dot(const T* v, Index w, Index x, Index n) noexcept {
  return dot_of(v, RangeOperand{w}, RangeOperand{x}, n);
}
// Up to 4 terms inline (layer norm's 1-term products, attention heads of
// width 4), in the kernels' order: partial i holds term i, combined by
// halving. Below P terms every kernel rounds each product once, fused or
// not, so this is bitwise what the kernel would return.
template <class T>
inline T short_dot(const T* a, const T* b, Index n) noexcept {
  T s = a[0] * b[0];
  if (n == 2U) {
    s += a[1] * b[1];
  } else if (n == 3U) {
    s = (s + (a[2] * b[2])) + (a[1] * b[1]);
  } else if (n == 4U) {
    s = (s + (a[2] * b[2])) + ((a[1] * b[1]) + (a[3] * b[3]));
  } else {
    // one term
  }
  return s;
}
constexpr Index kShortDot = 4U;
inline float range_dot(const float* v, Index w, Index x, Index n) noexcept {
  return (n <= kShortDot) ? short_dot(&v[w], &v[x], n) : simd::for_float::dot(&v[w], &v[x], n);
}
inline double range_dot(const double* v, Index w, Index x, Index n) noexcept {
  return (n <= kShortDot) ? short_dot(&v[w], &v[x], n) : simd::for_double::dot(&v[w], &v[x], n);
}

template <class T>
inline void range_dot_backward(const T* v, T* grads, Index w, Index x, Index n, T g) noexcept {
  dot_backward(v, grads, RangeOperand{w}, RangeOperand{x}, n, g);
}
// y[i] += g * x[i], rounded as simd::axpy rounds (fused with avx2+fma).
template <class T>
inline void short_axpy(T* y, T g, const T* x, Index n) noexcept {
  for (Index i = 0U; i < n; ++i) {
#if BURTORCH_SIMD_AVX2_FMA
    y[i] = std::fma(g, x[i], y[i]);
#else
    y[i] += g * x[i];
#endif
  }
}
inline void range_dot_backward(const float* v, float* grads, Index w, Index x, Index n, float g) noexcept {
  if (n <= kShortDot) {
    short_axpy(&grads[w], g, &v[x], n);
    short_axpy(&grads[x], g, &v[w], n);
  } else {
    simd::for_float::axpy(&grads[w], g, &v[x], n);
    simd::for_float::axpy(&grads[x], g, &v[w], n);
  }
}
inline void range_dot_backward(const double* v, double* grads, Index w, Index x, Index n, double g) noexcept {
  if (n <= kShortDot) {
    short_axpy(&grads[w], g, &v[x], n);
    short_axpy(&grads[x], g, &v[w], n);
  } else {
    simd::for_double::axpy(&grads[w], g, &v[x], n);
    simd::for_double::axpy(&grads[x], g, &v[w], n);
  }
}

// Segment lists: slots[0] runs, then first/count pairs. Inner product of a
// weight range starting at w with the runs, in run order.
template <class T>
T dot_segments_of(const T* v, Index w, const Index* list) noexcept {
  const Index runs = list[0];
  if (runs == 1U) {
    return range_dot(v, w, list[1], list[2]);
  }
  T s = T(0);
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    s += range_dot(v, w, first, count);
    w += count;
  }
  return s;
}

template <class T>
void dot_segments_backward(const T* v, T* grads, Index w, const Index* list, T g) noexcept {
  const Index runs = list[0];
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    range_dot_backward(v, grads, w, first, count, g);
    w += count;
  }
}

// log(sum(exp(x_i))) = m + log(sum(exp(x_i - m))), m = max x_i. An infinite
// maximum is not subtracted (inf - inf would be NaN): the sum is then
// exp(+inf) = inf or exp(-inf) + ... = 0, so the result is +inf when any x_i
// is +inf and -inf when all are -inf; NaN in any x_i gives NaN.
template <class T, class Operand>
T log_sum_exp_of(const T* v, Operand at, Index n) noexcept {
  T m = v[at[0U]];
  for (Index i = 1U; i < n; ++i) {
    m = ScalarOps<T>::max(m, v[at[i]]);
  }
  m = ScalarOps<T>::finite_or_zero(m);
  T s = T(0);
  for (Index i = 0U; i < n; ++i) {
    s += ScalarOps<T>::exp(v[at[i]] - m);
  }
  return m + ScalarOps<T>::log(s);
}

// d/dx_i = softmax(x)_i = exp(x_i - out).
template <class T, class Operand>
void log_sum_exp_backward(const T* v, T* grads, Operand at, Index n, T g, T out) noexcept {
  for (Index i = 0U; i < n; ++i) {
    grads[at[i]] += g * ScalarOps<T>::exp(v[at[i]] - out);
  }
}

inline bool is_list_variant(Op op) noexcept {
  return ((static_cast<std::uint32_t>(op) - static_cast<std::uint32_t>(Op::kSumR)) & 1U) != 0U;
}

}  // namespace detail

template <class T>
Tape<T>::Tape(void* buffer, std::size_t bytes, std::size_t nodes, std::size_t slots, std::size_t params,
              detail::ThisConfig /*flags*/) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): BT-DEV-001
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(buffer);  // BT-DEV-001
  const bool aligned = (address % kArrayAlign) == 0U;
  const std::size_t required = bytes_required(nodes, slots, params);  // checks counts and overflow
  if ((buffer == nullptr) || !aligned || (required == kTooLarge) || (bytes < required)) {
    status_ = Status::kInvalidArgument;
    return;
  }
  // BT-DEV-001: the arrays are carved out of the caller's byte buffer.
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): BT-DEV-001
  unsigned char* at = static_cast<unsigned char*>(buffer);
  // cppcheck-suppress invalidPointerCast ; BT-DEV-001
  values_ = reinterpret_cast<T*>(at);
  at += round_up(nodes * sizeof(T));
  // cppcheck-suppress invalidPointerCast ; BT-DEV-001
  grads_ = reinterpret_cast<T*>(at);
  at += round_up(nodes * sizeof(T));
  links_ = reinterpret_cast<std::uint64_t*>(at);
  at += round_up(interior_nodes(nodes, params) * sizeof(Operands));
  args_ = reinterpret_cast<Index*>(at);
  at += round_up(slots * sizeof(Index));
#if BURTORCH_CONFIG_PARAM_NAMES
  names_ = reinterpret_cast<const char**>(at);
  at += round_up(nodes * kNameBytes);
#endif
  ops_ = reinterpret_cast<Op*>(at);
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  capacity_ = static_cast<Index>(nodes);
  param_region_ = static_cast<Index>(params);
  limit_ = capacity_;
  append_room_ = capacity_ - param_region_;
  slot_capacity_ = static_cast<Index>(slots);
}

template <class T>
Value<T> Tape<T>::fail(Status status) noexcept {
  if (status_ == Status::kOk) {
    status_ = status;
    limit_ = 0U;  // every later push fails on its one capacity compare
    append_room_ = 0U;
#if BURTORCH_CONFIG_FAULT_HOOK
    if (fault_hook_ != nullptr) {
      fault_hook_(status, fault_context_);  // BT-DEV-003: user fault hook
    }
#endif
  }
  return Value<T>(this, kNoIndex);
}

template <class T>
void Tape<T>::reject_from(const Tape<T>* owner) noexcept {
  Status why = Status::kForeignValue;
  if (owner == nullptr) {
    why = Status::kEmptyHandle;
  } else if (owner == this) {
    why = Status::kInvalidHandle;
  } else {
    // another tape's handle
  }
  static_cast<void>(fail(why));
}

template <class T>
void Tape<T>::clear_interior_grads(Index first, Index end) noexcept {
  for (Index i = first; i < end; ++i) {
    if (op(i) != Op::kLeaf) {
      grads_[i] = T(0);
    }
  }
}

template <class T>
Value<T> Tape<T>::reject(Value<T> x) noexcept {
  reject_from(x.tape());
  return Value<T>(this, kNoIndex);
}

template <class T>
const char* Tape<T>::name(Index i) const noexcept {
#if BURTORCH_CONFIG_PARAM_NAMES
  // Only leaves store a name: an interior node's entry is never written.
  return ((i < size_) && (op(i) == Op::kLeaf)) ? names_[i] : nullptr;
#else
  static_cast<void>(i);
  return nullptr;
#endif
}

template <class T>
void Tape<T>::zero_grad() noexcept {
  for (Index i = 0U; i < size_; ++i) {
    grads_[i] = T(0);
  }
}

template <class T>
void Tape<T>::zero_grad(Index first, Index count) noexcept {
  const Index end = ((first < size_) && (count <= (size_ - first))) ? (first + count) : size_;
  for (Index i = first; i < end; ++i) {
    grads_[i] = T(0);
  }
}

template <class T>
std::uint64_t Tape<T>::generation_at(std::size_t key) const noexcept {
  std::uint64_t made = floor_generation_;
  for (Index k = 0U; k < cuts_; ++k) {
    if (cut_keys_[k] < key) {
      made = cut_generations_[k];
    }
  }
  return made;
}

template <class T>
Status Tape<T>::rewind_other(Mark m) noexcept {
  if ((m.tape != this) || (m.nodes > size_) || (m.slots > slots_used_) || (m.generation > generation_)) {
    return Status::kInvalidArgument;
  }
  const std::size_t key = static_cast<std::size_t>(m.nodes) + m.slots;
  if (generation_at(key) > m.generation) {
    return Status::kInvalidArgument;  // stale: an earlier rewind discarded this position
  }
  if ((m.nodes == size_) && (m.slots == slots_used_)) {
    return Status::kOk;  // nothing to discard
  }
  // What is recorded from here on belongs to a new generation: drop the
  // remembered targets at or above this one and remember this one.
  ++generation_;
  Index kept = 0U;
  while ((kept < cuts_) && (cut_keys_[kept] < key)) {
    ++kept;
  }
  if (kept == kMarkLevels) {
    // Forget the oldest target: the positions below it and the step above
    // it merge into the floor, with the step's (newer) generation. Marks
    // there may be refused from now on, never wrongly accepted.
    floor_generation_ = cut_generations_[0];
    for (Index k = 1U; k < kMarkLevels; ++k) {
      cut_keys_[k - 1U] = cut_keys_[k];
      cut_generations_[k - 1U] = cut_generations_[k];
    }
    kept = kMarkLevels - 1U;
  }
  cut_keys_[kept] = key;
  cut_generations_[kept] = generation_;
  cuts_ = kept + 1U;
  truncate(m.nodes, m.slots);
  return Status::kOk;
}

template <class T>
void Tape<T>::reset() noexcept {
  if (values_ == nullptr) {
    return;  // unusable buffer: keep kInvalidArgument
  }
  // Every earlier mark is stale: all positions belong to a new generation.
  ++generation_;
  floor_generation_ = generation_;
  cuts_ = 0U;
  size_ = 0U;
  slots_used_ = 0U;
  swept_end_ = 0U;
  leading_leaves_ = 0U;
  checked_list_ = kNoIndex;
  status_ = Status::kOk;
  limit_ = capacity_;
  append_room_ = capacity_ - param_region_;
}

template <class T>
Status Tape<T>::report(Status error) noexcept {
  if ((error != Status::kOk) && (values_ != nullptr)) {
    static_cast<void>(fail(error));
  }
  return status_;
}

template <class T>
void Tape<T>::clear_status() noexcept {
  if (values_ != nullptr) {
    status_ = Status::kOk;
    limit_ = capacity_;
    append_room_ = capacity_ - param_region_;
  }
}

template <class T>
void Tape<T>::set_fault_hook(FaultHook hook, void* context) noexcept {
#if BURTORCH_CONFIG_FAULT_HOOK
  fault_hook_ = hook;
  fault_context_ = context;
#else
  static_cast<void>(hook);
  static_cast<void>(context);
#endif
}

template <class T>
bool Tape<T>::all_finite() const noexcept {
  bool finite = true;
  for (Index i = 0U; i < size_; ++i) {
    finite = finite && ScalarOps<T>::finite(values_[i]) && ScalarOps<T>::finite(grads_[i]);
  }
  return finite;
}

template <class T>
T Tape<T>::constant(Index i) const noexcept {
  if ((op(i) != Op::kMulConst) && (op(i) != Op::kDivConst)) {
    return kNaN;
  }
  T c = T(0);
  std::memcpy(&c, &args_[arg_b(i)], sizeof(T));  // BT-DEV-010
  return c;
}

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
      static_cast<void>(reject(xs[i]));
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
Value<T> Tape<T>::reduce(Op range_op, const Value<T>* xs, std::size_t n) noexcept {
  if ((xs == nullptr) || (n == 0U) || (n >= kNoIndex) || !detail::is_range_reduction(range_op)) {
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
  T result = T(0);
  Op op = range_op;
  if (is_range) {
    result = detail::reduce_value(range_op, values_, detail::RangeOperand{where}, count);
  } else {
    result = detail::reduce_value(range_op, values_, detail::ListOperand{&args_[where]}, count);
    op = detail::list_variant(range_op);
  }
  const Value<T> out = push(op, result, where, count);
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
    result = detail::dot_of(values_, detail::RangeOperand{w_at}, detail::ListOperand{&args_[x_at]}, count);
  } else {
    result = detail::dot_of(values_, detail::ListOperand{&args_[w_at]}, detail::ListOperand{&args_[x_at]}, count);
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
    static_cast<void>(reject(*bias));
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
SegmentList Tape<T>::segments(const Segment* parts, std::size_t count) noexcept {
  SegmentList out;
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
  args_[slot] = static_cast<Index>(count);
  for (std::size_t r = 0U; r < count; ++r) {
    args_[slot + 1U + (2U * static_cast<Index>(r))] = parts[r].first;
    args_[slot + 2U + (2U * static_cast<Index>(r))] = parts[r].count;
  }
  out.slot = slot;
  out.total = static_cast<Index>(total);
  return out;
}

template <class T>
bool Tape<T>::list_valid(SegmentList x) noexcept {
  if ((x.slot == kNoIndex) || (x.total == 0U) || (x.slot >= slots_used_)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return false;
  }
  // The list must still be on the tape, and every run still recorded. Runs
  // only end below size_, which grows until the next rewind: a list checked
  // since then needs no new check.
  if ((x.slot != checked_list_) || (x.total != checked_total_)) {
    const Index runs = args_[x.slot];
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
      // An empty run is never stored by segments(): this is no list of ours.
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
Value<T> Tape<T>::dot_segments(Index w_first, SegmentList x, const Value<T>* bias) noexcept {
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
  return push_dot(Op::kDotRS, detail::dot_segments_of(values_, w_first, &args_[x.slot]), descriptor, x.total);
}

template <class T>
Value<T> Tape<T>::matvec(Index w_first, Index rows, SegmentList x, Index bias_first) noexcept {
  if (rows == 0U) {
    return fail(Status::kInvalidArgument);
  }
  if (!list_valid(x)) {
    return Value<T>(this, kNoIndex);
  }
  // Every weight and bias must be recorded (64-bit: rows * length may
  // exceed an Index; then it exceeds size_ too).
  const std::uint64_t weights = static_cast<std::uint64_t>(rows) * x.total;
  if ((w_first >= size_) || (weights > (size_ - w_first))) {
    return fail(Status::kInvalidHandle);
  }
  if ((bias_first != kNoIndex) && ((bias_first >= size_) || (rows > (size_ - bias_first)))) {
    return fail(Status::kInvalidHandle);
  }
  const Index descriptor = reserve(rows, 4U);  // room for all rows, or none is recorded
  if (descriptor == kNoIndex) {
    return Value<T>(this, kNoIndex);
  }
  args_[descriptor] = w_first;
  args_[descriptor + 1U] = x.slot;
  args_[descriptor + 2U] = bias_first;
  args_[descriptor + 3U] = x.total;
  const Index first = size_;
  for (Index o = 0U; o < rows; ++o) {
    T result = detail::dot_segments_of(values_, w_first + (o * x.total), &args_[x.slot]);
    if (bias_first != kNoIndex) {
      result += values_[bias_first + o];
    }
    static_cast<void>(append(Op::kMatRowS, result, descriptor, o));  // fits: room checked above
  }
  return Value<T>(this, first);
}

template <class T>
Value<T> Tape<T>::scale_shift(Index scale_first, Index x_first, Index shift_first, Index n) noexcept {
  if (n == 0U) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(scale_first, n) || !recorded(x_first, n) || !recorded(shift_first, n)) {
    return fail(Status::kInvalidHandle);
  }
  const Index descriptor = reserve(n, 3U);  // room for all outputs, or none is recorded
  if (descriptor == kNoIndex) {
    return Value<T>(this, kNoIndex);
  }
  args_[descriptor] = scale_first;
  args_[descriptor + 1U] = x_first;
  args_[descriptor + 2U] = shift_first;
  const Index first = size_;
  for (Index o = 0U; o < n; ++o) {
    const T y = (values_[x_first + o] * values_[scale_first + o]) + values_[shift_first + o];
    static_cast<void>(append(Op::kScaleShift, y, descriptor, o));  // fits: room checked above
  }
  return Value<T>(this, first);
}

template <class T>
Value<T> Tape<T>::log_sum_exp(const Value<T>* xs, std::size_t n) noexcept {
  if ((xs == nullptr) || (n == 0U) || (n >= kNoIndex)) {
    return fail(Status::kInvalidArgument);
  }
  if (!room_for_interior()) {
    return fail(Status::kCapacityExceeded);
  }
  const Mark before = mark();
  Index where = kNoIndex;
  bool is_range = false;
  if (!store_operand(xs, n, &where, &is_range)) {
    return Value<T>(this, kNoIndex);
  }
  const Index count = static_cast<Index>(n);
  const T result = is_range ? detail::log_sum_exp_of(values_, detail::RangeOperand{where}, count)
                            : detail::log_sum_exp_of(values_, detail::ListOperand{&args_[where]}, count);
  const Value<T> out = push(is_range ? Op::kLogSumExpR : Op::kLogSumExpL, result, where, count);
  if (!out.valid()) {
    slots_used_ = before.slots;
  }
  return out;
}

template <class T>
Value<T> Tape<T>::reduce_range(Op range_op, Index first, Index n) noexcept {
  const bool lse = (range_op == Op::kLogSumExpR);
  if ((n == 0U) || (!lse && !detail::is_range_reduction(range_op))) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(first, n)) {
    return fail(Status::kInvalidHandle);
  }
  const detail::RangeOperand at{first};
  const T result = lse ? detail::log_sum_exp_of(values_, at, n) : detail::reduce_value(range_op, values_, at, n);
  return push(range_op, result, first, n);
}

// The nodes whose backward is a loop over many operands.
template <class T>
// NOLINTNEXTLINE(readability-function-cognitive-complexity): one flat case per op kind
void Tape<T>::backward_wide(Op op, Index i, Index a, Index b, T g) noexcept {
  T* const v = values_;
  T* const gr = grads_;
  switch (op) {
    case Op::kDotRR:
      detail::range_dot_backward(v, gr, args_[a], args_[a + 1U], b, g);
      if (args_[a + 2U] != kNoIndex) {
        gr[args_[a + 2U]] += g;
      }
      break;
    case Op::kDotRL:
      detail::dot_backward(v, gr, detail::RangeOperand{args_[a]}, detail::ListOperand{&args_[args_[a + 1U]]}, b,
                           g);
      if (args_[a + 2U] != kNoIndex) {
        gr[args_[a + 2U]] += g;
      }
      break;
    case Op::kDotLL:
      detail::dot_backward(v, gr, detail::ListOperand{&args_[args_[a]]},
                           detail::ListOperand{&args_[args_[a + 1U]]}, b, g);
      if (args_[a + 2U] != kNoIndex) {
        gr[args_[a + 2U]] += g;
      }
      break;
    case Op::kDotRS:
      detail::dot_segments_backward(v, gr, args_[a], &args_[args_[a + 1U]], g);
      if (args_[a + 2U] != kNoIndex) {
        gr[args_[a + 2U]] += g;
      }
      break;
    case Op::kMatRowS: {
      const Index length = args_[a + 3U];
      detail::dot_segments_backward(v, gr, args_[a] + (b * length), &args_[args_[a + 1U]], g);
      if (args_[a + 2U] != kNoIndex) {
        gr[args_[a + 2U] + b] += g;
      }
      break;
    }
    case Op::kScaleShift: {
      const Index scale = args_[a] + b;
      const Index x = args_[a + 1U] + b;
      const T vx = v[x];
      gr[x] += g * v[scale];
      gr[scale] += g * vx;
      gr[args_[a + 2U] + b] += g;
      break;
    }
    case Op::kLogSumExpR:
      detail::log_sum_exp_backward(v, gr, detail::RangeOperand{a}, b, g, v[i]);
      break;
    case Op::kLogSumExpL:
      detail::log_sum_exp_backward(v, gr, detail::ListOperand{&args_[a]}, b, g, v[i]);
      break;
    default:
      if (!detail::is_reduction(op)) {
        break;
      }
      if (detail::is_list_variant(op)) {
        detail::reduce_backward(detail::range_variant(op), v, gr, detail::ListOperand{&args_[a]}, b, g, v[i]);
      } else {
        detail::reduce_backward(op, v, gr, detail::RangeOperand{a}, b, g, v[i]);
      }
      break;
  }
}

template <class T>
// NOLINTNEXTLINE(readability-function-cognitive-complexity): one flat case per op
Status Tape<T>::backward(Value<T> root) noexcept {
  if (status_ != Status::kOk) {
    return status_;
  }
  if (root.tape() == nullptr) {
    return Status::kEmptyHandle;
  }
  if (root.tape() != this) {
    return Status::kForeignValue;
  }
  const Index r = root.index();
  if (r >= size_) {
    return Status::kInvalidHandle;
  }
  // Interior gradients are scratch for this sweep. Nodes recorded since the
  // last backward start at zero; older ones (a second backward over the same
  // graph, or nodes kept before a mark) are cleared here, so nothing is
  // counted twice. Leaves keep what they accumulated.
  // (Nodes of the parameter region are leaves, so lowest >= param_region_.)
  const Index lowest = (leading_leaves_ > param_region_) ? leading_leaves_ : param_region_;
  const Index swept = swept_end_;
  if (BURTORCH_UNLIKELY(swept > lowest)) {
    clear_interior_grads(lowest, (swept < r) ? swept : r);
  }
  swept_end_ = (swept > r) ? swept : (r + 1U);
  if (op(r) == Op::kLeaf) {
    grads_[r] += T(1);  // a leaf root: d(root)/d(root) = 1, accumulated like every leaf gradient
    return Status::kOk;
  }
  grads_[r] = T(1);

  T* const v = values_;
  T* const gr = grads_;
  // Metadata arrays start at the parameter region's end.
  const Index base = param_region_;
  const std::uint64_t* const links = links_;
  const Op* const ops = ops_;
  // One reverse sweep: when node i is reached, every node that uses it is
  // newer and has already added its share to grads_[i].
  for (Index i = r + 1U; i-- > lowest;) {
    const T g = gr[i];
    // A node with a zero gradient adds nothing: skipping it keeps nodes the
    // root does not reach (a logged metric, a side computation) from adding
    // 0 * (an infinite local derivative) = NaN to their operands, and skips
    // work (a ReLU that is off, a row whose output gradient is zero).
    if (ScalarOps<T>::is_zero(g)) {  // BT-DEV-004: exact zero test, not a tolerance
      continue;
    }
    const std::uint64_t link = links[i - base];
    const Index a = first_of(link);
    const Index b = second_of(link);
    const Op op = ops[i - base];
    switch (op) {
      case Op::kLeaf:
        break;
      case Op::kAdd:
        gr[a] += g;
        gr[b] += g;
        break;
      case Op::kSub:
        gr[a] += g;
        gr[b] -= g;
        break;
      case Op::kMul: {
        const T va = v[a];
        gr[a] += g * v[b];
        gr[b] += g * va;
        break;
      }
      case Op::kDiv: {
        const T inv_b = T(1) / v[b];
        gr[a] += g * inv_b;
        gr[b] -= g * v[i] * inv_b;
        break;
      }
      case Op::kMean2:
        gr[a] += g * T(0.5);
        gr[b] += g * T(0.5);
        break;
      case Op::kAddSquares2: {
        const T va = v[a];
        gr[a] += T(2) * g * va;
        gr[b] += T(2) * g * v[b];
        break;
      }
      case Op::kMeanSquares2: {
        const T va = v[a];
        gr[a] += g * va;
        gr[b] += g * v[b];
        break;
      }
      case Op::kNegMean2:
        gr[a] -= g * T(0.5);
        gr[b] -= g * T(0.5);
        break;
      case Op::kNeg:
        gr[a] -= g;
        break;
      case Op::kAddConst:
        gr[a] += g;
        break;
      case Op::kConstSub:
        gr[a] -= g;
        break;
      case Op::kConstDiv:
        gr[a] -= g * (v[i] / v[a]);
        break;
      case Op::kRelu:
        gr[a] += ScalarOps<T>::relu_grad(v[a], g);
        break;
      case Op::kTanh:
        gr[a] += g * (T(1) - (v[i] * v[i]));
        break;
      case Op::kExp:
        gr[a] += g * v[i];
        break;
      case Op::kLog:
        gr[a] += g / v[a];
        break;
      case Op::kNegLog:
        gr[a] -= g / v[a];
        break;
      case Op::kSigmoid:
        gr[a] += g * (v[i] * (T(1) - v[i]));
        break;
      case Op::kInv:
        gr[a] -= g * (v[i] * v[i]);
        break;
      case Op::kSqr:
        gr[a] += T(2) * g * v[a];
        break;
      case Op::kPow3:
        gr[a] += T(3) * g * (v[a] * v[a]);
        break;
      case Op::kSqrt:
        gr[a] += (T(0.5) * g) / v[i];
        break;
      case Op::kInvSqrt:
        gr[a] -= (T(0.5) * g) * (v[i] * v[i] * v[i]);
        break;
      case Op::kMulConst: {
        T c = T(0);
        std::memcpy(&c, &args_[b], sizeof(T));  // BT-DEV-010
        gr[a] += g * c;
        break;
      }
      case Op::kDivConst: {
        T c = T(0);
        std::memcpy(&c, &args_[b], sizeof(T));  // BT-DEV-010
        gr[a] += g / c;
        break;
      }
      default:
        // Reductions, inner products, log-sum-exp: loops of their own.
        backward_wide(op, i, a, b, g);
        break;
    }
  }
  return Status::kOk;
}

}  // namespace burtorch

#endif  // BURTORCH_LIB_TAPE_IMPL_HPP
