// SPDX-License-Identifier: Apache-2.0
/// @file
/// Layers and losses on the tape. A layer owns no memory: it remembers where
/// its parameters start on the tape (they are ordinary leaves, created once,
/// before any sample) and records its forward pass as nodes. Activations are
/// passed around as Views: runs of consecutive nodes. Inputs made of several
/// runs (16 embedding rows, 6 attention heads) go to inner products as a
/// ViewList, read in place, never copied.
///
/// A layer is built by create(tape, options, rng) from an options struct
/// (LinearOptions, EmbeddingOptions, LayerNormOptions, AttentionOptions:
/// aggregates whose defaults are PyTorch's) and tells where its parameters
/// are with params(). It also states, as constexpr functions of the same
/// options, exactly how many parameters it creates and how many nodes and
/// argument slots one forward pass records: the memory plans of plan.hpp
/// (nn::make_plan) add them up.
///
/// This header includes them all: common.hpp (what they share: node(),
/// make_params(), Activation, add()), linear.hpp (Linear, Embedding),
/// norm.hpp (LayerNorm), attention.hpp (CausalSelfAttention) and
/// losses.hpp (cross_entropy, mse and the other losses).
#ifndef BURTORCH_NN_LAYERS_HPP
#define BURTORCH_NN_LAYERS_HPP

#include "burtorch/nn/attention.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/norm.hpp"

#endif  // BURTORCH_NN_LAYERS_HPP
