// SPDX-License-Identifier: Apache-2.0
/// @file
/// Recorder<T>: what a recorder may do with a tape. Every op is recorded
/// through it: the paper's functions (core/ops.hpp), the recorders of views and
/// layers (core/views.hpp), the extensions' op families (ext/extension.hpp) and an
/// op of your own. A recorder checks its operands, computes the value with
/// its row's forward, and appends one node (or a block of rows sharing a
/// descriptor in argument slots); on an error it records the sticky status
/// and returns an invalid handle, writing nothing.
///
/// The primitives are static functions over a Tape<T>&: the arrays, the
/// checks (each records its error and returns false), storage (append,
/// argument slots) and enable() for an op family. Below them, the inline
/// recorders of the elementwise kinds: unary, binary, stored constant and
/// reductions, for a core row (OpDef<K>) or a family's row alike.
#ifndef BURTORCH_CORE_RECORD_HPP
#define BURTORCH_CORE_RECORD_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

namespace detail {
/// Keeps a scalar argument out of template deduction, so Value<float> + 1.0
/// converts the constant instead of failing to deduce T.
template <class T>
struct Plain {
  using Type = T;
};
template <class T>
using PlainT = typename Plain<T>::Type;
/// A folded constant as the node's second operand field keeps it for
/// replay: its float bits, if T is float, or double and c is a float
/// exactly (1, 0.5, 1e-3f, ...); kNoIndex (not kept: the node cannot be
/// replayed) otherwise, and for the one float whose bits are kNoIndex.
template <class T>
inline Index pack_constant(T c) noexcept {
  Index bits = kNoIndex;
  if constexpr (std::is_same<T, float>::value) {
    std::memcpy(&bits, &c, sizeof(bits));  // BT-DEV-010
  } else if constexpr (std::is_same<T, double>::value) {
    // Kept if converting to float and back gives the same bits (no
    // rounding; -0 stays -0; a NaN's payload may not survive: not kept).
    const float f = static_cast<float>(c);
    const double back = static_cast<double>(f);
    std::uint64_t wide = 0U;
    std::uint64_t round_trip = 0U;
    std::memcpy(&wide, &c, sizeof(wide));                 // BT-DEV-010
    std::memcpy(&round_trip, &back, sizeof(round_trip));  // BT-DEV-010
    if (wide == round_trip) {
      std::memcpy(&bits, &f, sizeof(bits));  // BT-DEV-010
    }
  } else {
    static_cast<void>(c);  // lane types: not kept
  }
  return bits;
}
/// The constant pack_constant kept (b != kNoIndex).
template <class T>
inline T unpack_constant(Index bits) noexcept {
  float f = 0.0F;
  std::memcpy(&f, &bits, sizeof(f));  // BT-DEV-010
  return static_cast<T>(f);
}
/// The backward of core wide op K's nodes (core/detail/step.hpp; Recorder<T>::
/// enable_wide<K> registers it).
template <Op K, class T>
Index wide_backward(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest) noexcept;
/// The tape of the first operand that has one (nullptr if none): an empty
/// handle anywhere in a list is then reported by that tape.
template <class T>
inline Tape<T>* first_tape(const Value<T>* xs, std::size_t n) noexcept {
  Tape<T>* owner = nullptr;
  if (xs != nullptr) {
    for (std::size_t i = 0U; (i < n) && (owner == nullptr); ++i) {
      owner = xs[i].tape();
    }
  }
  return owner;
}
}  // namespace detail

/// What a recorder may do with a tape (see the file comment). A friend of
/// Tape<T>; nothing else reaches the tape's arrays for writing.
template <class T>
class Recorder {
 public:
  /// Argument slots a stored constant takes (x * c and x / c store c, as do
  /// the other ops of kind kConstant).
  static constexpr Index kConstantSlots = static_cast<Index>((sizeof(T) + sizeof(Index) - 1U) / sizeof(Index));

