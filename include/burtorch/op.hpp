// SPDX-License-Identifier: Apache-2.0
/// @file
/// The op set: everything a node can compute, one row per op.
///
/// Each op has one home, its `OpDef<Op::kX>` row below: its kind (how a node
/// stores its operands), its name (the Graphviz export prints it), its
/// forward (the value ops.hpp records) and its backward (what the sweep adds
/// to its operands' gradients, given the node's gradient g). The recorders
/// and the backward sweep (include/burtorch/detail/) read the rows through
/// visit_op(), which the compiler turns into one jump table; nothing else
/// lists the ops (but the sweep's switch, which names each core elementwise
/// op to inline it). Adding an op: a name in `Op` (among the ops linked on
/// use, unless it belongs in the core set), a row here, a function in
/// ops.hpp, a test (docs/architecture.md, "Adding an op").
///
/// Backward forms: operands x, y and the node's value `out` are values; dx,
/// dy the operands' gradients, accumulated in place. Every statement is
/// written as the gradients are accumulated, so the bits are part of the
/// row (the golden tests compare them with PyTorch's).
#ifndef BURTORCH_OP_HPP
#define BURTORCH_OP_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "burtorch/config.hpp"
#include "burtorch/detail/lane_math.hpp"
#include "burtorch/detail/math.hpp"
#include "burtorch/frozen.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {

/// What a node computes (the rows below say how). The order is the order of
/// the rows; values below kCount are op codes stored in one byte per node.
/// The ops before kFirstLinkedOnUse are the core set (the BurTorch paper's
/// ops), compiled into the library's backward sweep; the ops from
/// kFirstLinkedOnUse on are linked on use (see there).
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
  // linked on use:
  kGeluTanh, kSilu, kAbs, kLeakyRelu, kBceWithLogits, kHuber, kMaxR, kMaxL,
  kMatRowRelu, kMatRowTanh, kMatRowSigmoid, kMatRowFrozen,
  // lane batches (a tape of Lanes reading shared parameters; linked on use):
  kGatherShared, kPickLanes, kMatShared, kMatRowShared, kScaleShiftShared,
  kCount
};

/// The first op linked on use. The library's compiled sweep (and
/// Tape::reduce, Tape::reduce_range) know only the ops before it, so a
/// firmware that records none of the later ops carries none of their code.
/// An op from here on is recorded only by its function in ops.hpp, whose
/// inline recorder also gives the tape the backward of these ops
/// (detail::linked_backward): the code is linked where the op is used.
constexpr Op kFirstLinkedOnUse = Op::kGeluTanh;

/// True if op is linked on use (at or past kFirstLinkedOnUse).
constexpr bool linked_on_use(Op op) noexcept {
  return static_cast<std::uint32_t>(op) >= static_cast<std::uint32_t>(kFirstLinkedOnUse);
}

/// The ops linked on use come in families: a program that records an op
/// of a family carries the backward of that family's ops, not of the
/// others'. Family 1 holds the matvec rows with a fused ReLU, tanh or
/// sigmoid, whose derivatives are arithmetic on the output (a ReLU firmware
/// links no tanhf or expf through them); family 0 every other op linked on
/// use (the functions and reductions, whose backward calls tanhf, expf,
/// log1pf, and the frozen-weight rows). One pointer per family on every
/// tape: two keep the tape's size what it was with one.
constexpr std::size_t kLinkedFamilies = 2U;
/// The family of an op linked on use (0 for any other op).
BURTORCH_ALWAYS_INLINE constexpr std::size_t linked_family(Op op) noexcept {
  return ((op >= Op::kMatRowRelu) && (op <= Op::kMatRowSigmoid)) ? 1U : 0U;
}

/// How a node stores its operands (a = first operand field, b = second).
enum class OpKind : std::uint8_t {
  kSource,       ///< a leaf (its gradient accumulates) or an input (no gradient): no operands
  kUnary,        ///< a = the operand (a constant, if any, is in the value)
  kBinary,       ///< a, b = the operands
  kConstant,     ///< a = the operand, b = the first slot of a constant c
  kRangeReduce,  ///< b operands from node a on (R: a run of nodes)
  kListReduce,   ///< b operands listed in slots from a on (L: a list)
  kDescriptor,   ///< a = a descriptor in slots (inner products, layer rows)
};

