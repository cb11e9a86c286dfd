// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the tape's functions take and return: a handle to a node
/// (Value<T>), a position to rewind to (Mark), a view (consecutive nodes)
/// and a view list (several views read as one operand). core/tape.hpp defines
/// the tape; Value's accessors are inline there.
#ifndef BURTORCH_CORE_HANDLES_HPP
#define BURTORCH_CORE_HANDLES_HPP

#include <cstdint>

#include "burtorch/index.hpp"

namespace burtorch {

template <class T>
class Tape;

/// A handle to one node: the tape it lives on and its index. Cheap to copy.
/// A default-constructed or failed handle is invalid; reading it gives NaN.
///
/// Stale handles (the node was discarded by rewind() or reset()): a handle
/// whose index is at or past the tape's end is detected, by valid(), value(),
/// grad() (NaN) and by every op (kInvalidHandle). Once the tape has grown
/// past the index again, the handle names whatever node now sits there and
/// is NOT detected: valid() is true and ops use the new node. Keep handles
/// only for nodes recorded before the mark you rewind to (parameters, a
/// batch's inputs), and re-create per-sample handles after each rewind. The
/// check costs nothing per op; detecting this case would need a generation
/// in every handle and every node (docs/design.md, "Handles and rewind").
template <class T>
class Value {
 public:
  using Scalar = T;  ///< the tape's scalar type
  /// An empty handle (no tape): invalid, reads NaN, kEmptyHandle in an op.
  constexpr Value() noexcept = default;
  /// The handle of node `index` of `tape` (the tape's own functions make them).
  constexpr Value(Tape<T>* tape, Index index) noexcept : tape_(tape), index_(index) {}

  /// The node's value; NaN for an invalid handle.
  T value() const noexcept;
  /// The node's gradient after backward(); NaN for an invalid handle.
  T grad() const noexcept;
  /// True if the handle has a tape and its index is recorded (see above for
  /// what a stale handle can and cannot be told from).
  bool valid() const noexcept;
  /// The node's index on its tape (kNoIndex for a failed op).
  Index index() const noexcept { return index_; }
  /// The tape the node is recorded on (nullptr for an empty handle).
  Tape<T>* tape() const noexcept { return tape_; }

  /// @{
  /// Records `*this op rhs` and makes this handle name the result.
  Value& operator+=(Value rhs) noexcept;
  Value& operator-=(Value rhs) noexcept;
  Value& operator*=(Value rhs) noexcept;
  Value& operator/=(Value rhs) noexcept;
  Value& operator+=(T rhs) noexcept;
  Value& operator-=(T rhs) noexcept;
  Value& operator*=(T rhs) noexcept;
  Value& operator/=(T rhs) noexcept;
  /// @}

 private:
  Tape<T>* tape_ = nullptr;
  Index index_ = kNoIndex;
};

/// How many distinct rewind targets a tape's mark history remembers (see
/// Tape::rewind).
constexpr Index kMarkLevels = 4U;

/// A position on the tape to come back to: nodes and argument slots in use,
/// the tape that took it and the tape's rewind generation at that moment.
/// Only a mark returned by mark() of the same tape is accepted by rewind(),
/// and only while the position it names is still the one it was taken at
/// (see Tape::rewind); a hand-made mark is rejected.
struct Mark {
  Index nodes = 0U;               ///< nodes recorded when the mark was taken
  Index slots = 0U;               ///< argument slots in use then
  const void* tape = nullptr;     ///< the tape that took it
  std::uint64_t generation = 0U;  ///< the tape's rewind generation then
};

/// A view: consecutive nodes [first, first + count) of a tape (an
/// embedding row, a layer's outputs, one attention head's outputs).
struct View {
  Index first = 0U;  ///< the first node of the view
  Index count = 0U;  ///< how many nodes
};

/// The view a failed layer or bulk op returns (first kNoIndex, no nodes).
constexpr View kNoView{kNoIndex, 0U};

/// Several views read as one operand of `total` elements without copying:
/// stored once in argument slots (at `slot`: the number of views, then a
/// first/count pair per view) and shared by any number of inner products.
/// Invalid when slot == kNoIndex. Rewinding past `slot` discards it.
struct ViewList {
  Index slot = kNoIndex;  ///< where the list starts in the argument slots
  Index total = 0U;       ///< the elements of all views together
};

/// A node's two operand fields: node indices for unary/binary ops, or a
/// view's first node / a slot and a count for reductions (see OpKind).
struct Operands {
  Index a;  ///< first operand field
  Index b;  ///< second operand field
};

}  // namespace burtorch

#endif  // BURTORCH_CORE_HANDLES_HPP
