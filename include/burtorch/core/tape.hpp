// SPDX-License-Identifier: Apache-2.0
/// @file
/// The tape: an append-only record of scalar operations, stored as separate
/// arrays (structure of arrays) inside one byte buffer the caller owns.
///
/// Read core/op.hpp and core/op_wide.hpp first (what a node computes), then this
/// file, then core/ops.hpp (the functions that record nodes). The out-of-line
/// members are in include/burtorch/core/ (state.hpp: layout, errors, marks;
/// sweep.hpp: backward). What an op's recorder may do with a tape is
/// Recorder<T> (core/record.hpp), the one interface every recorder uses: the
/// core's own, the extensions' (burtorch/ext/extension.hpp) and yours.
///
///   node i:  values_[i]  grads_[i]  ops_[i]  links_[i] = a | b << 32  (names_[i])
///   slots:   args_[k]    indices of list operands, operand descriptors and
///                        constants, appended as nodes need them
///
/// Every node's operands are older than the node, so the reverse order of
/// recording is already a topological order: backward is one loop from the
/// root down to the oldest interior node. No sort, no stack, no recursion.
#ifndef BURTORCH_CORE_TAPE_HPP
#define BURTORCH_CORE_TAPE_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/handles.hpp"
#include "burtorch/status.hpp"

namespace burtorch {

template <class T>
class Recorder;

/// What a tape holds, for sizing one: the counts now and the capacities.
struct TapeUsage {
  std::size_t nodes = 0U;          ///< nodes recorded (size())
  std::size_t node_capacity = 0U;  ///< nodes the buffer holds (0 for an unusable buffer)
  std::size_t slots = 0U;          ///< argument slots in use
  std::size_t slot_capacity = 0U;  ///< argument slots the buffer holds
  std::size_t params = 0U;         ///< the parameter region: nodes that can only be leaves
  /// After kCapacityExceeded: the nodes the recording needed, up to and
  /// including the op that did not fit, plus one node for each elementwise
  /// op after it (they fail on its invalid result); record again on a tape
  /// this large to see whether more was needed further on (a layer after
  /// the failure is not counted). 0 while the status is kOk, and after any
  /// other error.
  std::size_t nodes_needed = 0U;
  /// The same for argument slots (up to the op that did not fit).
  std::size_t slots_needed = 0U;
};

/// Returned by Tape<T>::bytes_required for a layout no buffer can hold.
constexpr std::size_t kTooLarge = std::numeric_limits<std::size_t>::max();

/// Called once when a tape's status first turns from kOk to an error.
using FaultHook = void (*)(Status status, void* context);

namespace detail {
/// The backward of an op family's rows (ext/extension.hpp's OpFamily::backward):
/// node i's step (op, operands a and b, gradient g); returns how many nodes
/// below i it swept too (a layer's rows, down to `lowest`), or kNoIndex if
/// op is not one of the family's codes (it does nothing then); called with
/// Op::kNone, it returns the family's id. What a family's recorders
/// register on the tape (Recorder<T>::enable), so that the sweep reaches
/// the family's rows, and what links the family's backward into a program
/// only if the program records one of its ops.
template <class T>
using FamilyBackward = Index (*)(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest);
}  // namespace detail

/// Op families one tape can hold at once (ext/extension.hpp): a recorder of a
/// fourth on a tape that recorded ops of three since its last reset fails
/// with kCapacityExceeded.
constexpr std::size_t kTapeFamilies = 3U;

/// Size-erased tape over a caller-supplied buffer. Not copyable: handles
/// point at it. Two tapes share nothing, so two threads may each use one.
///
/// The members below are the whole tape a user of the paper's API needs:
/// record sources, backward, rewind, status, sizes and the arrays. Ops are
/// recorded by functions (core/ops.hpp; core/views.hpp for views and layers; the
/// extensions' headers), replay, inspection and fine-tuning are free
/// functions too (tools/replay.hpp, tools/inspect.hpp, frozen/ops.hpp).
template <class T>
class Tape {
 public:
  /// Every array in the buffer starts on this boundary: 32 bytes on
  /// application processors, 8 on microcontrollers (detail::kTapeArrayAlign).
  static constexpr std::size_t kArrayAlign = detail::kTapeArrayAlign;