/// The row of op K: specialised once per op below (the specialisations are
/// the op set, read in the source; the reference documents their members
/// once, here):
/// - `kKind` (OpKind): how the node stores its operands;
/// - `kName` (const char*): the op's name (Graphviz labels, op_name());
/// - `forward`: the value, from the operands' values (and a constant c for
///   ops that have one; reductions: `forward(v, at, n)` over operands
///   `v[at[0]] ... v[at[n-1]]`);
/// - `backward`: adds g times each partial derivative to the operands'
///   gradients (elementwise: `backward(g, x, [y or c,] out, dx[, dy])`;
///   reductions: `backward(v, grads, at, n, g, out)`; descriptor ops:
///   `backward(arrays, i, a, b, g)`);
/// - `kPair` (reductions only): the other variant, run (R) or list (L);
/// - `kRows` (descriptor ops only, optional): true for the rows of a
///   matrix-vector product, b = the row, row b - k at node i - k: the
///   sweep hands the whole block to `backward_rows` (detail::rows_step);
/// - `kFolded` (unary ops only, optional): true if the forward takes a
///   constant c, folded into the value when recorded and kept in the
///   node's second operand field for Tape::replay (detail::pack_constant);
/// - `value(v, slots, i, a, b)` (descriptor ops): the node's value from the
///   operands' values, what the recorder stores and Tape::replay
///   recomputes (a descriptor op without one cannot be replayed).
template <Op K>
struct OpDef;

namespace detail {
/// A reduction over operands in a list: the same row as its run variant R.
template <Op R>
struct ListVariant : OpDef<R> {
  static constexpr OpKind kKind = OpKind::kListReduce;
  static constexpr Op kPair = R;
};
/// The arrays a descriptor op's backward reads: values, gradients, slots.
template <class T>
struct Arrays {
  const T* v;          ///< values
  T* g;                ///< gradients
  const Index* slots;  ///< argument slots
};
/// What Tape::replay's forward steps write and read besides the slots.
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

// --- reductions over n operands: R reads a run of nodes, L a list ------------
// forward(v, at, n): the value over operands v[at[0]] ... v[at[n-1]];
// backward(v, grads, at, n, g, out): adds g times each partial derivative.
template <> struct OpDef<Op::kSumR> {
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kSumL;
  static constexpr const char* kName = "sum";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::sum_of(v, at, n); }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += g; }
  }
};
template <> struct OpDef<Op::kSumL> : detail::ListVariant<Op::kSumR> {};
template <> struct OpDef<Op::kSubR> {  // x0 - (x1 + ... + x(n-1))
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kSubL;
  static constexpr const char* kName = "sub_n";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    T rest = T(0);
    for (Index i = 1U; i < n; ++i) { rest += v[at[i]]; }
    return v[at[0U]] - rest;
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    gr[at[0U]] += g;
    for (Index i = 1U; i < n; ++i) { gr[at[i]] -= g; }
  }
};
template <> struct OpDef<Op::kSubL> : detail::ListVariant<Op::kSubR> {};
template <> struct OpDef<Op::kProdR> {  // exact zeros handled in backward
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kProdL;
  static constexpr const char* kName = "prod";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::product_of(v, at, n); }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::product_backward(v, gr, at, n, g);
  }
};
template <> struct OpDef<Op::kProdL> : detail::ListVariant<Op::kProdR> {};
template <> struct OpDef<Op::kMeanR> {
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kMeanL;
  static constexpr const char* kName = "mean";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::sum_of(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T share = g / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += share; }
  }
};
template <> struct OpDef<Op::kMeanL> : detail::ListVariant<Op::kMeanR> {};
template <> struct OpDef<Op::kSumSqR> {  // sum of x_i^2
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kSumSqL;
  static constexpr const char* kName = "sum_sq";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::sum_of_squares(v, at, n); }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T scale = T(2) * g;
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * v[at[i]]; }
  }
};
template <> struct OpDef<Op::kSumSqL> : detail::ListVariant<Op::kSumSqR> {};
template <> struct OpDef<Op::kMeanSqR> {  // mean of x_i^2
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kMeanSqL;
  static constexpr const char* kName = "mean_sq";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::sum_of_squares(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T scale = (T(2) * g) / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * v[at[i]]; }
  }
};
template <> struct OpDef<Op::kMeanSqL> : detail::ListVariant<Op::kMeanSqR> {};
template <> struct OpDef<Op::kNegMeanR> {  // -mean
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kNegMeanL;
  static constexpr const char* kName = "neg_mean";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return -detail::sum_of(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T share = -g / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += share; }
  }
};
template <> struct OpDef<Op::kNegMeanL> : detail::ListVariant<Op::kNegMeanR> {};
namespace detail {
/// Variance with the given denominator (n - 1 or n), two-pass.
template <class T, class At>
T variance_of(const T* v, At at, Index n, T denominator) noexcept {
  return centered_squares(v, at, n, sum_of(v, at, n) / static_cast<T>(n)) / denominator;
}
/// Its backward: 2 g (x_i - mean) / denominator.
template <class T, class At>
void variance_backward(const T* v, T* gr, At at, Index n, T g, T denominator) noexcept {
  const T m = sum_of(v, at, n) / static_cast<T>(n);
  const T scale = (T(2) * g) / denominator;
  for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * (v[at[i]] - m); }
}
}  // namespace detail
template <> struct OpDef<Op::kVarR> {  // sum((x - mean)^2) / (n - 1); NaN for n == 1
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kVarL;
  static constexpr const char* kName = "var";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::variance_of(v, at, n, static_cast<T>(n) - T(1));
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::variance_backward(v, gr, at, n, g, static_cast<T>(n) - T(1));
  }
};
template <> struct OpDef<Op::kVarL> : detail::ListVariant<Op::kVarR> {};
template <> struct OpDef<Op::kVarBiasedR> {  // sum((x - mean)^2) / n
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kVarBiasedL;
  static constexpr const char* kName = "var_biased";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::variance_of(v, at, n, static_cast<T>(n));
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::variance_backward(v, gr, at, n, g, static_cast<T>(n));
  }
};
template <> struct OpDef<Op::kVarBiasedL> : detail::ListVariant<Op::kVarBiasedR> {};
template <> struct OpDef<Op::kLogSumExpR> {  // log(sum(exp(x_i))), max-shifted
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kLogSumExpL;
  static constexpr const char* kName = "log_sum_exp";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::log_sum_exp_of(v, at, n); }
  // d/dx_i = softmax(x)_i = exp(x_i - out).
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += g * ScalarOps<T>::exp(v[at[i]] - out); }
  }
};
template <> struct OpDef<Op::kLogSumExpL> : detail::ListVariant<Op::kLogSumExpR> {};

