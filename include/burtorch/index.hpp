// SPDX-License-Identifier: Apache-2.0
/// @file
/// Positions on a tape: nodes and argument slots are counted in 32 bits on
/// every target; where the tape's arrays start in its buffer.
#ifndef BURTORCH_INDEX_HPP
#define BURTORCH_INDEX_HPP

#include <cstddef>
#include <cstdint>

namespace burtorch {

/// A node's or an argument slot's position on a tape.
using Index = std::uint32_t;
/// "No node": the index of an invalid handle, of a missing bias, ...
constexpr Index kNoIndex = 0xFFFFFFFFU;

namespace detail {
/// Tape<T>::kArrayAlign: 32 bytes (a vector register's width for SIMD
/// loads, half a cache line) on application processors; on microcontrollers
/// (ARM M profile: no data cache on most, vector loads that need element
/// alignment only) 8, the widest element's alignment, so a FixedTape wastes
/// no RAM on padding. A property of the architecture, the same in the
/// archive and in every program built for it.
#if defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M')
constexpr std::size_t kTapeArrayAlign = 8U;
#else
constexpr std::size_t kTapeArrayAlign = 32U;
#endif
}  // namespace detail

}  // namespace burtorch

#endif  // BURTORCH_INDEX_HPP
