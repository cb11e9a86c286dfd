// SPDX-License-Identifier: Apache-2.0
/// @file
/// Fully connected layers and lookup tables: Linear (act(W x + b), one
/// inner product per output with the activation fused into it) and
/// Embedding (a table whose rows are views) and their options. Written once
/// over a weight source (nn/source.hpp): the tape's own parameters, or
/// another source such as the lanes extension's LaneParams (a lane batch,
/// nn/train.hpp), which this header does not include.
#ifndef BURTORCH_NN_LINEAR_HPP
#define BURTORCH_NN_LINEAR_HPP

#include <cstddef>
#include <type_traits>

#include "burtorch/ext/fused.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/source.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// The rows of act(W x + b) for an activation known at compile time: a
/// matvec with the activation fused into its rows (matvec<Act>), one
/// node per output; only A's code is compiled in (a ReLU firmware links
/// no tanhf or expf for it).
template <Activation A, class T>
inline View linear_rows(Tape<T>& tape, Index w, Index rows, ViewList x, Index bias) noexcept {
  if constexpr (A == Activation::kIdentity) {
    return burtorch::matvec(tape, w, rows, x, bias);
  } else if constexpr (A == Activation::kRelu) {
    return burtorch::matvec<Op::kRelu>(tape, w, rows, x, bias);
  } else if constexpr (A == Activation::kTanh) {
    return burtorch::matvec<Op::kTanh>(tape, w, rows, x, bias);
  } else {
    static_assert(A == Activation::kSigmoid, "an Activation");
    return burtorch::matvec<Op::kSigmoid>(tape, w, rows, x, bias);
  }
}

/// The same over a weight source: the tape's own parameters fuse the
/// activation into the rows (above); a source that does not
/// (Src::kFusedRows false) records its rows, then one node per output for
/// the activation.
template <Activation A, class T, class Src>
inline View linear_rows(Tape<T>& tape, const Src& src, Index w, Index rows, ViewList x, Index bias) noexcept {
  if constexpr (Src::kFusedRows) {
    return linear_rows<A>(tape, w, rows, x, bias);
  } else {
    const View y = source_matvec(tape, src, w, rows, x, bias);
    return (y.count != 0U) ? activate<A>(tape, y) : kNoView;
  }
}

/// How to build a Linear. Only `in` and `out` have no default; the rest is
/// torch.nn.Linear's: a bias, no activation, weights and biases drawn from
/// U(-1/sqrt(in), 1/sqrt(in)). Set the members you need by name:
/// @code
/// nn::LinearOptions hidden;
/// hidden.in = 2U;
/// hidden.out = 8U;
/// hidden.act = nn::Activation::kTanh;
/// hidden.weight_init = nn::Init::fan_in_uniform(nn::kGainTanh);
/// @endcode
struct LinearOptions {
  Index in = 0U;                                                ///< inputs (the fan-in of every row)
  Index out = 0U;                                               ///< outputs
  Activation act = Activation::kIdentity;                       ///< applied to every output
  bool bias = true;                                             ///< false: no bias parameters
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< weights (fan-in `in`)
  Init bias_init = Init::fan_in_uniform(kGainLinearDefault);    ///< biases (fan-in `in`)
  const char* weight_name = nullptr;                            ///< name of every weight (Tape::param)
  const char* bias_name = nullptr;                              ///< name of every bias
};

/// y = act(W x + b), W stored row-major [out][in]: row o is one range of
/// `in` parameters, so each output is one inner product of a parameter range
/// with the (possibly segmented) input, the activation fused into it (one
/// node per output). A Neuron is a Linear with out = 1.
template <class T>
struct Linear {
  Index weight = kNoIndex;  ///< first weight on the tape (row-major [out][in])
  Index bias = kNoIndex;  ///< kNoIndex: no bias
  Index in = 0U;                           ///< inputs
  Index out = 0U;                          ///< outputs
  Activation act = Activation::kIdentity;  ///< applied to every output

