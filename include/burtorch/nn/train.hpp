// SPDX-License-Identifier: Apache-2.0
/// @file
/// The training loops. A serial batch (serial_batch) records one sample's
/// graph at a time after the parameters, backward, rewind; a lane batch
/// (lane_batch, lane_batch_sweeps) records N samples per sweep on a tape of
/// N lanes whose layers read the parameters of an ordinary tape as shared
/// scalars (lane_params). Each returns the batch's mean loss, with or
/// without the optimizer's step after it.
#ifndef BURTORCH_NN_TRAIN_HPP
#define BURTORCH_NN_TRAIN_HPP

#include <cstddef>
#include <limits>

#include "burtorch/config.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

namespace detail {
/// The samples of a serial batch: zeroes the gradients of `params`, then per
/// sample records its loss, runs backward and rewinds; returns the sum of
/// the losses in *total (the gradients hold the sum of theirs); false on
/// error (see serial_batch).
template <class T, class SampleLoss>
bool batch_sum(Tape<T>& tape, View params, std::size_t count, SampleLoss& sample_loss, T* total) noexcept {
  if (BURTORCH_UNLIKELY(!is_recorded(tape, params))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  tape.zero_grad(params.first, params.count);
  const Mark start = tape.mark();
  T sum = T(0);
  for (std::size_t i = 0U; i < count; ++i) {
    const Value<T> loss = sample_loss(tape, i);
    if ((tape.status() != Status::kOk) || (tape.backward(loss) != Status::kOk)) {
      static_cast<void>(tape.rewind(start));
      return false;
    }
    sum += loss.value();
    static_cast<void>(tape.rewind(start));
  }
  *total = sum;
  return true;
}
/// A serial batch and `step(tape, params, 1/count)`: the mean loss, or NaN
/// (see serial_batch with an optimizer).
template <class T, class SampleLoss, class Step>
T batch_step(Tape<T>& tape, View params, std::size_t count, SampleLoss& sample_loss, Step step) noexcept {
  if (count == 0U) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return std::numeric_limits<T>::quiet_NaN();
  }
  T total = T(0);
  if (!batch_sum(tape, params, count, sample_loss, &total)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const Status stepped = step(tape, params, T(1) / static_cast<T>(count));
  if (stepped != Status::kOk) {
    static_cast<void>(tape.report(stepped));
    return std::numeric_limits<T>::quiet_NaN();
  }
  return total / static_cast<T>(count);
}
}  // namespace detail

/// A serial batch: for each of `count` samples, record its loss after the
/// parameters, backward, rewind; the gradients of `params` (model.params())
/// accumulate and are divided by `count` (the gradient of the mean loss).
/// Peak memory is one sample's, whatever the batch size.
/// `sample_loss(tape, i)` records the loss of sample i and returns it.
/// Returns the mean loss; NaN on error, the tape's status tells why (a
/// `params` that is empty or not recorded on the tape: kInvalidArgument,
/// recorded before any sample runs).
template <class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss) noexcept {
  T total = T(0);
  if (count == 0U) {  // no mean of no samples: refused before the gradients are touched
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (!detail::batch_sum(tape, params, count, sample_loss, &total)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  scale_gradients(tape.grads() + params.first, params.count, T(1) / static_cast<T>(count));
  return total / static_cast<T>(count);
}

/// serial_batch() and the optimizer step after it, the batch's 1/count
/// folded into the step (Optimizer::step with a gradient scale): the
/// parameters and the optimizer's state end bitwise as after serial_batch()
/// then opt.step(tape, params), with one pass over the gradients fewer; the
/// gradients are left as the batch's sums (not divided by count). The rule
/// is chosen at run time (every rule's code is compiled in); the overload
/// with a template argument, serial_batch<nn::OptimizerKind::kSgd>(...),
/// compiles in only that rule's. Returns the mean loss; NaN if a sample
/// failed (the tape's status tells why; nothing updated) or the step was
/// refused (its reason is recorded on the tape with report(); nothing
/// updated). count == 0 is refused with kInvalidArgument.
template <class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss, Optimizer<T>& opt) noexcept {
  return detail::batch_step(tape, params, count, sample_loss,
                            [&opt](Tape<T>& t, View p, T scale) noexcept { return opt.step(t, p, scale); });
}
/// The same with the update rule chosen at compile time,
/// serial_batch<nn::OptimizerKind::kSgd>(tape, params, count, sample_loss,
/// opt): only rule K's code is compiled in (Optimizer::step<K>); an
/// optimizer configured with another rule refuses the step (NaN,
/// kInvalidArgument on the tape, nothing updated).
template <OptimizerKind K, class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss, Optimizer<T>& opt) noexcept {
  return detail::batch_step(tape, params, count, sample_loss, [&opt](Tape<T>& t, View p, T scale) noexcept {
    return opt.template step<K>(t, p, scale);
  });
}

