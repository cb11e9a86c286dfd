// SPDX-License-Identifier: Apache-2.0
/// @file
/// Graphviz export of a recorded graph (the DOT language): one box per node
/// with its index, op name (tools/inspect.hpp's node_name), value and gradient;
/// leaves drawn as ellipses, the root doubled. Bounded and non-recursive: a
/// loop over nodes [0, root], output through a ByteSink.
#ifndef BURTORCH_TOOLS_GRAPHVIZ_HPP
#define BURTORCH_TOOLS_GRAPHVIZ_HPP

#include "burtorch/tools/stream.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// Significant digits of values and gradients in the labels.
constexpr int kGraphvizDigits = 6;

/// Writes nodes [0, root.index()] and their edges. Returns the sink's first
/// error, kForeignValue/kInvalidHandle for a bad root, or kOk.
template <class T>
Status write_graphviz(const Tape<T>& tape, Value<T> root, ByteSink sink) noexcept;

/// @cond INTERNAL
extern template Status write_graphviz<float>(const Tape<float>&, Value<float>, ByteSink) noexcept;
extern template Status write_graphviz<double>(const Tape<double>&, Value<double>, ByteSink) noexcept;
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_TOOLS_GRAPHVIZ_HPP
