// SPDX-License-Identifier: Apache-2.0
/// @file
/// The library's pseudo-random numbers: xoshiro256** seeded through
/// splitmix64. An Rng is a plain value the caller owns (no global state), and
/// every draw uses only integer operations and IEEE-754 +, -, *, / and sqrt,
/// so the same seed gives bit-identical numbers on every target (no libm
/// transcendental whose last bit may differ between C libraries).
#ifndef BURTORCH_NN_RANDOM_HPP
#define BURTORCH_NN_RANDOM_HPP

#include <cstddef>
#include <cstdint>

namespace burtorch {
namespace nn {

/// The library's pseudo-random generator: xoshiro256** seeded through
/// splitmix64. A value the caller owns (no global state); the same seed
/// gives the same numbers on every target.
class Rng {
 public:
  static constexpr std::size_t kStateWords = 4U;  ///< 64-bit words of state

  /// A generator seeded with `seed`.
  explicit Rng(std::uint64_t seed = 0U) noexcept { reseed(seed); }
  /// Restarts the sequence from `seed`.
  void reseed(std::uint64_t seed) noexcept;

  /// The next 64 random bits.
  std::uint64_t next_u64() noexcept;
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept;
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) noexcept { return lo + ((hi - lo) * uniform()); }
  /// Standard normal (Marsaglia's polar method; one value per call).
  double normal() noexcept;
  /// Normal with the given mean and standard deviation.
  double normal(double mean, double stddev) noexcept { return mean + (stddev * normal()); }
  /// Uniform in [0, 1) in single precision: the top 24 bits of
  /// next_u64() (uniform() truncated to float's precision). Single-precision
  /// and integer arithmetic only: a float model's firmware links no
  /// soft-double code for it.
  float uniform_float() noexcept {
    return static_cast<float>(static_cast<std::uint32_t>(next_u64() >> 40U)) * (1.0F / 16777216.0F);  // 2^-24
  }
  /// Uniform in [lo, hi), in single precision.
  float uniform_float(float lo, float hi) noexcept { return lo + ((hi - lo) * uniform_float()); }
  /// Standard normal in single precision (normal()'s polar method, with
  /// uniform_float() and portable_logf()).
  float normal_float() noexcept;
  /// Uniform integer in [0, n), unbiased; 0 when n == 0.
  std::uint32_t below(std::uint32_t n) noexcept;

  /// The whole state, for checkpoints: kStateWords words.
  /// @{
  std::uint64_t* state() noexcept { return s_; }
  const std::uint64_t* state() const noexcept { return s_; }
  /// @}

 private:
  std::uint64_t s_[kStateWords] = {};
};

/// Natural logarithm from +, -, *, / only (bit-reproducible on every target);
/// accurate to a few ulp for finite x > 0. Returns -1e308 for x <= 0.
double portable_log(double x) noexcept;
/// portable_log() in single precision (+, -, *, / and integer operations
/// only); accurate to a few ulp of float for finite x > 0. Returns -3e38
/// for x <= 0.
float portable_logf(float x) noexcept;

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_RANDOM_HPP
