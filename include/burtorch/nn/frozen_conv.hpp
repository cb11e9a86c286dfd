// SPDX-License-Identifier: Apache-2.0
/// @file
/// Frozen convolutions (FrozenConv1d, FrozenConv2d): they are in
/// nn/frozen.hpp with the other frozen layers; this header includes it.
#ifndef BURTORCH_NN_FROZEN_CONV_HPP
#define BURTORCH_NN_FROZEN_CONV_HPP

#include "burtorch/frozen.hpp"
#include "burtorch/nn/conv.hpp"
#include "burtorch/nn/frozen.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/view.hpp"
#include "burtorch/tape.hpp"

#endif  // BURTORCH_NN_FROZEN_CONV_HPP
