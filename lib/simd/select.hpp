// SPDX-License-Identifier: Apache-2.0
// Library-internal, kept only for lib/tape_impl.hpp, which still names the
// kernels simd::for_float::dot, simd::for_double::axpy: both names are now
// burtorch::simd itself, whose float and double functions are the selected
// kernels (lib/simd/isa.hpp). Remove with those call sites.
#ifndef BURTORCH_LIB_SIMD_SELECT_HPP
#define BURTORCH_LIB_SIMD_SELECT_HPP

#include "burtorch/simd.hpp"

namespace burtorch {
namespace simd {

namespace for_float = ::burtorch::simd;
namespace for_double = ::burtorch::simd;

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_SELECT_HPP