  // --- the arrays ------------------------------------------------------
  // The arrays are handed out for writing: the tape is not const to the
  // recorder that writes them.
  /// The values of nodes [0, size).
  static T* values(Tape<T>& t) noexcept { return t.values(); }
  /// The gradients of nodes [0, size).
  static T* grads(Tape<T>& t) noexcept { return t.grads(); }
  /// The argument slots [0, slots_used).
  static Index* slots(Tape<T>& t) noexcept { return t.slot_array(); }
  /// The argument slots, for reading.
  static const Index* slots(const Tape<T>& t) noexcept { return t.slot_array(); }
  /// Nodes recorded.
  static Index size(const Tape<T>& t) noexcept { return t.size_; }
  /// Argument slots in use.
  static Index slots_used(const Tape<T>& t) noexcept { return t.slots_used_; }
  /// The parameter region's end (nodes below it are parameters).
  static Index param_region(const Tape<T>& t) noexcept { return t.param_region_; }
  /// The op codes of nodes from the parameter region's end on (node i's
  /// at ops(t)[i - param_region(t)]).
  static const Op* ops(const Tape<T>& t) noexcept { return t.ops_; }
  /// Node i's op (Op::kNone past the end; parameters are Op::kLeaf).
  static Op op(const Tape<T>& t, Index i) noexcept { return t.op_at(i); }
  /// Node i's operand fields (kNoIndex for parameters and past the end).
  static Operands operands(const Tape<T>& t, Index i) noexcept {
    Operands o{kNoIndex, kNoIndex};
    if ((i < t.size_) && (i >= t.param_region_)) {
      const std::uint64_t link = t.links_[i - t.param_region_];
      o.a = Tape<T>::first_of(link);
      o.b = Tape<T>::second_of(link);
    }
    return o;
  }
  /// The operand fields (a | b << 32) of nodes from the parameter region's
  /// end on, as ops(t).
  static const std::uint64_t* links(const Tape<T>& t) noexcept { return t.links_; }
  /// Sets node i's operand fields (an interior node; replay's targets).
  static void relink(Tape<T>& t, Index i, Index a, Index b) noexcept {
    t.links_[i - t.param_region_] = Tape<T>::pack(a, b);
  }
  /// The name param() stored for node i (nullptr if none, or names are
  /// compiled out: BURTORCH_CONFIG_PARAM_NAMES 0).
  static const char* param_name(const Tape<T>& t, Index i) noexcept;
  /// The tape's rewind generation (see Tape::rewind).
  static std::uint64_t generation(const Tape<T>& t) noexcept { return t.generation_; }
  /// True if m is a mark of t that rewind() would accept.
  static bool mark_valid(const Tape<T>& t, Mark m) noexcept {
    return (m.tape == &t) && (m.nodes <= t.size_) && (m.slots <= t.slots_used_) && (m.generation <= t.generation_) &&
           (t.generation_at(static_cast<std::size_t>(m.nodes) + m.slots) <= m.generation);
  }
  /// Tells backward that the gradients of nodes from `first` on are zero
  /// (a recorder that cleared them: replay).
  static void fresh_from(Tape<T>& t, Index first) noexcept {
    t.swept_end_ = (t.swept_end_ < first) ? t.swept_end_ : first;
  }

  // --- checks: false (the error recorded) if not -----------------------
  /// True if x is a node recorded on t.
  static bool owns(const Tape<T>& t, Value<T> x) noexcept { return t.owns(x); }
  /// True if nodes [first, first + n) are all recorded.
  static bool recorded(const Tape<T>& t, Index first, std::uint64_t n) noexcept {
    return (first < t.size_) && (n <= (t.size_ - first));
  }
  /// True if one more non-leaf node fits (status ok, not full, and past the
  /// parameter region).
  static bool room_for_interior(const Tape<T>& t) noexcept {
    return (t.size_ - t.param_region_) < t.append_room_;
  }
  /// True if x names a view list whose views are all still recorded;
  /// otherwise records the error and returns false.
  static bool list_valid(Tape<T>& t, ViewList x) noexcept;
  /// Records the first error (sticky) and returns an invalid handle.
  static Value<T> fail(Tape<T>& t, Status status) noexcept { return t.fail(status); }
  /// kCapacityExceeded by a recorder that needed `nodes` more nodes and
  /// `slots` more argument slots (TapeUsage::nodes_needed, slots_needed).
  static Value<T> fail_capacity(Tape<T>& t, Index nodes, Index slots) noexcept { return t.fail_capacity(nodes, slots); }
  /// Records why operand x is refused, from its tape alone: none
  /// kEmptyHandle, t kInvalidHandle, another kForeignValue.
  static void reject(Tape<T>& t, Value<T> x) noexcept { t.reject(x.tape()); }

