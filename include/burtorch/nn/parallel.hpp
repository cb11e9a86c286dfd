// SPDX-License-Identifier: Apache-2.0
/// @file
/// Data-parallel training of any model: each member of a job (an MPI rank,
/// a board) trains on its slice of the same global batch, the gradients
/// and the loss are averaged over the members through a fleet::Reducer
/// (the transport, from the caller's port: `<burtorch/port/mpi.hpp>`), and
/// every member takes the same optimizer step, so the parameters stay the
/// same on every member. Heap-free and transport-free: the caller owns the
/// array the reduction runs on (buffer_values(P) values).
///
///     fleet::Reducer<double> r = port::mpi::reducer(&scratch);   // or single_reducer<double>()
///     double buffer[nn::DataParallel<double>::buffer_values(P)];
///     nn::DataParallel<double> dp(r, batch, buffer, sizeof buffer / sizeof *buffer);
///     for each step:
///       draw the global batch (the same on every member), then
///       loss = dp.step(tape, model.params(), [&](bt::Tape<double>& t, std::size_t i) {
///         return model.loss(t, sample[i]);  // i: an index into the global batch
///       }, optimizer);
///
/// The result against one process training on the whole batch: the same
/// real-number mean, rounded in another grouping (docs/fleet.md gives the
/// bound); with one member, bit for bit the serial batch and step.
#ifndef BURTORCH_NN_PARALLEL_HPP
#define BURTORCH_NN_PARALLEL_HPP

#include <cstddef>
#include <limits>

#include "burtorch/fleet/transport.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/train.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {
namespace nn {

/// Samples [first, first + count) of a global batch.
struct Slice {
  std::size_t first;  ///< the slice's first sample in the global batch
  std::size_t count;  ///< its samples (0 for a member beyond a small batch)
};

/// Member `rank`'s slice of a global batch of `batch` samples over `ranks`
/// members: [rank B / N, (rank + 1) B / N), so the slices cover the batch
/// once, in order, and differ in size by at most one sample. {0, 0} for
/// ranks == 0 or rank >= ranks.
constexpr Slice batch_slice(std::size_t batch, std::size_t rank, std::size_t ranks) noexcept {
  if ((ranks == 0U) || (rank >= ranks)) {
    return Slice{0U, 0U};
  }
  const std::size_t first = (rank * batch) / ranks;
  const std::size_t end = ((rank + 1U) * batch) / ranks;
  return Slice{first, end - first};
}

/// One member of a data-parallel job over a global batch of `batch`
/// samples.
template <class T>
class DataParallel {
 public:
  /// Values of the caller's buffer for a model of `parameters` parameters:
  /// their gradients and the loss.
  static constexpr std::size_t buffer_values(std::size_t parameters) noexcept { return parameters + 1U; }

  /// Keeps the reducer (its callbacks and context must outlive this
  /// object) and the caller's buffer[0, capacity).
  DataParallel(const fleet::Reducer<T>& reducer, std::size_t batch, T* buffer, std::size_t capacity) noexcept
      : reducer_(reducer), batch_(batch), buffer_(buffer), capacity_(capacity) {}

  /// This member's slice of the global batch.
  Slice slice() const noexcept { return batch_slice(batch_, reducer_.rank, reducer_.ranks); }

  /// After this member's slice ran as a batch (the gradients of `params`
  /// hold the slice's mean, *loss its mean loss: serial_batch, lane_batch,
  /// or a loop of the caller's): replaces both by the global batch's mean,
  /// the same bits on every member. A member's share is weighted by its
  /// slice's size when the batch does not split evenly (with even slices
  /// nothing is scaled). Every member calls it at the same point with the
  /// same params.count. kInvalidArgument (before any transfer, nothing
  /// changed) for a params not recorded on the tape, a null loss or
  /// reducer, a batch of 0, or a rank outside the job; kCapacityExceeded
  /// for a buffer smaller than buffer_values(params.count); the reducer's
  /// error as is (gradients and loss untouched).
  Status average(Tape<T>& tape, View params, T* loss) noexcept {
    const Status ready = check(tape, params, loss);
    return (ready != Status::kOk) ? ready : reduce(tape, params, loss, false);
  }