// --- descriptor ops: operands described in argument slots from a ------------
// backward(s, i, a, b, g) for node i with operand fields a, b.
namespace detail {
/// Adds g to the bias of a [w, x, bias] descriptor (none if kNoIndex).
template <class T>
inline void bias_backward(const Arrays<T>& s, Index descriptor, T g) noexcept {
  const Index bias = s.slots[descriptor + 2U];
  if (bias != kNoIndex) { s.g[bias] += g; }
}
}  // namespace detail
/// sum(w_i * x_i) (+ bias) over b pairs; descriptor [w, x, bias] at slot a,
/// w and x a run start (R) or a list slot (L).
namespace detail {
/// A [w, x, bias] descriptor's product plus its bias (none if kNoIndex).
template <class T>
inline T with_bias(const T* v, const Index* slots, Index descriptor, T product) noexcept {
  const Index bias = slots[descriptor + 2U];
  return (bias != kNoIndex) ? (product + v[bias]) : product;
}
}  // namespace detail
template <> struct OpDef<Op::kDotRR> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(v, slots, a, detail::range_dot(v, slots[a], slots[a + 1U], b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::range_dot_backward(s.v, s.g, s.slots[a], s.slots[a + 1U], b, g);
    detail::bias_backward(s, a, g);
  }
};
template <> struct OpDef<Op::kDotRL> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(v, slots, a,
                             detail::dot_of(v, detail::range_operand(slots[a]), detail::list_operand(&slots[slots[a + 1U]]), b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::dot_backward(s.v, s.g, detail::range_operand(s.slots[a]), detail::list_operand(&s.slots[s.slots[a + 1U]]), b, g);
    detail::bias_backward(s, a, g);
  }
};
template <> struct OpDef<Op::kDotLL> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(
        v, slots, a, detail::dot_of(v, detail::list_operand(&slots[slots[a]]), detail::list_operand(&slots[slots[a + 1U]]), b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::dot_backward(s.v, s.g, detail::list_operand(&s.slots[s.slots[a]]),
                         detail::list_operand(&s.slots[s.slots[a + 1U]]), b, g);
    detail::bias_backward(s, a, g);
  }
};
/// A weight run times a view list (several runs read as one operand):
/// descriptor [w_first, list_slot, bias] at slot a, b = n.
template <> struct OpDef<Op::kDotRV> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot_views";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index /*b*/) noexcept {
    return detail::with_bias(v, slots, a, detail::dot_list_of(v, slots[a], &slots[slots[a + 1U]]));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index /*b*/, T g) noexcept {
    detail::dot_list_backward(s.v, s.g, s.slots[a], &s.slots[s.slots[a + 1U]], g);
    detail::bias_backward(s, a, g);
  }
};
/// Row b of a weight matrix times a view list (one output of a layer); the
/// rows share the descriptor [w_first, list_slot, bias_first, length] at
/// slot a: row b's weights start at w_first + b * length, its bias is node
/// bias_first + b (none if kNoIndex).
namespace detail {
/// The backward of row b of the matvec whose descriptor is at slot a,
/// given the gradient g of its pre-activation.
template <class T>
inline T mat_row_value(const T* v, const Index* slots, Index a, Index b) noexcept {
  const Index length = slots[a + 3U];
  const T sum = dot_list_of(v, slots[a] + (b * length), &slots[slots[a + 1U]]);
  return (slots[a + 2U] != kNoIndex) ? (sum + v[slots[a + 2U] + b]) : sum;
}
template <class T>
inline void mat_row_backward(const Arrays<T>& s, Index a, Index b, T g) noexcept {
  const Index length = s.slots[a + 3U];
  dot_list_backward(s.v, s.g, s.slots[a] + (b * length), &s.slots[s.slots[a + 1U]], g);
  if (s.slots[a + 2U] != kNoIndex) { s.g[s.slots[a + 2U] + b] += g; }
}
}  // namespace detail
template <> struct OpDef<Op::kMatRow> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_row";
  static constexpr bool kRows = true;
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::mat_row_value(v, slots, a, b);
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::mat_row_backward(s, a, b, g);
  }
};
/// Element b of x * scale + shift over three runs (a layer norm's gain and
/// bias); the elements share the descriptor [scale, x, shift] at slot a.
template <> struct OpDef<Op::kScaleShift> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "scale_shift";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return (v[slots[a + 1U] + b] * v[slots[a] + b]) + v[slots[a + 2U] + b];
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    const Index scale = s.slots[a] + b;
    const Index x = s.slots[a + 1U] + b;
    const T vx = s.v[x];
    s.g[x] += g * s.v[scale];
    s.g[scale] += g * vx;
    s.g[s.slots[a + 2U] + b] += g;
  }
};

