// SPDX-License-Identifier: Apache-2.0
// Misuse of the public API, tried as a hostile caller would: stale and
// foreign marks, sizes at the limits of size_t and Index, side computations
// that must not leak into a gradient, recorders called with the wrong op
// kind, null pointers, empty handles on either side of an operator, and the
// IEEE corner cases of relu and log-sum-exp. Every case checks that the call
// reports its documented status and changes nothing it must not change:
// guard bytes around the caller's buffers stay intact, counts stay put, and
// the gradients are those of the graph the root reaches (closed forms).
// Runs on every target (32-bit size_t on armv7 and every Cortex-M).
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();

// A caller buffer with guard bytes on both sides.
constexpr std::size_t kGuard = 64U;
constexpr unsigned char kGuardByte = 0xA5U;
struct Guarded {
  alignas(64) unsigned char bytes[kGuard + 256U + kGuard];
  unsigned char* body() { return &bytes[kGuard]; }
  void fill() { std::memset(bytes, kGuardByte, sizeof(bytes)); }
  bool intact(std::size_t used) const {
    for (std::size_t i = 0U; i < kGuard; ++i) {
      if ((bytes[i] != kGuardByte) || (bytes[kGuard + used + i] != kGuardByte)) {
        return false;
      }
    }
    return true;
  }
};
Guarded g_buffer;

// The tests that need a tape of 16 nodes share two (a 16 KiB board cannot
// hold one per test); each test resets the ones it uses.
bt::FixedTape<double, 16, 16>& scratch(std::size_t which) {
  static bt::FixedTape<double, 16, 16> tapes[2];
  tapes[which].set_fault_hook(nullptr, nullptr);
  return tapes[which];
}

// --- marks -----------------------------------------------------------------

// The reported defect: a mark taken before an earlier rewind, used once the
// tape has grown past it again. Its node and slot counts no longer describe
// what is recorded (a list reduction's slots would be handed out again).
void stale_mark_is_rejected(bt_test::Context& t) {
  static bt::FixedTape<double, 24, 24> tape;
  tape.reset();
  auto a = tape.param(2.0);
  auto b = tape.param(3.0);
  const bt::Mark base = tape.mark();
  // Sample 1: a list reduction (non-consecutive operands take slots).
  auto p = a * b;
  const bt::Value<double> list1[3] = {b, p, a};
  auto s1 = bt::reduce_sum(list1, 3U);
  const bt::Mark late = tape.mark();  // after sample 1's nodes and slots
  BT_CHECK(t, tape.usage().slots == 3U);
  static_cast<void>(s1 * 2.0);
  BT_CHECK(t, tape.rewind(base) == bt::Status::kOk);
  // Sample 2 grows past `late` with another slot pattern.
  auto q = a + b;
  auto r = q * a;
  auto u = r - b;
  auto v = u * u;
  const bt::Value<double> list2[2] = {v, a};
  auto s2 = bt::reduce_sum(list2, 2U);
  auto loss = s2 * 0.5;
  BT_CHECK(t, tape.size() > late.nodes);
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  BT_CHECK(t, tape.rewind(late) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (tape.size() == nodes) && (tape.usage().slots == slots));
  BT_CHECK(t, tape.status() == bt::Status::kOk);  // rewind reports, not sticky
  // The tape is intact: loss = ((a + b) * a - b)^2 / 2 + a / 2.
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  const double uu = ((2.0 + 3.0) * 2.0) - 3.0;  // 7
  BT_CHECK(t, loss.value() == ((uu * uu) + 2.0) * 0.5);
  // d/da = u * (2a + b) + 1/2, d/db = u * (a - 1).
  BT_CHECK(t, a.grad() == (uu * ((2.0 * 2.0) + 3.0)) + 0.5);
  BT_CHECK(t, b.grad() == uu * (2.0 - 1.0));
}

void foreign_and_forged_marks(bt_test::Context& t) {
  static bt::FixedTape<float, 16> one;
  static bt::FixedTape<float, 16> other;
  one.reset();
  other.reset();
  auto x = one.leaf(1.0F);
  static_cast<void>(other.leaf(1.0F));
  const bt::Mark from_other = other.mark();
  static_cast<void>(x + x);
  static_cast<void>(x * x);
  BT_CHECK(t, one.rewind(from_other) == bt::Status::kInvalidArgument);
  BT_CHECK(t, one.size() == 3U);
  // Hand-made marks are not marks of this tape.
  BT_CHECK(t, one.rewind(bt::Mark{}) == bt::Status::kInvalidArgument);
  bt::Mark made{};
  made.nodes = 1U;
  BT_CHECK(t, one.rewind(made) == bt::Status::kInvalidArgument);
  // A mark whose generation was tampered with (from the future).
  bt::Mark forged = one.mark();
  forged.generation += 1U;
  BT_CHECK(t, one.rewind(forged) == bt::Status::kInvalidArgument);
  // A mark past the end.
  bt::Mark past = one.mark();
  past.nodes += 1U;
  BT_CHECK(t, one.rewind(past) == bt::Status::kInvalidArgument);
  BT_CHECK(t, one.size() == 3U);
  // reset() makes every earlier mark stale.
  const bt::Mark before_reset = one.mark();
  one.reset();
  static_cast<void>(one.leaf(1.0F));
  static_cast<void>(one.leaf(1.0F));
  static_cast<void>(one.leaf(1.0F));
  BT_CHECK(t, one.rewind(before_reset) == bt::Status::kInvalidArgument);
}