/// The parameters of `tape` (every node it holds: the parameter region
/// first) as shared parameters of a tape of lanes.
template <class T>
inline LaneParams<T> lane_params(Tape<T>& tape) noexcept {
  LaneParams<T> p;
  p.values = tape.values();
  p.grads = tape.grads();
  p.count = static_cast<Index>(tape.size());
  return p;
}

namespace detail {
/// The sweeps of a lane batch: zeroes the gradients of `params`, then per
/// sweep of up to N samples calls sweep(lanes, p, first, active, mask,
/// &losses), which records the sweep, runs its backward (the mask's ones
/// and zeros on the lanes past the batch's end) and leaves lane l's loss in
/// losses.lane[l], then rewinds; *total = the lanes' losses added in sample
/// order (the gradients hold the sum of the samples'); false on error (see
/// lane_batch).
template <class T, std::size_t N, class Sweep>
bool lane_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep& sweep,
                 T* total) noexcept {
  using U = Lanes<T, N>;
  if (BURTORCH_UNLIKELY((count == 0U) || !is_recorded(tape, params))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  tape.zero_grad(params.first, params.count);
  const LaneParams<T> shared = lane_params(tape);
  const Mark start = lanes.mark();
  T sum = T(0);
  for (std::size_t first = 0U; first < count; first += N) {
    const std::size_t active = ((count - first) < N) ? (count - first) : N;
    U mask(T(0));
    for (std::size_t l = 0U; l < active; ++l) {
      mask.lane[l] = T(1);
    }
    U losses(T(0));
    const bool swept = sweep(lanes, shared, first, active, mask, &losses) && (lanes.status() == Status::kOk);
    static_cast<void>(lanes.rewind(start));
    if (!swept) {
      return false;
    }
    for (std::size_t l = 0U; l < active; ++l) {
      sum += losses.lane[l];
    }
  }
  *total = sum;
  return true;
}
/// lane_sweeps with sweeps that record sample_loss's node, times the mask,
/// and run backward from it (nn::lane_batch).
template <class T, std::size_t N, class SampleLoss>
bool lane_sum(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, SampleLoss& sample_loss,
              T* total) noexcept {
  using U = Lanes<T, N>;
  auto sweep = [&sample_loss](Tape<U>& t, const LaneParams<T>& p, std::size_t first, std::size_t active,
                              const U& mask, U* losses) noexcept {
    const Value<U> loss = sample_loss(t, p, first, active);
    const Value<U> root = loss * mask;
    if ((t.status() != Status::kOk) || (t.backward(root) != Status::kOk)) {
      return false;
    }
    *losses = loss.value();
    return true;
  };
  return lane_sweeps(tape, params, lanes, count, sweep, total);
}
/// The mean loss after a lane batch's sums, its gradients divided by count
/// (lane_batch, lane_batch_sweeps without an optimizer).
template <class T>
T lane_mean(Tape<T>& tape, View params, std::size_t count, bool summed, T total) noexcept {
  if (!summed) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  scale_gradients(tape.grads() + params.first, params.count, T(1) / static_cast<T>(count));
  return total / static_cast<T>(count);
}
/// The mean loss and the step after a lane batch's sums (lane_batch with
/// an optimizer, lane_batch_sweeps).
template <class T>
T lane_step(Tape<T>& tape, View params, std::size_t count, bool summed, T total, Optimizer<T>& opt) noexcept {
  if (!summed) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const Status stepped = opt.step(tape, params, T(1) / static_cast<T>(count));
  if (stepped != Status::kOk) {
    static_cast<void>(tape.report(stepped));
    return std::numeric_limits<T>::quiet_NaN();
  }
  return total / static_cast<T>(count);
}
}  // namespace detail

