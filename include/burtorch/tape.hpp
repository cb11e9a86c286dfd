// SPDX-License-Identifier: Apache-2.0
/// @file
/// The tape: an append-only record of scalar operations, stored as separate
/// arrays (structure of arrays) inside one byte buffer the caller owns.
///
/// Read op.hpp first (what a node computes), then this file, then ops.hpp;
/// the out-of-line members are in include/burtorch/detail/ (tape_state.hpp:
/// layout, errors, marks; tape_record.hpp: the wide ops; tape_backward.hpp:
/// the sweep). docs/architecture.md maps the rest.
///
///   node i:  values_[i]  grads_[i]  ops_[i]  links_[i] = a | b << 32  (names_[i])
///   slots:   args_[k]    indices of list operands, operand descriptors and
///                        constants, appended as nodes need them
///
/// Every node's operands are older than the node, so the reverse order of
/// recording is already a topological order: backward is one loop from the
/// root down to the oldest interior node. No sort, no stack, no recursion.
#ifndef BURTORCH_TAPE_HPP
#define BURTORCH_TAPE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "burtorch/config.hpp"
#include "burtorch/detail/lane_math.hpp"
#include "burtorch/detail/step.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/op.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/status.hpp"

namespace burtorch {

namespace detail {
template <class T>
struct Record;
}  // namespace detail

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

/// A run of consecutive nodes [first, first + count): an embedding row, a
/// layer's outputs, one attention head's outputs.
struct View {
  Index first = 0U;  ///< the first node of the run
  Index count = 0U;  ///< how many nodes
};

/// The view a failed layer or bulk op returns (first kNoIndex, no nodes).
constexpr View kNoView{kNoIndex, 0U};

/// Several runs read as one operand of `total` elements without copying:
/// stored once in argument slots (at `slot`: the number of runs, then a
/// first/count pair per run) and shared by any number of inner products.
/// Invalid when slot == kNoIndex. Rewinding past `slot` discards it.
struct ViewList {
  Index slot = kNoIndex;  ///< where the list starts in the argument slots
  Index total = 0U;       ///< the elements of all runs together
};

/// Parameters that a tape of Lanes (burtorch/lanes.hpp: one sample per lane)
/// reads as shared scalars: the values and gradients of the parameters of an
/// ordinary tape (nn::shared_params makes one), addressed by their index
/// there. The lane ops (Tape::matvec_shared, scale_shift_shared,
/// gather_shared) broadcast a parameter to every lane and their backward
/// adds the lanes' gradients to it, so the parameters, their gradients and
/// the optimizer's state stay one copy however many lanes run. The arrays
/// must stay where they are while nodes that read them are recorded.
template <class S>
struct SharedParams {
  const S* values = nullptr;  ///< the parameters' values
  S* grads = nullptr;         ///< their gradients: backward adds to them
  Index count = 0U;           ///< how many there are
};

/// What Tape::replay re-evaluates (Tape::replayable): the nodes recorded
/// after a mark, the root backward starts from, and the state of the tape
/// they were taken in. An empty Replay (tape nullptr) is refused.
struct Replay {
  Index first = kNoIndex;         ///< the first node recorded after the mark
  Index end = 0U;                 ///< the tape's size when taken
  Index slots = 0U;               ///< argument slots in use then
  Index root = kNoIndex;          ///< where backward starts
  const void* tape = nullptr;     ///< the tape that took it
  std::uint64_t generation = 0U;  ///< the tape's rewind generation then
};

/// A node's two operand fields: node indices for unary/binary ops, or a
/// range start / slot and a count for reductions (see Op).
struct Operands {
  Index a;  ///< first operand field
  Index b;  ///< second operand field
};

/// Called once when a tape's status first turns from kOk to an error.
using FaultHook = void (*)(Status status, void* context);

/// Size-erased tape over a caller-supplied buffer. Not copyable: handles
/// point at it. Two tapes share nothing, so two threads may each use one.
template <class T>
class Tape {
 public:
  /// Every array in the buffer starts on this boundary (SIMD loads, and no
  /// false sharing between a tape's values and grads on most cores).
  static constexpr std::size_t kArrayAlign = 32U;

  /// Argument slots a stored constant takes (x * c and x / c store c, as do
  /// the other ops of kind kConstant).
  static constexpr Index kConstantSlots = static_cast<Index>((sizeof(T) + sizeof(Index) - 1U) / sizeof(Index));

  /// Returned by bytes_required for a layout no buffer can hold.
  static constexpr std::size_t kTooLarge = std::numeric_limits<std::size_t>::max();

