// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory plans: what a model needs, in elements and bytes, at compile time
/// (MemoryPlan, make_plan; make_finetune_plan for a model with a frozen
/// backbone; LanePlan, make_lane_plan, size_lane_plan for lane batches),
/// the types to declare that memory with (TrainingMemory, PlanTape,
/// LaneMemory: `sizeof` of each is the plan's byte count), and where a
/// model's parameters lie on the tape (model_params).
#ifndef BURTORCH_NN_PLAN_HPP
#define BURTORCH_NN_PLAN_HPP

#include <cstddef>

#include "burtorch/index.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// What a model needs, in elements and bytes. Parameters, gradients and one
/// sample's activations are nodes of one tape; optimizer state is extra.
/// `bytes` is everything a program declares to train it: exactly
/// `sizeof(nn::TrainingMemory<T, plan>)`, the tape object (its header and
/// its buffer) and the optimizer state, so `static_assert(plan.bytes <=
/// budget)` holds of the real object (tests/nn/test_nn_memory.cpp checks
/// the equality on every target).
struct MemoryPlan {
  std::size_t parameters = 0U;    ///< trainable scalars (the tape's parameter region)
  std::size_t sample_nodes = 0U;  ///< nodes one sample records after the parameters
  std::size_t nodes = 0U;         ///< tape capacity: parameters + sample_nodes
  std::size_t slots = 0U;         ///< argument slots one sample uses
  std::size_t tape_bytes = 0U;       ///< the tape's buffer: Tape<T>::bytes_required(nodes, slots, parameters)
  std::size_t optimizer_bytes = 0U;  ///< optimizer state: optimizer_scalars * sizeof(T)
  /// Everything to declare: sizeof(TrainingMemory<T, plan>), i.e. the tape
  /// object (tape_object_bytes) and the optimizer state (optimizer_bytes,
  /// rounded up to the tape's alignment when there is any).
  std::size_t bytes = 0U;
  /// The tape object: sizeof(PlanTape<T, plan>), which is
  /// sizeof(FixedTape<T, nodes, slots, parameters>): the Tape<T> header
  /// (its counters, a target's pointers and the configuration's members),
  /// padded to Tape<T>::kArrayAlign, then tape_bytes of buffer.
  std::size_t tape_object_bytes = 0U;
  std::size_t optimizer_scalars = 0U;  ///< scalars of optimizer state: state_per_parameter(kind) per trained parameter
  std::size_t scalar_bytes = 0U;       ///< sizeof(T) of the plan's scalar type
  OptimizerKind optimizer = OptimizerKind::kSgd;  ///< the rule the state is sized for
};

/// sizeof(FixedTape<T, nodes, slots, params>) without naming the type: the
/// Tape<T> header rounded up to kArrayAlign (where the buffer starts), plus
/// Tape<T>::bytes_required(nodes, slots, params) (a multiple of
/// kArrayAlign). kTooLarge where bytes_required is, or the sum does not fit.
template <class T>
constexpr std::size_t fixed_tape_bytes(std::size_t nodes, std::size_t slots, std::size_t params) noexcept {
  constexpr std::size_t kAlign = Tape<T>::kArrayAlign;
  static_assert((kAlign % alignof(Tape<T>)) == 0U, "the buffer's alignment is the object's");
  constexpr std::size_t kHeader = ((sizeof(Tape<T>) + kAlign) - 1U) / kAlign * kAlign;
  const std::size_t buffer = Tape<T>::bytes_required(nodes, slots, params);
  return (buffer <= (kTooLarge - kHeader)) ? (kHeader + buffer) : kTooLarge;
}

namespace detail {
/// `state` scalars of T, then `object` bytes aligned to Tape<T>::kArrayAlign
/// (TrainingMemory's layout): kTooLarge if either is or the sum does not fit.
template <class T>
constexpr std::size_t state_then_tape(std::size_t state, std::size_t object) noexcept {
  constexpr std::size_t kAlign = Tape<T>::kArrayAlign;
  const bool fits = (state <= ((kTooLarge - kAlign) / sizeof(T))) && (object != kTooLarge);
  const std::size_t padded = fits ? ((((state * sizeof(T)) + kAlign) - 1U) / kAlign * kAlign) : kTooLarge;
  return (fits && (padded <= (kTooLarge - object))) ? (padded + object) : kTooLarge;
}
}  // namespace detail

