// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: N values of a scalar type as one vector, for the lane loops
/// (detail/lane_math.hpp) and the lane functions (lanes/functions.hpp).
/// With GCC or Clang a vector is the compilers' generic vector type
/// (BT-DEV-016), which every target lowers to its own vector registers
/// (AVX-512, AVX2, SSE2, Neon, Helium) or to scalar code; other compilers
/// get a struct with the same arithmetic in plain loops.
#ifndef BURTORCH_LANES_VECTOR_HPP
#define BURTORCH_LANES_VECTOR_HPP

#include <cstddef>
#include <cstring>

namespace burtorch {
namespace detail {

#if defined(__GNUC__) || defined(__clang__)
/// 1: VectorOf is the compilers' generic vector type.
#define BURTORCH_GENERIC_VECTORS 1
/// N values of S in one vector of the compiler's generic vector type: what
/// the lane loops compute with (N a power of two, at least 2).
template <class S, std::size_t N>
struct VectorOf {
  // BT-DEV-016: a GCC/Clang generic vector type (a language extension).
  typedef S Type __attribute__((vector_size(sizeof(S) * N)));
};
/// One value: the scalar itself.
template <class S>
struct VectorOf<S, 1U> {
  using Type = S;
};
#else
#define BURTORCH_GENERIC_VECTORS 0
/// N values of S (compilers without generic vector types): the same
/// arithmetic, lane by lane.
template <class S, std::size_t N>
struct VectorOf {
  struct Type {
    S e[N];  ///< the values
    Type& operator+=(const Type& y) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        e[i] += y.e[i];
      }
      return *this;
    }
    friend Type operator+(Type x, const Type& y) noexcept { return x += y; }
    friend Type operator*(Type x, const Type& y) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.e[i] *= y.e[i];
      }
      return x;
    }
    friend Type operator*(S a, Type x) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.e[i] = a * x.e[i];
      }
      return x;
    }
    friend Type operator*(Type x, S a) noexcept { return a * x; }
    friend Type operator+(Type x, S a) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.e[i] += a;
      }
      return x;
    }
  };
};
#endif

/// v = the N consecutive values of S from p (any alignment). (Vectors are
/// passed by reference only: a vector argument or result by value would
/// depend on the target's vector ABI.)
template <class V, class S>
inline void load_vector(V& v, const S* p) noexcept {
  std::memcpy(&v, p, sizeof(v));  // BT-DEV-010
}
/// Stores the vector v to p (any alignment).
template <class V, class S>
inline void store_vector(S* p, const V& v) noexcept {
  std::memcpy(p, &v, sizeof(v));  // BT-DEV-010
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_VECTOR_HPP