// Valid marks stay valid: the per-sample loop, nested loops, and a mark at
// the exact position a rewind went back to.
void valid_marks_stay_valid(bt_test::Context& t) {
  static bt::FixedTape<double, 8, 8> tape;
  tape.reset();
  auto w = tape.param(0.5);
  const bt::Mark outer = tape.mark();
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto h = w * 3.0;
    const bt::Mark inner = tape.mark();
    for (int sample = 0; sample < 20; ++sample) {
      auto x = tape.leaf(static_cast<double>(sample));
      const bt::Value<double> xs[3] = {x, h, x};
      static_cast<void>(bt::reduce_sum(xs, 3U));  // list operands: slots
      BT_CHECK(t, tape.rewind(inner) == bt::Status::kOk);
      BT_CHECK(t, (tape.size() == inner.nodes) && (tape.usage().slots == inner.slots));
    }
    BT_CHECK(t, tape.rewind(outer) == bt::Status::kOk);
    BT_CHECK(t, tape.size() == 1U);
  }
  // Rewinding to the current position changes nothing and is fine.
  BT_CHECK(t, tape.rewind(tape.mark()) == bt::Status::kOk);
}

// More nested levels than the tape remembers: old marks may be refused,
// but a stale mark is never accepted.
void deep_nesting_never_accepts_stale(bt_test::Context& t) {
  static bt::FixedTape<float, 48, 48> tape;
  tape.reset();
  constexpr int kLevels = static_cast<int>(bt::kMarkLevels) + 3;
  bt::Mark marks[kLevels + 1];
  auto x = tape.leaf(1.0F);
  for (int level = 0; level <= kLevels; ++level) {
    marks[level] = tape.mark();
    x = x + 1.0F;
    x = x * 1.0F;
  }
  // Rewind from the deepest level up, one level at a time, regrowing each
  // time: every mark below the current one stays valid, the ones above are
  // stale.
  for (int level = kLevels; level >= 1; --level) {
    BT_CHECK(t, tape.rewind(marks[level]) == bt::Status::kOk);
    auto y = tape.leaf(2.0F);
    for (int k = 0; k < (2 * kLevels) + 2; ++k) {
      y = y * 2.0F;  // grows past every discarded mark again
    }
    BT_CHECK(t, tape.size() > marks[kLevels].nodes);
    for (int above = level + 1; above <= kLevels; ++above) {
      BT_CHECK(t, tape.rewind(marks[above]) == bt::Status::kInvalidArgument);
    }
    BT_CHECK(t, tape.rewind(marks[level]) == bt::Status::kOk);
  }
  BT_CHECK(t, tape.rewind(marks[0]) == bt::Status::kOk);
  BT_CHECK(t, tape.size() == 1U);

  // A stale mark, then more ascending rewind targets than the tape
  // remembers (its history overflows): the stale mark is still refused.
  tape.reset();
  auto z = tape.leaf(1.0F);
  const bt::Mark low = tape.mark();
  z = z * 2.0F;
  z = z * 2.0F;
  const bt::Mark stale = tape.mark();
  BT_CHECK(t, tape.rewind(low) == bt::Status::kOk);
  for (int level = 0; level < kLevels; ++level) {
    z = tape.leaf(1.0F);
    z = z + 1.0F;
    const bt::Mark step = tape.mark();
    z = z * 3.0F;
    BT_CHECK(t, tape.rewind(step) == bt::Status::kOk);  // targets ascend
    BT_CHECK(t, tape.rewind(stale) == bt::Status::kInvalidArgument);
  }
  BT_CHECK(t, tape.size() > stale.nodes);
  BT_CHECK(t, tape.rewind(stale) == bt::Status::kInvalidArgument);
}

// --- sizes at the limits of size_t and Index ------------------------------

// Exact bytes in 64-bit arithmetic (independent of the library's checks),
// or UINT64_MAX when some count is out of range.
template <class T>
std::uint64_t exact_bytes(std::uint64_t nodes, std::uint64_t slots, std::uint64_t params) {
  if ((nodes >= bt::kNoIndex) || (slots >= bt::kNoIndex) || (params > nodes)) {
    return UINT64_MAX;
  }
#if defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M')
  constexpr std::uint64_t kBlock = 8U;  // microcontrollers: no padding
#else
  constexpr std::uint64_t kBlock = 32U;
#endif
  const auto up = [](std::uint64_t b) { return (b + (kBlock - 1U)) / kBlock * kBlock; };
  const std::uint64_t names = BURTORCH_CONFIG_PARAM_NAMES ? sizeof(const char*) : 0U;
  const std::uint64_t interior = nodes - params;
  return (2U * up(nodes * sizeof(T))) + up(interior * 8U) + up(slots * 4U) + up(nodes * names) + up(interior);
}

template <class T>
void check_sizes(bt_test::Context& t) {
  const std::uint64_t counts[] = {0U,          1U,          3U,          1000U,       (1U << 20U), (1U << 28U),
                                  (1U << 29U), (1U << 30U), (1U << 30U) + 16U,       (1U << 31U), 0xFFFFFFFEU,
                                  0xFFFFFFFFU, 0x100000000ULL};
  for (const std::uint64_t nodes : counts) {
    for (const std::uint64_t slots : counts) {
      for (const std::uint64_t params : {std::uint64_t{0U}, nodes / 2U, nodes, nodes + 1U}) {
        if ((nodes > kSizeMax) || (slots > kSizeMax) || (params > kSizeMax)) {
          continue;  // not expressible as size_t on this target
        }
        const std::uint64_t want = exact_bytes<T>(nodes, slots, params);
        const std::size_t got = bt::Tape<T>::bytes_required(static_cast<std::size_t>(nodes),
                                                            static_cast<std::size_t>(slots),
                                                            static_cast<std::size_t>(params));
        if ((want == UINT64_MAX) || (want > kSizeMax)) {
          BT_CHECK(t, got == bt::kTooLarge);
        } else {
          BT_CHECK(t, static_cast<std::uint64_t>(got) == want);
        }
      }
    }
  }
}

