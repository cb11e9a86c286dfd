// SPDX-License-Identifier: Apache-2.0
// isa::Kernels (lib/simd/isa.hpp): every implementation of the kernels that
// this build contains, out of line, for tests/test_simd.cpp. Programs that
// only call the public functions do not link this object.
#include "arm.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "x86.hpp"

namespace burtorch {
namespace simd {
namespace isa {

template struct Kernels<Reference, float>;
template struct Kernels<Reference, double>;
#if BURTORCH_SIMD_SSE2
template struct Kernels<Sse2, float>;
template struct Kernels<Sse2, double>;
#endif
#if BURTORCH_SIMD_AVX2
template struct Kernels<Avx2, float>;
template struct Kernels<Avx2, double>;
#endif
#if BURTORCH_SIMD_NEON
template struct Kernels<Neon, float>;
#if BURTORCH_SIMD_NEON_F64
template struct Kernels<Neon, double>;
#endif
#endif
#if BURTORCH_SIMD_MVE
template struct Kernels<Mve, float>;
#endif

}  // namespace isa
}  // namespace simd
}  // namespace burtorch
