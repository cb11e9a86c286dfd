// SPDX-License-Identifier: Apache-2.0
/// @file
/// A gated recurrent unit (torch.nn.GRU, one layer, one direction) and
/// truncated back-propagation through time over windows of steps.
///
/// One step, with the element-wise operations of PyTorch's CPU
/// implementation in its order (the inner products sum in the tape's order;
/// rows r, z, n of the weight matrices in that order):
///
///   r  = sigmoid((W_hr h + b_hr) + (W_ir x + b_ir))
///   z  = sigmoid((W_hz h + b_hz) + (W_iz x + b_iz))
///   n  = tanh((W_in x + b_in) + (W_hn h + b_hn) * r)
///   h' = (h - n) * z + n                    (= (1 - z) * n + z * h)
///
/// recorded as two matvecs over one-run view lists (x and h are read in
/// place, never copied) and 10 H one-node ops. The parameters are PyTorch's
/// state_dict of nn.GRU(input, hidden) in order and layout: weight_ih_l0
/// [3H][I], weight_hh_l0 [3H][H], bias_ih_l0 [3H], bias_hh_l0 [3H], so a
/// checkpoint maps one to one onto torch's tensors.
///
/// Truncated BPTT (tbptt_window): a long sequence is trained in windows of
/// W steps. Each window enters the hidden state carried from the previous
/// one as H new leaves (no gradient flows past the window's start), records
/// its W steps and its loss, runs backward, copies the last hidden state's
/// values out and rewinds: the tape never holds more than one window.
#ifndef BURTORCH_NN_GRU_HPP
#define BURTORCH_NN_GRU_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/nn/init.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/source.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// How to build a GRU. Only `input` and `hidden` have no default; the rest is
/// torch.nn.GRU's: biases, and every weight and bias drawn from
/// U(-1/sqrt(hidden), 1/sqrt(hidden)) (fan_in_uniform with the gain 1/sqrt(3)
/// and the fan-in `hidden`, drawn in parameter order).
struct GruOptions {
  Index input = 0U;                                      ///< I: inputs per step
  Index hidden = 0U;                                     ///< H: width of the hidden state
  bool bias = true;                                      ///< false: no bias_ih, bias_hh
  Init init = Init::fan_in_uniform(kGainLinearDefault);  ///< every weight and bias (fan-in `hidden`)
  const char* weight_ih_name = nullptr;                  ///< name of every weight_ih entry (Tape::param)
  const char* weight_hh_name = nullptr;                  ///< name of every weight_hh entry
  const char* bias_ih_name = nullptr;                    ///< name of every bias_ih entry
  const char* bias_hh_name = nullptr;                    ///< name of every bias_hh entry
};

/// A one-layer GRU (see the file comment). Owns no memory: it remembers where
/// its parameters start on the tape.
template <class T>
struct Gru {
  Index weight_ih = kNoIndex;  ///< first of weight_ih [3H][I] (rows r, z, n)
  Index weight_hh = kNoIndex;  ///< first of weight_hh [3H][H]
  Index bias_ih = kNoIndex;    ///< first of bias_ih [3H]; kNoIndex: no biases
  Index bias_hh = kNoIndex;    ///< first of bias_hh [3H]; kNoIndex: no biases
  Index input = 0U;            ///< I
  Index hidden = 0U;           ///< H

  /// One-node ops per step, per hidden unit: r and z pre-activations and
  /// sigmoids (4), h_n * r, its sum with the input part, tanh (3), h - n,
  /// times z, plus n (3); plus the two matvecs' 3 + 3 rows.
  static constexpr std::size_t kNodesPerUnit = 16U;
  /// Slots per step: two one-run view lists (3 each), two matvec
  /// descriptors (4 each).
  static constexpr std::size_t kSlotsPerStep = 14U;