  /// Bytes a buffer needs for `nodes` nodes and `slots` argument slots, given
  /// a buffer aligned to kArrayAlign (a buffer at any address: kArrayAlign - 1
  /// more; see the constructor). Use it to static_assert a RAM budget.
  /// The first `params` nodes form a parameter region: they can only be
  /// leaves, so they store value, gradient (and name) but no op code or
  /// operands, 9 bytes less per parameter. Any other node recorded while
  /// the region is not yet filled (fewer leaves than `params`) is a misuse,
  /// refused with kInvalidArgument (not kCapacityExceeded: the tape is not
  /// full, and TapeUsage::nodes_needed stays 0).
  /// Every step is checked: a count an Index cannot address (nodes or slots
  /// >= kNoIndex), params > nodes, or a total that does not fit in a size_t
  /// (32-bit targets) gives kTooLarge, never a wrapped small number; the
  /// constructor rejects it and a static_assert budget built on it fails.
  static constexpr std::size_t bytes_required(std::size_t nodes, std::size_t slots,
                                              std::size_t params = 0U) noexcept {
    std::size_t total = 0U;
    const bool ok = (nodes < kNoIndex) && (slots < kNoIndex) && (params <= nodes) &&
                    add_array(&total, nodes, sizeof(T)) &&                                 // values
                    add_array(&total, nodes, sizeof(T)) &&                                 // grads
                    add_array(&total, interior_nodes(nodes, params), sizeof(Operands)) &&  // a, b
                    add_array(&total, slots, sizeof(Index)) &&                             // slots
                    add_array(&total, nodes, kNameBytes) &&                                // names
                    add_array(&total, interior_nodes(nodes, params), sizeof(Op));          // op codes
    return ok ? total : kTooLarge;
  }

  /// Lays the arrays out in `buffer`, from its first kArrayAlign boundary:
  /// a buffer anywhere (a std::vector's, a byte array inside a struct)
  /// works if it has bytes_required(nodes, slots, params) + kArrayAlign - 1
  /// bytes; one aligned to kArrayAlign (FixedTape's storage, or
  /// `alignas(burtorch::Tape<T>::kArrayAlign)`) needs bytes_required alone.
  /// If the buffer is null or too small from that boundary, params > nodes,
  /// or bytes_required is kTooLarge, the tape has capacity 0 and status
  /// kInvalidArgument.
  /// The last parameter is never passed: its type names the configuration
  /// flags, so objects built with other flags than the archive fail to link.
  Tape(void* buffer, std::size_t bytes, std::size_t nodes, std::size_t slots, std::size_t params = 0U,
       detail::ThisConfig /*flags*/ = detail::ThisConfig{}) noexcept;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;
  Tape(Tape&&) = delete;
  Tape& operator=(Tape&&) = delete;
  ~Tape() = default;

  // --- sources ---------------------------------------------------------
  /// An input: a node with value x and no operands; its gradient accumulates.
  Value<T> leaf(T x) noexcept { return push_leaf(x, nullptr); }
  /// A leaf with a name (stored only if BURTORCH_CONFIG_PARAM_NAMES is 1; the
  /// pointer must outlive the tape; tools/inspect.hpp's param_name reads it).
  /// Parameters are ordinary leaves: create them first, one after another,
  /// and they form one view.
  Value<T> param(T x, const char* name = nullptr) noexcept { return push_leaf(x, name); }
  /// An input that needs no gradient (a sample's features): a node with
  /// value x and no operands (op kInput) whose gradient is not computed
  /// (grad() reads 0 or partial sums). A view list made only of inputs is
  /// marked so (view_list), and the inner products over it (a layer's rows)
  /// skip the input side of their backward: a layer over the inputs of a
  /// sample computes the gradient of its weights alone. Ops that take an
  /// input as an operand one by one (x * w) may still add to its gradient
  /// slot; nothing reads it. Refused (kInvalidArgument, as any node but a
  /// leaf) inside the parameter region.
  Value<T> input(T x) noexcept {
    const Index i = size_;
    const Index out = append(Op::kInput, x, kNoIndex, kNoIndex);
    // Inputs are leaves: the sweep's lower bound (leading_leaves_) passes them.
    leading_leaves_ = ((out != kNoIndex) && (leading_leaves_ == i)) ? (i + 1U) : leading_leaves_;
    return Value<T>(this, out);
  }