  /// in * out weights (+ out biases).
  static constexpr std::size_t parameters(const LinearOptions& o) noexcept {
    return (static_cast<std::size_t>(o.in) * o.out) + (o.bias ? o.out : 0U);
  }
  /// Nodes and slots of forward() on a ViewList, reading the weights from
  /// a source of type Src (nn/source.hpp; the tape's own by default): one
  /// node per output, the activation fused into the rows, the outputs
  /// sharing one matvec descriptor whatever their number; a source that
  /// does not fuse the activation adds a node per output for it, and each
  /// source its own head nodes and slots (on a tape of lanes:
  /// `nodes<LaneParams<T>>(o)`).
  template <class Src = TapeParams>
  static constexpr std::size_t nodes(const LinearOptions& o) noexcept {
    const bool fused = Src::kFusedRows || (o.act == Activation::kIdentity);
    return Src::kMatvecHead + (fused ? o.out : (2U * static_cast<std::size_t>(o.out)));
  }
  /// @copydoc nodes
  template <class Src = TapeParams>
  static constexpr std::size_t slots(const LinearOptions& /*o*/) noexcept {
    return Src::kMatvecSlots;
  }
  /// The same for forward() on a View (one extra one-run view list).
  template <class Src = TapeParams>
  static constexpr std::size_t view_slots(const LinearOptions& o) noexcept {
    return 3U + slots<Src>(o);
  }

  /// Appends the layer's parameters to the tape: in * out weights drawn from
  /// o.weight_init, then (if o.bias) out biases from o.bias_init. False if
  /// the tape is full or failed, or (kCapacityExceeded) the parameters do
  /// not fit the tape's parameter region (a layer wider than the plan the
  /// tape was made for: fits_param_region); the layer then has no
  /// parameters (params() is kNoView).
  ///
  /// Inline: for a float layer whose options the compiler knows (constexpr
  /// options, as the docs write them) with uniform inits (the default,
  /// torch.nn.Linear's), it draws through known_uniform()'s bounds, which
  /// are draw_float()'s values bit for bit, so the firmware links no code
  /// of the other Init kinds (the normal distribution, narrow_to_float).
  BURTORCH_ALWAYS_INLINE bool create(Tape<T>& tape, const LinearOptions& o, Rng& rng) noexcept {
    if constexpr (std::is_same<T, float>::value) {
      const KnownUniform w = known_uniform(o.weight_init, o.in);
      const KnownUniform b = known_uniform(o.bias_init, o.in);
      if (w.known && b.known) {
        return create_uniform(tape, o, w.lo, w.hi, b.lo, b.hi, rng);
      }
    }
    return create_by(tape, o, [&](std::size_t count, const Init& init, const char* name) noexcept {
      return make_params(tape, count, init, o.in, rng, name);
    });
  }

  /// The same with the parameters' initial values given: values[0 .. in *
  /// out) are the weights (row-major [out][in]), then (if o.bias) the out
  /// biases; o.weight_init and o.bias_init are not used. No draws: a
  /// firmware that sets its own initial values this way links none of
  /// Init's code nor the Rng's. False (the tape's status tells
  /// why: kInvalidArgument for values == nullptr) as create() above.
  bool create(Tape<T>& tape, const LinearOptions& o, const T* values) noexcept {
    in = o.in;
    out = o.out;
    act = o.act;
    const std::size_t count = parameters(o);
    if ((values == nullptr) || (count >= kNoIndex)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
    }
    static_cast<void>(fits_param_region(tape, count));
    const View made = (tape.status() == Status::kOk)
                          ? burtorch::record_view(tape, static_cast<Index>(count), [&](Index k) noexcept {
                              return tape.param(values[k], (k < (o.in * o.out)) ? o.weight_name : o.bias_name);
                            })
                          : kNoView;
    const bool ok = (tape.status() == Status::kOk) && (made.first != kNoIndex);
    weight = ok ? made.first : kNoIndex;
    bias = (ok && o.bias) ? (made.first + (o.in * o.out)) : kNoIndex;
    return ok;
  }

  /// The layer's parameters on the tape: weights, then biases (kNoView
  /// before a successful create()).
  View params() const noexcept {
    const Index count = (in * out) + ((bias != kNoIndex) ? out : 0U);
    return (weight != kNoIndex) ? View{weight, count} : kNoView;
  }

