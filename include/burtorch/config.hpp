// SPDX-License-Identifier: Apache-2.0
/// @file
/// libburtorch compile-time configuration.
///
/// Every flag is 0 or 1. The flags are chosen when the library is built (the
/// CMake options BURTORCH_PARAM_NAMES, BURTORCH_FAULT_HOOK, BURTORCH_SIMD,
/// BURTORCH_SIMD_FMA) and recorded in the generated header
/// <burtorch/build_config.hpp>, installed with the archive: a program compiled
/// against the archive gets the same values without any -D. A flag defined
/// differently on the command line or in BURTORCH_CONFIG_USER_HEADER (a header
/// of your own, included first) fails to compile with an `#error` naming it;
/// an object compiled with other flags than the archive fails to link with an
/// undefined reference naming them (Tape's constructor, detail::BuiltWith).
/// Sources compiled without the generated header (no CMake) use the defaults
/// below or the -D values given.
#ifndef BURTORCH_CONFIG_HPP
#define BURTORCH_CONFIG_HPP

// The headers are C++17 (inline variables, noexcept in function types): one
// clear error under an older standard instead of many confusing ones.
#if defined(_MSVC_LANG)
#if _MSVC_LANG < 201703L
#error "C++17 required: libburtorch's headers need /std:c++17 or later"
#endif
#elif !defined(__cplusplus) || (__cplusplus < 201703L)
#error "C++17 required: libburtorch's headers need -std=c++17 or later"
#endif

#ifdef BURTORCH_CONFIG_USER_HEADER
#include BURTORCH_CONFIG_USER_HEADER
#endif

#if defined(__has_include)
#if __has_include(<burtorch/build_config.hpp>)
#include <burtorch/build_config.hpp>
#endif
#endif

#ifdef BURTORCH_BUILT_PARAM_NAMES
#ifndef BURTORCH_CONFIG_PARAM_NAMES
#define BURTORCH_CONFIG_PARAM_NAMES BURTORCH_BUILT_PARAM_NAMES
#elif BURTORCH_CONFIG_PARAM_NAMES != BURTORCH_BUILT_PARAM_NAMES
#error "BURTORCH_CONFIG_PARAM_NAMES differs from the value libburtorch was built with (burtorch/build_config.hpp): remove the definition or rebuild the library with it"
#endif
#endif
#ifdef BURTORCH_BUILT_FAULT_HOOK
#ifndef BURTORCH_CONFIG_FAULT_HOOK
#define BURTORCH_CONFIG_FAULT_HOOK BURTORCH_BUILT_FAULT_HOOK
#elif BURTORCH_CONFIG_FAULT_HOOK != BURTORCH_BUILT_FAULT_HOOK
#error "BURTORCH_CONFIG_FAULT_HOOK differs from the value libburtorch was built with (burtorch/build_config.hpp): remove the definition or rebuild the library with it"
#endif
#endif
#ifdef BURTORCH_BUILT_SIMD
#ifndef BURTORCH_CONFIG_SIMD
#define BURTORCH_CONFIG_SIMD BURTORCH_BUILT_SIMD
#elif BURTORCH_CONFIG_SIMD != BURTORCH_BUILT_SIMD
#error "BURTORCH_CONFIG_SIMD differs from the value libburtorch was built with (burtorch/build_config.hpp): remove the definition or rebuild the library with it"
#endif
#endif
#ifdef BURTORCH_BUILT_SIMD_FMA
#ifndef BURTORCH_CONFIG_SIMD_FMA
#define BURTORCH_CONFIG_SIMD_FMA BURTORCH_BUILT_SIMD_FMA
#elif BURTORCH_CONFIG_SIMD_FMA != BURTORCH_BUILT_SIMD_FMA
#error "BURTORCH_CONFIG_SIMD_FMA differs from the value libburtorch was built with (burtorch/build_config.hpp): remove the definition or rebuild the library with it"
#endif
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
//    vector kernels of burtorch/core/simd.hpp that the compiler's target allows
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

