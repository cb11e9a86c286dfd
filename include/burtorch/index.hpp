// SPDX-License-Identifier: Apache-2.0
/// @file
/// Positions on a tape: nodes and argument slots are counted in 32 bits on
/// every target.
#ifndef BURTORCH_INDEX_HPP
#define BURTORCH_INDEX_HPP

#include <cstdint>

namespace burtorch {

/// A node's or an argument slot's position on a tape.
using Index = std::uint32_t;
/// "No node": the index of an invalid handle, of a missing bias, ...
constexpr Index kNoIndex = 0xFFFFFFFFU;

}  // namespace burtorch

#endif  // BURTORCH_INDEX_HPP
