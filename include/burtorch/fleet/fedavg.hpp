// SPDX-License-Identifier: Apache-2.0
/// @file
/// The server's side of a federated-averaging round (McMahan et al. 2017):
/// the clients' update frames (fleet/codec.hpp) averaged with weights equal
/// to their sample counts, sum_c n_c u_c / sum_c n_c, into caller memory.
/// A frame that fails its checks, belongs to another round or has another
/// length is refused (counted, nothing added); heap-free.
///
///     double sum[P];
///     fleet::FedAvg<double> avg(sum, P);
///     avg.begin(P, round);
///     for each frame: avg.add(frame, bytes);   // refused frames change nothing
///     for each client that sent none in time: avg.miss();
///     avg.average(mean);                       // mean[i] = sum[i] / samples()
#ifndef BURTORCH_FLEET_FEDAVG_HPP
#define BURTORCH_FLEET_FEDAVG_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/fleet/codec.hpp"
#include "burtorch/status.hpp"

namespace burtorch {
namespace fleet {

/// A round's weighted sum over a caller array of `capacity` T (float or double).
template <class T>
class FedAvg {
 public:
  /// Keeps the caller's array sum[0, capacity) for the rounds' sums.
  FedAvg(T* sum, std::size_t capacity) noexcept : sum_(sum), capacity_(capacity) {}

  /// Starts a round of updates of n values: zeroes sum[0, n) and the
  /// counters. kInvalidArgument (nothing changed) for a null array, n == 0
  /// or n above the capacity.
  Status begin(std::size_t n, std::uint32_t round) noexcept {
    if ((sum_ == nullptr) || (n == 0U) || (n > capacity_)) {
      return Status::kInvalidArgument;
    }
    for (std::size_t i = 0U; i < n; ++i) {
      sum_[i] = T(0);
    }
    n_ = n;
    round_ = round;
    samples_ = 0U;
    accepted_ = 0U;
    refused_ = 0U;
    missing_ = 0U;
    return Status::kOk;
  }

  /// Adds a client's frame: sum += samples * update. Refused, with nothing
  /// added: a frame check_frame() rejects (its status), one of another
  /// length or round (kBadFormat), any frame before begin()
  /// (kInvalidArgument).
  Status add(const std::uint8_t* frame, std::size_t bytes) noexcept {
    FrameHeader h;
    Status s = (n_ == 0U) ? Status::kInvalidArgument : check_frame(frame, bytes, &h);
    if ((s == Status::kOk) && ((h.count != n_) || (h.round != round_))) {
      s = Status::kBadFormat;
    }
    if (s == Status::kOk) {
      s = accumulate<T>(frame, bytes, static_cast<T>(h.samples), sum_, n_, nullptr);
    }
    if (s == Status::kOk) {
      samples_ += h.samples;
      ++accepted_;
    } else {
      ++refused_;
    }
    return s;
  }

  /// Counts a client that sent no frame this round (its deadline passed):
  /// the round closes with the frames that arrived.
  void miss() noexcept { ++missing_; }

  /// out[i] = sum[i] / samples() for i < n: the weighted mean of the
  /// accepted updates. kInvalidArgument (nothing written) if no sample was
  /// accepted or out is null.
  Status average(T* out) const noexcept {
    if ((out == nullptr) || (samples_ == 0U)) {
      return Status::kInvalidArgument;
    }
    const T total = static_cast<T>(samples_);
    for (std::size_t i = 0U; i < n_; ++i) {
      out[i] = sum_[i] / total;
    }
    return Status::kOk;
  }

  std::uint64_t samples() const noexcept { return samples_; }  ///< accepted clients' samples
  std::size_t accepted() const noexcept { return accepted_; }  ///< frames added this round
  std::size_t refused() const noexcept { return refused_; }    ///< frames refused this round
  std::size_t missing() const noexcept { return missing_; }    ///< clients counted by miss() this round
  std::size_t size() const noexcept { return n_; }             ///< n of begin()

 private:
  T* sum_;
  std::size_t capacity_;
  std::size_t n_ = 0U;
  std::uint32_t round_ = 0U;
  std::uint64_t samples_ = 0U;
  std::size_t accepted_ = 0U;
  std::size_t refused_ = 0U;
  std::size_t missing_ = 0U;
};

}  // namespace fleet
}  // namespace burtorch

#endif  // BURTORCH_FLEET_FEDAVG_HPP