  /// One data-parallel step: this member's slice as a serial batch
  /// (`sample_loss(tape, i)` records the loss of sample i of the global
  /// batch, i in slice()), average(), then opt.step() on every member.
  /// Returns the global batch's mean loss. A non-finite mean loss (a
  /// member that diverged or failed) takes no step on any member and is
  /// returned as is. NaN on this member's error, its reason on the tape:
  /// the arguments (as average(), recorded before anything runs), a sample
  /// that failed (the member still joins the reduction, with NaN, so no
  /// member waits for it and none steps), the reduction's error, or the
  /// optimizer's refusal.
  template <class SampleLoss>
  T step(Tape<T>& tape, View params, SampleLoss&& sample_loss, Optimizer<T>& opt) noexcept {
    T loss = T(0);
    const Status ready = check(tape, params, &loss);
    if (ready != Status::kOk) {
      static_cast<void>(tape.report(ready));
      return std::numeric_limits<T>::quiet_NaN();
    }
    const Slice s = slice();
    bool local = true;
    if (s.count == 0U) {
      tape.zero_grad(params.first, params.count);  // a member without samples adds zeros
    } else {
      loss = serial_batch(tape, params, s.count,
                          [&sample_loss, &s](Tape<T>& t, std::size_t i) { return sample_loss(t, s.first + i); });
      local = (tape.status() == Status::kOk);
    }
    const Status reduced = reduce(tape, params, &loss, !local);
    if ((reduced != Status::kOk) || !local) {
      static_cast<void>(tape.report(reduced));  // a no-op for kOk: the sample's reason stays
      return std::numeric_limits<T>::quiet_NaN();
    }
    if (!ScalarOps<T>::finite(loss)) {
      return loss;
    }
    const Status stepped = opt.step(tape, params);
    if (stepped != Status::kOk) {
      static_cast<void>(tape.report(stepped));
      return std::numeric_limits<T>::quiet_NaN();
    }
    return loss;
  }

 private:
  Status check(const Tape<T>& tape, View params, const T* loss) const noexcept {
    if ((loss == nullptr) || (reducer_.average == nullptr) || (batch_ == 0U) || (reducer_.ranks == 0U) ||
        (reducer_.rank >= reducer_.ranks) || !is_recorded(tape, params)) {
      return Status::kInvalidArgument;
    }
    return ((buffer_ == nullptr) || (capacity_ < buffer_values(params.count))) ? Status::kCapacityExceeded
                                                                               : Status::kOk;
  }

  // The gradients and the loss (NaN throughout if `poisoned`), each scaled
  // by this member's share, through the reducer and back.
  Status reduce(Tape<T>& tape, View params, T* loss, bool poisoned) noexcept {
    const std::size_t n = params.count;
    T* grads = tape.grads() + params.first;
    const Slice s = slice();
    const std::size_t share = s.count * reducer_.ranks;
    const bool scaled = (share != batch_);
    const T weight = static_cast<T>(share) / static_cast<T>(batch_);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (std::size_t i = 0U; i < n; ++i) {
      buffer_[i] = poisoned ? nan : (scaled ? (grads[i] * weight) : grads[i]);
    }
    buffer_[n] = poisoned ? nan : (scaled ? (*loss * weight) : *loss);
    const Status s_avg = reducer_.average(reducer_.context, buffer_, n + 1U);
    if (s_avg != Status::kOk) {
      return s_avg;
    }
    for (std::size_t i = 0U; i < n; ++i) {
      grads[i] = buffer_[i];
    }
    *loss = buffer_[n];
    return Status::kOk;
  }

  fleet::Reducer<T> reducer_;
  std::size_t batch_;
  T* buffer_;
  std::size_t capacity_;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_PARALLEL_HPP