  /// Records act(W x + b) for an input of `in` nodes stored as a segment
  /// list; returns the `out` output nodes (kNoView on error). The
  /// activation is chosen at run time, so the code of every activation is
  /// compiled in; forward<A>() compiles only A's.
  View forward(Tape<T>& tape, ViewList x) const noexcept { return forward(tape, TapeParams{}, x); }
  /// The same for an input that is one run of nodes: checked (accepts())
  /// before its view list is recorded.
  View forward(Tape<T>& tape, View x) const noexcept { return forward(tape, TapeParams{}, x); }

  /// forward() with the activation chosen at compile time (A must be the
  /// layer's act, else kInvalidArgument and nothing recorded): only A's code
  /// is compiled in, e.g. `hidden.forward<nn::Activation::kRelu>(tape, x)`.
  template <Activation A>
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    return forward<A>(tape, TapeParams{}, x);
  }
  /// @copydoc forward(Tape<T>&, ViewList) const
  template <Activation A>
  View forward(Tape<T>& tape, View x) const noexcept {
    return forward<A>(tape, TapeParams{}, x);
  }

  /// The layer with its weights read from a source (nn/source.hpp): the
  /// tape's own parameters (the forms above), or e.g. this layer's
  /// parameters on their own tape shared through LaneParams p
  /// (nn::lane_params) by a tape of N lanes, one sample per lane: read once
  /// per N samples, their gradients summed over the lanes. Every form
  /// refuses before it records anything: an input of another width, a
  /// layer not created or a source that does not hold its parameters
  /// (shared()) is kInvalidArgument; an input (View forms) or parameters of
  /// the tape's own not recorded on it (a layer created on another tape)
  /// kInvalidHandle. A call that fails part-way (a tape too small:
  /// kCapacityExceeded) leaves nothing either (all_or_nothing).
  template <class U, class Src>
  View forward(Tape<U>& tape, const Src& src, ViewList x) const noexcept {
    if (!ready(tape, src, x.total)) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      View y = kNoView;
      if (act == Activation::kRelu) {
        y = linear_rows<Activation::kRelu>(tape, src, weight, out, x, bias);
      } else if (act == Activation::kTanh) {
        y = linear_rows<Activation::kTanh>(tape, src, weight, out, x, bias);
      } else if (act == Activation::kSigmoid) {
        y = linear_rows<Activation::kSigmoid>(tape, src, weight, out, x, bias);
      } else {
        y = linear_rows<Activation::kIdentity>(tape, src, weight, out, x, bias);
      }
      return y;
    });
  }
  /// The same for an input that is one run of nodes.
  template <class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x) const noexcept {
    if (!accepts(tape, x) || !ready(tape, src, x.count)) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView,
                          [&]() noexcept { return forward(tape, src, burtorch::view_list(tape, &x, 1U)); });
  }
  /// forward<A>() over a source.
  template <Activation A, class U, class Src>
  View forward(Tape<U>& tape, const Src& src, ViewList x) const noexcept {
    if (act != A) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    if (!ready(tape, src, x.total)) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView,
                          [&]() noexcept { return linear_rows<A>(tape, src, weight, out, x, bias); });
  }
  /// @copydoc forward(Tape<U>&, const Src&, ViewList) const
  template <Activation A, class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x) const noexcept {
    if (act != A) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    if (!accepts(tape, x) || !ready(tape, src, x.count)) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView,
                          [&]() noexcept { return forward<A>(tape, src, burtorch::view_list(tape, &x, 1U)); });
  }

  /// True if x can be this layer's input: `in` nodes wide (else
  /// kInvalidArgument on the tape) and recorded on it (else kInvalidHandle).
  /// The View forms check it before they record anything.
  template <class U>
  bool accepts(Tape<U>& tape, View x) const noexcept {
    const Status error =
        (x.count != in) ? Status::kInvalidArgument : (is_recorded(tape, x) ? Status::kOk : Status::kInvalidHandle);
    static_cast<void>(tape.report(error));
    return error == Status::kOk;
  }
  /// True if the source holds this layer's parameters, values and
  /// gradients (always, for the tape's own; a layer not created: false for
  /// any other).
  template <class Src>
  bool shared(const Src& src) const noexcept {
    const View v = params();
    return source_covers(src, v.first, v.count);
  }

 private:
  /// create() with U(w_lo, w_hi) weights and U(b_lo, b_hi) biases in float
  /// (known_uniform()'s bounds).
  bool create_uniform(Tape<T>& tape, const LinearOptions& o, float w_lo, float w_hi, float b_lo, float b_hi,
                      Rng& rng) noexcept {
    return create_by(tape, o, [&](std::size_t count, const Init& init, const char* name) noexcept {
      const bool weights = (&init == &o.weight_init);
      const float lo = weights ? w_lo : b_lo;
      const float hi = weights ? w_hi : b_hi;
      return make_params_by(tape, count, name, [&]() noexcept { return rng.uniform_float(lo, hi); });
    });
  }
  /// create()'s body, the parameters made by make(count, init, name).
  template <class Make>
  bool create_by(Tape<T>& tape, const LinearOptions& o, Make make) noexcept {
    in = o.in;
    out = o.out;
    act = o.act;
    // The whole layer or none of it: weights and biases checked together.
    static_cast<void>(fits_param_region(tape, parameters(o)));
    const Index w = make(static_cast<std::size_t>(o.in) * o.out, o.weight_init, o.weight_name);
    const Index b = o.bias ? make(static_cast<std::size_t>(o.out), o.bias_init, o.bias_name) : kNoIndex;
    const bool ok = (tape.status() == Status::kOk) && (w != kNoIndex);
    weight = ok ? w : kNoIndex;
    bias = ok ? b : kNoIndex;
    return ok;
  }
  /// The checks every form makes before it records: an input `width`
  /// wide, a layer created and held by the source (else kInvalidArgument),
  /// its parameters recorded on the tape if they are the tape's own (else
  /// kInvalidHandle). Reports the error on the tape.
  template <class U, class Src>
  bool ready(Tape<U>& tape, const Src& src, Index width) const noexcept {
    const View v = params();
    Status error = Status::kOk;
    if ((width != in) || (weight == kNoIndex) || !shared(src)) {
      error = Status::kInvalidArgument;
    } else if (!source_recorded(tape, src, v.first, v.count)) {
      error = Status::kInvalidHandle;
    } else {
      // ready to record
    }
    return tape.report(error) == Status::kOk;
  }
};

