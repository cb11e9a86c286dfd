// libburtorch compile-time configuration.
//
// Every flag is 0 or 1. Override a flag without editing the library by
// defining it on the compiler command line (-DBURTORCH_CONFIG_PARAM_NAMES=0)
// or by naming your own header in BURTORCH_CONFIG_USER_HEADER; that header is
// included first and may define any of the flags below.
#ifndef BURTORCH_CONFIG_HPP
#define BURTORCH_CONFIG_HPP

#ifdef BURTORCH_CONFIG_USER_HEADER
#include BURTORCH_CONFIG_USER_HEADER
#endif

// 1: tape.param(x, name) stores a pointer to the caller's name string per
//    node. 0: no name storage exists at all; names passed are ignored.
#ifndef BURTORCH_CONFIG_PARAM_NAMES
#define BURTORCH_CONFIG_PARAM_NAMES 1
#endif

// 1: a tape may carry a fault hook, called once when its status first turns
//    from kOk to an error (fail-fast builds). 0: no hook storage, no call.
#ifndef BURTORCH_CONFIG_FAULT_HOOK
#define BURTORCH_CONFIG_FAULT_HOOK 1
#endif

// 1: inner products over runs of nodes and the optimizer steps use the
//    vector kernels of burtorch/simd.hpp that the compiler's target allows
//    (SSE2/AVX2, Neon, Helium). 0: the portable scalar reference only.
#ifndef BURTORCH_CONFIG_SIMD
#define BURTORCH_CONFIG_SIMD 1
#endif

// 1: where the target has fused multiply-add vector instructions and the
//    kernels use them (AVX2 with -mfma), inner products and gradient
//    updates round once per term. 0: bitwise the scalar reference.
#ifndef BURTORCH_CONFIG_SIMD_FMA
#define BURTORCH_CONFIG_SIMD_FMA 1
#endif

#if (BURTORCH_CONFIG_PARAM_NAMES != 0) && (BURTORCH_CONFIG_PARAM_NAMES != 1)
#error "BURTORCH_CONFIG_PARAM_NAMES must be 0 or 1"
#endif
#if (BURTORCH_CONFIG_FAULT_HOOK != 0) && (BURTORCH_CONFIG_FAULT_HOOK != 1)
#error "BURTORCH_CONFIG_FAULT_HOOK must be 0 or 1"
#endif
#if (BURTORCH_CONFIG_SIMD != 0) && (BURTORCH_CONFIG_SIMD != 1)
#error "BURTORCH_CONFIG_SIMD must be 0 or 1"
#endif
#if (BURTORCH_CONFIG_SIMD_FMA != 0) && (BURTORCH_CONFIG_SIMD_FMA != 1)
#error "BURTORCH_CONFIG_SIMD_FMA must be 0 or 1"
#endif

// Wraps a parameter-name literal so that with BURTORCH_CONFIG_PARAM_NAMES 0
// the string itself never reaches the binary: tape.param(x, BURTORCH_NAME("w1")).
#if BURTORCH_CONFIG_PARAM_NAMES
#define BURTORCH_NAME(literal) (literal)  // BT-DEV-014
#else
#define BURTORCH_NAME(literal) (nullptr)  // BT-DEV-014
#endif

// Branch hints and cold paths (GCC/Clang; empty elsewhere). Error paths are
// kept out of the recording fast path so it stays a few instructions long.
#if defined(__GNUC__) || defined(__clang__)
#define BURTORCH_UNLIKELY(condition) (__builtin_expect(static_cast<long>(condition), 0L) != 0L)  // BT-DEV-014
#define BURTORCH_COLD __attribute__((cold, noinline))
#else
#define BURTORCH_UNLIKELY(condition) (condition)  // BT-DEV-014
#define BURTORCH_COLD
#endif

#endif  // BURTORCH_CONFIG_HPP
