// SPDX-License-Identifier: Apache-2.0
/// @file
/// Op families: how an op that is not the paper's joins the tape. The one
/// mechanism for the library's extensions (ext/functions.hpp, ext/fused.hpp,
/// frozen/ops.hpp, lanes/lanes.hpp) and for an op of your own
/// (examples/custom_op shows one, tested).
///
/// A family is a list of rows, each a struct with the members of a core
/// row (core/op.hpp's OpDef: kKind, kName, forward, backward, ...), under an id
/// (family:: below). Row k of family f has op code Op::kFirstExtension +
/// 16 f + k. Recording a row through the family (OpFamily::unary and the
/// others, or enable() before a wide recorder of your own) registers the
/// family's backward on the tape, which the sweep calls for the family's
/// nodes. So the family's backward is in a program only if the program
/// records one of its ops, and the core (core/op.hpp, core/tape.hpp, core/ops.hpp, the
/// sweep) knows nothing of it. Replay and inspection know the library's
/// families (tools/replay.hpp, tools/inspect.hpp): a recording that holds an op of a
/// family of your own is not replayed, and inspection names its nodes "?"
/// (the family's name() and kind() tell them).
///
/// @code
///   struct Cube {  // x^3, a unary row
///     static constexpr burtorch::OpKind kKind = burtorch::OpKind::kUnary;
///     static constexpr const char* kName = "cube";
///     template <class T> static T forward(T x) noexcept { return x * x * x; }
///     template <class T> static void backward(T g, T x, T, T& dx) noexcept { dx += T(3) * g * x * x; }
///   };
///   using MyOps = burtorch::OpFamily<burtorch::family::kFirstUser, Cube>;
///   template <class T> burtorch::Value<T> cube(burtorch::Value<T> x) { return MyOps::unary<Cube>(x); }
/// @endcode
#ifndef BURTORCH_EXT_EXTENSION_HPP
#define BURTORCH_EXT_EXTENSION_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/step.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// The ids of op families: each owns 16 op codes, from Op::kFirstExtension
/// + 16 id. The library's own are listed here, so that no two collide.
namespace family {
constexpr std::uint8_t kPiecewise = 0U;  ///< ext/functions.hpp: abs, leaky_relu, huber, reduce_max (no libm)
constexpr std::uint8_t kSmooth = 1U;     ///< ext/functions.hpp: gelu_tanh, silu, bce_with_logits
constexpr std::uint8_t kFused = 2U;      ///< ext/fused.hpp: a layer's rows with a ReLU, tanh or sigmoid
constexpr std::uint8_t kFrozen = 3U;     ///< frozen/ops.hpp: a layer over frozen weights in caller memory
constexpr std::uint8_t kLanes = 4U;      ///< lanes/lanes.hpp: lane batches over shared parameters
constexpr std::uint8_t kFirstUser = 8U;  ///< the first of the ids for your families (8, 9, 10)
constexpr std::uint8_t kCount = 11U;     ///< ids below this are valid
constexpr std::size_t kWidth = 16U;      ///< rows a family holds at most
}  // namespace family

namespace detail {
/// The position of R in Rows... (sizeof...(Rows) if absent).
template <class R, class... Rows>
constexpr std::size_t row_index() noexcept {
  constexpr bool kIs[] = {std::is_same<R, Rows>::value..., false};
  std::size_t k = 0U;
  while ((k < sizeof...(Rows)) && !kIs[k]) {
    ++k;
  }
  return k;
}
/// A row of a family, as visit passes it (the same shape as OpTag).
template <Op K, class D>
struct RowTag {
  static constexpr Op kOp = K;  ///< the row's op code
  using Def = D;                ///< the row
};
}  // namespace detail

/// An op family: id Id, rows Rows... (see the file comment). Every member
/// is static; a family is a type, not an object.
template <std::uint8_t Id, class... Rows>
struct OpFamily {
  static_assert(Id < family::kCount, "a family id is below family::kCount");
  static_assert((sizeof...(Rows) >= 1U) && (sizeof...(Rows) <= family::kWidth), "a family holds 1 to 16 rows");
  /// The family's id.
  static constexpr std::uint8_t kId = Id;
  /// The op code of row R (one of Rows...).
  template <class R>
  static constexpr Op op() noexcept {
    static_assert(detail::row_index<R, Rows...>() < sizeof...(Rows), "R is a row of this family");
    return static_cast<Op>(static_cast<std::size_t>(Op::kFirstExtension) + (family::kWidth * Id) +
                           detail::row_index<R, Rows...>());
  }
  /// Calls f(RowTag) for the row whose code is op (nothing for another code).
  template <class F>
  static void visit(Op op, F&& f) noexcept {
    visit_rows(op, static_cast<F&&>(f), std::index_sequence_for<Rows...>{});
  }

