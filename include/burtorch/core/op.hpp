// SPDX-License-Identifier: Apache-2.0
/// @file
/// The op set of the paper's tape, part 1: what an op is, and the elementwise
/// rows (sources, unary, binary, stored-constant ops). Part 2, core/op_wide.hpp,
/// holds the reductions, the inner products and a layer's rows, and the
/// table that reads them all.
///
/// Each op has one home, its `OpDef<Op::kX>` row: its kind (how a node
/// stores its operands), its name (the Graphviz export prints it), its
/// forward (the value core/ops.hpp records) and its backward (what the sweep adds
/// to its operands' gradients, given the node's gradient g). The recorders
/// and the backward sweep read the rows; nothing else lists the ops (but the
/// sweep's switch, which names each elementwise op to inline it).
///
/// This file and core/op_wide.hpp are the core set, the BurTorch paper's ops,
/// compiled into the library's sweep. Every other op (GELU, fused layer
/// rows, frozen weights, lane batches, yours) belongs to an op family of an
/// extension (burtorch/ext/extension.hpp): its rows have the same members, its
/// codes start at Op::kFirstExtension, and the tape reaches its backward
/// through the family the recorder registered. docs/architecture.md,
/// "Adding an op", says which of the two a new op is.
///
/// Backward forms: operands x, y and the node's value `out` are values; dx,
/// dy the operands' gradients, accumulated in place. Every statement is
/// written as the gradients are accumulated, so the bits are part of the
/// row (the golden tests compare them with PyTorch's).
#ifndef BURTORCH_CORE_OP_HPP
#define BURTORCH_CORE_OP_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/index.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {

/// What a node computes (the rows say how). Values below kCount are the
/// core set, in the order of their rows; an op code is one byte per node.
/// Codes from kFirstExtension on belong to op families (ext/extension.hpp):
/// family f's k-th row has code kFirstExtension + 16 f + k.
enum class Op : std::uint8_t {
  kLeaf = 0, kInput,
  kAdd, kSub, kMul, kDiv, kMean2, kAddSquares2, kMeanSquares2, kNegMean2,
  kNeg, kAddConst, kConstSub, kConstDiv, kRelu, kTanh, kExp, kLog, kNegLog,
  kSigmoid, kInv, kSqr, kPow3, kSqrt, kInvSqrt,
  kMulConst, kDivConst,
  kSumR, kSumL, kSubR, kSubL, kProdR, kProdL, kMeanR, kMeanL,
  kSumSqR, kSumSqL, kMeanSqR, kMeanSqL, kNegMeanR, kNegMeanL,
  kVarR, kVarL, kVarBiasedR, kVarBiasedL,
  kDotRR, kDotRL, kDotLL, kDotRV,
  kLogSumExpR, kLogSumExpL,
  kMatRow, kScaleShift,
  kCount,                ///< the number of core ops (not an op)
  kFirstExtension = 64,  ///< the first code of an op family (ext/extension.hpp)
  kNone = 255,           ///< no op: what inspection returns past the tape's end
};

/// True if op is an op family's (ext/extension.hpp), not the core set's.
constexpr bool is_extension(Op op) noexcept {
  return static_cast<std::uint32_t>(op) >= static_cast<std::uint32_t>(Op::kFirstExtension);
}

/// How a node stores its operands (a = first operand field, b = second).
enum class OpKind : std::uint8_t {
  kSource,       ///< a leaf (its gradient accumulates) or an input (no gradient): no operands
  kUnary,        ///< a = the operand (a constant, if any, is in the value)
  kBinary,       ///< a, b = the operands
  kConstant,     ///< a = the operand, b = the first slot of a constant c
  kViewReduce,   ///< b operands from node a on (R: a view, consecutive nodes)
  kListReduce,   ///< b operands listed in slots from a on (L: a list)
  kDescriptor,   ///< a = a descriptor in slots (inner products, layer rows)
};