// --- ops linked on use (from kFirstLinkedOnUse on) ----------------------------
template <> struct OpDef<Op::kGeluTanh> {  // GELU, tanh approximation: 0.5 x (1 + tanh(b (x + k x^3)))
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "gelu_tanh";
  // b = sqrt(2 / pi), k = 0.044715; forward and backward as PyTorch's
  // gelu(approximate='tanh') computes them (the derivative from x, not out).
  template <class T> static T beta() noexcept { return T(0.7978845608028654); }
  template <class T> static T kappa() noexcept { return T(0.044715); }
  template <class T> static T forward(T x) noexcept {
    const T inner = beta<T>() * (x + (kappa<T>() * ((x * x) * x)));
    return (T(0.5) * x) * (T(1) + ScalarOps<T>::tanh(inner));
  }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T x_sq = x * x;
    const T t = ScalarOps<T>::tanh(beta<T>() * (x + (kappa<T>() * (x_sq * x))));
    const T left = T(0.5) * x;
    const T inner_derivative = beta<T>() * (T(1) + ((T(3) * kappa<T>()) * x_sq));
    dx += g * ((T(0.5) * (T(1) + t)) + ((left * (T(1) - (t * t))) * inner_derivative));
  }
};
template <> struct OpDef<Op::kSilu> {  // x * sigmoid(x), computed as x / (1 + exp(-x))
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "silu";
  template <class T> static T forward(T x) noexcept { return x / (T(1) + ScalarOps<T>::exp(-x)); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T s = T(1) / (T(1) + ScalarOps<T>::exp(-x));
    dx += (g * s) * (T(1) + (x * (T(1) - s)));
  }
};
template <> struct OpDef<Op::kAbs> {  // |x|; derivative sign(x): 0 at x == 0 and for NaN, as PyTorch's
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "abs";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::abs(x); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T sign = ScalarOps<T>::select_greater(x, T(0), T(1), ScalarOps<T>::select_greater(T(0), x, T(-1), T(0)));
    dx += g * sign;
  }
};
template <> struct OpDef<Op::kLeakyRelu> {  // x if x > 0, else c x (c: the negative slope)
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "leaky_relu";
  // NaN passes through (c NaN = NaN); the derivative is c at x == 0 and for
  // NaN, as PyTorch's leaky_relu.
  template <class T> static T forward(T x, T c) noexcept { return ScalarOps<T>::select_greater(x, T(0), x, x * c); }
  template <class T> static void backward(T g, T x, T c, T /*out*/, T& dx) noexcept {
    dx += ScalarOps<T>::select_greater(x, T(0), g, g * c);
  }
};
template <> struct OpDef<Op::kBceWithLogits> {  // binary cross-entropy of a logit x, target c
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "bce_with_logits";
  // max(x, 0) - c x + log(1 + exp(-|x|)), arranged as PyTorch arranges it,
  // (1 - c) x + max(-x, 0) + ..., so that infinite logits give what
  // PyTorch gives; log1p keeps the tail PyTorch's log(1 + ...) rounds away
  // for |x| > 37. Derivative sigmoid(x) - c.
  template <class T> static T forward(T x, T c) noexcept {
    return (((T(1) - c) * x) + ScalarOps<T>::relu(-x)) + ScalarOps<T>::log1p(ScalarOps<T>::exp(-ScalarOps<T>::abs(x)));
  }
  template <class T> static void backward(T g, T x, T c, T /*out*/, T& dx) noexcept {
    dx += g * ((T(1) / (T(1) + ScalarOps<T>::exp(-x))) - c);
  }
};
template <> struct OpDef<Op::kHuber> {  // Huber function of a residual d, c = delta > 0
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "huber";
  // 0.5 d^2 if |d| < c, else c (|d| - 0.5 c): at |d| == c the linear branch,
  // as torch.nn.HuberLoss (equal values there). Derivative d for |d| <= c,
  // +-c beyond (both give +-c at |d| == c); NaN gives NaN.
  template <class T> static T forward(T d, T c) noexcept {
    const T z = ScalarOps<T>::abs(d);
    return ScalarOps<T>::select_greater(c, z, (T(0.5) * z) * z, c * (z - (T(0.5) * c)));
  }
  template <class T> static void backward(T g, T d, T c, T /*out*/, T& dx) noexcept {
    dx += ScalarOps<T>::select_greater(d, c, g * c, ScalarOps<T>::select_greater(-c, d, -(g * c), d * g));
  }
};

