// SPDX-License-Identifier: Apache-2.0
// Footprint probe interface (targets/firmware/footprint).
#ifndef BURTORCH_FOOTPRINT_TAPE_CORE_PROBE_HPP
#define BURTORCH_FOOTPRINT_TAPE_CORE_PROBE_HPP

// Records a graph that uses every op on x = in[0..3], runs backward, writes
// d(y)/d(x_i) to grads[0..3] and returns y (negative on a tape error).
float burtorch_footprint_tape_core(const float* in, float* grads) noexcept;

#endif
