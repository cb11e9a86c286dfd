// SPDX-License-Identifier: Apache-2.0
/// @file
/// Memory plans: what a model needs, in elements and bytes, at compile time
/// (MemoryPlan, make_plan; make_finetune_plan for a model with a frozen
/// backbone; LanePlan, make_lane_plan, size_lane_plan for lane batches),
/// and where a model's parameters lie on the tape (model_params).
#ifndef BURTORCH_NN_PLAN_HPP
#define BURTORCH_NN_PLAN_HPP

#include <cstddef>

#include "burtorch/index.hpp"
#include "burtorch/lane_ops.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/record.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {
namespace nn {

/// What a model needs, in elements and bytes. Parameters, gradients and one
/// sample's activations are nodes of one tape; optimizer state is extra.
struct MemoryPlan {
  std::size_t parameters = 0U;    ///< trainable scalars (the tape's parameter region)
  std::size_t sample_nodes = 0U;  ///< nodes one sample records after the parameters
  std::size_t nodes = 0U;         ///< tape capacity: parameters + sample_nodes
  std::size_t slots = 0U;         ///< argument slots one sample uses
  std::size_t tape_bytes = 0U;       ///< Tape<T>::bytes_required(nodes, slots, parameters)
  std::size_t optimizer_bytes = 0U;  ///< optimizer state: state_per_parameter(kind) * parameters * sizeof(T)
  std::size_t bytes = 0U;  ///< tape_bytes + optimizer_bytes
};

/// The memory plan of a model of your own, at compile time: `parameters`
/// created first on the tape, then per sample `sample_nodes` nodes and
/// `slots` argument slots (add up the layers' parameters(), nodes() and
/// slots()/view_slots(), and the losses' node counts), trained with
/// `optimizer`. Size the tape and the optimizer state with it:
/// @code
/// constexpr nn::LinearOptions kHidden{2U, 8U, nn::Activation::kTanh};
/// constexpr nn::LinearOptions kOutput{8U, 1U, nn::Activation::kSigmoid};
/// constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(
///     nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput),
///     2 + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + 2,
///     nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput), nn::OptimizerKind::kAdam);
/// static_assert(kPlan.bytes <= kRamForModel, "does not fit");
/// bt::FixedTape<float, kPlan.nodes, kPlan.slots, kPlan.parameters> tape;
/// float adam_state[kPlan.optimizer_bytes / sizeof(float)];
/// nn::Optimizer<float> opt(config, adam_state);  // knows the array's size
/// @endcode
/// examples/xor_nn builds exactly this and checks it against what a sample
/// records. A plan too small shows at run time as Status::kCapacityExceeded,
/// never as a write past the buffer.
///
/// Every sum and product is checked: a plan that does not fit this target's
/// size_t (or a tape an Index cannot address) has nodes, tape_bytes,
/// optimizer_bytes or bytes equal to burtorch::kTooLarge (the largest size_t),
/// never a wrapped small number, so `static_assert(plan.bytes <= budget)`
/// fails for it.
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
  const std::size_t per_parameter = state_per_parameter(optimizer) * sizeof(T);
  p.optimizer_bytes =
      ((per_parameter == 0U) || (parameters <= (kTooLarge / per_parameter))) ? (per_parameter * parameters) : kTooLarge;
  p.bytes = (p.tape_bytes <= (kTooLarge - p.optimizer_bytes)) ? (p.tape_bytes + p.optimizer_bytes) : kTooLarge;
  return p;
}

/// The memory of lane batches (nn::lane_batch): the parameters on their own
/// tape with the optimizer's state, and a tape of N lanes for N samples'
/// graphs, whatever the batch size.
struct LanePlan {
  std::size_t lanes = 0U;         ///< N: samples per sweep
  MemoryPlan params;              ///< the parameter tape (parameters only) and the optimizer's state
  std::size_t sample_nodes = 0U;  ///< nodes of one sweep (N samples' graph): the lane tape's capacity
  std::size_t slots = 0U;         ///< argument slots of one sweep
  std::size_t lane_tape_bytes = 0U;  ///< Tape<Lanes<T, N>>::bytes_required(sample_nodes, slots)
  std::size_t bytes = 0U;         ///< params.bytes + lane_tape_bytes
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
  p.bytes = ((p.params.bytes != kTooLarge) && (p.lane_tape_bytes <= (kTooLarge - p.params.bytes)))
                ? (p.params.bytes + p.lane_tape_bytes)
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

/// The memory plan of a fine-tuned model: `parameters` leaves created first
/// on the tape (the head's, plus any backbone parameters frozen on the
/// tape; a FrozenLinear backbone has none), of which only `trainable` (the
/// view the optimizer steps) have optimizer state; then per sample
/// `sample_nodes` nodes and `slots` argument slots (a FrozenLinear's nodes
/// and slots included). As make_plan, whose checks it shares.
template <class T>
constexpr MemoryPlan make_finetune_plan(std::size_t parameters, std::size_t trainable, std::size_t sample_nodes,
                                        std::size_t slots, OptimizerKind optimizer) noexcept {
  MemoryPlan p = make_plan<T>(parameters, sample_nodes, slots, optimizer);
  const std::size_t counted = (trainable < parameters) ? trainable : parameters;
  const std::size_t per_parameter = state_per_parameter(optimizer) * sizeof(T);
  p.optimizer_bytes =
      ((per_parameter == 0U) || (counted <= (kTooLarge / per_parameter))) ? (per_parameter * counted) : kTooLarge;
  p.bytes = (p.tape_bytes <= (kTooLarge - p.optimizer_bytes)) ? (p.tape_bytes + p.optimizer_bytes) : kTooLarge;
  return p;
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