namespace detail {
/// Fills in the optimizer state of `trained` parameters and the totals of
/// a plan whose counts and tape_bytes are set (make_plan's checks).
template <class T>
constexpr MemoryPlan with_state(MemoryPlan p, std::size_t trained, OptimizerKind optimizer) noexcept {
  p.optimizer = optimizer;
  p.scalar_bytes = sizeof(T);
  const std::size_t per_parameter = state_per_parameter(optimizer);
  p.optimizer_scalars =
      ((per_parameter == 0U) || (trained <= (kTooLarge / per_parameter))) ? (per_parameter * trained) : kTooLarge;
  p.optimizer_bytes =
      (p.optimizer_scalars <= (kTooLarge / sizeof(T))) ? (p.optimizer_scalars * sizeof(T)) : kTooLarge;
  p.tape_object_bytes = (p.tape_bytes != kTooLarge) ? fixed_tape_bytes<T>(p.nodes, p.slots, p.parameters) : kTooLarge;
  p.bytes = state_then_tape<T>(p.optimizer_scalars, p.tape_object_bytes);
  return p;
}
}  // namespace detail

/// The memory plan of a model of your own, at compile time: `parameters`
/// created first on the tape, then per sample `sample_nodes` nodes and
/// `slots` argument slots (add up the layers' parameters(), nodes() and
/// slots()/view_slots(), and the losses' node counts), trained with
/// `optimizer`. Declare the memory with it -- TrainingMemory holds the
/// tape and the optimizer state, and its size is the plan's `bytes`:
/// @code
/// constexpr nn::LinearOptions kHidden{2U, 8U, nn::Activation::kTanh};
/// constexpr nn::LinearOptions kOutput{8U, 1U, nn::Activation::kSigmoid};
/// constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(
///     nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput),
///     2 + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + 2,
///     nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput), nn::OptimizerKind::kAdam);
/// static_assert(kPlan.bytes <= kRamForModel, "does not fit");
/// nn::TrainingMemory<float, kPlan> memory;        // sizeof(memory) == kPlan.bytes
/// nn::Optimizer<float> opt = memory.optimizer(options);  // bound to the state
/// ... model.create(memory.tape, ...) ...
/// @endcode
/// examples/xor_nn builds exactly this and checks it against what a sample
/// records. A plan too small shows at run time as Status::kCapacityExceeded,
/// never as a write past the buffer.
///
/// Every sum and product is checked: a plan that does not fit this target's
/// size_t (or a tape an Index cannot address) has nodes, tape_bytes,
/// optimizer_bytes, tape_object_bytes or bytes equal to burtorch::kTooLarge
/// (the largest size_t), never a wrapped small number, so
/// `static_assert(plan.bytes <= budget)` fails for it.
template <class T>
constexpr MemoryPlan make_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                               OptimizerKind optimizer) noexcept {
  MemoryPlan p;
  p.parameters = parameters;
  p.sample_nodes = sample_nodes;
  const bool nodes_fit = sample_nodes <= (kTooLarge - parameters);
  p.nodes = nodes_fit ? (parameters + sample_nodes) : kTooLarge;
  p.slots = slots;
  // Parameters occupy the tape's parameter region: value and gradient only.
  p.tape_bytes = nodes_fit ? Tape<T>::bytes_required(p.nodes, p.slots, parameters) : kTooLarge;
  return detail::with_state<T>(p, parameters, optimizer);
}

namespace detail {
/// Optimizer state of `kScalars` scalars (none: an empty base).
template <class T, std::size_t kScalars>
class OptimizerState {
 protected:
  T* scalars() noexcept { return state_; }

 private:
  T state_[kScalars];
};
template <class T>
class OptimizerState<T, 0U> {
 protected:
  static T* scalars() noexcept { return nullptr; }
};
}  // namespace detail

