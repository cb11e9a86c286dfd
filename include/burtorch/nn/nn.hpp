// SPDX-License-Identifier: Apache-2.0
/// @file
/// Training building blocks: include this one header.
#ifndef BURTORCH_NN_NN_HPP
#define BURTORCH_NN_NN_HPP

#include "burtorch/nn/attention.hpp"
#include "burtorch/nn/char_gru.hpp"
#include "burtorch/nn/cnn.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/conv.hpp"
#include "burtorch/nn/conv_geometry.hpp"
#include "burtorch/nn/dp.hpp"
#include "burtorch/nn/frozen.hpp"
#include "burtorch/nn/gpt.hpp"
#include "burtorch/nn/gru.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/mlp.hpp"
#include "burtorch/nn/norm.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/parallel.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/pool.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/train.hpp"

#endif  // BURTORCH_NN_NN_HPP