  // --- reverse mode ----------------------------------------------------
  /// Sets d(root)/d(root) = 1 and propagates to every node the root depends
  /// on. Interior gradients are recomputed on each call (those of the nodes
  /// up to the root; interior nodes recorded after the root keep what an
  /// earlier sweep left); leaf gradients accumulate until zero_grad() or a
  /// rewind that discards the leaf. (core/detail/sweep.hpp)
  Status backward(Value<T> root) noexcept;
  /// Sets every gradient on the tape to zero.
  void zero_grad() noexcept;
  /// Sets the gradients of nodes [first, first + count) to zero (e.g. the
  /// parameters).
  void zero_grad(Index first, Index count) noexcept;

  // --- per-sample rewind -----------------------------------------------
  /// The current position, to rewind() to (see Mark).
  Mark mark() const noexcept { return Mark{size_, slots_used_, this, generation_}; }
  /// Discards every node and slot recorded after `m`. Nodes before it keep
  /// their values and gradients. Does not clear the status.
  /// Rejected with kInvalidArgument, changing nothing: a mark of another
  /// tape or made by hand; a mark past the tape's end; a stale mark, i.e. one
  /// whose position an earlier rewind discarded (even if the tape has grown
  /// past it again: its node and slot counts no longer describe what is
  /// recorded). Marks at or below the target of every later rewind stay valid
  /// however often they are used: the usual per-sample loop rewinds to one
  /// mark again and again, and nested marks work.
  /// The tape remembers the last kMarkLevels distinct rewind targets; with
  /// more levels of nested marks in use, a mark below all of them that is
  /// older than the oldest remembered rewind is rejected too (never wrongly
  /// accepted): take it again.
  Status rewind(Mark m) noexcept;
  /// Empties the tape and clears the status (not after a bad buffer). Every
  /// earlier mark becomes stale, and the op families registered by the
  /// ops recorded so far are forgotten (a tape holds kTapeFamilies at once:
  /// rewind keeps them, reset frees them).
  void reset() noexcept;

  // --- state -----------------------------------------------------------
  /// The sticky status: kOk, or the first error since the last clear.
  Status status() const noexcept { return status_; }
  /// Clears a sticky error (e.g. after rewinding past the failed sample).
  void clear_status() noexcept;
  /// Records an error found by a caller (a layer given a view of the wrong
  /// width, a target out of range): the sticky status and the fault hook, as
  /// for the tape's own errors; the first error stays. kOk records nothing.
  /// Returns the status afterwards.
  Status report(Status error) noexcept;
  /// Fail-fast: hook called once per error transition (nullptr: none; only
  /// with BURTORCH_CONFIG_FAULT_HOOK).
  void set_fault_hook(FaultHook hook, void* context) noexcept;
  /// Nodes recorded.
  std::size_t size() const noexcept { return size_; }
  /// Nodes and slots in use and the capacities (TapeUsage).
  TapeUsage usage() const noexcept {
    TapeUsage u;
    u.nodes = size_;
    u.node_capacity = capacity_;
    u.slots = slots_used_;
    u.slot_capacity = slot_capacity_;
    u.params = param_region_;
    u.nodes_needed = needed_nodes_;
    u.slots_needed = needed_slots_;
    return u;
  }

  /// Node i's value (NaN past the end).
  T value(Index i) const noexcept { return (i < size_) ? values_[i] : kNaN; }
  /// Node i's gradient (NaN past the end). An input's (input()) is not
  /// computed: it reads 0, or whatever ops that took it one by one added.
  T grad(Index i) const noexcept { return (i < size_) ? grads_[i] : kNaN; }
  /// @{
  /// The values and gradients of nodes [0, size()), contiguous: for
  /// optimizers and save/load.
  T* values() noexcept { return values_; }
  T* grads() noexcept { return grads_; }
  const T* values() const noexcept { return values_; }
  const T* grads() const noexcept { return grads_; }
  /// @}