void size_arithmetic_is_checked(bt_test::Context& t) {
  check_sizes<float>(t);
  check_sizes<double>(t);
  // The reported case: slots = 2^30 + 16 wrapped to 256 bytes on 32 bits.
  constexpr std::size_t kSlots = (std::size_t{1} << 30U) + 16U;
  constexpr std::size_t need = bt::Tape<float>::bytes_required(8U, kSlots);
  static_assert(need > 256U, "bytes_required never wraps to a small number");
  if (sizeof(std::size_t) == 4U) {
    BT_CHECK(t, need == bt::kTooLarge);
  }
  // A tape over a 256-byte buffer with those counts is refused, and a list
  // reduction on it writes nothing (guard bytes intact).
  g_buffer.fill();
  bt::Tape<float> tape(g_buffer.body(), 256U, 8U, kSlots);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.usage().node_capacity == 0U);
  bt::Value<float> xs[200];
  for (auto& x : xs) {
    x = tape.leaf(1.0F);
  }
  static_cast<void>(bt::reduce_sum(xs, 200U));
  BT_CHECK(t, tape.size() == 0U);
  BT_CHECK(t, g_buffer.intact(256U));
  // Claiming a huge buffer does not help when the layout cannot exist.
  bt::Tape<float> lying(g_buffer.body(), kSizeMax, bt::kNoIndex, 8U);
  BT_CHECK(t, lying.status() == bt::Status::kInvalidArgument);
  if (sizeof(std::size_t) == 4U) {
    bt::Tape<double> wraps(g_buffer.body(), kSizeMax, (std::size_t{1} << 29U), kSlots);
    BT_CHECK(t, wraps.status() == bt::Status::kInvalidArgument);
  }
  BT_CHECK(t, g_buffer.intact(256U));
}

// --- gradients of the graph the root reaches --------------------------------

void unreachable_nodes_do_not_leak(bt_test::Context& t) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  // x = 0; m = sqrt(x) is a logged metric; loss = x * x: d loss/dx = 0.
  tape.reset();
  auto x = tape.leaf(0.0);
  auto metric = bt::sqrt(x);
  auto loss = x * x;
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  BT_CHECK(t, x.grad() == 0.0);
  BT_CHECK(t, metric.grad() == 0.0);
  // log(q) of q = 0 recorded before p * q + p: d/dq = p = 0.5, d/dp = q + 1.
  tape.reset();
  auto p = tape.leaf(0.5);
  auto q = tape.leaf(0.0);
  auto side = bt::log(q);
  auto out = (p * q) + p;
  BT_CHECK(t, tape.backward(out) == bt::Status::kOk);
  BT_CHECK(t, q.grad() == 0.5);
  BT_CHECK(t, p.grad() == 1.0);
  BT_CHECK(t, std::isinf(side.value()));
  // Unreachable wide ops too: a log-sum-exp over an infinity, a division by
  // zero, a product with zeros, beside the real loss.
  tape.reset();
  auto a = tape.leaf(0.0);
  auto c = tape.leaf(3.0);
  const bt::Value<double> pair[2] = {a, c};
  static_cast<void>(bt::log_sum_exp(pair, 2U) / a);
  static_cast<void>(bt::inv_sqrt(a));
  static_cast<void>(bt::reduce_mul(pair, 2U) / a);
  auto real = c * c + a;
  BT_CHECK(t, tape.backward(real) == bt::Status::kOk);
  BT_CHECK(t, a.grad() == 1.0);
  BT_CHECK(t, c.grad() == 6.0);
  // Inside the root's own graph, a zero gradient times an infinite local
  // derivative adds nothing (PyTorch gives NaN here; docs/design.md).
  tape.reset();
  auto z = tape.leaf(0.0);
  auto zero_times = bt::sqrt(z) * 0.0;
  BT_CHECK(t, tape.backward(zero_times) == bt::Status::kOk);
  BT_CHECK(t, z.grad() == 0.0);
  // A non-zero gradient still meets the infinity: d sqrt(z)/dz at 0 = inf.
  auto root = bt::sqrt(z);
  BT_CHECK(t, tape.backward(root) == bt::Status::kOk);
  BT_CHECK(t, std::isinf(z.grad()));
}

// --- recorders called with inconsistent arguments ---------------------------

// The elementwise recorders are private templates whose op kind is checked
// when they are instantiated (core/op.hpp's rows); the wide recorders take the op
// at run time and must refuse every op that is not a run reduction.
void recorders_check_op_kind(bt_test::Context& t) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  const bt::Op wrong[] = {bt::Op::kSumL,  bt::Op::kDotRR, bt::Op::kAdd,     bt::Op::kExp,
                          bt::Op::kLeaf,  bt::Op::kMulConst, bt::Op::kLogSumExpL, bt::Op::kMatRow,
                          bt::Op::kCount, static_cast<bt::Op>(200)};
  // Each wrong kind: kInvalidArgument, no node, no slot, backward refuses.
  for (std::size_t which = 0U; which < (2U * (sizeof(wrong) / sizeof(wrong[0]))); ++which) {
    tape.reset();
    auto x = tape.leaf(1.5);
    auto y = tape.leaf(2.5);
    const bt::Value<double> xs[2] = {y, x};
    const bt::Op op = wrong[which / 2U];
    const bt::Value<double> out = ((which % 2U) == 0U) ? bt::reduce(tape, op, xs, 2U) : bt::reduce(tape, op, bt::View{0U, 2U});
    BT_CHECK(t, !out.valid());
    BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
    BT_CHECK(t, (tape.size() == 2U) && (tape.usage().slots == 0U));
    BT_CHECK(t, tape.backward(x) == bt::Status::kInvalidArgument);
  }
  // Every run reduction is accepted, and records its list variant for a list.
  const bt::Op runs[] = {bt::Op::kSumR,  bt::Op::kSubR,      bt::Op::kProdR, bt::Op::kMeanR,
                         bt::Op::kSumSqR, bt::Op::kMeanSqR,  bt::Op::kNegMeanR, bt::Op::kVarR,
                         bt::Op::kVarBiasedR, bt::Op::kLogSumExpR};
  for (const bt::Op op : runs) {
    tape.reset();
    auto x = tape.leaf(1.5);
    auto y = tape.leaf(2.5);
    const bt::Value<double> xs[2] = {y, x};
    BT_CHECK(t, bt::node_op(tape, bt::reduce(tape, op, xs, 2U).index()) == bt::op_pair(op));
    BT_CHECK(t, bt::node_op(tape, bt::reduce(tape, op, bt::View{0U, 2U}).index()) == op);
    BT_CHECK(t, bt::op_pair(bt::op_pair(op)) == op);
    BT_CHECK(t, tape.status() == bt::Status::kOk);
  }
}

