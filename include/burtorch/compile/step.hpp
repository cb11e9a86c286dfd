// SPDX-License-Identifier: Apache-2.0
/// @file
/// What a compiled training step (burtorch/compile/emit.hpp) is made of: the
/// generated code calls these for each node, with the node's indices as
/// constants, so every value and gradient is the op's own row evaluated as
/// replay (tools/replay.hpp) and the backward sweep evaluate it: the same
/// functions, the same order, the same bits. No tape, no checks, no
/// dispatch: a straight line of inlined rows (and loops over runs of alike
/// nodes), with the wide ops' kernels (inner products, layer rows,
/// reductions) called as the sweep calls them.
#ifndef BURTORCH_COMPILE_STEP_HPP
#define BURTORCH_COMPILE_STEP_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/step.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/ext/extension.hpp"
#include "burtorch/ext/functions.hpp"
#include "burtorch/ext/fused.hpp"
#include "burtorch/index.hpp"
#include "burtorch/nn/optim_kernels.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/status.hpp"

/// 1: every node of a compiled step starts behind a fence the compiler
/// cannot see through (a call of rt::opaque), and the argument slots and
/// an operand that repeats in a node are read as replay reads them, at run
/// time. Where the compiler may fuse a multiply and an add (a target with
/// fused multiply-add, GCC's default -ffp-contract=fast for C++), whether
/// it fuses depends on what it knows about the operands: two nodes that
/// square the same value share one product (and neither fuses it), an
/// operand it knows to repeat is squared once. Replay knows none of that;
/// behind the fences the compiled step knows no more, and fuses as replay
/// does. 0: no fences, a few instructions less per node, the same bits only
/// where nothing is fused (-ffp-contract=off everywhere, or no FMA).
#if !defined(BURTORCH_COMPILE_FENCE)
#if defined(__FP_FAST_FMAF) || defined(__FP_FAST_FMA)
#define BURTORCH_COMPILE_FENCE 1
#else
#define BURTORCH_COMPILE_FENCE 0
#endif
#endif