/// A reduction's value over no operands (a row's kEmpty): PyTorch's sum and
/// product of nothing (0, 1), its mean and variance of nothing (NaN), its
/// log-sum-exp of nothing (-inf); the maximum of nothing is -inf too.
enum class Empty : std::uint8_t { kZero, kOne, kNaN, kMinusInf };
/// The value of e in T.
template <class T>
constexpr T empty_value(Empty e) noexcept {
  return (e == Empty::kZero) ? T(0)
         : (e == Empty::kOne) ? T(1)
         : (e == Empty::kNaN) ? std::numeric_limits<T>::quiet_NaN()
                              : -std::numeric_limits<T>::infinity();
}

/// The row of op K: specialised once per core op (the specialisations are
/// the op set, read in the source; the reference documents their members
/// once, here; an extension's rows are plain structs with the same members):
/// - `kKind` (OpKind): how the node stores its operands;
/// - `kName` (const char*): the op's name (Graphviz labels, op_name());
/// - `forward`: the value, from the operands' values (and a constant c for
///   ops that have one; reductions: `forward(v, at, n)` over operands
///   `v[at[0]] ... v[at[n-1]]`);
/// - `backward`: adds g times each partial derivative to the operands'
///   gradients (elementwise: `backward(g, x, [y or c,] out, dx[, dy])`;
///   reductions: `backward(v, grads, at, n, g, out)`; descriptor ops:
///   `backward(arrays, i, a, b, g)`);
/// - `kPair` (reductions only): the other variant, view (R) or list (L);
/// - `kEmpty` (reductions only): its value over no operands (Empty);
/// - `kRows` (descriptor ops only, optional): true for the rows of a
///   matrix-vector product, b = the row, row b - k at node i - k: the
///   sweep hands the whole block to the row (detail::rows_step);
/// - `kFolded` (unary ops only, optional): true if the forward takes a
///   constant c, folded into the value when recorded and kept in the
///   node's second operand field for replay (detail::pack_constant);
/// - `value(v, slots, i, a, b)` (descriptor ops): the node's value from the
///   operands' values, what the recorder stores and replay recomputes (a
///   descriptor op without one cannot be replayed).
template <Op K>
struct OpDef;

namespace detail {
/// A reduction over operands in a list: the same row as its view variant R.
template <Op R>
struct ListVariant : OpDef<R> {
  static constexpr OpKind kKind = OpKind::kListReduce;
  static constexpr Op kPair = R;
};
/// A tape's entries for the backward of the core wide ops: one per
/// reduction (its R and L rows), per inner product, kMatRow, kScaleShift.
/// The sweep reaches a wide node's backward through its entry, which the
/// op's recorder fills (Recorder<T>::enable_wide), so a program links the
/// backward of the wide ops it records and no other's (the log-sum-exp's
/// expf only where a log-sum-exp is recorded).
constexpr std::size_t kWideEntries = 16U;
/// op's entry (a core wide op: Op::kSumR <= op < Op::kCount).
constexpr std::size_t wide_entry(Op op) noexcept {
  // kSumR .. kVarBiasedL: one entry per R/L pair; the four inner products
  // one each; the log-sum-exp pair; kMatRow; kScaleShift.
  constexpr std::uint8_t kWide[] = {0U, 0U, 1U, 1U, 2U,  2U,  3U,  3U,  4U,  4U,  5U,  5U,  6U,
                                    6U, 7U, 7U, 8U, 8U, 9U, 10U, 11U, 12U, 13U, 13U, 14U, 15U};
  static_assert(sizeof(kWide) == (static_cast<std::size_t>(Op::kCount) - static_cast<std::size_t>(Op::kSumR)),
                "an entry for every core wide op");
  return kWide[static_cast<std::size_t>(op) - static_cast<std::size_t>(Op::kSumR)];
}
/// The arrays a descriptor op's backward reads: values, gradients, slots.
template <class T>
struct Arrays {
  const T* v;          ///< values
  T* g;                ///< gradients
  const Index* slots;  ///< argument slots
};
/// What a forward step (replay) writes and reads besides the slots.
template <class T>
struct Forward {
  T* v;                        ///< values (written)
  const std::uint64_t* links;  ///< operand fields (a | b << 32), from node `base` on
  const Op* ops;               ///< op codes, from node `base` on
  Index base;                  ///< the parameter region's end
  Index end;                   ///< the end of the recording
};
}  // namespace detail