void null_pointers(bt_test::Context& t) {
  static bt::FixedTape<float, 16, 16> tape;
  tape.reset();
  auto x = tape.leaf(1.0F);
  const bt::Value<float> xs[2] = {x, x};
  BT_CHECK(t, !bt::reduce(tape, bt::Op::kSumR, nullptr, 3U).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.reset();
  x = tape.leaf(1.0F);
  BT_CHECK(t, !bt::inner_product(tape, nullptr, xs, 2U, nullptr).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.reset();
  x = tape.leaf(1.0F);
  BT_CHECK(t, !bt::inner_product(tape, xs, nullptr, 2U, nullptr).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == 1U);
  // The free functions have no tape to report to: an empty handle.
  BT_CHECK(t, bt::reduce_sum(static_cast<const bt::Value<float>*>(nullptr), 3U).tape() == nullptr);
  BT_CHECK(t, bt::inner_product(xs, static_cast<const bt::Value<float>*>(nullptr), 2U).tape() == nullptr);
  // Loading from an empty memory stream: truncated, nothing written.
  bt::MemoryStream empty{nullptr, 0U, 0U, 0U};
  float target[2] = {7.0F, 8.0F};
  const bt::Section section{target, sizeof(target), bt::make_tag('T', 'E', 'S', 'T')};
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&empty), bt::ScalarKind::kFloat32, &section, 1U) ==
                  bt::Status::kTruncated);
  BT_CHECK(t, (target[0] == 7.0F) && (target[1] == 8.0F));
  // A stream whose position is past its size reads as ended, not past it.
  std::uint8_t bytes[4] = {1U, 2U, 3U, 4U};
  bt::MemoryStream odd{bytes, 4U, 2U, 3U};
  BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&odd), bt::ScalarKind::kFloat32, &section, 1U) ==
                  bt::Status::kTruncated);
  // Writing nothing to a null stream is fine; writing something is an error.
  bt::MemoryStream null_sink{nullptr, 0U, 0U, 0U};
  BT_CHECK(t, bt::write_bytes(bt::memory_sink(&null_sink), nullptr, 0U) == bt::Status::kOk);
  BT_CHECK(t, bt::write_bytes(bt::memory_sink(&null_sink), bytes, 1U) != bt::Status::kOk);
}

// --- each misuse its own status, in either order ----------------------------

enum class Misuse { kEmpty, kEmptyFromCall, kForeign, kStale };

bt::Status status_of(Misuse misuse, bool bad_on_left) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  bt::FixedTape<double, 16, 16>& other = scratch(1U);
  tape.reset();
  other.reset();
  auto a = tape.leaf(1.0);
  bt::Value<double> bad;
  switch (misuse) {
    case Misuse::kEmpty:
      break;
    case Misuse::kEmptyFromCall: {
      const bt::Value<double> none[1] = {a};
      bad = bt::reduce_sum(none, 0U);
      break;
    }
    case Misuse::kForeign:
      bad = other.leaf(2.0);
      break;
    case Misuse::kStale: {
      const bt::Mark m = tape.mark();
      bad = tape.leaf(2.0);
      static_cast<void>(tape.rewind(m));
      break;
    }
  }
  // The op is recorded on the left operand's tape, or on the right one's if
  // the left is empty: that tape reports the misuse.
  const bt::Value<double> out = bad_on_left ? (bad + a) : (a + bad);
  if (out.valid() || (out.tape() == nullptr)) {
    return bt::Status::kOk;
  }
  return out.tape()->status();
}

void misuse_statuses_either_order(bt_test::Context& t) {
  for (const bool left : {false, true}) {
    BT_CHECK(t, status_of(Misuse::kEmpty, left) == bt::Status::kEmptyHandle);
    BT_CHECK(t, status_of(Misuse::kEmptyFromCall, left) == bt::Status::kEmptyHandle);
    BT_CHECK(t, status_of(Misuse::kForeign, left) == bt::Status::kForeignValue);
    BT_CHECK(t, status_of(Misuse::kStale, left) == bt::Status::kInvalidHandle);
  }
  // Lists: an empty handle anywhere is reported by the others' tape.
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  tape.reset();
  auto a = tape.leaf(1.0);
  const bt::Value<double> list[3] = {bt::Value<double>(), a, a};
  BT_CHECK(t, !bt::reduce_sum(list, 3U).valid());
  BT_CHECK(t, tape.status() == bt::Status::kEmptyHandle);
  tape.reset();
  a = tape.leaf(1.0);
  const bt::Value<double> w[3] = {bt::Value<double>(), a, a};
  const bt::Value<double> x[3] = {a, a, a};
  BT_CHECK(t, !bt::inner_product(w, x, 3U).valid());
  BT_CHECK(t, tape.status() == bt::Status::kEmptyHandle);
  tape.reset();
  a = tape.leaf(1.0);
  BT_CHECK(t, !bt::log_sum_exp(list, 3U).valid());
  BT_CHECK(t, tape.status() == bt::Status::kEmptyHandle);
  BT_CHECK(t, tape.size() == 1U);
  // backward reports the kind of its root's problem (not sticky).
  tape.reset();
  BT_CHECK(t, tape.backward(bt::Value<double>()) == bt::Status::kEmptyHandle);
  static bt::FixedTape<double, 4> other;
  other.reset();
  BT_CHECK(t, tape.backward(other.leaf(1.0)) == bt::Status::kForeignValue);
  BT_CHECK(t, std::strcmp(bt::status_name(bt::Status::kEmptyHandle), "unknown status") != 0);
}

