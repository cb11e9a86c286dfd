// SPDX-License-Identifier: Apache-2.0
/// @file
/// The library's own tanh of a float (lib/tanh_float.cpp), which
/// ScalarOps<float>::tanh uses instead of the C library's tanhf: no libm
/// code (tanhf, expm1f, errno) linked into a float firmware, and the same
/// bits on every target (compiled with -ffp-contract=off, IEEE-754
/// single-precision +, -, *, / only).
///
/// |x| < 0.5: the odd Taylor series to the 15th power (the first term left
/// out is below 2^-25 relative); 0.5 <= |x| < 9.5: 1 - 2 / (e^(2|x|) + 1)
/// with e^y = 2^n e^r, n = round(y / ln 2), r = y - n ln 2 (ln 2 in two
/// parts: n ln 2 exact), e^r by its Taylor series to the 7th power; |x| >=
/// 9.5 (tanh rounds to 1 there): 1. The sign of x copied in (tanh(-0) is
/// -0), NaN for NaN. Within 2.5 ulp of the exact tanh
/// (tests/targets/host_tanh_float.cpp measures it against the C
/// library's double tanh over every 61st float and every float of
/// [0.25, 10]; the largest error it finds is 2.1 ulp).
#ifndef BURTORCH_CORE_TANH_FLOAT_HPP
#define BURTORCH_CORE_TANH_FLOAT_HPP

namespace burtorch {

/// Hyperbolic tangent of x in single precision (see the file comment).
float tanh_float(float x) noexcept;

}  // namespace burtorch

#endif  // BURTORCH_CORE_TANH_FLOAT_HPP