/// How to build an Embedding (torch.nn.Embedding's N(0, 1) by default).
struct EmbeddingOptions {
  Index rows = 0U;                     ///< rows of the table (token ids 0..rows-1)
  Index dim = 0U;                      ///< width of a row
  Init init = Init::normal(0.0, 1.0);  ///< every entry (fan-in `dim`)
  const char* name = nullptr;          ///< name of every entry (Tape::param)
};

/// A lookup table of `rows` vectors of `dim` parameters; row r is a view.
template <class T>
struct Embedding {
  Index table = kNoIndex;  ///< first parameter of row 0
  Index rows = 0U;         ///< rows of the table
  Index dim = 0U;          ///< width of a row

  /// rows * dim.
  static constexpr std::size_t parameters(const EmbeddingOptions& o) noexcept {
    return static_cast<std::size_t>(o.rows) * o.dim;
  }

  /// Appends the table's parameters to the tape, row by row. False if the
  /// tape is full or failed (params() is then kNoView).
  bool create(Tape<T>& tape, const EmbeddingOptions& o, Rng& rng) noexcept {
    rows = o.rows;
    dim = o.dim;
    table = make_params(tape, parameters(o), o.init, o.dim, rng, o.name);
    return table != kNoIndex;
  }
  /// The table on the tape (kNoView before a successful create()).
  View params() const noexcept { return (table != kNoIndex) ? View{table, rows * dim} : kNoView; }
  /// Row r as a view of the table (no nodes recorded); kNoView if r >= rows.
  View row(Index r) const noexcept { return (r < rows) ? View{table + (r * dim), dim} : kNoView; }

  /// On a tape of N lanes: `count` rows per lane, as count * dim nodes (row
  /// q of lane l is table row ids[q * N + l]); the table is shared through
  /// a source p that gathers (the lanes extension's LaneParams,
  /// nn::lane_params) and each lane's gradient goes to its own row.
  /// kNoView (kInvalidArgument) for an id >= rows.
  template <class U, class Src>
  View gather(Tape<U>& tape, const Src& p, const Index* ids, Index count) const noexcept {
    return source_gather(tape, p, table, rows, dim, ids, count);
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_LINEAR_HPP