// Stale handles, as docs/design.md states: detected until the tape grows
// past them again, then they name the new node.
void stale_handles_as_documented(bt_test::Context& t) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  tape.reset();
  auto a = tape.leaf(2.0);
  const bt::Mark m = tape.mark();
  auto e = bt::exp(a);
  BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
  BT_CHECK(t, !e.valid());
  BT_CHECK(t, std::isnan(e.value()));
  static_cast<void>(e + a);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.clear_status();
  auto s = bt::sqr(a);
  BT_CHECK(t, e.valid() && (e.index() == s.index()));  // not detected: documented
  BT_CHECK(t, e.value() == 4.0);
}

// --- IEEE corner cases -------------------------------------------------------

void ieee_relu_and_log_sum_exp(bt_test::Context& t) {
  static bt::FixedTape<double, 24, 24> tape;
  tape.reset();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto n = tape.leaf(nan);
  auto r = bt::relu(n);
  BT_CHECK(t, std::isnan(r.value()));  // as PyTorch: NaN passes through
  BT_CHECK(t, tape.backward(r) == bt::Status::kOk);
  BT_CHECK(t, n.grad() == 1.0);  // as PyTorch: the gradient passes at NaN
  BT_CHECK(t, bt::relu(tape.leaf(-3.0)).value() == 0.0);
  BT_CHECK(t, bt::relu(tape.leaf(3.0)).value() == 3.0);

  tape.reset();
  const bt::Value<double> up[3] = {tape.leaf(kInf), tape.leaf(0.0), tape.leaf(-1.0)};
  auto lse_up = bt::log_sum_exp(up, 3U);
  BT_CHECK(t, lse_up.value() == kInf);
  const bt::Value<double> down[2] = {tape.leaf(-kInf), tape.leaf(-kInf)};
  BT_CHECK(t, bt::log_sum_exp(down, 2U).value() == -kInf);
  const bt::Value<double> both[2] = {tape.leaf(kInf), tape.leaf(-kInf)};
  BT_CHECK(t, bt::log_sum_exp(both, 2U).value() == kInf);
  const bt::Value<double> with_nan[3] = {tape.leaf(1.0), tape.leaf(nan), tape.leaf(kInf)};
  BT_CHECK(t, std::isnan(bt::log_sum_exp(with_nan, 3U).value()));
  // List operands take the same path.
  const bt::Value<double> listed[3] = {up[2], up[0], up[1]};
  BT_CHECK(t, bt::log_sum_exp(listed, 3U).value() == kInf);
  // Finite inputs: unchanged, log(e^0 + e^0) = log 2.
  const bt::Value<double> zeros[2] = {tape.leaf(0.0), tape.leaf(0.0)};
  BT_CHECK(t, bt::log_sum_exp(zeros, 2U).value() == std::log(2.0));
  // The gradient at +inf is softmax = exp(inf - inf) = NaN, as PyTorch's.
  BT_CHECK(t, tape.backward(lse_up) == bt::Status::kOk);
  BT_CHECK(t, std::isnan(up[0].grad()) && (up[1].grad() == 0.0) && (up[2].grad() == 0.0));
}

// Layers used before create() (or after a failed one) report an error;
// attention with no heads once divided by zero (SIGFPE).
void layers_before_create(bt_test::Context& t) {
  static bt::FixedTape<double, 8, 8> tape;
  tape.reset();
  const bt::Value<double> xs[4] = {tape.leaf(1.0), tape.leaf(2.0), tape.leaf(3.0), tape.leaf(4.0)};
  static_cast<void>(xs);
  const bt::nn::CausalSelfAttention<double> attention;
  const bt::View in[1] = {bt::View{0U, 4U}};
  bt::View out[1] = {bt::kNoView};
  BT_CHECK(t, !attention.forward(tape, in, 1U, out));
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.reset();
  static_cast<void>(tape.leaf(1.0));
  const bt::nn::Linear<double> linear;
  const bt::View y = linear.forward(tape, bt::View{0U, 1U});
  BT_CHECK(t, y.count == 0U);
  BT_CHECK(t, tape.status() != bt::Status::kOk);
}