/// @cond INTERNAL
namespace burtorch {
namespace detail {
/// Types whose names spell the configuration: the last parameter of Tape's
/// constructor has the type BuiltWith<...> of the including code, and the
/// archive defines the constructor for its own flags only. An object compiled
/// with other flags than the archive therefore fails to link with, e.g.,
///   undefined reference to `burtorch::Tape<float>::Tape(..., burtorch::detail::
///   BuiltWith<burtorch::detail::config_PARAM_NAMES<1>, ...>)'
template <int V>
struct config_PARAM_NAMES {};
template <int V>
struct config_FAULT_HOOK {};
template <int V>
struct config_SIMD {};
template <int V>
struct config_SIMD_FMA {};
template <class ParamNames, class FaultHook, class Simd, class SimdFma>
struct BuiltWith {};
using ThisConfig = BuiltWith<config_PARAM_NAMES<BURTORCH_CONFIG_PARAM_NAMES>, config_FAULT_HOOK<BURTORCH_CONFIG_FAULT_HOOK>,
                             config_SIMD<BURTORCH_CONFIG_SIMD>, config_SIMD_FMA<BURTORCH_CONFIG_SIMD_FMA>>;
}  // namespace detail
}  // namespace burtorch
/// @endcond

/// @def BURTORCH_NAME(literal)
/// Wraps a parameter-name literal so that with BURTORCH_CONFIG_PARAM_NAMES 0
/// the string itself never reaches the binary: tape.param(x, BURTORCH_NAME("w1")).
#if BURTORCH_CONFIG_PARAM_NAMES
#define BURTORCH_NAME(literal) (literal)  // BT-DEV-014
#else
#define BURTORCH_NAME(literal) (nullptr)  // BT-DEV-014
#endif

/// @def BURTORCH_UNLIKELY(condition)
/// Branch hint: `condition` is rarely true (GCC/Clang; plain elsewhere).
/// @def BURTORCH_COLD
/// Marks an error path cold and out of line, so the recording fast path
/// stays a few instructions long (GCC/Clang; empty elsewhere).
/// @def BURTORCH_ALWAYS_INLINE
/// Inlines a function whatever the compiler's size heuristics say: each op's
/// step in the backward sweep and the recorders' dispatch over op rows, so
/// the rows compile to one jump table with the step bodies in place, the
/// code a hand-written switch gives (GCC/Clang in optimised builds; empty
/// elsewhere: at -O0 the forced copies would each keep their own stack slots
/// in one frame).
/// @def BURTORCH_NOINLINE
/// Keeps a function out of its callers: a loop whose locals would otherwise
/// add to the frame of its caller (the frozen matvec's backward in the
/// dispatch of the ops linked on use; GCC/Clang; empty elsewhere).
/// @def BURTORCH_KNOWN(value)
/// True where the optimiser knows `value` at compile time (GCC/Clang's
/// __builtin_constant_p, decided after inlining; false at -O0 and on other
/// compilers). An inline function takes with it a path whose code folds
/// away for known values and calls the general code otherwise, with the
/// same result either way: nn::Linear::create's draws from constexpr
/// options link no code of the Init kinds they do not use.
#if defined(__GNUC__) || defined(__clang__)
#define BURTORCH_UNLIKELY(condition) (__builtin_expect(static_cast<long>(condition), 0L) != 0L)  // BT-DEV-014
#define BURTORCH_KNOWN(value) (__builtin_constant_p(value) != 0)                                   // BT-DEV-014
#define BURTORCH_COLD __attribute__((cold, noinline))
#if defined(__OPTIMIZE__)
#define BURTORCH_ALWAYS_INLINE __attribute__((always_inline))
#else
#define BURTORCH_ALWAYS_INLINE
#endif
#define BURTORCH_NOINLINE __attribute__((noinline))
#else
#define BURTORCH_UNLIKELY(condition) (condition)  // BT-DEV-014
#define BURTORCH_KNOWN(value) false               // BT-DEV-014
#define BURTORCH_COLD
#define BURTORCH_ALWAYS_INLINE
#define BURTORCH_NOINLINE
#endif

#endif  // BURTORCH_CONFIG_HPP
