// SPDX-License-Identifier: Apache-2.0
/// @file
/// "SIMD registers as scalars" (the BurTorch paper): a scalar type whose
/// value is N independent lanes, so one tape records the graph once and every
/// node, forward and backward, computes N samples of the same graph
/// structure at once (lane i is sample i). Arithmetic is lane by lane in
/// fixed-size loops the compiler turns into vector instructions; the selects
/// of relu and the other piecewise ops, the maximum of log-sum-exp and of
/// reduce_max, and the product's backward act lane by lane (ScalarOps below).
/// Lanes of double give exactly the bits a scalar tape gives for sample i
/// (with the same contraction of multiply-adds); lanes of float take exp and
/// tanh from vector functions of their own (lanes/functions.hpp, within
/// 1 and 2 ulp of the correctly rounded values), so there the bits may differ.
///
/// @code
///   #include <burtorch/lanes/ops.hpp>
///   using L4 = burtorch::Lanes<double, 4>;
///   static burtorch::FixedTape<L4, 64> tape;
///   auto a = tape.leaf(L4::of({-41.0, -4.0, 1.0, 2.5}));
/// @endcode
///
/// This header is the type alone (no tape). A tape of lanes is an ordinary
/// Tape<T>; the library is compiled for float and double only, and
/// lanes/ops.hpp (the lane ops: a tape of Lanes reading the parameters of an
/// ordinary tape as shared scalars) brings the tape's out-of-line members
/// for any other scalar type, so nothing needs instantiating by hand.
/// Training by lanes: nn::lane_batch (nn/train.hpp).
/// Memory: N times a scalar tape's values and gradients, per node.
#ifndef BURTORCH_LANES_LANES_HPP
#define BURTORCH_LANES_LANES_HPP

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "burtorch/lanes/functions.hpp"
#include "burtorch/lanes/helium.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {

/// N independent values of T that the tape treats as one scalar (see the
/// file comment): lane i of every node belongs to sample i.
template <class T, std::size_t N>
struct Lanes {
  static constexpr std::size_t kLanes = N;  ///< the number of lanes
  T lane[N];                                ///< the values, one per lane

  // BT-DEV-012: `lane` stays uninitialised; the type must stay trivial (the tape copies constants with memcpy).
  Lanes() noexcept = default;  ///< trivial: the tape copies constants with memcpy
  /// Every lane set to x (T(0), T(0.5), static_cast<T>(n) in the library).
  template <class U>
  constexpr explicit Lanes(U x) noexcept : lane{} {
    for (std::size_t i = 0U; i < N; ++i) {
      lane[i] = static_cast<T>(x);
    }
  }
  /// Lane i set to values[i].
  static Lanes of(const T (&values)[N]) noexcept {
    Lanes r(T(0));
    for (std::size_t i = 0U; i < N; ++i) {
      r.lane[i] = values[i];
    }
    return r;
  }
  /// Sum of the lanes (e.g. a parameter's gradient over the lanes' samples).
  T sum() const noexcept {
    T s = T(0);
    for (std::size_t i = 0U; i < N; ++i) {
      s += lane[i];
    }
    return s;
  }

  /// Lane-by-lane arithmetic.
  /// @{
  Lanes& operator+=(const Lanes& y) noexcept {
    for (std::size_t i = 0U; i < N; ++i) {
      lane[i] += y.lane[i];
    }
    return *this;
  }
  Lanes& operator-=(const Lanes& y) noexcept {
    for (std::size_t i = 0U; i < N; ++i) {
      lane[i] -= y.lane[i];
    }
    return *this;
  }
  Lanes& operator*=(const Lanes& y) noexcept {
    for (std::size_t i = 0U; i < N; ++i) {
      lane[i] *= y.lane[i];
    }
    return *this;
  }
  Lanes& operator/=(const Lanes& y) noexcept {
    for (std::size_t i = 0U; i < N; ++i) {
      lane[i] /= y.lane[i];
    }
    return *this;
  }