 private:
  friend class Recorder<T>;

  static constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
#if BURTORCH_CONFIG_PARAM_NAMES
  static constexpr std::size_t kNameBytes = sizeof(const char*);
#else
  static constexpr std::size_t kNameBytes = 0U;
#endif
  static constexpr std::size_t round_up(std::size_t bytes) noexcept {
    return (bytes + (kArrayAlign - 1U)) & ~(kArrayAlign - 1U);
  }
  /// *total += round_up(count * size) unless that overflows a size_t.
  static constexpr bool add_array(std::size_t* total, std::size_t count, std::size_t size) noexcept {
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    if ((size != 0U) && (count > ((kMax - (kArrayAlign - 1U)) / size))) {
      return false;
    }
    const std::size_t bytes = round_up(count * size);
    if (bytes > (kMax - *total)) {
      return false;
    }
    *total += bytes;
    return true;
  }
  static constexpr std::size_t interior_nodes(std::size_t nodes, std::size_t params) noexcept {
    return (params < nodes) ? (nodes - params) : 0U;
  }

  Value<T> push_leaf(T x, const char* name) noexcept;
  /// Appends one node; returns its index, or kNoIndex (status set) if full.
  Index append(Op op, T result, Index a, Index b) noexcept;
  /// A node's two operand fields, packed into one 64-bit word (see links_).
  static constexpr std::uint64_t pack(Index a, Index b) noexcept {
    return static_cast<std::uint64_t>(a) | (static_cast<std::uint64_t>(b) << 32U);
  }
  static constexpr Index first_of(std::uint64_t link) noexcept { return static_cast<Index>(link); }
  static constexpr Index second_of(std::uint64_t link) noexcept { return static_cast<Index>(link >> 32U); }
  /// Node i's op (Op::kNone past the end).
  Op op_at(Index i) const noexcept {
    return (i >= size_) ? Op::kNone : ((i < param_region_) ? Op::kLeaf : ops_[i - param_region_]);
  }
  /// Backward of a node whose backward is a loop or a family's, through the
  /// backward its recorder registered (core/detail/sweep.hpp). Returns how many nodes
  /// below i it swept too (a layer's rows); kInvalidArgument if none registered.
  Index backward_wide(Op op, Index i, Index a, Index b, T g, Index lowest) noexcept;
  /// Records the first error (sticky) and returns an invalid handle (cold).
  BURTORCH_COLD Value<T> fail(Status status) noexcept;
  /// fail(kCapacityExceeded) by a recorder that needed `nodes` more nodes
  /// and `slots` more argument slots: what usage() reports as needed.
  BURTORCH_COLD Value<T> fail_capacity(Index nodes, Index slots) noexcept;
  bool owns(Value<T> x) const noexcept { return (x.tape() == this) && (x.index() < size_); }
  /// Records why an operand is refused, from the handle's tape alone (so the
  /// handles of a chain of inline ops need not be kept for the cold path):
  /// no tape kEmptyHandle, this tape kInvalidHandle, another kForeignValue.
  BURTORCH_COLD void reject(const Tape<T>* owner) noexcept;
  /// The rewind generation in which the state at position key (nodes +
  /// slots) was recorded on the current branch of the tape's history (an
  /// upper bound once more than kMarkLevels rewind targets are remembered).
  std::uint64_t generation_at(std::size_t key) const noexcept;
  /// rewind() for every case but the per-sample loop's (out of line).
  Status rewind_other(Mark m) noexcept;
  /// Drops the nodes and slots past these counts (the mark was checked).
  void truncate(Index nodes, Index slots) noexcept {
    size_ = nodes;
    slots_used_ = slots;
    swept_end_ = (swept_end_ < size_) ? swept_end_ : size_;
    leading_leaves_ = (leading_leaves_ < size_) ? leading_leaves_ : size_;
    checked_list_ = kNoIndex;
    // A discarded node below the stop lifts it.
    floor_ = (nodes < floor_) ? param_region_ : floor_;
  }
  /// Zeroes the gradients of the non-leaf nodes in [first, end): stale
  /// results of an earlier backward over nodes that are still recorded.
  BURTORCH_COLD void clear_interior_grads(Index first, Index end) noexcept;
  Index* slot_array() noexcept { return args_; }  // the recorder's write access
  const Index* slot_array() const noexcept { return args_; }