  // --- storage ---------------------------------------------------------
  /// Appends one node; its index, or kNoIndex (kCapacityExceeded recorded).
  BURTORCH_ALWAYS_INLINE static Index append(Tape<T>& t, Op op, T value, Index a, Index b) noexcept {
    return t.append(op, value, a, b);
  }
  /// The same as a handle.
  BURTORCH_ALWAYS_INLINE static Value<T> push(Tape<T>& t, Op op, T value, Index a, Index b) noexcept {
    return Value<T>(&t, t.append(op, value, a, b));
  }
  /// Reserves `count` argument slots; returns the first, or kNoIndex
  /// (kCapacityExceeded recorded; also when the status holds an error).
  static Index take_slots(Tape<T>& t, std::size_t count) noexcept;
  /// Room for `nodes` more interior nodes and `slots` argument slots: the
  /// first slot, or kNoIndex with kCapacityExceeded recorded.
  static Index reserve(Tape<T>& t, Index nodes, Index slots) noexcept;
  /// Gives back the slots taken since `slots_used` (a failed recorder).
  static void release_slots(Tape<T>& t, Index slots_used) noexcept { t.slots_used_ = slots_used; }
  /// The operands xs[0..n) of a wide op: checks them (ownership) and
  /// stores a view's first node (xs consecutive: *is_view) or a list of
  /// indices in n slots. False (status set, no slot taken) on error.
  static bool store_operand(Tape<T>& t, const Value<T>* xs, std::size_t n, Index* where, bool* is_view) noexcept;
  /// store_operand() after the checks of a reduction (null, n == 0, room
  /// for the node).
  static bool reduce_operands(Tape<T>& t, const Value<T>* xs, std::size_t n, Index* where, bool* is_view) noexcept;

  // --- op families and the sweep's floor ---------------------------------
  /// Registers op family `id`'s backward on t (once per family: later
  /// calls find it). False with kCapacityExceeded recorded if t holds
  /// kTapeFamilies other families already, kInvalidArgument if another
  /// family there has the same id.
  BURTORCH_ALWAYS_INLINE static bool enable(Tape<T>& t, std::uint8_t id, detail::FamilyBackward<T> backward) noexcept {
    return (t.families_[0] == backward) || enable_other(t, id, backward);
  }
  /// Registers the backward of core wide op `op` on t (Op::kSumR <= op <
  /// Op::kCount): what the core's wide recorders do, so that the sweep
  /// reaches the op's nodes and a program links the backward of the wide
  /// ops it records only (core/op.hpp's detail::kWideEntries; a reduction's R
  /// and L rows share one).
  BURTORCH_ALWAYS_INLINE static void enable_wide(Tape<T>& t, Op op, detail::FamilyBackward<T> backward) noexcept {
    t.wide_[detail::wide_entry(op)] = backward;
  }
  /// The same with op K's backward (core/detail/step.hpp's detail::wide_backward).
  template <Op K>
  BURTORCH_ALWAYS_INLINE static void enable_wide(Tape<T>& t) noexcept {
    static_assert((K >= Op::kSumR) && (K < Op::kCount), "enable_wide<K>: a core wide op");
    t.wide_[detail::wide_entry(K)] = &detail::wide_backward<K, T>;
  }
  /// Makes backward stop at the tape's end (frozen/ops.hpp's stop_gradient).
  static void stop_at_end(Tape<T>& t) noexcept { t.floor_ = (t.size_ > t.param_region_) ? t.size_ : t.param_region_; }
  /// Where backward stops (0: the oldest interior node).
  static Index stop(const Tape<T>& t) noexcept { return (t.floor_ > t.param_region_) ? t.floor_ : 0U; }

