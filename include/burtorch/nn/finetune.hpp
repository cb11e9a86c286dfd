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
/// FrozenLinear is in nn/frozen.hpp (with the frozen convolutions),
/// make_finetune_plan in nn/plan.hpp; this header includes them.
#ifndef BURTORCH_NN_FINETUNE_HPP
#define BURTORCH_NN_FINETUNE_HPP

#include "burtorch/frozen.hpp"
#include "burtorch/nn/frozen.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/models.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/tape.hpp"

#endif  // BURTORCH_NN_FINETUNE_HPP