  T* values_ = nullptr;
  T* grads_ = nullptr;
  /// Operands {a, b} of node i as a | (b << 32): one store per node, of a
  /// type that no member of the tape has, so the compiler keeps size_ and
  /// the array pointers in registers across a chain of inline ops.
  std::uint64_t* links_ = nullptr;
  Index* args_ = nullptr;
#if BURTORCH_CONFIG_PARAM_NAMES
  const char** names_ = nullptr;
#endif
  Op* ops_ = nullptr;
  Index size_ = 0U;
  Index capacity_ = 0U;
  /// capacity_ while the status is kOk, 0 after an error: one compare in push.
  Index limit_ = 0U;
  /// Nodes [0, param_region_) have no op code or operands (ops_ and links_
  /// are indexed from param_region_). append_room_ is limit_ - param_region_
  /// (0 after an error): one unsigned compare rejects both a full tape and an
  /// interior node inside the parameter region.
  Index param_region_ = 0U;
  Index append_room_ = 0U;
  Index slots_used_ = 0U;
  Index slot_capacity_ = 0U;
  /// Length of the run of leaves at the start of the tape, i.e. the oldest
  /// non-leaf node: backward stops there. Only push_leaf and rewind touch it,
  /// so recording an interior node costs no extra compare.
  Index leading_leaves_ = 0U;
  /// Nodes below this may hold gradients from an earlier backward; newer
  /// nodes got a zero gradient when recorded. Bounds backward's clearing.
  Index swept_end_ = 0U;
  /// The view list Recorder::list_valid last validated (slot, total), or
  /// kNoIndex: its views stay valid until a rewind, so the next inner
  /// products over the same list (every output of a layer) skip the check.
  Index checked_list_ = kNoIndex;
  Index checked_total_ = 0U;
  /// What the recording needed after kCapacityExceeded (TapeUsage).
  Index needed_nodes_ = 0U;
  Index needed_slots_ = 0U;
  /// The backward of the op families recorded, in first-recorded order
  /// (Recorder::enable), and of each core wide op (Recorder::enable_wide).
  detail::FamilyBackward<T> families_[kTapeFamilies] = {};
  detail::FamilyBackward<T> wide_[detail::kWideEntries] = {};
  /// Mark validation. The generation counts rewinds that discarded something.
  /// The positions of the current recording were made in generations that
  /// never decrease along it: a staircase whose steps are the targets of the
  /// remembered rewinds (cut_keys_[k], positions above it made in generation
  /// cut_generations_[k], ascending); positions at or below every remembered
  /// target were made in floor_generation_ or earlier. A mark is valid iff
  /// its position was made in its own generation or an earlier one.
  std::uint64_t generation_ = 0U;
  std::uint64_t floor_generation_ = 0U;
  /// Keys are nodes + slots: a size_t holds them (a buffer holds more bytes).
  std::size_t cut_keys_[kMarkLevels] = {};
  std::uint64_t cut_generations_[kMarkLevels] = {};
  /// Remembered rewind targets (at most kMarkLevels); one byte, next to
  /// the status (the tape's size is part of every FixedTape's RAM).
  std::uint8_t cuts_ = 0U;
  Status status_ = Status::kOk;
  /// Backward does not sweep nodes below this: the parameter region's end,
  /// or stop_gradient()'s point above it (one bound for the sweep to read).
  /// (Here, after the bytes: no padding before the 64-bit members.)
  Index floor_ = 0U;
#if BURTORCH_CONFIG_FAULT_HOOK
  FaultHook fault_hook_ = nullptr;
  void* fault_context_ = nullptr;
#endif
};

/// A tape that owns its storage: capacity fixed at compile time. Declare it
/// static (or in a struct the firmware places) to keep it off the stack.
/// kParams > 0 reserves a parameter region (see Tape::bytes_required).
template <class T, std::size_t kNodes, std::size_t kSlots = kNodes, std::size_t kParams = 0U>
class FixedTape : public Tape<T> {
 public:
  /// The bytes of the owned buffer: Tape<T>::bytes_required(kNodes, kSlots, kParams).
  static constexpr std::size_t kBytes = Tape<T>::bytes_required(kNodes, kSlots, kParams);
  static_assert(kBytes != kTooLarge, "FixedTape: these capacities do not fit this target's address space");
  // BT-DEV-012: storage_ stays uninitialised; push() writes a node before anything reads it.
  // cppcheck-suppress uninitMemberVar
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init,hicpp-member-init)
  FixedTape() noexcept : Tape<T>(storage_, sizeof(storage_), kNodes, kSlots, kParams) {}