  /// Bytes a buffer needs for `nodes` nodes and `slots` argument slots, given
  /// a buffer aligned to kArrayAlign. Use it to static_assert a RAM budget.
  /// The first `params` nodes form a parameter region: they can only be
  /// leaves, so they store value, gradient (and name) but no op code or
  /// operands, 9 bytes less per parameter.
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

  /// Lays the arrays out in `buffer`. If the buffer is null, misaligned or
  /// too small, params > nodes, or bytes_required(nodes, slots, params) is
  /// kTooLarge, the tape has capacity 0 and status kInvalidArgument.
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
  /// pointer must outlive the tape). Parameters are ordinary leaves: create
  /// them first, one after another, and they form one contiguous range.
  Value<T> param(T x, const char* name = nullptr) noexcept { return push_leaf(x, name); }
  /// The name given to param(), or nullptr.
  const char* name(Index i) const noexcept;
  /// An input that needs no gradient (a sample's features): a node with
  /// value x and no operands (op kInput) whose gradient is not computed
  /// (grad() reads 0 or partial sums). A view list made only of inputs is marked so
  /// (view_list), and the inner products over it (a layer's rows, dot_views)
  /// skip the input side of their backward: a layer over the inputs of a
  /// sample computes the gradient of its weights alone. Ops that take an
  /// input as an operand one by one (x * w) may still add to its gradient
  /// slot; nothing reads it. Refused (kCapacityExceeded, as any node but a
  /// parameter) inside the parameter region.
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
  /// rewind that discards the leaf.
  Status backward(Value<T> root) noexcept;
  /// Sets every gradient on the tape to zero.
  void zero_grad() noexcept;
  /// Sets gradients of nodes [first, first + count) to zero (e.g. parameters).
  void zero_grad(Index first, Index count) noexcept;

  // --- fine-tuning: what backward leaves alone ---------------------------
  /// From now on backward sweeps stop at the current end of the tape: the
  /// nodes recorded so far propagate no gradient (torch.no_grad() around a
  /// frozen backbone's forward pass). Newer nodes still add their share to
  /// the gradients of older operands (the head's weights, the backbone's
  /// outputs) but the older nodes pass nothing on, so the backbone's
  /// backward costs nothing. The gradient of an interior node below the stop
  /// is not meaningful (it may hold partial sums of earlier sweeps). A root
  /// below the stop gets its own gradient and propagates nothing. Stays until
  /// a rewind discards a node below it, or reset(); calling it again moves it.
  void stop_gradient() noexcept { floor_ = (size_ > param_region_) ? size_ : param_region_; }
  /// Where backward stops (0: it runs down to the oldest interior node).
  Index gradient_stop() const noexcept { return (floor_ > param_region_) ? floor_ : 0U; }

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
  /// earlier mark becomes stale.
  void reset() noexcept;
  /// How many distinct rewind targets the mark history remembers.
  static constexpr Index kMarkLevels = 4U;

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
  /// Nodes recorded.
  std::size_t size() const noexcept { return size_; }
  /// Nodes the buffer holds (0 for an unusable buffer).
  std::size_t capacity() const noexcept { return capacity_; }
  /// Argument slots in use.
  std::size_t slots_used() const noexcept { return slots_used_; }
  /// Argument slots the buffer holds.
  std::size_t slot_capacity() const noexcept { return slot_capacity_; }
  /// Size of the parameter region (nodes that can only be leaves).
  std::size_t param_capacity() const noexcept { return param_region_; }
  /// False if any recorded value or gradient is NaN or infinite.
  bool all_finite() const noexcept;
  /// Fail-fast: hook called once per error transition (nullptr: none).
  void set_fault_hook(FaultHook hook, void* context) noexcept;

  /// Node i's value (NaN past the end).
  T value(Index i) const noexcept { return (i < size_) ? values_[i] : kNaN; }
  /// Node i's gradient (NaN past the end). An input's (input()) is not
  /// computed: it reads 0, or whatever ops that took it one by one added.
  T grad(Index i) const noexcept { return (i < size_) ? grads_[i] : kNaN; }
  /// Node i's op (Op::kCount past the end).
  Op op(Index i) const noexcept {
    return (i >= size_) ? Op::kCount : ((i < param_region_) ? Op::kLeaf : ops_[i - param_region_]);
  }
  /// Node i's first operand field (see Op; kNoIndex for leaves and past the end).
  Index arg_a(Index i) const noexcept {
    return ((i < size_) && (i >= param_region_)) ? first_of(links_[i - param_region_]) : kNoIndex;
  }
  /// Node i's second operand field (see Op; kNoIndex for leaves and past the end).
  Index arg_b(Index i) const noexcept {
    return ((i < size_) && (i >= param_region_)) ? second_of(links_[i - param_region_]) : kNoIndex;
  }
  /// Argument slot k (kNoIndex past the slots in use).
  Index slot(Index k) const noexcept { return (k < slots_used_) ? args_[k] : kNoIndex; }
  /// @{
  /// Contiguous views for optimizers and save/load: [0, size()).
  T* values() noexcept { return values_; }
  T* grads() noexcept { return grads_; }
  const T* values() const noexcept { return values_; }
  const T* grads() const noexcept { return grads_; }
  /// @}
  /// The stored constant of node i if its op has one (op_kind kConstant:
  /// x * c, x / c, leaky_relu's slope, bce_with_logits' target, huber's
  /// delta; and the constant folded into x + c, c - x, c / x where it was
  /// kept: detail::pack_constant); NaN for other nodes.
  T constant(Index i) const noexcept;

