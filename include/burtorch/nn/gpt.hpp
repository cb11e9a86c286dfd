// SPDX-License-Identifier: Apache-2.0
/// @file
/// Gpt, the paper's GPT-like model: the class, its sizes and its serial
/// forward pass (gpt_model.hpp) and its members on a tape of lanes
/// (gpt_lanes.hpp). Include this one.
#ifndef BURTORCH_NN_GPT_HPP
#define BURTORCH_NN_GPT_HPP

#include "burtorch/nn/gpt_lanes.hpp"
#include "burtorch/nn/gpt_model.hpp"

#endif  // BURTORCH_NN_GPT_HPP