 private:
  alignas(Tape<T>::kArrayAlign) unsigned char storage_[kBytes];
};

// ---------------------------------------------------------------------------
// Inline hot paths. Everything else lives in core/*.hpp (instantiated for
// float and double by lib/tape.cpp).

template <class T>
inline Index Tape<T>::append(Op op, T result, Index a, Index b) noexcept {
  const Index i = size_;
  const Index m = i - param_region_;  // wraps inside the parameter region
  if (BURTORCH_UNLIKELY(m >= append_room_)) {
    static_cast<void>(fail_capacity(1U, 0U));
    return kNoIndex;
  }
  size_ = i + 1U;
  values_[i] = result;
  grads_[i] = T(0);
  links_[m] = pack(a, b);
  ops_[m] = op;
  return i;
}

template <class T>
inline Value<T> Tape<T>::push_leaf(T x, const char* name) noexcept {
  const Index i = size_;
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(i >= limit_)) {
    static_cast<void>(fail_capacity(1U, 0U));
  } else {
    size_ = i + 1U;
    leading_leaves_ = (leading_leaves_ == i) ? (i + 1U) : leading_leaves_;
    values_[i] = x;
    grads_[i] = T(0);
#if BURTORCH_CONFIG_PARAM_NAMES
    names_[i] = name;
#else
    static_cast<void>(name);
#endif
    if (i >= param_region_) {  // parameters have no op code or operands
      links_[i - param_region_] = pack(kNoIndex, kNoIndex);
      ops_[i - param_region_] = Op::kLeaf;
    }
    out = i;
  }
  return Value<T>(this, out);
}

/// Inline: the per-sample loop calls it once per sample, rewinding to the
/// same mark as last time (the top step of the mark history): a handful of
/// compares. Everything else goes to rewind_other.
template <class T>
inline Status Tape<T>::rewind(Mark m) noexcept {
  const Index top = cuts_ - 1U;  // wraps when there is no step: cuts_ is checked first
  const bool same_target = (cuts_ != 0U) && (m.tape == this) && (m.nodes <= size_) && (m.slots <= slots_used_) &&
                           (cut_keys_[top] == (static_cast<std::size_t>(m.nodes) + m.slots)) &&
                           (m.generation <= generation_) &&
                           (((top != 0U) ? cut_generations_[top - 1U] : floor_generation_) <= m.generation);
  if (!same_target) {
    return rewind_other(m);
  }
  // The position was made below the top step; what is recorded above it
  // from now on belongs to a new generation.
  ++generation_;
  cut_generations_[top] = generation_;
  truncate(m.nodes, m.slots);
  return Status::kOk;
}

template <class T>
inline T Value<T>::value() const noexcept {
  return (tape_ != nullptr) ? tape_->value(index_) : std::numeric_limits<T>::quiet_NaN();
}

template <class T>
inline T Value<T>::grad() const noexcept {
  return (tape_ != nullptr) ? tape_->grad(index_) : std::numeric_limits<T>::quiet_NaN();
}

template <class T>
inline bool Value<T>::valid() const noexcept {
  return (tape_ != nullptr) && (index_ < tape_->size());
}

/// The library is compiled for these; for another scalar type (Lanes), one
/// translation unit includes <burtorch/lanes/ops.hpp> (which brings the
/// out-of-line members of core/detail/) and instantiates it.
extern template class Tape<float>;
extern template class Tape<double>;

}  // namespace burtorch

#endif  // BURTORCH_CORE_TAPE_HPP