  // --- record once, replay many -------------------------------------------
  /// Takes what replay() needs to re-evaluate the nodes recorded since `from`
  /// (a mark of this tape, taken before recording them) for new values of
  /// their leaves and inputs, then run backward from `root`: the graph's
  /// structure as it is now (nodes, slots, the tape's rewind generation).
  /// Refused (kInvalidArgument recorded, an empty Replay returned) for a
  /// tape holding an error, a mark of another tape or no longer valid (see
  /// rewind), a root not recorded after the mark, or a node that replay()
  /// cannot re-evaluate: a frozen-weight row (its bias is not kept), or a
  /// constant folded into x + c, c - x, c / x that was not kept (on a
  /// double tape, a constant that is not exactly a float).
  Replay replayable(Mark from, Value<T> root) noexcept;
  /// Sets the value of a leaf or input (a parameter too) for the next
  /// replay(); kInvalidArgument for any other node, kInvalidHandle for a
  /// handle not recorded on this tape, the tape's status if it holds an
  /// error (nothing written; the status is not changed).
  Status set(Value<T> source, T x) noexcept;
  /// The same for the consecutive leaves or inputs of a view (a sample's
  /// features): x[k] for node sources.first + k; nothing written if one
  /// of them is not a leaf or input (kInvalidArgument), the view is not
  /// recorded (kInvalidHandle) or x is null (kInvalidArgument).
  Status set(View sources, const T* x) noexcept;
  /// Makes a cross-entropy node (nn::cross_entropy: a log-sum-exp over a
  /// run of logits minus one of them) pick logit `target` of that run: the
  /// target of a sample is data of the graph, not its structure.
  /// kInvalidArgument for another node or a target past the run (nothing
  /// changed; the status is not changed).
  Status set_target(Value<T> loss, Index target) noexcept;
  /// Re-evaluates the nodes of `r` from the current values of their
  /// operands (in recording order, each with its op's forward, so with the
  /// same bits as recording them again with these values), clears their
  /// gradients, then runs backward(root): the same values and gradients as
  /// rewinding to the mark and recording the graph again. Leaf gradients
  /// older than the recording (parameters) accumulate as with backward().
  /// Refused with kInvalidArgument recorded, nothing computed, if the graph
  /// changed since replayable(): nodes or slots recorded or discarded, a
  /// rewind or reset in between (even back to the same size), or r from
  /// another tape or empty; the tape's status if it holds an error.
  Status replay(const Replay& r) noexcept;
  /// replay() without the backward sweep (evaluation).
  Status replay_forward(const Replay& r) noexcept;

