// SPDX-License-Identifier: Apache-2.0
/// @file
/// Every out-of-line member of the core: Tape<T>'s (state, sweep),
/// Recorder<T>'s and the recorders of views.hpp. lib/tape.cpp includes it
/// and instantiates them for float and double; lane_ops.hpp includes it, so
/// that a tape of Lanes instantiates them where it is used.
#ifndef BURTORCH_CORE_IMPL_HPP
#define BURTORCH_CORE_IMPL_HPP

#include "burtorch/core/recorder.hpp"
#include "burtorch/core/state.hpp"
#include "burtorch/core/sweep.hpp"
#include "burtorch/core/views.hpp"

#endif  // BURTORCH_CORE_IMPL_HPP
