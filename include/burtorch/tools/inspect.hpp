// SPDX-License-Identifier: Apache-2.0
/// @file
/// Reading what a tape recorded, node by node: its op, kind, name, operand
/// fields, stored constant, argument slots and parameters' names, and
/// whether every value and gradient is finite. For tools (the Graphviz
/// export, the fuzzer, a debugger's view), not for training: every read is
/// checked, and past the end gives Op::kNone, kNoIndex, NaN or nullptr.
#ifndef BURTORCH_TOOLS_INSPECT_HPP
#define BURTORCH_TOOLS_INSPECT_HPP

#include <cstring>
#include <limits>

#include "burtorch/frozen/ops.hpp"
#include "burtorch/ext/functions.hpp"
#include "burtorch/ext/fused.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// Node i's op (Op::kNone past the end; parameters are Op::kLeaf).
template <class T>
inline Op node_op(const Tape<T>& tape, Index i) noexcept {
  return Recorder<T>::op(tape, i);
}
/// Node i's operand fields (see OpKind; kNoIndex for leaves and past the end).
template <class T>
inline Operands node_operands(const Tape<T>& tape, Index i) noexcept {
  return Recorder<T>::operands(tape, i);
}
namespace detail {
/// The kind and name of op k of one of the library's op families (kSource
/// and "?" for another code).
inline OpKind family_kind(Op k) noexcept {
  OpKind kind = PiecewiseOps::kind(k);
  kind = (kind == OpKind::kSource) ? SmoothOps::kind(k) : kind;
  kind = (kind == OpKind::kSource) ? FusedOps::kind(k) : kind;
  kind = (kind == OpKind::kSource) ? FrozenOps::kind(k) : kind;
  return (kind == OpKind::kSource) ? LaneOps::kind(k) : kind;
}
inline const char* family_name(Op k) noexcept {
  const char* const names[] = {PiecewiseOps::name(k), SmoothOps::name(k), FusedOps::name(k), FrozenOps::name(k),
                               LaneOps::name(k)};
  const char* name = "?";
  for (const char* n : names) {
    name = (n[0] != '?') ? n : name;
  }
  return name;
}
}  // namespace detail
/// How node i stores its operands: its core row's kind, or its op
/// family's row's for the library's families (kSource for a leaf, an
/// input, another code and past the end).
template <class T>
inline OpKind node_kind(const Tape<T>& tape, Index i) noexcept {
  const Op k = node_op(tape, i);
  return is_extension(k) ? detail::family_kind(k) : op_kind(k);
}
/// Node i's op name (op_name(), or its row's for the library's op
/// families; "?" for another code and past the end).
template <class T>
inline const char* node_name(const Tape<T>& tape, Index i) noexcept {
  const Op k = node_op(tape, i);
  return is_extension(k) ? detail::family_name(k) : op_name(k);
}
/// Argument slot k (kNoIndex past the slots in use).
template <class T>
inline Index slot_at(const Tape<T>& tape, Index k) noexcept {
  return (k < Recorder<T>::slots_used(tape)) ? Recorder<T>::slots(tape)[k] : kNoIndex;
}
/// The stored constant of node i if its op has one (kind kConstant: x * c,
/// x / c, leaky_relu's slope, bce_with_logits' target, huber's delta; and
/// the constant folded into x + c, c - x, c / x where it was kept:
/// detail::pack_constant); NaN for other nodes.
template <class T>
inline T node_constant(const Tape<T>& tape, Index i) noexcept {
  const Op k = node_op(tape, i);
  const Operands o = node_operands(tape, i);
  T c = std::numeric_limits<T>::quiet_NaN();
  if ((k == Op::kAddConst) || (k == Op::kConstSub) || (k == Op::kConstDiv)) {
    // Folded into the value; kept in the operand field if it fits there.
    c = (o.b != kNoIndex) ? detail::unpack_constant<T>(o.b) : c;
  } else if (node_kind(tape, i) == OpKind::kConstant) {
    std::memcpy(&c, &Recorder<T>::slots(tape)[o.b], sizeof(T));  // BT-DEV-010
  } else {
    // no constant
  }
  return c;
}
/// The name param() stored for node i, or nullptr (none given, not a
/// parameter, or names compiled out: BURTORCH_CONFIG_PARAM_NAMES 0).
template <class T>
inline const char* param_name(const Tape<T>& tape, Index i) noexcept {
  return Recorder<T>::param_name(tape, i);
}
/// False if any recorded value or gradient is NaN or infinite.
template <class T>
inline bool all_finite(const Tape<T>& tape) noexcept {
  bool finite = true;
  const T* const v = tape.values();
  const T* const g = tape.grads();
  for (std::size_t i = 0U; i < tape.size(); ++i) {
    finite = finite && ScalarOps<T>::finite(v[i]) && ScalarOps<T>::finite(g[i]);
  }
  return finite;
}

}  // namespace burtorch

#endif  // BURTORCH_TOOLS_INSPECT_HPP