/// A lane batch: serial_batch with N samples per sweep. The parameters stay
/// on `tape` (one scalar each); `lanes` is a tape of N lanes that records
/// one sweep's graph at a time, lane l computing sample first + l. For each
/// sweep of up to N samples (the last one may be partial), sample_loss(
/// lanes, p, first, active) records the losses of samples first .. first +
/// active - 1 in lanes 0 .. active - 1 (lanes from `active` on must compute
/// some valid sample, e.g. a copy of lane 0: their values are discarded and
/// their gradient is zero) and returns that node; the sweep's root is the
/// losses times a mask of ones and zeros (one node), then backward, which
/// adds every lane's parameter gradients to `tape`, and a rewind of
/// `lanes`. Then the gradients of `params` are divided by `count`, as
/// serial_batch does. Peak memory: the parameters, their gradients and N
/// samples' graph. Returns the mean loss (the lanes' losses added in sample
/// order); NaN on error, the status of the tape at fault says why (count 0,
/// params empty or not on `tape`: kInvalidArgument on `tape`, before any
/// sample). The result equals serial_batch's up to the order of
/// floating-point sums (docs/training.md, "Lane batches").
template <class T, std::size_t N, class SampleLoss>
T lane_batch(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count,
             SampleLoss&& sample_loss) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sum(tape, params, lanes, count, sample_loss, &total);
  return detail::lane_mean(tape, params, count, summed, total);
}

/// lane_batch() and the optimizer step after it, the batch's 1/count folded
/// into the step as serial_batch(..., opt) does it (the gradients are left
/// as the batch's sums). Returns the mean loss; NaN if a sweep failed (the
/// status of the tape at fault tells why; nothing updated) or the step was
/// refused (its reason is recorded on `tape`; nothing updated).
template <class T, std::size_t N, class SampleLoss>
T lane_batch(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, SampleLoss&& sample_loss,
             Optimizer<T>& opt) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sum(tape, params, lanes, count, sample_loss, &total);
  return detail::lane_step(tape, params, count, summed, total, opt);
}

/// A lane batch whose sweeps run their own backward, e.g. gradient
/// checkpointing (Gpt::lane_sweep: half a block's graph in memory instead of
/// every block's). For each sweep of up to N samples, sweep(lanes, p,
/// first, active, mask, &losses) records samples first .. first + active
/// - 1 in lanes 0 .. active - 1 (the other lanes compute some valid sample),
/// adds the gradients of the lanes' losses times `mask` (ones on the active
/// lanes, zeros after) to the shared parameters p.grads, leaves lane l's
/// loss in losses->lane[l] and returns true, or false on error; the lane
/// tape is then rewound. Then the optimizer's step with the batch's 1/count
/// folded in, as lane_batch(..., opt). Returns the mean loss; NaN on error
/// (the status of the tape at fault says why; nothing updated).
template <class T, std::size_t N, class Sweep>
T lane_batch_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep&& sweep,
                    Optimizer<T>& opt) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sweeps(tape, params, lanes, count, sweep, &total);
  return detail::lane_step(tape, params, count, summed, total, opt);
}
/// The same without the step: the gradients of `params` end as the batch's
/// mean (as lane_batch without an optimizer). Returns the mean loss; NaN on
/// error.
template <class T, std::size_t N, class Sweep>
T lane_batch_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep&& sweep) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sweeps(tape, params, lanes, count, sweep, &total);
  return detail::lane_mean(tape, params, count, summed, total);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_TRAIN_HPP
