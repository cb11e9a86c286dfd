// SPDX-License-Identifier: Apache-2.0
/// @file
/// libburtorch: latency-first scalar reverse-mode autodiff on caller-owned
/// memory. Include this one header for the core (core/tape.hpp, core/ops.hpp,
/// core/views.hpp) and every extension (functions, fused layer rows, frozen
/// weights, lane batches, replay, inspection) and service (Graphviz,
/// checkpoints); nn/nn.hpp adds the layers, models and training loops. A
/// firmware may include only what it uses: what it does not record is not
/// compiled in either way.
#ifndef BURTORCH_BURTORCH_HPP
#define BURTORCH_BURTORCH_HPP

#include "burtorch/tools/checkpoint.hpp"
#include "burtorch/config.hpp"
#include "burtorch/ext/extension.hpp"
#include "burtorch/frozen/ops.hpp"
#include "burtorch/ext/functions.hpp"
#include "burtorch/ext/fused.hpp"
#include "burtorch/tools/graphviz.hpp"
#include "burtorch/tools/inspect.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/tools/replay.hpp"
#include "burtorch/status.hpp"
#include "burtorch/tools/stream.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

#endif  // BURTORCH_BURTORCH_HPP