/// @cond OP_ROWS
// clang-format off
// --- sources and elementwise ops ---------------------------------------------
template <> struct OpDef<Op::kLeaf> {
  static constexpr OpKind kKind = OpKind::kSource;
  static constexpr const char* kName = "leaf";
};
/// An input that needs no gradient (Tape::input): a leaf whose gradient is
/// not computed; a view list of inputs only (a layer's input) is marked so,
/// and the inner products over it skip the input side of their backward.
template <> struct OpDef<Op::kInput> {
  static constexpr OpKind kKind = OpKind::kSource;
  static constexpr const char* kName = "input";
};
template <> struct OpDef<Op::kAdd> {  // x + y
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "add";
  template <class T> static T forward(T x, T y) noexcept { return x + y; }
  template <class T> static void backward(T g, T /*x*/, T /*y*/, T /*out*/, T& dx, T& dy) noexcept { dx += g; dy += g; }
};
template <> struct OpDef<Op::kSub> {  // x - y
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "sub";
  template <class T> static T forward(T x, T y) noexcept { return x - y; }
  template <class T> static void backward(T g, T /*x*/, T /*y*/, T /*out*/, T& dx, T& dy) noexcept { dx += g; dy -= g; }
};
template <> struct OpDef<Op::kMul> {  // x * y
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "mul";
  template <class T> static T forward(T x, T y) noexcept { return x * y; }
  template <class T> static void backward(T g, T x, T y, T /*out*/, T& dx, T& dy) noexcept { dx += g * y; dy += g * x; }
};
template <> struct OpDef<Op::kDiv> {  // x / y (IEEE: x / 0 is +-inf or NaN)
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "div";
  template <class T> static T forward(T x, T y) noexcept { return x / y; }
  template <class T> static void backward(T g, T /*x*/, T y, T out, T& dx, T& dy) noexcept {
    const T inv_y = T(1) / y;
    dx += g * inv_y;
    dy -= g * out * inv_y;
  }
};
template <> struct OpDef<Op::kMean2> {  // (x + y) / 2
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "mean2";
  template <class T> static T forward(T x, T y) noexcept { return (x + y) * T(0.5); }
  template <class T> static void backward(T g, T /*x*/, T /*y*/, T /*out*/, T& dx, T& dy) noexcept { dx += g * T(0.5); dy += g * T(0.5); }
};
template <> struct OpDef<Op::kAddSquares2> {  // x^2 + y^2
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "add_squares2";
  template <class T> static T forward(T x, T y) noexcept { return (x * x) + (y * y); }
  template <class T> static void backward(T g, T x, T y, T /*out*/, T& dx, T& dy) noexcept { dx += T(2) * g * x; dy += T(2) * g * y; }
};
template <> struct OpDef<Op::kMeanSquares2> {  // (x^2 + y^2) / 2
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "mean_squares2";
  template <class T> static T forward(T x, T y) noexcept { return ((x * x) + (y * y)) * T(0.5); }
  template <class T> static void backward(T g, T x, T y, T /*out*/, T& dx, T& dy) noexcept { dx += g * x; dy += g * y; }
};
template <> struct OpDef<Op::kNegMean2> {  // -(x + y) / 2
  static constexpr OpKind kKind = OpKind::kBinary;
  static constexpr const char* kName = "neg_mean2";
  template <class T> static T forward(T x, T y) noexcept { return -(x + y) * T(0.5); }
  template <class T> static void backward(T g, T /*x*/, T /*y*/, T /*out*/, T& dx, T& dy) noexcept { dx -= g * T(0.5); dy -= g * T(0.5); }
};
template <> struct OpDef<Op::kNeg> {  // -x
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "neg";
  template <class T> static T forward(T x) noexcept { return -x; }
  template <class T> static void backward(T g, T /*x*/, T /*out*/, T& dx) noexcept { dx -= g; }
};
template <> struct OpDef<Op::kAddConst> {  // x + c (x - c records x + (-c): the same bits)
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr bool kFolded = true;
  static constexpr const char* kName = "add_const";
  template <class T> static T forward(T x, T c) noexcept { return x + c; }
  template <class T> static void backward(T g, T /*x*/, T /*out*/, T& dx) noexcept { dx += g; }
};
template <> struct OpDef<Op::kConstSub> {  // c - x
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr bool kFolded = true;
  static constexpr const char* kName = "const_sub";
  template <class T> static T forward(T x, T c) noexcept { return c - x; }
  template <class T> static void backward(T g, T /*x*/, T /*out*/, T& dx) noexcept { dx -= g; }
};
template <> struct OpDef<Op::kConstDiv> {  // c / x: d/dx = -(c/x)/x, from the value alone
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr bool kFolded = true;
  static constexpr const char* kName = "const_div";
  template <class T> static T forward(T x, T c) noexcept { return c / x; }
  template <class T> static void backward(T g, T x, T out, T& dx) noexcept { dx -= g * (out / x); }
};
template <> struct OpDef<Op::kRelu> {  // max(x, 0), NaN passed through; relu'(0) = 0
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "relu";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::relu(x); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept { dx += ScalarOps<T>::relu_grad(x, g); }
};
template <> struct OpDef<Op::kTanh> {
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "tanh";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::tanh(x); }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx += g * (T(1) - (out * out)); }
};
template <> struct OpDef<Op::kExp> {
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "exp";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::exp(x); }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx += g * out; }
};
template <> struct OpDef<Op::kLog> {
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "log";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::log(x); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept { dx += g / x; }
};
template <> struct OpDef<Op::kNegLog> {  // -log(x)
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "neg_log";
  template <class T> static T forward(T x) noexcept { return -ScalarOps<T>::log(x); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept { dx -= g / x; }
};
template <> struct OpDef<Op::kSigmoid> {  // 1 / (1 + exp(-x))
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "sigmoid";
  template <class T> static T forward(T x) noexcept { return T(1) / (T(1) + ScalarOps<T>::exp(-x)); }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx += g * (out * (T(1) - out)); }
};
template <> struct OpDef<Op::kInv> {  // 1 / x
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "inv";
  template <class T> static T forward(T x) noexcept { return T(1) / x; }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx -= g * (out * out); }
};
template <> struct OpDef<Op::kSqr> {
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "sqr";
  template <class T> static T forward(T x) noexcept { return x * x; }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept { dx += T(2) * g * x; }
};
template <> struct OpDef<Op::kPow3> {
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "pow3";
  template <class T> static T forward(T x) noexcept { return x * x * x; }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept { dx += T(3) * g * (x * x); }
};
template <> struct OpDef<Op::kSqrt> {  // its derivative at 0 is +inf
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "sqrt";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::sqrt(x); }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx += (T(0.5) * g) / out; }
};
template <> struct OpDef<Op::kInvSqrt> {  // 1 / sqrt(x)
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "inv_sqrt";
  template <class T> static T forward(T x) noexcept { return T(1) / ScalarOps<T>::sqrt(x); }
  template <class T> static void backward(T g, T /*x*/, T out, T& dx) noexcept { dx -= (T(0.5) * g) * (out * out * out); }
};
template <> struct OpDef<Op::kMulConst> {  // x * c, c kept in argument slots
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "mul_const";
  template <class T> static T forward(T x, T c) noexcept { return x * c; }
  template <class T> static void backward(T g, T /*x*/, T c, T /*out*/, T& dx) noexcept { dx += g * c; }
};
template <> struct OpDef<Op::kDivConst> {  // x / c, c kept in argument slots
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "div_const";
  template <class T> static T forward(T x, T c) noexcept { return x / c; }
  template <class T> static void backward(T g, T /*x*/, T c, T /*out*/, T& dx) noexcept { dx += g / c; }
};
// clang-format on
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_CORE_OP_HPP
