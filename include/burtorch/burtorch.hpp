// SPDX-License-Identifier: Apache-2.0
/// @file
/// libburtorch: latency-first scalar reverse-mode autodiff on caller-owned
/// memory. Include this one header.
#ifndef BURTORCH_BURTORCH_HPP
#define BURTORCH_BURTORCH_HPP

#include "burtorch/checkpoint.hpp"
#include "burtorch/config.hpp"
#include "burtorch/frozen.hpp"
#include "burtorch/graphviz.hpp"
#include "burtorch/ops.hpp"
#include "burtorch/status.hpp"
#include "burtorch/stream.hpp"
#include "burtorch/tape.hpp"

#endif  // BURTORCH_BURTORCH_HPP
