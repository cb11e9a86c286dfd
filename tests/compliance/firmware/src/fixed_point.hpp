// SPDX-License-Identifier: Apache-2.0
// Q15 fixed point, as a sensor or a DAC would take it.
#ifndef FW_FIXED_POINT_HPP
#define FW_FIXED_POINT_HPP

#include <cstdint>

namespace fw {

/// x in [-1, 1) as Q15, saturated.
std::int16_t to_q15(float x) noexcept;
/// A Q15 value as a float.
float from_q15(std::int16_t q) noexcept;

}  // namespace fw

#endif  // FW_FIXED_POINT_HPP