  /// 3H (I + H) weights (+ 6H biases).
  static constexpr std::size_t parameters(const GruOptions& o) noexcept {
    const std::size_t h = o.hidden;
    return (3U * h * (static_cast<std::size_t>(o.input) + h)) + (o.bias ? (6U * h) : 0U);
  }
  /// Nodes of forward() over `steps` steps (step() records nodes(o, 1)),
  /// the weights read from a source of type Src (nn/source.hpp; the tape's
  /// own by default): each step's two matvecs add the source's head nodes
  /// (on a tape of lanes: `nodes<LaneParams<T>>(o, steps)`).
  template <class Src = TapeParams>
  static constexpr std::size_t nodes(const GruOptions& o, std::size_t steps) noexcept {
    return steps * ((kNodesPerUnit * o.hidden) + (2U * Src::kMatvecHead));
  }
  /// Argument slots of the same: two one-run view lists and two matvec
  /// descriptors of the source's size per step.
  template <class Src = TapeParams>
  static constexpr std::size_t slots(const GruOptions& /*o*/, std::size_t steps) noexcept {
    return steps * (6U + (2U * Src::kMatvecSlots));
  }
  /// Nodes of one tbptt_window of `steps` steps, up to the last hidden
  /// state: the H leaves of the carried state, then forward(). Add the
  /// head's and the loss's nodes.
  static constexpr std::size_t window_nodes(const GruOptions& o, std::size_t steps) noexcept {
    return static_cast<std::size_t>(o.hidden) + nodes(o, steps);
  }
  /// Argument slots of the same (the leaves take none).
  static constexpr std::size_t window_slots(const GruOptions& o, std::size_t steps) noexcept {
    return slots(o, steps);
  }

  /// True if both widths are non-zero and every parameter has an Index
  /// below kNoIndex (computed in 64 bits: no wrap on 32-bit targets).
  static constexpr bool addressable(const GruOptions& o) noexcept {
    const std::uint64_t rows = 3U * static_cast<std::uint64_t>(o.hidden);
    const std::uint64_t width = static_cast<std::uint64_t>(o.input) + o.hidden;
    const std::uint64_t limit = kNoIndex;
    // rows * width + 2 rows < kNoIndex, i.e. rows * (width + 2) < kNoIndex.
    return (o.input != 0U) && (o.hidden != 0U) && (rows < (limit / (width + 2U)));
  }