  // --- wide ops (the functions of ops.hpp and the layers record with them) --
  /// Each checks its operands: a wrong op, a null pointer or an empty list is
  /// kInvalidArgument; an operand that is empty (default or from a call with
  /// no tape) kEmptyHandle, of another tape kForeignValue, not (or no
  /// longer) recorded kInvalidHandle. Nothing is recorded on an error.
  /// Records n nodes by calling f(k) for k = 0 .. n-1, where each call
  /// records one node (an op of ops.hpp) and returns its handle; the nodes
  /// are consecutive, so they are returned as one View (a layer's
  /// activations, its parameters). kNoView if a call failed (the tape keeps
  /// that status) or if the calls did not record exactly n nodes
  /// (kInvalidArgument). One check at the end: a failed op records nothing
  /// and every later op fails too, so the node count alone tells.
  template <class F>
  View record_view(Index n, F f) noexcept {
    const Index first = size_;
    for (Index k = 0U; k < n; ++k) {
      static_cast<void>(f(k));
    }
    if (BURTORCH_UNLIKELY((status_ != Status::kOk) || ((size_ - first) != n))) {
      static_cast<void>(report(Status::kInvalidArgument));
      return kNoView;
    }
    return View{first, n};
  }
  /// A reduction over xs[0..n): `range_op` is a run variant of the core set
  /// (kSumR, kMeanR, kLogSumExpR, ...: op_kind() kRangeReduce, before
  /// kFirstLinkedOnUse; a reduction linked on use, kMaxR, is recorded by its
  /// function, reduce_max); stored as a run if the nodes are consecutive,
  /// else as a list (the op's L variant).
  Value<T> reduce(Op range_op, const Value<T>* xs, std::size_t n) noexcept;
  /// sum(w[i] * x[i]) (+ *bias if bias is not null); each side stored as a
  /// range when its nodes are consecutive, else as a list of slots.
  Value<T> dot(const Value<T>* w, const Value<T>* x, std::size_t n, const Value<T>* bias) noexcept;
  /// The same for two runs of n consecutive nodes, given by their first
  /// nodes: no handle array to gather and scan (attention scores).
  Value<T> dot_ranges(Index w_first, Index x_first, Index n, const Value<T>* bias) noexcept;
  /// Stores `count` runs once (1 + 2 * count slots); see ViewList. A list
  /// whose runs are all inputs (input()) is marked as such: the inner
  /// products over it compute no gradient for them.
  ViewList view_list(const View* parts, std::size_t count) noexcept;
  /// The run x as x.count / width runs of `width` nodes each (1 + 2 *
  /// x.count / width slots; x.count a multiple of width, else
  /// kInvalidArgument): the same inputs as view_list(&x, 1), in rows a
  /// layer can tell apart (a lane tape's layer reads a gathered row that
  /// every lane shares as shared scalars: Tape::matvec_shared).
  ViewList view_list_rows(View x, Index width) noexcept;
  /// sum(value[w_first + i] * x[i]) (+ bias) over the x.total elements of x.
  Value<T> dot_views(Index w_first, ViewList x, const Value<T>* bias) noexcept;
  /// A layer's outputs: `rows` consecutive nodes, row o = sum(value[w_first +
  /// o * x.total + k] * x[k]) (+ value[bias_first + o]; kNoIndex: no bias).
  /// The weights are row-major from w_first. All rows share one 4-slot
  /// descriptor (dot_views stores 3 slots per output). Returns the rows
  /// (kNoView on error).
  View matvec(Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
  /// The same with an activation fused into every row: `Act` is Op::kRelu,
  /// Op::kTanh or Op::kSigmoid, and row o = Act(sum + bias), one node per
  /// output (a kMatRowRelu, kMatRowTanh or kMatRowSigmoid row) instead of a
  /// row and an activation node: the same values and gradients, bit for bit,
  /// with half the nodes and no activation node to record or sweep. The
  /// same checks and errors as matvec(). An op linked on use: this inline
  /// template and the rows' backward are compiled only into a program that
  /// calls it.
  template <Op Act>
  View matvec(Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
  /// n consecutive nodes, output o = value[x_first + o] * value[scale_first +
  /// o] + value[shift_first + o], sharing one 3-slot descriptor (a layer
  /// norm's gain and bias). Returns the outputs (kNoView on error).
  View scale_shift(Index scale_first, Index x_first, Index shift_first, Index n) noexcept;
  /// A reduction (`range_op` a run variant, as for reduce()) of the n
  /// consecutive nodes [first, first + n), e.g. a layer's outputs: no handle
  /// array to gather (layers call it with a View), the same node and bits as
  /// reduce() of their handles. kInvalidArgument for another op or n == 0,
  /// kInvalidHandle if a node is not recorded.
  Value<T> reduce_range(Op range_op, Index first, Index n) noexcept;
  /// Argument slots one matvec_frozen takes (its shared descriptor: the
  /// view list's slot, the width, format, scale and the weights' address).
  static constexpr Index kFrozenSlots = detail::kFrozenSlots;
  /// A layer whose weights are frozen in caller memory (burtorch/frozen.hpp,
  /// e.g. an int8 or FP16 array in flash): `w.rows` consecutive nodes, row o
  /// = sum(T(w(o, k)) * x[k]) (+ T(bias(o)) if bias is not null) over the
  /// x.total = w.cols elements of x, the weights dequantized to float and
  /// the products summed in T. The weights are not copied: they must stay
  /// where they are while the nodes are recorded. They have no node and no
  /// gradient; backward adds to x's gradients only. The rows share one
  /// descriptor of kFrozenSlots slots. kInvalidArgument, nothing recorded,
  /// for weights with no data, an unknown format or a non-finite int8
  /// scale, zero rows or columns, rows * cols past an Index, x.total !=
  /// w.cols, or a bias that is invalid or not w.rows long. Returns the rows
  /// (kNoView on error). An op linked on use (kFirstLinkedOnUse): this
  /// inline template, and the rows' backward, are compiled only into a
  /// program that calls it (leave K as it is).
  template <Op K = Op::kMatRowFrozen>
  View matvec_frozen(const FrozenMatrix& w, ViewList x, const FrozenVector* bias) noexcept;

  // --- lane batches: a tape of Lanes over shared parameters -------------
  // T = Lanes<S, N> (burtorch/lanes.hpp): lane l of every node belongs to
  // sample l. These ops read parameters of another tape as shared scalars
  // (SharedParams), so L samples run through one graph while the weights
  // are read once per L samples; their backward adds the lanes' gradients
  // to the shared gradients, each lane's term in lane order. Errors as for
  // the other wide ops; a parameter range outside p (64-bit checked), null
  // arrays or an index out of range is kInvalidArgument, nothing recorded.
  // Linked on use (leave K as it is). A tape of plain float or double does
  // not compile them.
  /// The scalar of one lane.
  using LaneScalar = typename LaneTraits<T>::Scalar;
  /// Argument slots of matvec_shared's descriptor.
  static constexpr Index kMatSharedSlots = detail::kMsSlots;
  /// A layer over shared weights: `rows` consecutive nodes, row o = sum_k
  /// p[w_first + o * x.total + k] * x[k] (+ p[bias_first + o]; kNoIndex: no
  /// bias), recorded after one head node whose backward computes the
  /// layer's gradients at once (rows + 1 nodes, kMatSharedSlots slots).
  /// Returns the rows (kNoView on error).
  /// A run of x (one of the first 64) that is exactly one row of a
  /// gather_shared whose lanes all read the same table row, its nodes still
  /// holding that row's values, is the same vector in every lane: the layer
  /// reads it as shared scalars (its inner products along the weights'
  /// rows, its weights' gradient from the rows' gradients summed over the
  /// lanes) and gives it its gradient summed over the lanes, in lane 0 (the
  /// gather adds the lanes' sum to the table row either way). Losses and
  /// the shared gradients are those of the lanes' path up to rounding.
  template <Op K = Op::kMatShared>
  View matvec_shared(const SharedParams<LaneScalar>& p, Index w_first, Index rows, ViewList x,
                     Index bias_first) noexcept;
  /// Argument slots of scale_shift_shared's descriptor.
  static constexpr Index kScaleShiftSharedSlots = detail::kSsSlots;
  /// n consecutive nodes, node o = x[o] * p[scale_first + o] + p[shift_first
  /// + o] in every lane (a layer norm's gain and bias); the input is the run
  /// of n nodes from x_first. Returns the outputs (kNoView on error).
  template <Op K = Op::kScaleShiftShared>
  View scale_shift_shared(const SharedParams<LaneScalar>& p, Index scale_first, Index x_first, Index shift_first,
                          Index n) noexcept;
  /// Argument slots of gather_shared's descriptor for `count` rows.
  static constexpr std::size_t gather_slots(std::size_t count) noexcept {
    return detail::kGsRows + (count * LaneTraits<T>::kLanes);
  }
  /// Embedding rows chosen per lane: `count` * `width` consecutive nodes;
  /// node q * width + e is, in lane l, p[table + rows[q * N + l] * width +
  /// e] (rows: count * N row numbers, row-major by gathered row, each below
  /// `table_rows`). Returns the nodes (kNoView on error).
  template <Op K = Op::kGatherShared>
  View gather_shared(const SharedParams<LaneScalar>& p, Index table, Index table_rows, Index width,
                     const Index* rows, Index count) noexcept;
  /// Argument slots of pick's descriptor.
  static constexpr Index kPickSlots = detail::kPkAt + static_cast<Index>(LaneTraits<T>::kLanes);
  /// One node whose lane l is lane l of node x.first + at[l] (at: N
  /// positions, each below x.count): a cross-entropy's target per sample.
  template <Op K = Op::kPickLanes>
  Value<T> pick(View x, const Index* at) noexcept;

 private:
  // The elementwise recorders of ops.hpp (detail::Record): op K's row
  // (op.hpp) computes the value from the operands once they are checked.
  // K's kind is checked when the template is instantiated.
  template <class U>
  friend struct detail::Record;
  /// A unary op: OpDef<K>::forward(x), or forward(x, c) with c folded into
  /// the value (x + c, c - x, c / x: no storage for c).
  template <Op K>
  Value<T> record_unary(Value<T> x) noexcept;
  template <Op K>
  Value<T> record_unary(Value<T> x, T c) noexcept;
  /// A binary op: OpDef<K>::forward(x, y).
  template <Op K>
  Value<T> record_binary(Value<T> x, Value<T> y) noexcept;
  /// An op with a stored constant (x * c, x / c, leaky_relu, ...): c kept
  /// in argument slots (the backward needs it).
  template <Op K>
  Value<T> record_constant(Value<T> x, T c) noexcept;
  /// A run reduction K linked on use over xs[0..n) (reduce() for the core
  /// ones): the same checks, storage and node as reduce(); the value is
  /// computed here, by K's row.
  template <Op K>
  Value<T> record_reduce(const Value<T>* xs, std::size_t n) noexcept;
  /// The same over the n consecutive nodes from `first` (reduce_range()).
  template <Op K>
  Value<T> record_reduce_range(Index first, Index n) noexcept;
  /// On a tape of Lanes: the table row that the `count` nodes from `first`
  /// hold in every lane, if they are one row of a gather_shared whose lanes
  /// all read that row and still hold its values; else null
  /// (matvec_shared reads such a run as shared scalars).
  const LaneScalar* shared_row(Index first, Index count) const noexcept;
  /// For an op linked on use K, sets the hook of its family (the tape's
  /// linked_backward_[linked_family(K)]) to the backward of the family's
  /// ops, so that the sweep reaches it; nothing for a core op (whose code
  /// is then not instantiated here).
  template <Op K>
  static void link(detail::LinkedBackward<T> (&hooks)[kLinkedFamilies]) noexcept {
    if constexpr (linked_on_use(K)) {
      hooks[linked_family(K)] = &detail::LinkedFamily<linked_family(K)>::template backward<T>;  // BT-DEV-005
    } else {
      static_cast<void>(hooks);
    }
  }

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
  Value<T> push(Op op, T result, Index a, Index b) noexcept;
  /// Appends one node; returns its index, or kNoIndex (status set) if full.
  Index append(Op op, T result, Index a, Index b) noexcept;
  /// A node's two operand fields, packed into one 64-bit word (see links_).
  static constexpr std::uint64_t pack(Index a, Index b) noexcept {
    return static_cast<std::uint64_t>(a) | (static_cast<std::uint64_t>(b) << 32U);
  }
  static constexpr Index first_of(std::uint64_t link) noexcept { return static_cast<Index>(link); }
  static constexpr Index second_of(std::uint64_t link) noexcept { return static_cast<Index>(link >> 32U); }
  /// Backward of one reduction, inner product or log-sum-exp node: their
  /// loops live out of line, so the sweep over simple nodes keeps its
  /// variables in registers.
  /// Returns how many nodes below i it swept too (a matvec's rows, swept
  /// as one block down to node `lowest`: detail::rows_step).
  Index backward_wide(Op op, Index i, Index a, Index b, T g, Index lowest) noexcept;
  /// Re-evaluates node i whose op is not a core elementwise op (replay),
  /// and the rows of its layer after it before `end`: the nodes evaluated.
  Index forward_wide(Op op, Index i, Index a, Index b, Index end) noexcept;
  /// replay()'s checks and its forward pass; false (status set) if refused.
  bool replay_values(const Replay& r) noexcept;
  /// True if m is a valid mark of this tape (the checks of rewind()).
  bool mark_valid(Mark m) const noexcept;
  /// Records the first error (sticky) and returns an invalid handle. Cold:
  /// defined out of line in detail/tape_state.hpp.
  BURTORCH_COLD Value<T> fail(Status status) noexcept;
  bool owns(Value<T> x) const noexcept { return (x.tape() == this) && (x.index() < size_); }
  /// True if one more non-leaf node fits (status ok, not full, and past the
  /// parameter region).
  bool room_for_interior() const noexcept { return (size_ - param_region_) < append_room_; }
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
  /// True if x names a view list whose runs are all still recorded;
  /// otherwise records the error and returns false.
  bool list_valid(ViewList x) noexcept;
  /// Room for `nodes` more interior nodes and `slots` argument slots: the
  /// first slot, or kNoIndex with kCapacityExceeded recorded.
  Index reserve(Index nodes, Index slots) noexcept;
  /// A matvec's checks (matvec()) and its 4-slot descriptor [w_first,
  /// list slot, bias_first, x.total] with room for its rows: the
  /// descriptor's first slot, or kNoIndex (status set, nothing taken).
  Index matvec_descriptor(Index w_first, Index rows, ViewList x, Index bias_first) noexcept;
  /// An inner product's 3-slot descriptor [w, x, bias] after checking the
  /// bias handle and the room for one node; kNoIndex (status set) if not.
  Index dot_descriptor(Index w, Index x, const Value<T>* bias) noexcept;
  /// Records an inner product node: its product plus the descriptor's bias.
  Value<T> push_dot(Op op, T product, Index descriptor, Index n) noexcept;
  /// True if nodes [first, first + n) are all recorded.
  bool recorded(Index first, std::uint64_t n) const noexcept { return (first < size_) && (n <= (size_ - first)); }
  /// The value of the run reduction range_op over n operands; *list_op is
  /// set to its list variant.
  template <class Operand>
  T reduce_value(Op range_op, Operand at, Index n, Op* list_op) const noexcept;
  /// True if op is a run reduction of the core set (what reduce() and
  /// reduce_range() take).
  static bool is_run_reduction(Op op) noexcept {
    bool found = false;
    visit_core_op_of_kind<OpKind::kRangeReduce>(op, [&found](auto /*tag*/) noexcept { found = true; });
    return found;
  }
  /// The operands of a reduction over xs[0..n): checks them (null, n == 0,
  /// room for the node) and stores a run start or a list (store_operand).
  /// False (status set, no slot taken) on error.
  bool reduce_operands(const Value<T>* xs, std::size_t n, Index* where, bool* is_range) noexcept;
  /// Reserves `count` argument slots; returns the first, or kNoIndex.
  Index take_slots(std::size_t count) noexcept;
  /// Stores a range start (if xs are consecutive nodes) or a list of indices.
  /// Returns false on error (status set). `is_range` tells which.
  bool store_operand(const Value<T>* xs, std::size_t n, Index* where, bool* is_range) noexcept;

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
  /// The view list dot_views last validated (slot, total), or kNoIndex:
  /// its runs stay valid until a rewind, so the next inner products over the
  /// same list (every output of a layer) skip the check.
  Index checked_list_ = kNoIndex;
  Index checked_total_ = 0U;
  /// The backward of the ops linked on use, one per family
  /// (detail::LinkedFamily<F>::backward<T>), set by their recorders; nullptr while
  /// the tape has recorded none of the family.
  detail::LinkedBackward<T> linked_backward_[kLinkedFamilies] = {};
  /// Backward does not sweep nodes below this: the parameter region's end,
  /// or stop_gradient()'s point above it (one bound for the sweep to read).
  Index floor_ = 0U;
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
  static_assert(kBytes != Tape<T>::kTooLarge, "FixedTape: these capacities do not fit this target's address space");
  // BT-DEV-012: storage_ stays uninitialised; push() writes a node before anything reads it.
  // cppcheck-suppress uninitMemberVar
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init,hicpp-member-init)
  FixedTape() noexcept : Tape<T>(storage_, sizeof(storage_), kNodes, kSlots, kParams) {}

 private:
  alignas(Tape<T>::kArrayAlign) unsigned char storage_[kBytes];
};

// ---------------------------------------------------------------------------
// Inline hot paths. Everything else lives in detail/tape_*.hpp (instantiated
// for float and double by lib/tape.cpp).

// Each returns a handle built right here from `this` on every path (the
// cold error paths only record the status), so after inlining the compiler
// knows that every handle of a chain of ops names this tape and drops the
// null and same-tape checks of the following ops.

template <class T>
inline Index Tape<T>::append(Op op, T result, Index a, Index b) noexcept {
  const Index i = size_;
  const Index m = i - param_region_;  // wraps inside the parameter region
  if (BURTORCH_UNLIKELY(m >= append_room_)) {
    static_cast<void>(fail(Status::kCapacityExceeded));
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
inline Value<T> Tape<T>::push(Op op, T result, Index a, Index b) noexcept {
  return Value<T>(this, append(op, result, a, b));
}

template <class T>
inline Value<T> Tape<T>::push_leaf(T x, const char* name) noexcept {
  const Index i = size_;
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(i >= limit_)) {
    static_cast<void>(fail(Status::kCapacityExceeded));
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

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_unary(Value<T> x) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kUnary, "record_unary records unary ops");
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(!owns(x))) {
    reject(x.tape());
  } else {
    const Index a = x.index();
    link<K>(linked_backward_);
    out = append(K, OpDef<K>::forward(values_[a]), a, kNoIndex);
  }
  return Value<T>(this, out);
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_unary(Value<T> x, T c) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kUnary, "record_unary records unary ops");
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(!owns(x))) {
    reject(x.tape());
  } else {
    const Index a = x.index();
    link<K>(linked_backward_);
    // The constant in the free operand field, for replay (pack_constant).
    out = append(K, OpDef<K>::forward(values_[a], c), a, detail::pack_constant(c));
  }
  return Value<T>(this, out);
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_binary(Value<T> x, Value<T> y) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kBinary, "record_binary records binary ops");
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(!owns(x))) {
    reject(x.tape());
  } else if (BURTORCH_UNLIKELY(!owns(y))) {
    reject(y.tape());
  } else {
    const Index a = x.index();
    const Index b = y.index();
    link<K>(linked_backward_);
    out = append(K, OpDef<K>::forward(values_[a], values_[b]), a, b);
  }
  return Value<T>(this, out);
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_constant(Value<T> x, T c) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kConstant, "record_constant records ops with a stored constant");
  Index out = kNoIndex;
  if (BURTORCH_UNLIKELY(!owns(x))) {
    reject(x.tape());
  } else if (BURTORCH_UNLIKELY(!room_for_interior() || ((slot_capacity_ - slots_used_) < kConstantSlots))) {
    static_cast<void>(fail(Status::kCapacityExceeded));
  } else {
    const Index slot = slots_used_;
    slots_used_ = slot + kConstantSlots;
    std::memcpy(&args_[slot], &c, sizeof(T));  // BT-DEV-010
    link<K>(linked_backward_);
    out = append(K, OpDef<K>::forward(values_[x.index()], c), x.index(), slot);
  }
  return Value<T>(this, out);
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_reduce(const Value<T>* xs, std::size_t n) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kRangeReduce, "record_reduce records run reductions");
  const Index before = slots_used_;
  Index where = kNoIndex;
  bool is_range = false;
  if (!reduce_operands(xs, n, &where, &is_range)) {
    return Value<T>(this, kNoIndex);
  }
  const Index count = static_cast<Index>(n);
  const T result = is_range ? OpDef<K>::forward(values_, detail::range_operand(where), count)
                            : OpDef<K>::forward(values_, detail::list_operand(&args_[where]), count);
  link<K>(linked_backward_);
  const Value<T> out = push(is_range ? K : OpDef<K>::kPair, result, where, count);
  if (!out.valid()) {
    slots_used_ = before;
  }
  return out;
}

