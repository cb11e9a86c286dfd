// SPDX-License-Identifier: Apache-2.0
/// @file
/// Graphviz DOT export of a recorded graph: one box per node with its index,
/// op, value and gradient; leaves drawn as ellipses, the root doubled. Bounded
/// and non-recursive: a loop over nodes [0, root], output through a ByteSink.
#ifndef BURTORCH_DOT_HPP
#define BURTORCH_DOT_HPP

#include "burtorch/stream.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {

/// Significant digits of values and gradients in DOT labels.
constexpr int kDotDigits = 6;

/// Short name of an op ("add", "tanh", "dot", ...).
const char* op_name(Op op) noexcept;

/// Writes nodes [0, root.index()] and their edges. Returns the sink's first
/// error, kForeignValue/kInvalidHandle for a bad root, or kOk.
template <class T>
Status write_dot(const Tape<T>& tape, Value<T> root, ByteSink sink) noexcept;

/// @cond INTERNAL
extern template Status write_dot<float>(const Tape<float>&, Value<float>, ByteSink) noexcept;
extern template Status write_dot<double>(const Tape<double>&, Value<double>, ByteSink) noexcept;
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_DOT_HPP