namespace detail {
/// The maximum's backward on a lane type: in each lane, g goes to the
/// operand the forward scan picked there, i.e. the first operand equal to
/// the lane's maximum or, where the maximum is NaN, the last NaN; the
/// other operands' lanes keep their bits.
template <class T, class At>
void max_backward_lanes(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
  using S = ScalarOps<T>;
  T waiting = S::select_nan(out, T(0), T(1));  // 1 in the lanes still looking for their maximum
  for (Index i = 0U; i < n; ++i) {
    const T hit = S::select_equal(v[at[i]], out, waiting, T(0));
    gr[at[i]] = S::select_greater(hit, T(0.5), gr[at[i]] + g, gr[at[i]]);
    waiting = waiting - hit;
  }
  waiting = S::select_nan(out, T(1), T(0));  // the lanes whose maximum is NaN, from the last operand
  for (Index i = n; i-- > 0U;) {
    const T hit = S::select_nan(v[at[i]], waiting, T(0));
    gr[at[i]] = S::select_greater(hit, T(0.5), gr[at[i]] + g, gr[at[i]]);
    waiting = waiting - hit;
  }
}
}  // namespace detail
/// The maximum, as max pooling in PyTorch picks it (torch.nn.functional.
/// max_pool1d/max_pool2d on the CPU): operands are scanned in order and
/// one replaces the current maximum if it is greater or NaN. So among
/// equal maxima the first wins (-0 and +0 are equal), a NaN wins over any
/// number and the last NaN wins, and all -inf gives the first. The
/// backward sends the whole gradient to that one operand.
template <> struct OpDef<Op::kMaxR> {
  static constexpr OpKind kKind = OpKind::kRangeReduce;
  static constexpr Op kPair = Op::kMaxL;
  static constexpr const char* kName = "max";
  template <class T> static T step(T m, T x) noexcept {
    return ScalarOps<T>::select_nan(x, x, ScalarOps<T>::select_greater(x, m, x, m));
  }
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    T m = v[at[0U]];
    for (Index i = 1U; i < n; ++i) { m = step(m, v[at[i]]); }
    return m;
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
    if constexpr (ScalarOps<T>::kSingleLane) {
      // The forward scan again, keeping the position of the maximum.
      T m = v[at[0U]];
      Index k = 0U;
      for (Index i = 1U; i < n; ++i) {
        const T x = v[at[i]];
        if ((x > m) || std::isnan(x)) {
          m = x;
          k = i;
        }
      }
      gr[at[k]] += g;
    } else {
      detail::max_backward_lanes(v, gr, at, n, g, out);
    }
  }
};
template <> struct OpDef<Op::kMaxL> : detail::ListVariant<Op::kMaxR> {};
/// Row b of a layer with its activation fused (Tape::matvec<Op::kRelu>,
/// <Op::kTanh>, <Op::kSigmoid>): act(row b of W times x + bias), one node
/// per output instead of a row and an activation node; the rows share
/// kMatRow's descriptor. The value is the activation's row applied to the
/// row's sum, the backward the activation's row (its derivative from the
/// output, as the activation node computes it) followed by kMatRow's: the
/// same bits as the two nodes. A row whose activation has a zero
/// derivative there (a ReLU that is off) adds nothing.
namespace detail {
template <Op Act>
struct FusedRow {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr bool kRows = true;
  static constexpr Op kActivation = Act;  ///< the activation's elementwise row
  template <class T> static T activate(T pre) noexcept { return OpDef<Act>::forward(pre); }
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return activate(mat_row_value(v, slots, a, b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index a, Index b, T g) noexcept {
    // The activation's backward into a zero gradient, as its own node
    // would get it (ReLU, tanh and sigmoid need only the output: ReLU's
    // output is > 0 or NaN exactly where its input is).
    T d = T(0);
    OpDef<Act>::backward(g, s.v[i], s.v[i], d);
    if (!ScalarOps<T>::is_zero(d)) {  // BT-DEV-004: exact zero test, not a tolerance
      mat_row_backward(s, a, b, d);
    }
  }
};
/// The fused row of an activation (kRelu, kTanh, kSigmoid); kCount for
/// another op.
constexpr Op fused_row_of(Op act) noexcept {
  Op row = Op::kCount;
  if (act == Op::kRelu) {
    row = Op::kMatRowRelu;
  } else if (act == Op::kTanh) {
    row = Op::kMatRowTanh;
  } else if (act == Op::kSigmoid) {
    row = Op::kMatRowSigmoid;
  } else {
    // no fused row
  }
  return row;
}
}  // namespace detail
template <> struct OpDef<Op::kMatRowRelu> : detail::FusedRow<Op::kRelu> {
  static constexpr const char* kName = "matvec_relu_row";
};
template <> struct OpDef<Op::kMatRowTanh> : detail::FusedRow<Op::kTanh> {
  static constexpr const char* kName = "matvec_tanh_row";
};
template <> struct OpDef<Op::kMatRowSigmoid> : detail::FusedRow<Op::kSigmoid> {
  static constexpr const char* kName = "matvec_sigmoid_row";
};
/// Row b of a frozen weight matrix (burtorch/frozen.hpp: caller memory, not
/// on the tape) times a view list; the rows share the descriptor of
/// detail::store_frozen at slot a. Only the input gets a gradient.
template <> struct OpDef<Op::kMatRowFrozen> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_frozen_row";
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::frozen_row_backward(s.g, s.slots, a, b, g);
  }
};