  // --- elementwise recorders: row D of op code K -------------------------
  /// A unary op: D::forward(x).
  template <Op K, class D = OpDef<K>>
  static Value<T> unary(Tape<T>& t, Value<T> x) noexcept {
    static_assert(D::kKind == OpKind::kUnary, "unary records unary rows");
    Index out = kNoIndex;
    if (BURTORCH_UNLIKELY(!t.owns(x))) {
      t.reject(x.tape());
    } else {
      const Index a = x.index();
      out = t.append(K, D::forward(t.values_[a]), a, kNoIndex);
    }
    return Value<T>(&t, out);
  }
  /// A unary op with the constant c folded into the value: D::forward(x,
  /// c); c kept in the node's free operand field for replay.
  template <Op K, class D = OpDef<K>>
  static Value<T> unary(Tape<T>& t, Value<T> x, T c) noexcept {
    static_assert(D::kKind == OpKind::kUnary, "unary records unary rows");
    Index out = kNoIndex;
    if (BURTORCH_UNLIKELY(!t.owns(x))) {
      t.reject(x.tape());
    } else {
      const Index a = x.index();
      out = t.append(K, D::forward(t.values_[a], c), a, detail::pack_constant(c));
    }
    return Value<T>(&t, out);
  }
  /// A binary op: D::forward(x, y).
  template <Op K, class D = OpDef<K>>
  static Value<T> binary(Tape<T>& t, Value<T> x, Value<T> y) noexcept {
    static_assert(D::kKind == OpKind::kBinary, "binary records binary rows");
    Index out = kNoIndex;
    if (BURTORCH_UNLIKELY(!t.owns(x))) {
      t.reject(x.tape());
    } else if (BURTORCH_UNLIKELY(!t.owns(y))) {
      t.reject(y.tape());
    } else {
      const Index a = x.index();
      const Index b = y.index();
      out = t.append(K, D::forward(t.values_[a], t.values_[b]), a, b);
    }
    return Value<T>(&t, out);
  }
  /// An op with a stored constant: D::forward(x, c), c kept in
  /// kConstantSlots argument slots (the backward needs it).
  template <Op K, class D = OpDef<K>>
  static Value<T> constant(Tape<T>& t, Value<T> x, T c) noexcept {
    static_assert(D::kKind == OpKind::kConstant, "constant records rows with a stored constant");
    Index out = kNoIndex;
    if (BURTORCH_UNLIKELY(!t.owns(x))) {
      t.reject(x.tape());
    } else if (BURTORCH_UNLIKELY(!room_for_interior(t) || ((t.slot_capacity_ - t.slots_used_) < kConstantSlots))) {
      static_cast<void>(t.fail_capacity(1U, kConstantSlots));
    } else {
      const Index slot = t.slots_used_;
      t.slots_used_ = slot + kConstantSlots;
      std::memcpy(&t.args_[slot], &c, sizeof(T));  // BT-DEV-010
      out = t.append(K, D::forward(t.values_[x.index()], c), x.index(), slot);
    }
    return Value<T>(&t, out);
  }
  /// The value of a reduction over no operands (empty_value(e)), as a node
  /// without operands and without gradient (op kInput: a constant).
  static Value<T> constant_node(Tape<T>& t, Empty e) noexcept {
    return push(t, Op::kInput, empty_value<T>(e), kNoIndex, kNoIndex);
  }
  /// A view reduction over xs[0..n): stored as a view if the nodes are
  /// consecutive (op K), else as a list of indices (op L, D's list row).
  /// Over no operands (n == 0, xs may be null), its value of nothing
  /// (D::kEmpty) as a constant node.
  template <Op K, Op L, class D = OpDef<K>>
  static Value<T> reduce(Tape<T>& t, const Value<T>* xs, std::size_t n) noexcept {
    static_assert(D::kKind == OpKind::kViewReduce, "reduce records view reductions");
    if (n == 0U) {
      return constant_node(t, D::kEmpty);
    }
    const Index before = t.slots_used_;
    Index where = kNoIndex;
    bool is_view = false;
    if (!reduce_operands(t, xs, n, &where, &is_view)) {
      return Value<T>(&t, kNoIndex);
    }
    const auto count = static_cast<Index>(n);
    const T result = is_view ? D::forward(t.values_, detail::view_operand(where), count)
                             : D::forward(t.values_, detail::list_operand(&t.args_[where]), count);
    const Value<T> out = push(t, is_view ? K : L, result, where, count);
    if (!out.valid()) {
      t.slots_used_ = before;
    }
    return out;
  }
  /// The same over the view x, read in place: an empty view gives the
  /// value of nothing; kInvalidArgument for kNoView (a failed layer's),
  /// kInvalidHandle if a node of x is not recorded.
  template <Op K, class D = OpDef<K>>
  static Value<T> reduce(Tape<T>& t, View x) noexcept {
    static_assert(D::kKind == OpKind::kViewReduce, "reduce records view reductions");
    if (x.first == kNoIndex) {
      return t.fail(Status::kInvalidArgument);
    }
    if (x.count == 0U) {
      return constant_node(t, D::kEmpty);
    }
    if (!recorded(t, x.first, x.count)) {
      return t.fail(Status::kInvalidHandle);
    }
    return push(t, K, D::forward(t.values_, detail::view_operand(x.first), x.count), x.first, x.count);
  }

 private:
  /// enable() past its first entry (out of line).
  static bool enable_other(Tape<T>& t, std::uint8_t id, detail::FamilyBackward<T> backward) noexcept;
};

extern template class Recorder<float>;
extern template class Recorder<double>;

}  // namespace burtorch

#endif  // BURTORCH_CORE_RECORD_HPP
