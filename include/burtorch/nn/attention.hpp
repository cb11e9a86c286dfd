// SPDX-License-Identifier: Apache-2.0
/// @file
/// Causal multi-head self-attention: CausalSelfAttention, its options, the
/// limits that size its local arrays, and its form on a tape of lanes.
#ifndef BURTORCH_NN_ATTENTION_HPP
#define BURTORCH_NN_ATTENTION_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// Attention limits (they size local arrays, so they bound stack use):
/// positions in a sequence, heads, and the width of one head.
/// @{
constexpr std::size_t kMaxSteps = 32U;
constexpr std::size_t kMaxHeads = 16U;
constexpr std::size_t kMaxHeadSize = 64U;
/// @}

/// How to build a CausalSelfAttention. Only `width` has no default; the
/// projections draw from torch.nn.Linear's U(-1/sqrt(width), 1/sqrt(width))
/// and the output projection's bias is 0 (as torch.nn.MultiheadAttention's).
struct AttentionOptions {
  Index width = 0U;                                             ///< d: model width
  Index heads = 1U;                                             ///< h: heads (must divide d)
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< Wq, Wk, Wv (fan-in d)
  Init proj_init = Init::fan_in_uniform(kGainLinearDefault);    ///< the output projection's weights
  Init proj_bias_init = Init::zeros();                          ///< the output projection's bias
  const char* q_name = nullptr;                                 ///< names (Tape::param) of Wq,
  const char* k_name = nullptr;                                 ///< Wk,
  const char* v_name = nullptr;                                 ///< Wv,
  const char* proj_weight_name = nullptr;                       ///< the projection's weights
  const char* proj_bias_name = nullptr;                         ///< and its bias
};

/// Causal multi-head self-attention over a sequence of up to kMaxSteps
/// positions: per head h, out_t = sum_{j<=t} softmax_j(q_t . k_j / sqrt(hs)) v_j,
/// the heads' outputs (each a view of hs nodes) feed the output projection
/// as one view list (the split-tensor trick: no concatenation).
/// Wq, Wk, Wv are [width][width] without bias (row h*hs + d is dimension d of
/// head h); the projection is a Linear with bias.
template <class T>
struct CausalSelfAttention {
  Index wq = kNoIndex;  ///< first parameter of Wq [width][width]
  Index wk = kNoIndex;  ///< first parameter of Wk
  Index wv = kNoIndex;  ///< first parameter of Wv
  Linear<T> proj;       ///< output projection (with bias)
  Index width = 0U;     ///< d
  Index heads = 0U;     ///< h (divides d)

  /// Wq, Wk, Wv and the projection: 4 d^2 + d.
  static constexpr std::size_t parameters(const AttentionOptions& o) noexcept {
    return (4U * static_cast<std::size_t>(o.width) * o.width) + o.width;
  }
  /// Nodes of forward() over `steps` positions.
  static constexpr std::size_t nodes(const AttentionOptions& o, std::size_t steps) noexcept {
    // q, k, v, scaled q and projection: 5d per position; per position t and
    // head: t+1 scores, shifts and exps, one sum, hs products and quotients.
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    return (5U * d * steps) + (h * ((3U * steps * (steps + 1U)) / 2U)) + (h * steps * (1U + (2U * (d / h))));
  }
  /// Argument slots of forward() over `steps` positions.
  static constexpr std::size_t slots(const AttentionOptions& o, std::size_t steps) noexcept {
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    return (3U * steps)                                         // one-run list per input position
           + (8U * steps)                                       // q and k: a matvec each (4 slots) per position
           + (3U * d * steps)                                   // v: an inner product per output
           + (constant_slots<T>() * d * steps)                  // q * scale
           + (h * ((3U * steps * (steps + 1U)) / 2U))           // scores
           + (h * steps * 3U * (d / h))                         // weighted values
           + (steps * (1U + (2U * h)))                          // heads as a view list
           + (4U * steps);                                      // projection: a matvec per position
  }