// Found by the tape fuzzer: an interior node's name, a view list with an
// empty run, and interior gradients left by an earlier sweep below a leaf root.
void fuzzer_findings(bt_test::Context& t) {
  // name() of an interior node: nullptr, whatever the buffer held before.
  g_buffer.fill();  // the body holds 0xA5 bytes: a non-null garbage pointer
  const std::size_t need = bt::Tape<double>::bytes_required(4U, 4U);
  BT_CHECK(t, need <= 256U);
  bt::Tape<double> named(g_buffer.body(), need, 4U, 4U);
  auto w = named.param(1.0, BURTORCH_NAME("w"));
  auto y = w + w;
  BT_CHECK(t, bt::param_name(named, y.index()) == nullptr);
#if BURTORCH_CONFIG_PARAM_NAMES
  BT_CHECK(t, (bt::param_name(named, w.index()) != nullptr) && (bt::param_name(named, w.index())[0] == 'w'));
#endif
  // A made-up view list whose slots parse as runs {0, 1} and {1, 0}.
  static bt::FixedTape<double, 8, 8> tape;
  tape.reset();
  const bt::Value<double> x[4] = {tape.leaf(1.0), tape.leaf(2.0), tape.leaf(3.0), tape.leaf(4.0)};
  const bt::Value<double> order[5] = {x[2], x[0], x[1], x[1], x[0]};  // slots 2 0 1 1 0
  static_cast<void>(bt::reduce_sum(order, 5U));
  bt::ViewList made_up;
  made_up.slot = 0U;
  made_up.total = 1U;
  const std::size_t before = tape.size();
  BT_CHECK(t, !bt::inner_product(tape, 3U, made_up, nullptr).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  BT_CHECK(t, tape.size() == before);
  // backward(y), then backward(z) of a newer leaf: y's interior gradient
  // is that of the second sweep (0), not 1 left from the first.
  tape.reset();
  auto a = tape.leaf(3.0);
  auto b = a * a;
  BT_CHECK(t, tape.backward(b) == bt::Status::kOk);
  BT_CHECK(t, (b.grad() == 1.0) && (a.grad() == 6.0));
  auto z = tape.leaf(5.0);
  BT_CHECK(t, tape.backward(z) == bt::Status::kOk);
  BT_CHECK(t, (b.grad() == 0.0) && (z.grad() == 1.0) && (a.grad() == 6.0));
}

// Tape::reduce_range: the node and bits reduce()/log_sum_exp() of the same
// consecutive handles give, and its errors.
void reduce_range_matches_handles(bt_test::Context& t) {
  static bt::FixedTape<double, 8, 8> tape;
  static bt::FixedTape<double, 8, 8> twin;
  const bt::Op ops[] = {bt::Op::kSumR,   bt::Op::kSubR,     bt::Op::kProdR, bt::Op::kMeanR,    bt::Op::kSumSqR,
                        bt::Op::kMeanSqR, bt::Op::kNegMeanR, bt::Op::kVarR,  bt::Op::kVarBiasedR};
  const double in[5] = {0.5, -1.25, 3.0, 2.0, -0.75};
  for (const bt::Op op : ops) {
    tape.reset();
    twin.reset();
    bt::Value<double> xs[5];
    bt::Value<double> ys[5];
    for (int i = 0; i < 5; ++i) {
      xs[i] = tape.leaf(in[i]);
      ys[i] = twin.leaf(in[i]);
    }
    const bt::Value<double> by_range = bt::reduce(tape, op, bt::View{xs[0].index(), 5U});
    const bt::Value<double> by_handles = bt::reduce(twin, op, ys, 5U);
    BT_CHECK(t, by_range.valid() && (bt::node_op(tape, by_range.index()) == op));
    BT_CHECK(t, by_range.value() == by_handles.value());
    BT_CHECK(t, tape.usage().slots == 0U);
    BT_CHECK(t, tape.backward(bt::tanh(by_range)) == bt::Status::kOk);
    BT_CHECK(t, twin.backward(bt::tanh(by_handles)) == bt::Status::kOk);
    for (int i = 0; i < 5; ++i) {
      BT_CHECK(t, xs[i].grad() == ys[i].grad());
    }
  }
  tape.reset();
  const bt::Value<double> zs[3] = {tape.leaf(1.0), tape.leaf(2.0), tape.leaf(3.0)};
  const bt::Value<double> lse = bt::reduce(tape, bt::Op::kLogSumExpR, bt::View{zs[0].index(), 3U});
  BT_CHECK(t, lse.value() == bt::log_sum_exp(zs, 3U).value());
  // Errors: another op, no operands, nodes not recorded; nothing recorded.
  const std::size_t size = tape.size();
  BT_CHECK(t, !bt::reduce(tape, bt::Op::kSumL, bt::View{0U, 3U}).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, !bt::reduce(tape, bt::Op::kSumR, bt::kNoView).valid());  // a failed layer's output
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, !bt::reduce(tape, bt::Op::kSumR, bt::View{2U, 9U}).valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  BT_CHECK(t, tape.size() == size);
}

// Tape::report: a caller's error is sticky like the tape's own, the first
// one stays, kOk records nothing, and later ops fail.
void report_records_a_callers_error(bt_test::Context& t) {
  // On the shared guarded buffer: the micro:bit's 16 KiB has no room for
  // another static tape.
  g_buffer.fill();
  const std::size_t need = bt::Tape<float>::bytes_required(8U, 8U);
  BT_CHECK(t, need <= 256U);
  bt::Tape<float> tape(g_buffer.body(), need, 8U, 8U);
  auto x = tape.leaf(1.0F);
  BT_CHECK(t, tape.report(bt::Status::kOk) == bt::Status::kOk);
  BT_CHECK(t, (x + x).valid());
  BT_CHECK(t, tape.report(bt::Status::kInvalidArgument) == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.report(bt::Status::kCapacityExceeded) == bt::Status::kInvalidArgument);
  const std::size_t size = tape.size();
  BT_CHECK(t, !(x * x).valid());
  BT_CHECK(t, tape.size() == size);
  BT_CHECK(t, tape.backward(x) == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, (x * x).valid());
  BT_CHECK(t, g_buffer.intact(need));
}

// Op families (ext/extension.hpp): a tape holds kTapeFamilies of them; the
// recorder of one more is refused with kCapacityExceeded and records
// nothing, a family whose id another holds with kInvalidArgument; reset()
// frees them. Their backward still runs for the families it holds.
namespace families {
struct Twice {  // 2 x: a row of a program's own
  static constexpr bt::OpKind kKind = bt::OpKind::kUnary;
  static constexpr const char* kName = "twice";
  template <class T>
  static T forward(T x) noexcept {
    return x + x;
  }
  template <class T>
  static void backward(T g, T /*x*/, T /*out*/, T& dx) noexcept {
    dx += g + g;
  }
};
using Mine = bt::OpFamily<bt::family::kFirstUser, Twice>;
using Squatter = bt::OpFamily<bt::family::kPiecewise, Twice>;  // the id of ext/functions.hpp's piecewise family
}  // namespace families

void op_families_per_tape(bt_test::Context& t) {
  g_buffer.fill();
  const std::size_t need = bt::Tape<float>::bytes_required(8U, 8U);
  BT_CHECK(t, need <= 256U);
  bt::Tape<float> tape(g_buffer.body(), need, 8U, 8U);
  auto x = tape.leaf(-0.5F);
  auto y = bt::abs(x) + bt::gelu_tanh(x);  // two families
  const bt::View in{x.index(), 1U};
  const bt::View row = bt::matvec<bt::Op::kRelu>(tape, x.index(), 1U, bt::view_list(tape, &in, 1U), bt::kNoIndex);
  BT_CHECK(t, (row.count == 1U) && y.valid() && (tape.status() == bt::Status::kOk));  // three
  const std::size_t size = tape.size();
  BT_CHECK(t, !families::Mine::unary<families::Twice>(x).valid());  // a fourth
  BT_CHECK(t, (tape.status() == bt::Status::kCapacityExceeded) && (tape.size() == size));
  // The families it holds still sweep: d(|x| + gelu(x))/dx at x = -0.5.
  tape.clear_status();
  BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
  const double t0 = std::tanh(0.7978845608028654 * (-0.5 + 0.044715 * -0.125));
  const double gelu_dx = 0.5 * (1.0 + t0) + (-0.25 * (1.0 - t0 * t0)) * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * 0.25);
  BT_CHECK_CLOSE(t, static_cast<double>(x.grad()), -1.0 + gelu_dx, 1e-6, 1e-6);
  // reset() frees them: the fourth family is taken, and sweeps.
  tape.reset();
  x = tape.leaf(1.5F);
  auto z = families::Mine::unary<families::Twice>(x);
  BT_CHECK(t, z.valid() && (tape.backward(z) == bt::Status::kOk) && (x.grad() == 2.0F));
  // Another family with an id a held family has: refused.
  tape.reset();
  x = tape.leaf(1.0F);
  BT_CHECK(t, bt::abs(x).valid());
  const std::size_t before = tape.size();
  BT_CHECK(t, !families::Squatter::unary<families::Twice>(x).valid());
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == before));
  BT_CHECK(t, g_buffer.intact(need));
}

