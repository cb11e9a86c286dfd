// SPDX-License-Identifier: Apache-2.0
// Library-internal: the implementations of the kernels of burtorch/core/simd.hpp
// that this build contains, and which one the public float and double
// functions are (burtorch/core/simd.hpp lists the rules).
//
// Kernels<I, T> are implementation I's kernels over float or double as
// out-of-line functions (lib/simd/isa.cpp), so tests/core/test_simd.cpp can
// compare every implementation with the reference. The library calls none
// of them: the public float and double functions are the selected
// implementation's kernels themselves (lib/simd/selected.cpp).
#ifndef BURTORCH_LIB_SIMD_ISA_HPP
#define BURTORCH_LIB_SIMD_ISA_HPP

#include <cstddef>

#include "burtorch/core/simd.hpp"
#include "burtorch/nn/optim_kernels.hpp"

namespace burtorch {
namespace simd {
namespace isa {

// The implementations: kName as isa_float() reports it, kFused true if the
// inner products and axpy fuse multiply-adds.
struct Reference {
  static constexpr const char* kName = "reference";
  static constexpr bool kFused = false;
};
#if BURTORCH_SIMD_SSE2
struct Sse2 {
  static constexpr const char* kName = "sse2";
  static constexpr bool kFused = false;
};
#endif
#if BURTORCH_SIMD_AVX2
struct Avx2 {
  static constexpr const char* kName = BURTORCH_SIMD_AVX2_FMA ? "avx2+fma" : "avx2";
  static constexpr bool kFused = BURTORCH_SIMD_AVX2_FMA != 0;
};
#endif
#if BURTORCH_SIMD_NEON
struct Neon {  // float; double on AArch64 only (BURTORCH_SIMD_NEON_F64)
  static constexpr const char* kName = "neon";
  static constexpr bool kFused = false;
};
#endif
#if BURTORCH_SIMD_MVE
struct Mve {  // float only
  static constexpr const char* kName = BURTORCH_SIMD_MVE_FMA ? "mve+fma" : "mve";
  static constexpr bool kFused = BURTORCH_SIMD_MVE_FMA != 0;
};
#endif
#if BURTORCH_SIMD_VFP
// The scalar floating-point unit of an in-order Cortex-M core (FPv4-SP,
// FPv5): no vector lanes, the reference's partial sums held in registers
// (lib/simd/vfp.hpp). Float where the core has no Helium, double where the
// FPU has double precision.
struct Vfp {
  static constexpr const char* kName = BURTORCH_SIMD_VFP_FMA ? "vfp+fma" : "vfp";
  static constexpr bool kFused = BURTORCH_SIMD_VFP_FMA != 0;
};
#endif

// The implementation the public functions of each scalar type are.
#if BURTORCH_SIMD_AVX2
using ForFloat = Avx2;
using ForDouble = Avx2;
#elif BURTORCH_SIMD_SSE2
using ForFloat = Sse2;
using ForDouble = Sse2;
#elif BURTORCH_SIMD_NEON_F64
using ForFloat = Neon;
using ForDouble = Neon;
#elif BURTORCH_SIMD_NEON
using ForFloat = Neon;
using ForDouble = Reference;
#elif BURTORCH_SIMD_MVE && BURTORCH_SIMD_VFP_F64
using ForFloat = Mve;
using ForDouble = Vfp;
#elif BURTORCH_SIMD_MVE
using ForFloat = Mve;
using ForDouble = Reference;
#elif BURTORCH_SIMD_VFP_F32 && BURTORCH_SIMD_VFP_F64
using ForFloat = Vfp;
using ForDouble = Vfp;
#elif BURTORCH_SIMD_VFP_F32
using ForFloat = Vfp;
using ForDouble = Reference;
#else
using ForFloat = Reference;
using ForDouble = Reference;
#endif

// Implementation I's kernels over T (float or double; burtorch/core/simd.hpp
// documents each), defined for every implementation and scalar type this
// build contains.
template <class I, class T>
struct Kernels {
  static T dot(const T* a, const T* b, std::size_t n) noexcept;
  static T sum_squares(const T* x, std::size_t n) noexcept;
  static void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept;
  static void scale(T* x, T s, std::size_t n) noexcept;
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept;
  static void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept;
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept;
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, T scale, std::size_t n) noexcept;
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept;
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, T scale, std::size_t n) noexcept;
};

}  // namespace isa
}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_ISA_HPP
