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
///
/// FrozenLinear is in nn/frozen.hpp (with the frozen convolutions); this
/// header includes it.
#ifndef BURTORCH_NN_FINETUNE_HPP
#define BURTORCH_NN_FINETUNE_HPP

#include <cstddef>

#include "burtorch/frozen.hpp"
#include "burtorch/nn/frozen.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/models.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {
namespace nn {

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