/// The tape of a plan: FixedTape<T, plan.nodes, plan.slots,
/// plan.parameters), refused at compile time for a plan of another scalar
/// type or one too large for this target; sizeof is plan.tape_object_bytes.
/// `kPlan` is a constexpr MemoryPlan with static storage (a namespace-scope
/// `constexpr`, or a `static constexpr` member).
template <class T, const MemoryPlan& kPlan>
class PlanTape : public FixedTape<T, kPlan.nodes, kPlan.slots, kPlan.parameters> {
  static_assert(kPlan.scalar_bytes == sizeof(T), "PlanTape: the plan was made for another scalar type");
  static_assert(kPlan.tape_object_bytes != kTooLarge, "PlanTape: the plan does not fit this target");
};

/// Everything a plan counts, in one object whose size is plan.bytes: the
/// tape (`tape`, a PlanTape) and the optimizer state for
/// plan.optimizer_scalars scalars (none for SGD). Declare it static (or
/// in a struct the firmware places), then bind the optimizer to it:
/// @code
/// nn::TrainingMemory<float, kPlan> g_memory;                 // sizeof == kPlan.bytes
/// nn::Optimizer<float> opt = g_memory.optimizer(options);    // options.kind == kPlan.optimizer
/// @endcode
template <class T, const MemoryPlan& kPlan>
class TrainingMemory : private detail::OptimizerState<T, kPlan.optimizer_scalars> {
  static_assert(kPlan.bytes != kTooLarge, "TrainingMemory: the plan does not fit this target");

 public:
  PlanTape<T, kPlan> tape;  ///< the tape: parameters, gradients, one sample's graph

  /// An optimizer over this memory's state (its capacity: the plan's
  /// parameters). With a rule that needs more state than the plan's
  /// (options.kind other than plan.optimizer) it holds fewer parameters,
  /// and a step over the model's is refused (kCapacityExceeded, or
  /// kInvalidArgument when there is no state at all).
  Optimizer<T> optimizer(const OptimizerOptions<T>& options) noexcept {
    return Optimizer<T>(options, this->scalars(), kPlan.optimizer_scalars);
  }
  /// The optimizer state (null when the plan has none).
  T* optimizer_state() noexcept { return this->scalars(); }
  /// Scalars of optimizer state: kPlan.optimizer_scalars.
  static constexpr std::size_t optimizer_scalars() noexcept { return kPlan.optimizer_scalars; }
};

/// The memory of lane batches (nn::lane_batch): the parameters on their own
/// tape with the optimizer's state, and a tape of N lanes for N samples'
/// graphs, whatever the batch size.
struct LanePlan {
  std::size_t lanes = 0U;         ///< N: samples per sweep
  MemoryPlan params;              ///< the parameter tape (parameters only) and the optimizer's state
  std::size_t sample_nodes = 0U;  ///< nodes of one sweep (N samples' graph): the lane tape's capacity
  std::size_t slots = 0U;         ///< argument slots of one sweep
  std::size_t lane_tape_bytes = 0U;  ///< the lane tape's buffer: Tape<Lanes<T, N>>::bytes_required(sample_nodes, slots)
  /// Everything to declare: sizeof(LaneMemory<T, plan>), i.e. params.bytes
  /// (the parameter tape object and the optimizer state) and
  /// lane_tape_object_bytes.
  std::size_t bytes = 0U;
  /// The lane tape object: sizeof(FixedTape<Lanes<T, N>, sample_nodes,
  /// slots>), its header and lane_tape_bytes of buffer.
  std::size_t lane_tape_object_bytes = 0U;
};