namespace burtorch {
namespace compile {
namespace rt {

/// Returns p from another translation unit (lib/compile/opaque.cpp): the
/// compiler cannot tell what it points at, nor what the call changed.
const void* opaque(const void* p) noexcept;
/// Returns i, which the compiler cannot tell.
Index opaque_index(Index i) noexcept;

/// The argument slots as the step reads them (through the fence, if on).
BURTORCH_ALWAYS_INLINE inline const Index* slots(const Index* s) noexcept {
#if BURTORCH_COMPILE_FENCE
  return static_cast<const Index*>(opaque(s));
#else
  return s;
#endif
}
/// An operand that repeats in a node (read at run time, if the fence is on).
BURTORCH_ALWAYS_INLINE inline Index repeated(Index i) noexcept {
#if BURTORCH_COMPILE_FENCE
  return opaque_index(i);
#else
  return i;
#endif
}
/// A node's fence (nothing if off): what the compiler knew of the values
/// is forgotten.
template <class T>
BURTORCH_ALWAYS_INLINE inline void fence(const T* v) noexcept {
#if BURTORCH_COMPILE_FENCE
  static_cast<void>(opaque(v));
#else
  static_cast<void>(v);
#endif
}

/// The op of code c (an op family's codes have no enumerator).
constexpr Op op(std::uint32_t c) noexcept { return static_cast<Op>(c); }

/// The library's op families replay evaluates, by id (ext/extension.hpp).
template <std::uint8_t Id>
struct FamilyOf;
template <> struct FamilyOf<family::kPiecewise> {
  using Type = PiecewiseOps;
};
template <> struct FamilyOf<family::kSmooth> {
  using Type = SmoothOps;
};
template <> struct FamilyOf<family::kFused> {
  using Type = FusedOps;
};
/// Row I of a family.
template <class Family, std::size_t I>
struct FamilyRow;
template <std::uint8_t Id, class... Rows, std::size_t I>
struct FamilyRow<OpFamily<Id, Rows...>, I> {
  using Type = typename std::tuple_element<I, std::tuple<Rows...>>::type;
};
/// The row of op code K: a core op's OpDef, or its family's row.
template <Op K, bool kCore = !is_extension(K)>
struct RowOf {
  using Type = OpDef<K>;
};
template <Op K>
struct RowOf<K, false> {
  static constexpr std::size_t kCode = static_cast<std::size_t>(K) - static_cast<std::size_t>(Op::kFirstExtension);
  using Type = typename FamilyRow<typename FamilyOf<static_cast<std::uint8_t>(kCode / family::kWidth)>::Type,
                                  kCode % family::kWidth>::Type;
};

/// A wide op's operand field (where its operands start, how many: a
/// reduction's count, a descriptor's slot), read at run time if the fence
/// is on, as replay reads it: a count the compiler knows lets it unroll the
/// reduction and vectorize its products, which then are not fused into the
/// sum where replay's loop fuses them (seen on x86-64 with AVX2 + FMA: a
/// list variance differed in its last bit). An elementwise op's fields
/// (operand nodes) stay constants.
template <class Row>
BURTORCH_ALWAYS_INLINE inline Index wide_field(Index x) noexcept {
  if constexpr ((Row::kKind == OpKind::kViewReduce) || (Row::kKind == OpKind::kListReduce) ||
                (Row::kKind == OpKind::kDescriptor)) {
    return repeated(x);
  } else {
    return x;
  }
}

/// Node i's value from its operands (op K, operand fields a and b; slots:
/// the recording's argument slots): replay's forward step.
template <Op K, class T>
BURTORCH_ALWAYS_INLINE inline void fwd(T* v, const Index* slots, Index i, Index a, Index b) noexcept {
  fence(v);
  using Row = typename RowOf<K>::Type;
  v[i] = detail::value_of<Row>(v, slots, i, wide_field<Row>(a), wide_field<Row>(b));
}

/// Node i's backward (op K): what the sweep does for it, skipped if its
/// gradient is zero as the sweep skips it (a layer's rows one at a time, in
/// the sweep's order).
template <Op K, class T>
BURTORCH_ALWAYS_INLINE inline void bwd(T* v, T* g, const Index* slots, Index i, Index a, Index b) noexcept {
  fence(g);
  const T gi = g[i];
  if (!ScalarOps<T>::is_zero(gi)) {  // BT-DEV-004: exact zero test, as the sweep's
    const detail::Arrays<T> s{v, g, slots};
    using Row = typename RowOf<K>::Type;
    static_cast<void>(detail::step<Row>(s, i, wide_field<Row>(a), wide_field<Row>(b), gi, i));
  }
}

/// A difference x - y with the target y an argument: recorded as x + (-y)
/// (core/ops.hpp), so evaluated so.
template <class T>
BURTORCH_ALWAYS_INLINE inline void fwd_target(T* v, Index i, Index a, T y) noexcept {
  fence(v);
  v[i] = OpDef<Op::kAddConst>::forward(v[a], -y);
}

/// A constant recorded as a source node: its bits.
template <class T>
BURTORCH_ALWAYS_INLINE inline T from_bits(std::uint64_t bits) noexcept {
  T x = T(0);
  if constexpr (sizeof(T) == sizeof(std::uint32_t)) {
    const auto narrow = static_cast<std::uint32_t>(bits);
    std::memcpy(&x, &narrow, sizeof(x));  // BT-DEV-010
  } else {
    std::memcpy(&x, &bits, sizeof(x));  // BT-DEV-010
  }
  return x;
}

/// Sets g[first, end) to zero: the gradients of the recording, as replay
/// clears them before its sweep.
template <class T>
inline void clear(T* g, Index first, Index end) noexcept {
  for (Index k = first; k < end; ++k) {
    g[k] = T(0);
  }
}

/// SGD on the parameters w[0..n) from their summed gradients (w -= lr * (g *
/// scale), the optimizer's kernel, nn::Optimizer's kSgd step with a scale),
/// then their gradients cleared for the next batch.
template <class T>
inline void sgd(T* w, T* g, T lr, T scale, Index n) noexcept {
  simd::sgd_step(w, g, lr, scale, n);
  clear(g, 0U, n);
}

}  // namespace rt
}  // namespace compile
}  // namespace burtorch

#endif  // BURTORCH_COMPILE_STEP_HPP