  friend Lanes operator+(Lanes x, const Lanes& y) noexcept { return x += y; }
  friend Lanes operator-(Lanes x, const Lanes& y) noexcept { return x -= y; }
  friend Lanes operator*(Lanes x, const Lanes& y) noexcept { return x *= y; }
  friend Lanes operator/(Lanes x, const Lanes& y) noexcept { return x /= y; }
  friend Lanes operator-(Lanes x) noexcept {
    for (std::size_t i = 0U; i < N; ++i) {
      x.lane[i] = -x.lane[i];
    }
    return x;
  }
  /// @}
  /// Lane-by-lane elementary functions and selects: ScalarOps<Lanes>.
  struct Ops {
    /// True for float lanes where exp and tanh run in vector registers
    /// (lanes/functions.hpp, or lanes/helium.hpp for four float lanes on
    /// Helium: within a few ulp of the C library's); double lanes call the
    /// C library lane by lane (the same bits as one sample on a tape of
    /// double).
    static constexpr bool is_float_vector() noexcept {
      return (std::is_same<T, float>::value && detail::kVectorFunctions<N>) || detail::kHelium<T, N>;
    }
    /// True where the functions below run on the Helium backend
    /// (lanes/helium.hpp: four float lanes on a core with MVE).
    static constexpr bool helium() noexcept { return detail::kHelium<T, N>; }
    /// The function of ScalarOps of the same name, in every lane.
    /// @{
    static Lanes exp(Lanes x) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::exp(x.lane);
      } else if constexpr (is_float_vector()) {
        detail::exp_lanes<N>(x.lane);  // in vector registers (lanes/functions.hpp)
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = std::exp(x.lane[i]);
        }
      }
      return x;
    }
    static Lanes log(Lanes x) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.lane[i] = std::log(x.lane[i]);
      }
      return x;
    }
    static Lanes tanh(Lanes x) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::tanh(x.lane);
      } else if constexpr (is_float_vector()) {
        detail::tanh_lanes<N>(x.lane);  // in vector registers (lanes/functions.hpp)
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = std::tanh(x.lane[i]);
        }
      }
      return x;
    }
    static Lanes sqrt(Lanes x) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.lane[i] = std::sqrt(x.lane[i]);
      }
      return x;
    }
    static Lanes relu(Lanes x) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::relu(x.lane);
      } else if constexpr (detail::kVectorSelects<N>) {
        detail::relu_lanes<T, N>(x.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = ((x.lane[i] > T(0)) || std::isnan(x.lane[i])) ? x.lane[i] : T(0);
        }
      }
      return x;
    }
    static Lanes relu_grad(const Lanes& x, Lanes g) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::relu_grad(x.lane, g.lane);
      } else if constexpr (detail::kVectorSelects<N>) {
        detail::relu_grad_lanes<T, N>(x.lane, g.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          g.lane[i] = ((x.lane[i] > T(0)) || std::isnan(x.lane[i])) ? g.lane[i] : T(0);
        }
      }
      return g;
    }
    static Lanes max(Lanes a, const Lanes& b) noexcept {
      // b where b > a, else a: select_greater(b, a, b, a).
      Lanes out = b;
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::select_greater(b.lane, a.lane, out.lane, a.lane);
      } else if constexpr (detail::kVectorSelects<N>) {
        detail::select_greater_lanes<T, N>(b.lane, a.lane, out.lane, a.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          out.lane[i] = (b.lane[i] > a.lane[i]) ? b.lane[i] : a.lane[i];
        }
      }
      return out;
    }
    static Lanes abs(Lanes x) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::abs(x.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = std::fabs(x.lane[i]);
        }
      }
      return x;
    }
    static Lanes log1p(Lanes x) noexcept {
      for (std::size_t i = 0U; i < N; ++i) {
        x.lane[i] = std::log1p(x.lane[i]);
      }
      return x;
    }
    static Lanes select_greater(const Lanes& a, const Lanes& b, Lanes x, const Lanes& y) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::select_greater(a.lane, b.lane, x.lane, y.lane);
      } else if constexpr (detail::kVectorSelects<N>) {
        detail::select_greater_lanes<T, N>(a.lane, b.lane, x.lane, y.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = (a.lane[i] > b.lane[i]) ? x.lane[i] : y.lane[i];
        }
      }
      return x;
    }
    static Lanes select_equal(const Lanes& a, const Lanes& b, Lanes x, const Lanes& y) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::select_equal(a.lane, b.lane, x.lane, y.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = (a.lane[i] == b.lane[i]) ? x.lane[i] : y.lane[i];  // BT-DEV-004: exact test
        }
      }
      return x;
    }
    static Lanes select_nan(const Lanes& a, Lanes x, const Lanes& y) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::select_nan(a.lane, x.lane, y.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = std::isnan(a.lane[i]) ? x.lane[i] : y.lane[i];
        }
      }
      return x;
    }
    static Lanes finite_or_zero(Lanes x) noexcept {
      if constexpr (helium()) {
        detail::HeliumLanes<T, N>::finite_or_zero(x.lane);
      } else {
        for (std::size_t i = 0U; i < N; ++i) {
          x.lane[i] = std::isfinite(x.lane[i]) ? x.lane[i] : T(0);
        }
      }
      return x;
    }
    // True only if every lane is zero (BT-DEV-004: exact zero test).
    static bool is_zero(const Lanes& x) noexcept {
      if constexpr (helium()) {
        return detail::HeliumLanes<T, N>::is_zero(x.lane);
      } else {
        bool zero = true;
        for (std::size_t i = 0U; i < N; ++i) {
          zero = zero && (x.lane[i] == T(0));  // BT-DEV-004: exact zero test
        }
        return zero;
      }
    }
    static bool finite(const Lanes& x) noexcept {
      if constexpr (helium()) {
        return detail::HeliumLanes<T, N>::finite(x.lane);
      } else {
        bool ok = true;
        for (std::size_t i = 0U; i < N; ++i) {
          ok = ok && std::isfinite(x.lane[i]);
        }
        return ok;
      }
    }
    /// @}
  };

  /// NaN in every lane: std::numeric_limits<Lanes>.
  struct Limits {
    static constexpr bool is_specialized = true;  ///< as std::numeric_limits
    /// NaN in every lane.
    static constexpr Lanes quiet_NaN() noexcept { return Lanes(std::numeric_limits<T>::quiet_NaN()); }
    /// +inf in every lane.
    static constexpr Lanes infinity() noexcept { return Lanes(std::numeric_limits<T>::infinity()); }
  };
};