/// The plan of lane batches of N lanes for a model of `parameters`
/// parameters whose sweep records at most `sample_nodes` nodes and `slots`
/// argument slots, its root included (nn::lane_batch_sweeps: the sweep
/// records its own root). Checked as make_plan is: kTooLarge, never a wrap.
template <class T, std::size_t N>
constexpr LanePlan size_lane_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                                  OptimizerKind optimizer) noexcept {
  using Lane = Tape<Lanes<T, N>>;
  LanePlan p;
  p.lanes = N;
  p.params = make_plan<T>(parameters, 0U, 0U, optimizer);
  p.sample_nodes = sample_nodes;
  p.slots = slots;
  p.lane_tape_bytes = ((p.sample_nodes != kTooLarge) && (p.slots != kTooLarge))
                          ? Lane::bytes_required(p.sample_nodes, p.slots)
                          : kTooLarge;
  p.lane_tape_object_bytes =
      (p.lane_tape_bytes != kTooLarge) ? fixed_tape_bytes<Lanes<T, N>>(p.sample_nodes, p.slots, 0U) : kTooLarge;
  p.bytes = ((p.params.bytes != kTooLarge) && (p.lane_tape_object_bytes <= (kTooLarge - p.params.bytes)))
                ? (p.params.bytes + p.lane_tape_object_bytes)
                : kTooLarge;
  return p;
}
/// The same for nn::lane_batch, whose sweep records `sample_nodes` nodes and
/// `slots` slots: one more node and its constant's slots for the mask are
/// added here.
template <class T, std::size_t N>
constexpr LanePlan make_lane_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                                  OptimizerKind optimizer) noexcept {
  constexpr std::size_t kMaskSlots = Recorder<Lanes<T, N>>::kConstantSlots;
  return size_lane_plan<T, N>(parameters, (sample_nodes < kTooLarge) ? (sample_nodes + 1U) : kTooLarge,
                              (slots <= (kTooLarge - kMaskSlots)) ? (slots + kMaskSlots) : kTooLarge, optimizer);
}

/// Everything a lane plan counts, in one object whose size is plan.bytes:
/// the parameter tape (`params`), the optimizer state and the tape of
/// plan.lanes lanes (`lanes`). `kPlan` as for TrainingMemory.
template <class T, const LanePlan& kPlan>
class LaneMemory : private detail::OptimizerState<T, kPlan.params.optimizer_scalars> {
  static_assert(kPlan.params.scalar_bytes == sizeof(T), "LaneMemory: the plan was made for another scalar type");
  static_assert(kPlan.bytes != kTooLarge, "LaneMemory: the plan does not fit this target");

 public:
  /// The parameters and their gradients.
  FixedTape<T, kPlan.params.nodes, kPlan.params.slots, kPlan.params.parameters> params;
  /// One sweep's graph of kPlan.lanes samples.
  FixedTape<Lanes<T, kPlan.lanes>, kPlan.sample_nodes, kPlan.slots> lanes;

  /// An optimizer over this memory's state (as TrainingMemory::optimizer).
  Optimizer<T> optimizer(const OptimizerOptions<T>& options) noexcept {
    return Optimizer<T>(options, this->scalars(), kPlan.params.optimizer_scalars);
  }
};

/// The memory plan of a fine-tuned model: `parameters` leaves created first
/// on the tape (the head's, plus any backbone parameters frozen on the
/// tape; a FrozenLinear backbone has none), of which only `trainable` (the
/// view the optimizer steps) have optimizer state; then per sample
/// `sample_nodes` nodes and `slots` argument slots (a FrozenLinear's nodes
/// and slots included). As make_plan, whose checks it shares.
template <class T>
constexpr MemoryPlan make_finetune_plan(std::size_t parameters, std::size_t trainable, std::size_t sample_nodes,
                                        std::size_t slots, OptimizerKind optimizer) noexcept {
  const MemoryPlan p = make_plan<T>(parameters, sample_nodes, slots, optimizer);
  return detail::with_state<T>(p, (trainable < parameters) ? trainable : parameters, optimizer);
}

/// A model's parameters after its layers' create() calls: the run from the
/// first layer's first parameter to the last layer's last, if every create()
/// succeeded (ok) and that run holds exactly `count` parameters (the layers
/// one after another on the tape); kNoView otherwise.
inline View model_params(bool ok, View first, View last, std::size_t count) noexcept {
  const bool contiguous = ok && (count != 0U) && (count < kNoIndex) &&
                          ((static_cast<std::size_t>(last.first) + last.count) == (first.first + count));
  return contiguous ? View{first.first, static_cast<Index>(count)} : kNoView;
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_PLAN_HPP
