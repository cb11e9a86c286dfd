// SPDX-License-Identifier: Apache-2.0
// Library-internal: the kernel implementation this build of the library
// selects, per scalar type (burtorch/simd.hpp lists the rules). The public
// simd::dot etc. forward to it (lib/simd/reference.cpp); the tape calls it
// directly. Only translation units compiled with the library's flags may
// use it (the tape's float and double instantiations live in lib/tape.cpp).
#ifndef BURTORCH_LIB_SIMD_SELECT_HPP
#define BURTORCH_LIB_SIMD_SELECT_HPP

#include "burtorch/simd.hpp"

namespace burtorch {
namespace simd {

#if BURTORCH_SIMD_AVX2
namespace for_float = avx2;
namespace for_double = avx2;
#elif BURTORCH_SIMD_SSE2
namespace for_float = sse2;
namespace for_double = sse2;
#elif BURTORCH_SIMD_NEON_F64
namespace for_float = neon;
namespace for_double = neon;
#elif BURTORCH_SIMD_NEON
namespace for_float = neon;
namespace for_double = reference;
#elif BURTORCH_SIMD_MVE
namespace for_float = mve;
namespace for_double = reference;
#else
namespace for_float = reference;
namespace for_double = reference;
#endif

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_SELECT_HPP
