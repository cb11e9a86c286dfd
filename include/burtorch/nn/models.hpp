// SPDX-License-Identifier: Apache-2.0
/// @file
/// The paper's two models with their memory plans and the training loops:
/// mlp.hpp (MakemoreMlp), gpt.hpp (Gpt), plan.hpp (make_plan and the other
/// plans), train.hpp (serial_batch, lane_batch, lane_batch_sweeps). This
/// header includes them all, and the layers (layers.hpp) and optimizer
/// (optim.hpp) they are built on.
#ifndef BURTORCH_NN_MODELS_HPP
#define BURTORCH_NN_MODELS_HPP

#include "burtorch/nn/gpt.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/mlp.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/train.hpp"

#endif  // BURTORCH_NN_MODELS_HPP