/// Lane-by-lane elementary functions and selects (Lanes::Ops).
template <class T, std::size_t N> struct ScalarOps<Lanes<T, N>> {
  static constexpr bool kSingleLane = false;  ///< lanes may differ
  /// Lanes::Ops's function of the same name.
  /// @{
  template <class L>
  static L exp(L x) noexcept {
    return L::Ops::exp(x);
  }
  template <class L>
  static L log(L x) noexcept {
    return L::Ops::log(x);
  }
  template <class L>
  static L tanh(L x) noexcept {
    return L::Ops::tanh(x);
  }
  template <class L>
  static L sqrt(L x) noexcept {
    return L::Ops::sqrt(x);
  }
  template <class L>
  static L relu(L x) noexcept {
    return L::Ops::relu(x);
  }
  template <class L>
  static L relu_grad(const L& x, L g) noexcept {
    return L::Ops::relu_grad(x, g);
  }
  template <class L>
  static L max(L a, const L& b) noexcept {
    return L::Ops::max(a, b);
  }
  template <class L>
  static L abs(L x) noexcept {
    return L::Ops::abs(x);
  }
  template <class L>
  static L log1p(L x) noexcept {
    return L::Ops::log1p(x);
  }
  template <class L>
  static L select_greater(const L& a, const L& b, const L& x, const L& y) noexcept {
    return L::Ops::select_greater(a, b, x, y);
  }
  template <class L>
  static L select_equal(const L& a, const L& b, const L& x, const L& y) noexcept {
    return L::Ops::select_equal(a, b, x, y);
  }
  template <class L>
  static L select_nan(const L& a, const L& x, const L& y) noexcept {
    return L::Ops::select_nan(a, x, y);
  }
  template <class L>
  static bool finite(const L& x) noexcept {
    return L::Ops::finite(x);
  }
  /// x lane by lane, with non-finite lanes set to 0.
  template <class L>
  static L finite_or_zero(L x) noexcept {
    return L::Ops::finite_or_zero(x);
  }
  /// True only if every lane is zero.
  template <class L>
  static bool is_zero(const L& x) noexcept {
    return L::Ops::is_zero(x);
  }
  /// @}
};

/// What the lane ops (lanes/ops.hpp: lane_matvec, lane_gather, pick, ...) need to
/// know of a tape's scalar type: whether it is a lane type, how many lanes,
/// and the scalar of one lane. A plain float or double is one lane.
template <class T>
struct LaneTraits {
  static constexpr bool kIsLanes = false;  ///< T is not a Lanes type
  static constexpr std::size_t kLanes = 1U;  ///< one value
  using Scalar = T;                          ///< the type of one lane
};
/// A Lanes type: N lanes of S.
template <class S, std::size_t N>
struct LaneTraits<Lanes<S, N>> {
  static constexpr bool kIsLanes = true;  ///< a Lanes type
  static constexpr std::size_t kLanes = N;  ///< lanes
  using Scalar = S;                         ///< the type of one lane
};

}  // namespace burtorch

/// The lane count of lane batches when a program does not choose one: the
/// number of floats in the target's widest vector register (AVX-512: 16,
/// AVX2: 8, SSE2, Neon and Helium: 4; a target without vector registers: 1,
/// where a lane batch is the per-sample serial batch). Define
/// BURTORCH_LANES (1, 2, 4, 8, 16, 32 or 64) to override it.
#ifndef BURTORCH_LANES
#if defined(__AVX512F__)
#define BURTORCH_LANES 16
#elif defined(__AVX2__)
#define BURTORCH_LANES 8
#elif defined(__SSE2__) || defined(__ARM_NEON) || (defined(__ARM_FEATURE_MVE) && ((__ARM_FEATURE_MVE & 2) != 0))
#define BURTORCH_LANES 4
#else
#define BURTORCH_LANES 1
#endif
#endif

namespace burtorch {

/// BURTORCH_LANES as a constant: the default lane count of lane batches.
constexpr std::size_t kHardwareLanes = BURTORCH_LANES;
static_assert((kHardwareLanes >= 1U) && (kHardwareLanes <= 64U) && ((kHardwareLanes & (kHardwareLanes - 1U)) == 0U),
              "BURTORCH_LANES must be 1, 2, 4, 8, 16, 32 or 64");

}  // namespace burtorch

/// NaN in every lane (what the tape returns for a bad handle).
/// @cond INTERNAL
template <class T, std::size_t N> class std::numeric_limits<burtorch::Lanes<T, N>> : public burtorch::Lanes<T, N>::Limits {};
/// @endcond

#endif  // BURTORCH_LANES_LANES_HPP