  /// Appends weight_ih, weight_hh, then (if o.bias) bias_ih and bias_hh,
  /// all drawn from o.init with the fan-in o.hidden. False if the tape is
  /// full or failed, or a width is 0 or so large that the parameters cannot
  /// be addressed (kInvalidArgument, nothing created); params() is then
  /// kNoView.
  bool create(Tape<T>& tape, const GruOptions& o, Rng& rng) noexcept {
    input = o.input;
    hidden = o.hidden;
    weight_ih = kNoIndex;
    weight_hh = kNoIndex;
    bias_ih = kNoIndex;
    bias_hh = kNoIndex;
    if (!addressable(o)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const std::size_t rows = 3U * static_cast<std::size_t>(o.hidden);
    const Index wi = make_params(tape, rows * o.input, o.init, o.hidden, rng, o.weight_ih_name);
    const Index wh = make_params(tape, rows * o.hidden, o.init, o.hidden, rng, o.weight_hh_name);
    const Index bi = o.bias ? make_params(tape, rows, o.init, o.hidden, rng, o.bias_ih_name) : kNoIndex;
    const Index bh = o.bias ? make_params(tape, rows, o.init, o.hidden, rng, o.bias_hh_name) : kNoIndex;
    const bool ok = (tape.status() == Status::kOk) && (wi != kNoIndex) && (wh != kNoIndex) &&
                    (!o.bias || ((bi != kNoIndex) && (bh != kNoIndex)));
    if (ok) {
      weight_ih = wi;
      weight_hh = wh;
      bias_ih = bi;
      bias_hh = bh;
    }
    return ok;
  }

  /// The parameters on the tape in torch's state_dict order: weight_ih,
  /// weight_hh, bias_ih, bias_hh (kNoView before a successful create()).
  View params() const noexcept {
    const Index rows = 3U * hidden;
    const Index count = (rows * (input + hidden)) + ((bias_ih != kNoIndex) ? (2U * rows) : 0U);
    return (weight_ih != kNoIndex) ? View{weight_ih, count} : kNoView;
  }

  /// Records one step from input x (I nodes) and hidden state h (H nodes);
  /// returns h' (H consecutive nodes). kNoView on error, with nothing
  /// recorded (no node, no slot): a width other than I or H, or a GRU not
  /// created, is kInvalidArgument; a view, or the parameters, not (or no
  /// longer) recorded on the tape (a GRU created on another tape)
  /// kInvalidHandle; a tape too small kCapacityExceeded, what the step
  /// recorded before it found out discarded (all_or_nothing).
  View step(Tape<T>& tape, View x, View h) const noexcept { return step(tape, TapeParams{}, x, h); }

  /// The same with the weights and biases read from a source
  /// (nn/source.hpp), e.g. on a tape of N lanes (one sequence per lane) this
  /// GRU's parameters on their own tape, shared through LaneParams p
  /// (nn::lane_params): each matvec reads them once per N sequences and
  /// sums their gradients over the lanes; the gates as on a scalar tape,
  /// lane by lane. Errors as above; a source that does not hold the
  /// parameters is kInvalidArgument, also before anything is recorded.
  template <class U, class Src>
  View step(Tape<U>& tape, const Src& src, View x, View h) const noexcept {
    if (!accepts(tape, src, x, h)) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const Index rows = 3U * hidden;
      const ViewList xs = burtorch::view_list(tape, &x, 1U);
      const ViewList hs = burtorch::view_list(tape, &h, 1U);
      const View gi = source_matvec(tape, src, weight_ih, rows, xs, bias_ih);  // W_i* x + b_i*
      const View gh = source_matvec(tape, src, weight_hh, rows, hs, bias_hh);  // W_h* h + b_h*
      return gates(tape, gi, gh, h);
    });
  }

  /// True if step() can record a step from x and h with the weights read
  /// from src: the checks it makes before recording anything, the error
  /// (see step()) reported on the tape otherwise.
  template <class U, class Src>
  bool accepts(Tape<U>& tape, const Src& src, View x, View h) const noexcept {
    const View v = params();
    Status error = Status::kOk;
    if ((weight_ih == kNoIndex) || (x.count != input) || (h.count != hidden) || !source_covers(src, v.first, v.count)) {
      error = Status::kInvalidArgument;
    } else if (!is_recorded(tape, x) || !is_recorded(tape, h) || !source_recorded(tape, src, v.first, v.count)) {
      error = Status::kInvalidHandle;
    } else {
      // a step can be recorded
    }
    return tape.report(error) == Status::kOk;
  }

  /// Records `steps` steps from h0: hs[t] receives the hidden state after
  /// xs[t]. False on error, with nothing recorded (hs[] all kNoView). Checked before anything
  /// is recorded: no steps, null arrays or a width other than I or H
  /// (kInvalidArgument), a view or the parameters not recorded on the tape
  /// (kInvalidHandle). A full tape is kCapacityExceeded (the tape's
  /// status), the steps recorded before it discarded.
  bool forward(Tape<T>& tape, const View* xs, Index steps, View h0, View* hs) const noexcept {
    bool ok = (weight_ih != kNoIndex) && (xs != nullptr) && (hs != nullptr) && (steps != 0U) && (h0.count == hidden);
    bool recorded = ok && is_recorded(tape, h0) && source_recorded(tape, TapeParams{}, weight_ih, params().count);
    for (Index t = 0U; ok && (t < steps); ++t) {
      ok = xs[t].count == input;
      recorded = recorded && is_recorded(tape, xs[t]);
    }
    if (!ok || !recorded) {
      static_cast<void>(tape.report(ok ? Status::kInvalidHandle : Status::kInvalidArgument));
      return false;
    }
    const bool done = all_or_nothing(tape, false, [&]() noexcept {
      View h = h0;
      for (Index t = 0U; t < steps; ++t) {
        h = step(tape, xs[t], h);
        hs[t] = h;
      }
      return tape.status() == Status::kOk;
    });
    for (Index t = 0U; !done && (t < steps); ++t) {
      hs[t] = kNoView;  // the steps are discarded
    }
    return done;
  }

  /// The step's element-wise part (the file comment's order) from the two
  /// matvecs' rows gi, gh and the state h: returns h' (kNoView if a matvec
  /// failed: its error is on the tape).
  template <class U>
  View gates(Tape<U>& tape, View gi, View gh, View h) const noexcept {
    const Index n = hidden;
    if ((gi.count == 0U) || (gh.count == 0U)) {
      return kNoView;
    }
    // r and z together: rows 0 .. 2H of both.
    const View pre = burtorch::record_view(tape, 2U * n, [&](Index k) noexcept {
      return node(tape, gh.first + k) + node(tape, gi.first + k);
    });
    const View rz = burtorch::record_view(tape, 2U * n, [&](Index k) noexcept { return sigmoid(node(tape, pre.first + k)); });
    const View hr = burtorch::record_view(tape, n, [&](Index k) noexcept {
      return node(tape, gh.first + (2U * n) + k) * node(tape, rz.first + k);
    });
    const View pre_n = burtorch::record_view(tape, n, [&](Index k) noexcept {
      return node(tape, gi.first + (2U * n) + k) + node(tape, hr.first + k);
    });
    const View cand = burtorch::record_view(tape, n, [&](Index k) noexcept { return tanh(node(tape, pre_n.first + k)); });
    const View diff = burtorch::record_view(tape, n, [&](Index k) noexcept {
      return node(tape, h.first + k) - node(tape, cand.first + k);
    });
    const View gated = burtorch::record_view(tape, n, [&](Index k) noexcept {
      return node(tape, diff.first + k) * node(tape, rz.first + n + k);
    });
    return burtorch::record_view(tape, n, [&](Index k) noexcept {
      return node(tape, gated.first + k) + node(tape, cand.first + k);
    });
  }
};

