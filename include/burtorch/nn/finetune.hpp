// SPDX-License-Identifier: Apache-2.0
/// @file
/// Fine-tuning: a model whose backbone is frozen and whose head trains.
///
/// Two ways to freeze a backbone (docs/training.md, "Fine-tuning"):
///  * in flash: FrozenLinear layers over caller arrays (burtorch/frozen.hpp,
///    FP32, FP16, BF16 or int8 with a per-tensor scale). The weights are not
///    on the tape: no RAM, no gradient, no optimizer state;
///  * on the tape: ordinary Linear layers (e.g. loaded from a pretrained
///    checkpoint) that the optimizer simply does not step.
/// Either way, stop_gradient(tape) after the backbone's forward pass keeps
/// backward out of the backbone, and the optimizer steps only the head's
/// view (state for the head only: make_finetune_plan).
#ifndef BURTORCH_NN_FINETUNE_HPP
#define BURTORCH_NN_FINETUNE_HPP

#include <cstddef>

#include "burtorch/frozen.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/models.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {
namespace nn {

/// y = act(W x + b) with W (and b) frozen in caller memory: the layer's
/// weights are never on the tape (matvec_frozen). An aggregate that
/// can be constexpr, so the description stays in flash with the arrays:
/// @code
/// static constexpr std::int8_t kW[16 * 2] = {...};
/// static constexpr std::uint16_t kB[16] = {...};  // FP16
/// static constexpr nn::FrozenLinear<float> kHidden{
///     {bt::frozen_i8(kW, 0.0123F), 16U, 2U}, {bt::frozen_f16(kB), 16U}, nn::Activation::kTanh};
/// @endcode
template <class T>
struct FrozenLinear {
  FrozenMatrix weight;                     ///< [out][in]: rows = out, cols = in
  FrozenVector bias;                       ///< size 0: no bias; else size out
  Activation act = Activation::kIdentity;  ///< applied to every output

  /// Inputs and outputs.
  /// @{
  constexpr Index in() const noexcept { return weight.cols; }
  constexpr Index out() const noexcept { return weight.rows; }
  /// @}
  /// Nodes of forward() (out, plus out with an activation) and slots (one
  /// shared descriptor; view_slots: plus a one-run view list for a View
  /// input). No parameters: nothing of the layer is on the tape before it.
  /// @{
  static constexpr std::size_t nodes(Index out, Activation act) noexcept {
    return (act == Activation::kIdentity) ? out : (2U * static_cast<std::size_t>(out));
  }
  static constexpr std::size_t slots() noexcept { return burtorch::kFrozenSlots; }
  static constexpr std::size_t view_slots() noexcept { return 3U + slots(); }
  /// @}

  /// Records act(W x + b) for an input of in() nodes stored as a view list;
  /// returns the out() output nodes (kNoView on error: see
  /// matvec_frozen).
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    const View y = burtorch::matvec_frozen(tape, weight, x, (bias.size != 0U) ? &bias : nullptr);
    return (y.count != 0U) ? activate(tape, y, act) : kNoView;
  }
  /// The same for an input that is one run of nodes.
  View forward(Tape<T>& tape, View x) const noexcept { return forward(tape, burtorch::view_list(tape, &x, 1U)); }
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
  constexpr std::size_t kTooLarge = burtorch::kTooLarge;
  MemoryPlan p = make_plan<T>(parameters, sample_nodes, slots, optimizer);
  const std::size_t counted = (trainable < parameters) ? trainable : parameters;
  const std::size_t per_parameter = state_per_parameter(optimizer) * sizeof(T);
  p.optimizer_bytes =
      ((per_parameter == 0U) || (counted <= (kTooLarge / per_parameter))) ? (per_parameter * counted) : kTooLarge;
  p.bytes = (p.tape_bytes <= (kTooLarge - p.optimizer_bytes)) ? (p.tape_bytes + p.optimizer_bytes) : kTooLarge;
  return p;
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_FINETUNE_HPP