template <class T>
template <Op K>
inline Value<T> Tape<T>::record_reduce_range(Index first, Index n) noexcept {
  static_assert(OpDef<K>::kKind == OpKind::kRangeReduce, "record_reduce_range records run reductions");
  if (n == 0U) {
    return fail(Status::kInvalidArgument);
  }
  if (!recorded(first, n)) {
    return fail(Status::kInvalidHandle);
  }
  link<K>(linked_backward_);
  return push(K, OpDef<K>::forward(values_, detail::range_operand(first), n), first, n);
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
template <Op K>
inline View Tape<T>::matvec_frozen(const FrozenMatrix& w, ViewList x, const FrozenVector* bias) noexcept {
  static_assert(K == Op::kMatRowFrozen, "matvec_frozen records kMatRowFrozen rows");
  // 64-bit: rows * cols must address the weights with an Index.
  const std::uint64_t weights = static_cast<std::uint64_t>(w.rows) * w.cols;
  const bool bias_ok = (bias == nullptr) || (frozen_valid(bias->data) && (bias->size == w.rows));
  if (!frozen_valid(w.data) || (weights == 0U) || (weights >= kNoIndex) || !bias_ok) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  if (!list_valid(x)) {
    return kNoView;
  }
  if (x.total != w.cols) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return kNoView;
  }
  const Index descriptor = reserve(w.rows, kFrozenSlots);  // room for all rows, or none is recorded
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  detail::store_frozen(args_, descriptor, w.data, x.slot, w.cols);
  link<K>(linked_backward_);
  const Index first = size_;
  for (Index o = 0U; o < w.rows; ++o) {
    T result = detail::frozen_row_dot(values_, args_, descriptor, o);
    if (bias != nullptr) {
      result += T(frozen_at(bias->data, o));
    }
    static_cast<void>(append(K, result, descriptor, o));  // fits: room checked above
  }
  return View{first, w.rows};
}