/// One window of truncated back-propagation through time. Zeroes the
/// gradients of `params` (as serial_batch does), takes a mark, records the
/// carried hidden state `carry[0..width)` as `width` new leaves h0, calls
/// `window_loss(tape, h0, &h_last)`, which records the window's steps from
/// h0 and its loss, sets h_last to the last hidden state (`width` nodes) and
/// returns the loss; then runs backward from the loss, copies h_last's values
/// into `carry` and rewinds to the mark.
///
/// Afterwards the gradients of `params` are the window's alone (nothing
/// flows into earlier windows: their state entered as leaves), the tape is
/// back at the mark (its size is what it was before the call) and `carry`
/// holds the state to start the next window from. Step the optimizer next.
/// Returns the loss; NaN on error, with `carry` unchanged and the tape
/// rewound; the tape's status tells why: kInvalidArgument for `params` empty
/// or not on the tape, `carry` null or `width` 0 (found before anything is
/// recorded or called) or an h_last of another width; kCapacityExceeded for
/// a tape too small for the window; whatever the window's ops reported.
template <class T, class WindowLoss>
T tbptt_window(Tape<T>& tape, View params, T* carry, Index width, WindowLoss&& window_loss) noexcept {
  constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();
  if (BURTORCH_UNLIKELY(!is_recorded(tape, params) || (carry == nullptr) || (width == 0U))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNaN;
  }
  tape.zero_grad(params.first, params.count);
  const Mark start = tape.mark();
  const View h0 = burtorch::record_view(tape, width, [&](Index k) noexcept { return tape.leaf(carry[k]); });
  T result = kNaN;
  if (h0.count == width) {
    View h_last = kNoView;
    const Value<T> loss = window_loss(tape, h0, &h_last);
    if ((tape.status() == Status::kOk) && ((h_last.count != width) || !is_recorded(tape, h_last))) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
    }
    if ((tape.status() == Status::kOk) && (tape.backward(loss) == Status::kOk)) {
      const T* values = tape.values() + h_last.first;
      for (Index k = 0U; k < width; ++k) {
        carry[k] = values[k];
      }
      result = loss.value();
    }
  }
  static_cast<void>(tape.rewind(start));
  return result;
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_GRU_HPP
