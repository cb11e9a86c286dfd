// SPDX-License-Identifier: Apache-2.0
/// @file
/// libburtorch: latency-first scalar reverse-mode autodiff on caller-owned
/// memory. Include this one header for the core (tape.hpp, ops.hpp,
/// views.hpp) and every extension (functions, fused layer rows, frozen
/// weights, lane batches, replay, inspection) and service (Graphviz,
/// checkpoints); nn/nn.hpp adds the layers, models and training loops. A
/// firmware may include only what it uses: what it does not record is not
/// compiled in either way.
#ifndef BURTORCH_BURTORCH_HPP
#define BURTORCH_BURTORCH_HPP

#include "burtorch/checkpoint.hpp"
#include "burtorch/config.hpp"
#include "burtorch/extension.hpp"
#include "burtorch/frozen.hpp"
#include "burtorch/functions.hpp"
#include "burtorch/fused.hpp"
#include "burtorch/graphviz.hpp"
#include "burtorch/inspect.hpp"
#include "burtorch/lane_ops.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/ops.hpp"
#include "burtorch/record.hpp"
#include "burtorch/replay.hpp"
#include "burtorch/status.hpp"
#include "burtorch/stream.hpp"
#include "burtorch/tape.hpp"
#include "burtorch/views.hpp"

#endif  // BURTORCH_BURTORCH_HPP