template <class T>
template <Op Act>
inline View Tape<T>::matvec(Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  constexpr Op K = detail::fused_row_of(Act);
  static_assert(K != Op::kCount, "matvec<Act> fuses Op::kRelu, Op::kTanh or Op::kSigmoid");
  const Index descriptor = matvec_descriptor(w_first, rows, x, bias_first);
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  link<K>(linked_backward_);
  const Index first = size_;
  for (Index o = 0U; o < rows; ++o) {
    // OpDef<K>::value (what replay computes), with the descriptor's
    // fields in registers: the same operations, so the same bits.
    T result = detail::dot_list_of(values_, w_first + (o * x.total), &args_[x.slot]);
    if (bias_first != kNoIndex) {
      result += values_[bias_first + o];
    }
    static_cast<void>(append(K, OpDef<K>::activate(result), descriptor, o));  // fits: room checked
  }
  return View{first, rows};
}

template <class T>
inline bool Value<T>::valid() const noexcept {
  return (tape_ != nullptr) && (index_ < tape_->size());
}

}  // namespace burtorch

#include "burtorch/detail/tape_shared.hpp"

namespace burtorch {

/// The library is compiled for these; for another scalar type (Lanes), one
/// translation unit includes <burtorch/detail/tape_impl.hpp> and instantiates it.
extern template class Tape<float>;
extern template class Tape<double>;

}  // namespace burtorch

#endif  // BURTORCH_TAPE_HPP