// After kCapacityExceeded, usage() says what the recording needed: the
// nodes and slots up to the op that did not fit, plus one node per
// elementwise op after it. The count is exact for a chain of elementwise
// ops: a tape of that many nodes records the chain.
void capacity_reports_what_was_needed(bt_test::Context& t) {
  g_buffer.fill();
  const std::size_t need = bt::Tape<float>::bytes_required(6U, 4U);
  BT_CHECK(t, need <= 256U);
  bt::Tape<float> tape(g_buffer.body(), need, 6U, 4U);
  const auto chain = [](bt::Tape<float>& tp) {
    auto x = tp.leaf(0.5F);
    for (int k = 0; k < 9; ++k) {  // 1 + 9 * 2 nodes, 9 * 1 slots (x * c stores c)
      x = bt::tanh(x * 1.5F);
    }
    return x;
  };
  BT_CHECK(t, tape.usage().nodes_needed == 0U);
  static_cast<void>(chain(tape));
  const bt::TapeUsage u = tape.usage();
  BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, (u.nodes == 6U) && (u.nodes_needed == 19U));
  BT_CHECK(t, u.slots_needed >= 3U);  // the slots up to the op that failed (the ops after it are not counted)
  tape.clear_status();
  BT_CHECK(t, tape.usage().nodes_needed == 0U);
  BT_CHECK(t, g_buffer.intact(need));
  // A tape of the nodes reported (and the slots the chain takes) records it.
  static bt::FixedTape<float, 19, 9> big;
  big.reset();
  BT_CHECK(t, chain(big).valid() && (big.status() == bt::Status::kOk) && (big.size() == 19U));
}

// A refused record_view leaves the tape as it found it: the nodes and slots
// its calls recorded are gone (and the status says why).
void refused_record_view_records_nothing(bt_test::Context& t) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  tape.reset();
  auto x = tape.leaf(2.0);
  const std::size_t size = tape.size();
  const std::size_t slots = tape.usage().slots;
  // Two nodes per call (and a slot each): not a view of n one-node ops.
  const bt::View v = bt::record_view(tape, 3U, [&](bt::Index) { return bt::relu(x * 3.0); });
  BT_CHECK(t, (v.count == 0U) && (tape.status() == bt::Status::kInvalidArgument));
  BT_CHECK(t, (tape.size() == size) && (tape.usage().slots == slots));
  // A call that fails half way (the tape fills): the recorded half is gone.
  tape.clear_status();
  const bt::View w = bt::record_view(tape, 20U, [&](bt::Index) { return x + 1.0; });
  BT_CHECK(t, (w.count == 0U) && (tape.status() == bt::Status::kCapacityExceeded));
  BT_CHECK(t, (tape.size() == size) && (tape.usage().slots == slots));
  // Accepted, it is the n nodes.
  tape.clear_status();
  const bt::View ok = bt::record_view(tape, 3U, [&](bt::Index k) { return x + static_cast<double>(k); });
  BT_CHECK(t, (ok.first == size) && (ok.count == 3U) && (tape.value(ok.first + 2U) == 4.0));
}