// --- lane batches (linked on use): a tape of Lanes (one sample per lane) ----
// reading parameters shared from an ordinary tape (Tape::matvec_shared and
// the recorders after it; the loops are in detail/lane_math.hpp). Their
// backward adds to the shared gradients, each lane's term in lane order.
// A tape of plain float or double cannot record them (the recorders say
// so), so for such a tape their backward is empty.
namespace detail {
/// True if T is a Lanes type (the lane ops exist for it).
template <class T>
constexpr bool kLaneType = LaneTraits<T>::kIsLanes;
}  // namespace detail
/// Element b % width of gathered row b / width: in each lane the shared
/// value of that lane's row (an embedding row chosen per sample).
template <> struct OpDef<Op::kGatherShared> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "gather";
  static constexpr bool kRows = true;  // b = the element: one dispatch for a gather's nodes
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    if constexpr (detail::kLaneType<T>) {
      detail::lanes_gather_backward<typename LaneTraits<T>::Scalar, LaneTraits<T>::kLanes>(s.slots, a, b, g);
    }
  }
};
/// In each lane, the element of a run that lane chose (a cross-entropy's
/// target per sample).
template <> struct OpDef<Op::kPickLanes> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "pick";
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index /*b*/, T g) noexcept {
    if constexpr (detail::kLaneType<T>) {
      detail::lanes_pick_backward(s.g, s.slots, a, g);
    }
  }
};
/// The head of a layer over shared weights, recorded just before its rows:
/// the sweep reaches it after every row, and its backward is the layer's
/// (input, weights and biases at once). Its value is 0.
template <> struct OpDef<Op::kMatShared> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_shared";
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index a, Index /*b*/, T /*g*/) noexcept {
    if constexpr (detail::kLaneType<T>) {
      detail::lanes_matvec_backward(s.v, s.g, s.slots, a, i);
    }
  }
};
/// Row b of a layer over shared weights. Its backward only marks the head
/// (node i - b - 1) as reached; the head does the work. (The rows of a
/// layer, of a gather and of a scale-shift are swept as one block: one
/// dispatch, then the row's backward per node.)
template <> struct OpDef<Op::kMatRowShared> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_shared_row";
  static constexpr bool kRows = true;
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index /*a*/, Index b, T /*g*/) noexcept {
    if constexpr (detail::kLaneType<T>) {
      s.g[i - b - 1U] = T(1);
    }
  }
};
/// Element b of x * scale + shift with shared gains and biases (a layer
/// norm's, on a tape of Lanes).
template <> struct OpDef<Op::kScaleShiftShared> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "scale_shift_shared";
  static constexpr bool kRows = true;
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    if constexpr (detail::kLaneType<T>) {
      detail::lanes_scale_shift_backward(s.v, s.g, s.slots, a, b, g);
    }
  }
};
// clang-format on
/// @endcond