  /// Appends Wq, Wk, Wv (from o.weight_init), then the projection's weights
  /// (o.proj_init) and bias (o.proj_bias_init). False if the tape is full or
  /// failed, or o.heads does not divide o.width (kInvalidArgument recorded);
  /// params() is then kNoView.
  bool create(Tape<T>& tape, const AttentionOptions& o, Rng& rng) noexcept {
    width = o.width;
    heads = o.heads;
    wq = kNoIndex;
    if ((o.heads == 0U) || ((o.width % o.heads) != 0U)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const std::size_t dd = static_cast<std::size_t>(o.width) * o.width;
    const Index q = make_params(tape, dd, o.weight_init, o.width, rng, o.q_name);
    wk = make_params(tape, dd, o.weight_init, o.width, rng, o.k_name);
    wv = make_params(tape, dd, o.weight_init, o.width, rng, o.v_name);
    LinearOptions p;
    p.in = o.width;
    p.out = o.width;
    p.weight_init = o.proj_init;
    p.bias_init = o.proj_bias_init;
    p.weight_name = o.proj_weight_name;
    p.bias_name = o.proj_bias_name;
    const bool ok = proj.create(tape, p, rng) && (q != kNoIndex) && (wk != kNoIndex) && (wv != kNoIndex);
    wq = ok ? q : kNoIndex;
    return ok;
  }

  /// Wq, Wk, Wv and the projection on the tape (kNoView before a successful
  /// create()).
  View params() const noexcept {
    return (wq != kNoIndex) ? View{wq, (4U * width * width) + width} : kNoView;
  }

  /// The head size of a forward pass over `steps` positions; 0 after
  /// kInvalidArgument on the tape if create() never ran (or failed: heads 0,
  /// no division by it) or steps or the sizes are out of range.
  template <class S>
  Index head_size(Tape<S>& tape, Index steps) const noexcept {
    const Index hs = (heads != 0U) ? (width / heads) : 0U;
    if ((heads == 0U) || (hs == 0U) || (steps == 0U) || (steps > kMaxSteps) || (hs > kMaxHeadSize) ||
        (heads > kMaxHeads)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return 0U;
    }
    return hs;
  }

  /// The head size of a forward pass over x[0..steps), checked before
  /// anything is recorded: head_size()'s checks, arrays that are there and
  /// every x[t] `width` nodes wide (kInvalidArgument), every x[t] recorded
  /// on the tape (kInvalidHandle). 0 on error.
  template <class S>
  Index accepts(Tape<S>& tape, const View* x, Index steps, const View* out) const noexcept {
    const Index hs = head_size(tape, steps);
    if ((hs == 0U) || (x == nullptr) || (out == nullptr)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return 0U;
    }
    Status error = Status::kOk;
    for (Index t = 0U; t < steps; ++t) {
      if (x[t].count != width) {
        error = Status::kInvalidArgument;
      } else if ((error == Status::kOk) && !is_recorded(tape, x[t])) {
        error = Status::kInvalidHandle;
      } else {
        // this position is good
      }
    }
    static_cast<void>(tape.report(error));
    return (error == Status::kOk) ? hs : 0U;
  }

  /// x[0..steps): views of `width` nodes; out[0..steps) receives the outputs.
  /// False on error, with nothing recorded (no node, no slot) and out[]
  /// kNoView: refused before recording as accepts() says, or with
  /// kInvalidHandle for parameters not recorded on the tape (created on
  /// another tape); a tape too small is kCapacityExceeded, what the pass
  /// recorded before it found out discarded (all_or_nothing).
  bool forward(Tape<T>& tape, const View* x, Index steps, View* out) const noexcept {
    const Index hs = accepts(tape, x, steps, out);
    if (hs == 0U) {
      return false;
    }
    if (!is_recorded(tape, params())) {  // created on another tape
      static_cast<void>(tape.report(Status::kInvalidHandle));
      return false;
    }
    return settle(out, steps, all_or_nothing(tape, false, [&]() noexcept { return record(tape, x, steps, out, hs); }));
  }

  /// Nodes of the lane forward() over `steps` positions: forward()'s, plus
  /// the head node of each position's four layers (lane_matvec).
  static constexpr std::size_t lane_nodes(const AttentionOptions& o, std::size_t steps) noexcept {
    return nodes(o, steps) + (4U * steps);
  }
  /// Argument slots of the lane forward() over `steps` positions on a tape
  /// of N lanes of T.
  template <std::size_t N>
  static constexpr std::size_t lane_slots(const AttentionOptions& o, std::size_t steps) noexcept {
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    const std::size_t hs = (h != 0U) ? (d / h) : 0U;
    const std::size_t pairs = (steps * (steps + 1U)) / 2U;
    return (3U * steps)                                         // one-run list per input position
           + (static_cast<std::size_t>(4U * burtorch::detail::kMsSlots) * steps)  // q, k, v and the projection per position
           + (constant_slots<Lanes<T, N>>() * d * steps)        // q * scale
           + (h * 3U * pairs)                                   // scores
           + (h * hs * ((3U * steps) + pairs - 1U))             // weighted values: descriptor + list of the values
           + (steps * (1U + (2U * h)));                         // heads as a view list
  }

  /// The same on a tape of N lanes (one sequence per lane), the weights
  /// shared through p (nn::lane_params). q, k and v are one shared-weight
  /// layer per position; the weighted values are inner products of the
  /// softmax weights with a list of the positions' values. Refused as
  /// forward() above; weights p does not hold are kInvalidArgument.
  template <std::size_t N>
  bool forward(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const View* x, Index steps, View* out) const noexcept {
    const Index hs = accepts(tape, x, steps, out);
    if (hs == 0U) {
      return false;
    }
    const View v = params();
    if (!burtorch::detail::params_cover(p, v.first, v.count)) {  // before the view lists are recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    return settle(out, steps,
                  all_or_nothing(tape, false, [&]() noexcept { return record(tape, p, x, steps, out, hs); }));
  }

 private:
  /// A forward pass's result: out[0..steps) kNoView if it failed (its
  /// recording was discarded).
  static bool settle(View* out, Index steps, bool done) noexcept {
    for (Index t = 0U; !done && (t < steps); ++t) {
      out[t] = kNoView;
    }
    return done;
  }

  /// forward()'s recording, its arguments checked (hs: the head size).
  // NOLINTNEXTLINE(readability-function-cognitive-complexity): attention's loops, kept in one place
  bool record(Tape<T>& tape, const View* x, Index steps, View* out, Index hs) const noexcept {
    ViewList lists[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      lists[t] = burtorch::view_list(tape, &x[t], 1U);
    }
    // q[t] = view q_first + t*width, likewise k; v is stored transposed so
    // that dimension d of head h over positions is one run: v_first +
    // (h*hs + d)*steps + t. (So v is one inner product per output, not a
    // matvec per position: a matvec's rows are consecutive nodes.)
    // Each matvec's rows follow the previous one's: position t's q starts
    // at q_raw.first + t * width.
    View q_raw = kNoView;
    for (Index t = 0U; t < steps; ++t) {
      const View q = burtorch::matvec(tape, wq, width, lists[t], kNoIndex);
      q_raw = (t == 0U) ? q : q_raw;
    }
    View k_all = kNoView;
    for (Index t = 0U; t < steps; ++t) {
      const View k = burtorch::matvec(tape, wk, width, lists[t], kNoIndex);
      k_all = (t == 0U) ? k : k_all;
    }
    View v_all = kNoView;
    for (Index r = 0U; r < width; ++r) {
      const View v = burtorch::record_view(tape, steps, [&](Index t) noexcept { return burtorch::inner_product(tape, wv + (r * width), lists[t], nullptr); });
      v_all = (r == 0U) ? v : v_all;
    }
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    const View q_all = burtorch::record_view(tape, steps * width, [&](Index i) noexcept { return node(tape, q_raw.first + i) * scale; });
    if (tape.status() != Status::kOk) {
      return false;
    }
    const Index k_first = k_all.first;
    const Index v_first = v_all.first;
    const Index q_first = q_all.first;
    for (Index t = 0U; t < steps; ++t) {
      View head_views[kMaxHeads];
      for (Index h = 0U; h < heads; ++h) {
        head_views[h] = attend(
            tape, q_first + (t * width) + (h * hs), hs, t, [&](Index j) noexcept { return k_first + (j * width) + (h * hs); },
            [&](Index d, View exps) noexcept {
              return burtorch::inner_product(tape, burtorch::View{exps.first, t + 1U}, burtorch::View{v_first + (((h * hs) + d) * steps), t + 1U}, nullptr);
            });
        if (tape.status() != Status::kOk) {
          return false;
        }
      }
      out[t] = proj.forward(tape, burtorch::view_list(tape, head_views, heads));
    }
    return tape.status() == Status::kOk;
  }

  /// The lane forward()'s recording, its arguments checked.
  template <std::size_t N>
  // NOLINTNEXTLINE(readability-function-cognitive-complexity): attention's loops, kept in one place
  bool record(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const View* x, Index steps, View* out,
              Index hs) const noexcept {
    using U = Lanes<T, N>;
    ViewList lists[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      lists[t] = burtorch::view_list(tape, &x[t], 1U);
    }
    View q_raw[kMaxSteps];
    View k_at[kMaxSteps];
    View v_at[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      q_raw[t] = burtorch::lane_matvec(tape, p, wq, width, lists[t], kNoIndex);
    }
    for (Index t = 0U; t < steps; ++t) {
      k_at[t] = burtorch::lane_matvec(tape, p, wk, width, lists[t], kNoIndex);
    }
    for (Index t = 0U; t < steps; ++t) {
      v_at[t] = burtorch::lane_matvec(tape, p, wv, width, lists[t], kNoIndex);
    }
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    View q_at[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      q_at[t] = burtorch::record_view(tape, width, [&](Index i) noexcept { return node(tape, q_raw[t].first + i) * U(scale); });
    }
    if (tape.status() != Status::kOk) {
      return false;
    }
    for (Index t = 0U; t < steps; ++t) {
      View head_views[kMaxHeads];
      for (Index h = 0U; h < heads; ++h) {
        head_views[h] = attend(
            tape, q_at[t].first + (h * hs), hs, t, [&](Index j) noexcept { return k_at[j].first + (h * hs); },
            [&](Index d, View exps) noexcept {
              Value<U> weights[kMaxSteps];
              Value<U> values[kMaxSteps];
              for (Index j = 0U; j <= t; ++j) {
                weights[j] = node(tape, exps.first + j);
                values[j] = node(tape, v_at[j].first + (h * hs) + d);
              }
              return burtorch::inner_product(tape, weights, values, t + 1U, nullptr);
            });
        if (tape.status() != Status::kOk) {
          return false;
        }
      }
      out[t] = proj.forward(tape, p, burtorch::view_list(tape, head_views, heads));
    }
    return tape.status() == Status::kOk;
  }

  /// One head at position t: the scores of the query (the run of hs nodes
  /// from q) against the keys (key(j): the first node of position j's key,
  /// j <= t), their softmax shifted by the largest score (a constant, which
  /// the softmax's gradient ignores exactly; lane by lane on a tape of
  /// lanes), and the weighted values weighted(d, exps) divided by the sum.
  /// Returns the hs outputs.
  template <class U, class Key, class Weighted>
  static View attend(Tape<U>& tape, Index q, Index hs, Index t, Key key, Weighted weighted) noexcept {
    U top = U(0);
    const View scores = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept {
      const Value<U> s = burtorch::inner_product(tape, burtorch::View{q, hs}, burtorch::View{key(j), hs}, nullptr);
      top = (j == 0U) ? s.value() : ScalarOps<U>::max(top, s.value());
      return s;
    });
    // Under the maximum's shift the largest exponent is 0: no overflow.
    const View shifted = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept { return node(tape, scores.first + j) - top; });
    const View exps = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept { return exp(node(tape, shifted.first + j)); });
    const Value<U> total = burtorch::reduce<Op::kSumR>(tape, burtorch::View{exps.first, exps.count});
    const View values = burtorch::record_view(tape, hs, [&](Index d) noexcept { return weighted(d, exps); });
    return burtorch::record_view(tape, hs, [&](Index d) noexcept { return node(tape, values.first + d) / total; });
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_ATTENTION_HPP