// An optimizer with state is bound to the parameters of its first step: a
// step over others (or on another tape) is refused, nothing changed;
// reset() frees it. SGD (no state) steps any view. params_view() makes the
// view of parameters recorded by hand, and refuses handles that are not.
void optimizer_binds_its_parameters(bt_test::Context& t) {
  bt::FixedTape<double, 16, 16>& tape = scratch(0U);
  bt::FixedTape<double, 16, 16>& other = scratch(1U);
  tape.reset();
  other.reset();
  const bt::Value<double> p[4] = {tape.param(1.0), tape.param(2.0), tape.param(3.0), tape.param(4.0)};
  const bt::View a = nn::params_view(tape, p, 2U);
  const bt::View b = nn::params_view(tape, p + 2, 2U);
  BT_CHECK(t, (a.first == p[0].index()) && (a.count == 2U) && (b.first == p[2].index()));
  nn::OptimizerOptions<double> adam;
  adam.kind = nn::OptimizerKind::kAdam;
  adam.lr = 0.1;
  double state[8] = {};
  nn::Optimizer<double> opt(adam, state);
  tape.grads()[0] = 1.0;
  BT_CHECK(t, opt.step(tape, a) == bt::Status::kOk);
  const double after = p[0].value();
  BT_CHECK(t, (after < 1.0) && (opt.bound_params().first == a.first) && (opt.bound_params().count == 2U));
  BT_CHECK(t, opt.step(tape, b) == bt::Status::kInvalidArgument);  // another view: refused
  const bt::Value<double> q[2] = {other.param(1.0), other.param(2.0)};
  BT_CHECK(t, opt.step(other, nn::params_view(other, q, 2U)) == bt::Status::kInvalidArgument);  // another tape
  BT_CHECK(t, (p[0].value() == after) && (p[2].value() == 3.0) && (opt.steps() == 1U));
  opt.reset();
  BT_CHECK(t, (opt.steps() == 0U) && (state[0] == 0.0) && (opt.bound_params().count == 0U));
  BT_CHECK(t, opt.step(tape, b) == bt::Status::kOk);
  // SGD keeps no state: any view.
  nn::OptimizerOptions<double> sgd;
  sgd.lr = 0.5;
  nn::Optimizer<double> plain(sgd);
  BT_CHECK(t, (plain.step(tape, a) == bt::Status::kOk) && (plain.step(tape, b) == bt::Status::kOk));
  // params_view refuses what is not parameters one after another.
  const bt::Value<double> gap[2] = {p[0], p[2]};
  BT_CHECK(t, nn::params_view(tape, gap, 2U).count == 0U);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  const bt::Value<double> interior[1] = {p[0] * 2.0};
  BT_CHECK(t, nn::params_view(tape, interior, 1U).count == 0U);
  tape.clear_status();
  BT_CHECK(t, nn::params_view(tape, q, 2U).count == 0U);  // another tape's
  tape.clear_status();
  BT_CHECK(t, nn::params_view(tape, p, 0U).count == 0U);
}

// An interior op recorded while the parameter region is not yet filled
// (fewer leaves than the region holds) is a misuse, not a full tape: it is
// refused with kInvalidArgument and reports no node count, on a tape with
// room to spare; the tape goes on once the status is cleared and the
// region is filled.
void interior_op_inside_parameter_region(bt_test::Context& t) {
  static bt::FixedTape<float, 24, 4, 10> tape;  // small: the suite runs on 16 KB boards
  tape.reset();
  const bt::Value<float> a = tape.param(1.0F);
  const bt::Value<float> b = tape.param(2.0F);
  const bt::Value<float> c = a + b;
  const bt::TapeUsage u = tape.usage();
  BT_CHECK(t, !c.valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, (u.nodes == 2U) && (u.nodes_needed == 0U) && (u.slots_needed == 0U));
  tape.clear_status();
  for (int k = 2; k < 10; ++k) {
    static_cast<void>(tape.param(static_cast<float>(k)));
  }
  const bt::Value<float> d = a + b;
  BT_CHECK(t, d.valid() && (tape.status() == bt::Status::kOk) && (d.value() == 3.0F));
}

const bt_test::TestCase kCases[] = {
    {"interior_op_inside_parameter_region", interior_op_inside_parameter_region},
    {"capacity_reports_what_was_needed", capacity_reports_what_was_needed},
    {"refused_record_view_records_nothing", refused_record_view_records_nothing},
    {"optimizer_binds_its_parameters", optimizer_binds_its_parameters},
    {"op_families_per_tape", op_families_per_tape},
    {"report_records_a_callers_error", report_records_a_callers_error},
    {"reduce_range_matches_handles", reduce_range_matches_handles},
    {"fuzzer_findings", fuzzer_findings},
    {"layers_before_create", layers_before_create},
    {"stale_mark_is_rejected", stale_mark_is_rejected},
    {"foreign_and_forged_marks", foreign_and_forged_marks},
    {"valid_marks_stay_valid", valid_marks_stay_valid},
    {"deep_nesting_never_accepts_stale", deep_nesting_never_accepts_stale},
    {"size_arithmetic_is_checked", size_arithmetic_is_checked},
    {"unreachable_nodes_do_not_leak", unreachable_nodes_do_not_leak},
    {"recorders_check_op_kind", recorders_check_op_kind},
    {"null_pointers", null_pointers},
    {"misuse_statuses_either_order", misuse_statuses_either_order},
    {"stale_handles_as_documented", stale_handles_as_documented},
    {"ieee_relu_and_log_sum_exp", ieee_relu_and_log_sum_exp},
};

}  // namespace

BT_TEST_MAIN("misuse", kCases)