// --- what the rows give everyone else ------------------------------------
/// A type that names op K (visit_op passes one to its function).
template <Op K>
struct OpTag {
  static constexpr Op kOp = K;  ///< the op
  using Def = OpDef<K>;         ///< its row
};

namespace detail {
/// Calls f(OpTag<op>{}) if op is First + one of I...
template <std::size_t First, class F, std::size_t... I>
BURTORCH_ALWAYS_INLINE inline void visit_op_from(Op op, F&& f, std::index_sequence<I...> /*ops*/) noexcept {
  // One equality test per op: the compiler turns the chain into a jump table.
  const auto code = static_cast<std::uint32_t>(op);
  const bool found = (((code == (First + I)) ? (f(OpTag<static_cast<Op>(First + I)>{}), true) : false) || ...);
  static_cast<void>(found);
}
template <std::size_t... I>
constexpr OpKind kind_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr OpKind kKinds[] = {OpDef<static_cast<Op>(I)>::kKind...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kKinds[static_cast<std::size_t>(op)] : OpKind::kSource;
}
template <std::size_t... I>
constexpr const char* name_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr const char* kNames[] = {OpDef<static_cast<Op>(I)>::kName...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kNames[static_cast<std::size_t>(op)] : "?";
}
/// The other variant of a reduction (R <-> L); the op itself otherwise.
template <Op K>
constexpr Op pair_of() noexcept {
  if constexpr ((OpDef<K>::kKind == OpKind::kRangeReduce) || (OpDef<K>::kKind == OpKind::kListReduce)) {
    return OpDef<K>::kPair;
  } else {
    return K;
  }
}
template <std::size_t... I>
constexpr Op pair_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr Op kPairs[] = {pair_of<static_cast<Op>(I)>()...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kPairs[static_cast<std::size_t>(op)] : op;
}
/// Every row is complete, a reduction's pair points back at it, and the
/// two variants of a reduction are both core or both linked on use.
template <std::size_t... I>
constexpr bool rows_consistent(std::index_sequence<I...> /*ops*/) noexcept {
  return ((pair_of<pair_of<static_cast<Op>(I)>()>() == static_cast<Op>(I)) && ...) &&
         ((linked_on_use(pair_of<static_cast<Op>(I)>()) == linked_on_use(static_cast<Op>(I))) && ...);
}
using AllOps = std::make_index_sequence<static_cast<std::size_t>(Op::kCount)>;
/// The core set: the ops before kFirstLinkedOnUse.
using CoreOps = std::make_index_sequence<static_cast<std::size_t>(kFirstLinkedOnUse)>;
/// The ops linked on use, numbered from kFirstLinkedOnUse.
using LinkedOps =
    std::make_index_sequence<static_cast<std::size_t>(Op::kCount) - static_cast<std::size_t>(kFirstLinkedOnUse)>;
static_assert(rows_consistent(AllOps{}), "a reduction's R and L rows must name each other");

/// The core ops of one kind, in code order (visit_core_op_of_kind
/// dispatches over them).
struct OpList {
  Op ops[static_cast<std::size_t>(Op::kCount)];  ///< the ops
  std::size_t count;                             ///< how many
};
template <OpKind Kind, std::size_t... I>
constexpr OpList ops_of_kind(std::index_sequence<I...> /*ops*/) noexcept {
  OpList list{};
  constexpr OpKind kKinds[] = {OpDef<static_cast<Op>(I)>::kKind...};
  for (std::size_t i = 0U; i < sizeof...(I); ++i) {
    if (kKinds[i] == Kind) {
      list.ops[list.count] = static_cast<Op>(i);
      ++list.count;
    }
  }
  return list;
}
template <OpKind Kind>
constexpr OpList kCoreOpsOfKind = ops_of_kind<Kind>(CoreOps{});
template <OpKind Kind, class F, std::size_t... J>
BURTORCH_ALWAYS_INLINE inline void visit_core_op_of_kind(Op op, F&& f, std::index_sequence<J...> /*ops*/) noexcept {
  const auto code = static_cast<std::uint32_t>(op);
  const bool found = (((code == static_cast<std::uint32_t>(kCoreOpsOfKind<Kind>.ops[J]))
                           ? (f(OpTag<kCoreOpsOfKind<Kind>.ops[J]>{}), true)
                           : false) ||
                      ...);
  static_cast<void>(found);
}

}  // namespace detail