  // --- what the tape, replay and inspection call ---------------------------
  /// Node i's backward step (detail::step): what the sweep calls, through
  /// the pointer enable() registers on the tape. kNoIndex for a code not
  /// the family's; the family's id for Op::kNone (detail::FamilyBackward).
  template <class T>
  static Index backward(const detail::Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest) noexcept {
    Index swept = (op == Op::kNone) ? Index{Id} : kNoIndex;
    visit(op, [&](auto tag) noexcept { swept = detail::step<typename decltype(tag)::Def>(s, i, a, b, g, lowest); });
    return swept;
  }
  /// Node i's value again (detail::forward_step): what replay calls (for
  /// the library's families; tools/replay.hpp).
  template <class T>
  static Index forward(const detail::Forward<T>& f, const Index* slots, Op op, Index i, Index a, Index b) noexcept {
    Index done = 1U;
    visit(op, [&](auto tag) noexcept { done = detail::forward_step<typename decltype(tag)::Def>(f, slots, op, i, a, b); });
    return done;
  }
  /// True if a node of op whose second operand field is b can be
  /// re-evaluated (detail::replayable; a folded constant must have been
  /// kept).
  static bool replayable(Op op, Index b) noexcept {
    bool yes = false;
    visit(op, [&yes, b](auto tag) noexcept {
      using D = typename decltype(tag)::Def;
      yes = detail::replayable<D>() && (!detail::FoldedOf<D>::value || (b != kNoIndex));
    });
    return yes;
  }
  /// op's name ("?" for a code the family does not have).
  static const char* name(Op op) noexcept {
    const char* text = "?";
    visit(op, [&text](auto tag) noexcept { text = decltype(tag)::Def::kName; });
    return text;
  }
  /// How op's nodes store their operands.
  static OpKind kind(Op op) noexcept {
    OpKind k = OpKind::kSource;
    visit(op, [&k](auto tag) noexcept { k = decltype(tag)::Def::kKind; });
    return k;
  }
  // --- recording ---------------------------------------------------------
  /// Registers the family on the tape, for a recorder of a wide row (one
  /// of your own, built on Recorder<T>): false (status set) if the tape
  /// holds kTapeFamilies other families (kCapacityExceeded) or another
  /// family with this id (kInvalidArgument).
  template <class T>
  static bool enable(Tape<T>& tape) noexcept {
    return Recorder<T>::enable(tape, Id, &backward<T>);
  }
  /// Row R (unary) of x: one node.
  template <class R, class T>
  static Value<T> unary(Value<T> x) noexcept {
    Tape<T>* const on = x.tape();
    if (on == nullptr) {
      return x;
    }
    return enable(*on) ? Recorder<T>::template unary<op<R>(), R>(*on, x) : Value<T>(on, kNoIndex);
  }
  /// Row R (unary, its constant c folded into the value) of x.
  template <class R, class T>
  static Value<T> unary(Value<T> x, T c) noexcept {
    Tape<T>* const on = x.tape();
    if (on == nullptr) {
      return x;
    }
    return enable(*on) ? Recorder<T>::template unary<op<R>(), R>(*on, x, c) : Value<T>(on, kNoIndex);
  }
  /// Row R (binary) of x and y.
  template <class R, class T>
  static Value<T> binary(Value<T> x, Value<T> y) noexcept {
    Tape<T>* const on = (x.tape() != nullptr) ? x.tape() : y.tape();
    if (on == nullptr) {
      return Value<T>();
    }
    return enable(*on) ? Recorder<T>::template binary<op<R>(), R>(*on, x, y) : Value<T>(on, kNoIndex);
  }
  /// Row R (a stored constant c) of x.
  template <class R, class T>
  static Value<T> constant(Value<T> x, T c) noexcept {
    Tape<T>* const on = x.tape();
    if (on == nullptr) {
      return x;
    }
    return enable(*on) ? Recorder<T>::template constant<op<R>(), R>(*on, x, c) : Value<T>(on, kNoIndex);
  }
  /// Row R (a view reduction whose list variant is row L) over xs[0..n),
  /// on the tape of the first operand that has one.
  template <class R, class L, class T>
  static Value<T> reduce(const Value<T>* xs, std::size_t n) noexcept {
    Tape<T>* const on = detail::first_tape(xs, n);
    if (on == nullptr) {
      return Value<T>();
    }
    return enable(*on) ? Recorder<T>::template reduce<op<R>(), op<L>(), R>(*on, xs, n) : Value<T>(on, kNoIndex);
  }
  /// The same on `tape` (over no operands: the row's value of nothing).
  template <class R, class L, class T>
  static Value<T> reduce(Tape<T>& tape, const Value<T>* xs, std::size_t n) noexcept {
    return enable(tape) ? Recorder<T>::template reduce<op<R>(), op<L>(), R>(tape, xs, n) : Value<T>(&tape, kNoIndex);
  }
  /// Row R (a view reduction) over the view x of tape, read in place.
  template <class R, class T>
  static Value<T> reduce(Tape<T>& tape, View x) noexcept {
    return enable(tape) ? Recorder<T>::template reduce<op<R>(), R>(tape, x) : Value<T>(&tape, kNoIndex);
  }

 private:
  template <class F, std::size_t... I>
  static void visit_rows(Op op, F&& f, std::index_sequence<I...> /*rows*/) noexcept {
    const auto code = static_cast<std::size_t>(op);
    constexpr std::size_t kBase = static_cast<std::size_t>(Op::kFirstExtension) + (family::kWidth * Id);
    const bool found =
        (((code == (kBase + I)) ? (f(detail::RowTag<static_cast<Op>(kBase + I), Rows>{}), true) : false) || ...);
    static_cast<void>(found);
  }
};

}  // namespace burtorch

#endif  // BURTORCH_EXT_EXTENSION_HPP