/// Calls f(OpTag<op>{}) for the op's row: f is a generic lambda whose body
/// picks what it needs with `if constexpr` on the tag's Def::kKind.
template <class F>
BURTORCH_ALWAYS_INLINE inline void visit_op(Op op, F&& f) noexcept {
  detail::visit_op_from<0U>(op, static_cast<F&&>(f), detail::AllOps{});
}
/// visit_op() over the core set only (nothing for an op linked on use):
/// what the library's compiled code dispatches over.
template <class F>
BURTORCH_ALWAYS_INLINE inline void visit_core_op(Op op, F&& f) noexcept {
  detail::visit_op_from<0U>(op, static_cast<F&&>(f), detail::CoreOps{});
}
/// visit_op() over the ops linked on use only (nothing for a core op).
template <class F>
BURTORCH_ALWAYS_INLINE inline void visit_linked_op(Op op, F&& f) noexcept {
  detail::visit_op_from<static_cast<std::size_t>(kFirstLinkedOnUse)>(op, static_cast<F&&>(f), detail::LinkedOps{});
}
/// visit_core_op() over the core ops of one kind only (nothing for any
/// other op): a smaller jump table where only that kind can occur.
template <OpKind Kind, class F>
BURTORCH_ALWAYS_INLINE inline void visit_core_op_of_kind(Op op, F&& f) noexcept {
  detail::visit_core_op_of_kind<Kind>(op, static_cast<F&&>(f),
                                      std::make_index_sequence<detail::kCoreOpsOfKind<Kind>.count>{});
}
/// How op stores its operands (kSource for a code past kCount).
constexpr OpKind op_kind(Op op) noexcept { return detail::kind_of(op, detail::AllOps{}); }
/// The op's name ("?" for a code past kCount); R and L variants share one.
constexpr const char* op_name(Op op) noexcept { return detail::name_of(op, detail::AllOps{}); }
/// The list variant of a run reduction, the run variant of a list
/// reduction; any other op itself.
constexpr Op op_pair(Op op) noexcept { return detail::pair_of(op, detail::AllOps{}); }

}  // namespace burtorch

#endif  // BURTORCH_OP_HPP
