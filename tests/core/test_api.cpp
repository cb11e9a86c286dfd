// SPDX-License-Identifier: Apache-2.0
// The public API: the README example, the paper's tiny graph, handles,
// errors, names, the fault hook and the memory formula.
#include <burtorch/burtorch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

#if defined(BURTORCH_TEST_SMALL_TARGET) && BURTORCH_TEST_SMALL_TARGET
constexpr std::size_t kExampleNodes = 32U;  // micro:bit, 16 KB RAM (the graph needs 30)
constexpr std::size_t kScratchBytes = 576U;  // bytes_required(16, 16) for double on 32 bits: 544
#else
constexpr std::size_t kExampleNodes = 256U;
constexpr std::size_t kScratchBytes = 4096U;
#endif

// micrograd's test_more_ops graph; expected values from micrograd/PyTorch.
template <class T>
void example_graph(bt_test::Context& t, double tol) {
  static bt::FixedTape<T, kExampleNodes> tape;
  tape.reset();
  bt::Value<T> a = tape.leaf(T(-4.0));
  bt::Value<T> b = tape.leaf(T(2.0));
  auto c = a + b;
  auto d = a * b + bt::pow3(b);
  c += c + T(1.0);
  c += T(1.0) + c + (-a);
  d += d * T(2.0) + bt::relu(b + a);
  d += T(3.0) * d + bt::relu(b - a);
  auto e = c - d;
  auto f = bt::sqr(e);
  auto g = f / T(2.0);
  g += T(10.0) / f;
  const bt::Status s = tape.backward(g);
  BT_CHECK(t, s == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(g.value()), 24.70408163265306, tol);
  BT_CHECK_NEAR(t, static_cast<double>(a.grad()), 138.83381924198252, tol);
  BT_CHECK_NEAR(t, static_cast<double>(b.grad()), 645.5772594752186, tol);
  BT_CHECK(t, tape.usage().node_capacity == kExampleNodes);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
}

void example_fp64(bt_test::Context& t) { example_graph<double>(t, 1e-14); }
void example_fp32(bt_test::Context& t) { example_graph<float>(t, 1e-5); }

// The paper's tiny graph: g = ((a + b) - (a*b + b^3))^2 / 2.
template <class T>
void tiny_graph(bt_test::Context& t) {
  static bt::FixedTape<T, 32> tape;
  tape.reset();
  auto a = tape.leaf(T(-41.0));
  auto b = tape.leaf(T(2.0));
  auto c = a + b;
  auto d = a * b + bt::pow3(b);
  auto e = c - d;
  auto f = bt::sqr(e);
  auto g = f / T(2.0);
  BT_CHECK(t, tape.backward(g) == bt::Status::kOk);
  // Exact in binary floating point: small integers throughout.
  BT_CHECK(t, g.value() == T(612.5));
  BT_CHECK(t, a.grad() == T(-35.0));
  BT_CHECK(t, b.grad() == T(1050.0));
  // Interior gradients are readable after backward: dg/de = e = 35.
  BT_CHECK(t, e.grad() == T(35.0));
  BT_CHECK(t, tape.size() == 9U);
}
void tiny_fp64(bt_test::Context& t) { tiny_graph<double>(t); }
void tiny_fp32(bt_test::Context& t) { tiny_graph<float>(t); }

void repeated_backward_accumulates_only_leaves(bt_test::Context& t) {
  static bt::FixedTape<double, 32> tape;
  tape.reset();
  auto a = tape.leaf(3.0);
  auto b = tape.leaf(5.0);
  auto p = a * b;
  auto q = p * p;  // q = a^2 b^2
  BT_CHECK(t, tape.backward(q) == bt::Status::kOk);
  BT_CHECK(t, tape.backward(q) == bt::Status::kOk);
  BT_CHECK(t, tape.backward(q) == bt::Status::kOk);
  // Leaves: 3 x dq/da = 3 x 2ab^2 = 450; interior p: dq/dp = 2p = 30 once.
  BT_CHECK(t, a.grad() == 450.0);
  BT_CHECK(t, b.grad() == 270.0);
  BT_CHECK(t, p.grad() == 30.0);
  tape.zero_grad();
  BT_CHECK(t, a.grad() == 0.0);
  BT_CHECK(t, tape.backward(q) == bt::Status::kOk);
  BT_CHECK(t, a.grad() == 150.0);
  // backward of a leaf root: d(a)/d(a) = 1 accumulates.
  tape.zero_grad();
  BT_CHECK(t, tape.backward(a) == bt::Status::kOk);
  BT_CHECK(t, a.grad() == 1.0);
}

void foreign_and_invalid_values(bt_test::Context& t) {
  static bt::FixedTape<double, 16> one;
  static bt::FixedTape<double, 16> two;
  one.reset();
  two.reset();
  auto a = one.leaf(1.0);
  auto b = two.leaf(2.0);
  auto c = a + b;
  BT_CHECK(t, !c.valid());
  BT_CHECK(t, std::isnan(c.value()));
  BT_CHECK(t, one.status() == bt::Status::kForeignValue);
  BT_CHECK(t, two.status() == bt::Status::kOk);
  // Sticky: later valid-looking ops fail and backward reports the error.
  auto d = a * 2.0;
  BT_CHECK(t, !d.valid());
  BT_CHECK(t, one.backward(a) == bt::Status::kForeignValue);
  BT_CHECK(t, one.size() == 1U);
  // backward with a root from another tape is rejected without side effects.
  BT_CHECK(t, two.backward(a) == bt::Status::kForeignValue);
  BT_CHECK(t, two.status() == bt::Status::kOk);

  // A handle discarded by rewind is rejected.
  two.reset();
  auto x = two.leaf(1.0);
  const bt::Mark m = two.mark();
  auto y = bt::exp(x);
  BT_CHECK(t, two.rewind(m) == bt::Status::kOk);
  auto z = y + x;
  BT_CHECK(t, !z.valid());
  BT_CHECK(t, two.status() == bt::Status::kInvalidHandle);
  // clear_status recovers the tape; the old nodes are intact.
  two.clear_status();
  auto w = x * 3.0;
  BT_CHECK(t, w.valid() && (w.value() == 3.0));

  // Default-constructed handles.
  bt::Value<double> none;
  BT_CHECK(t, !none.valid());
  BT_CHECK(t, !(none + none).valid());
  BT_CHECK(t, std::isnan(bt::relu(none).value()));
  BT_CHECK(t, !bt::reduce_sum(&none, 0U).valid());
}

void bad_buffers_and_marks(bt_test::Context& t) {
  alignas(64) static unsigned char buffer[kScratchBytes];
  constexpr std::size_t need = bt::Tape<double>::bytes_required(16U, 16U);
  static_assert(need <= sizeof(buffer), "test buffer");
  bt::Tape<double> small(buffer, need - 1U, 16U, 16U);
  BT_CHECK(t, small.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, small.usage().node_capacity == 0U);
  BT_CHECK(t, !small.leaf(1.0).valid());
  small.reset();
  BT_CHECK(t, small.status() == bt::Status::kInvalidArgument);
  // A buffer at any address: the arrays start at its first 32-byte
  // boundary, so it needs up to kArrayAlign - 1 more bytes than an aligned one.
  constexpr std::size_t kAlign = bt::Tape<double>::kArrayAlign;
  static_assert(need + kAlign <= sizeof(buffer), "test buffer");
  bt::Tape<double> short_of_pad(buffer + 1, need, 16U, 16U);
  BT_CHECK(t, short_of_pad.status() == bt::Status::kInvalidArgument);
  for (std::size_t offset = 1U; offset < kAlign; offset += 5U) {
    std::memset(buffer, 0xA5, sizeof(buffer));
    bt::Tape<double> anywhere(buffer + offset, need + kAlign - 1U, 16U, 16U);
    BT_CHECK(t, (anywhere.status() == bt::Status::kOk) && (anywhere.usage().node_capacity == 16U));
    const auto at = reinterpret_cast<std::uintptr_t>(anywhere.values());  // NOLINT: checks the alignment
    BT_CHECK(t, (at % kAlign) == 0U);
    const unsigned char* first = reinterpret_cast<const unsigned char*>(anywhere.values());  // NOLINT
    BT_CHECK(t, (first >= buffer + offset) && (first < buffer + offset + kAlign));
    // Fill it: nothing before the buffer's start or past its end is written.
    auto x = anywhere.leaf(1.5);
    for (int k = 0; k < 7; ++k) {  // 15 nodes, 14 slots: the tape nearly full
      x = x * 1.0001 + 0.5;
    }
    BT_CHECK(t, anywhere.backward(x) == bt::Status::kOk);
    bool guards = true;
    for (std::size_t i = 0U; i < offset; ++i) {
      guards = guards && (buffer[i] == 0xA5U);
    }
    for (std::size_t i = offset + need + kAlign - 1U; i < sizeof(buffer); ++i) {
      guards = guards && (buffer[i] == 0xA5U);
    }
    BT_CHECK(t, guards);
  }
  std::memset(buffer, 0, sizeof(buffer));
  bt::Tape<double> null_buffer(nullptr, need, 16U, 16U);
  BT_CHECK(t, null_buffer.status() == bt::Status::kInvalidArgument);
  bt::Tape<double> good(buffer, need, 16U, 16U);
  BT_CHECK(t, good.status() == bt::Status::kOk);
  BT_CHECK(t, good.usage().node_capacity == 16U);
  auto a = good.leaf(2.0);
  const bt::Mark m = good.mark();
  auto b = a * a;
  static_cast<void>(b);
  bt::Mark future = good.mark();
  future.nodes += 5U;
  BT_CHECK(t, good.rewind(future) == bt::Status::kInvalidArgument);
  BT_CHECK(t, good.size() == 2U);  // nothing changed
  BT_CHECK(t, good.rewind(m) == bt::Status::kOk);
  BT_CHECK(t, good.size() == 1U);
  BT_CHECK(t, good.value(0U) == 2.0);
}

void memory_formula(bt_test::Context& t) {
  // bytes_required = per-array sizes rounded to kArrayAlign (256 nodes: exact).
  constexpr std::size_t names = BURTORCH_CONFIG_PARAM_NAMES ? sizeof(const char*) : 0U;
  constexpr std::size_t expect = (2U * 256U * 8U) + (2U * 256U * 4U) + (256U * 4U) + (256U * names) + 256U;
  BT_CHECK(t, (bt::Tape<double>::bytes_required(256U, 256U) == expect));
  BT_CHECK(t, (bt::FixedTape<double, 256>::kBytes == expect));
  BT_CHECK(t, (sizeof(bt::FixedTape<double, 256>) >= expect));
  // The tape object itself (pointers, counters, mark history, and the
  // backward of each core wide op it records) stays small.
  constexpr std::size_t wide = bt::detail::kWideEntries * sizeof(bt::detail::FamilyBackward<double>);
  BT_CHECK(t, (sizeof(bt::FixedTape<double, 256>) <= expect + 256U + wide));
  // Rounding: 3 nodes occupy one block per array, 32 bytes (8 on
  // microcontrollers, where padding buys nothing).
#if defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M')
  constexpr std::size_t kBlock = 8U;
  constexpr std::size_t small = (2U * 16U) + 24U + 16U + ((names != 0U) ? 16U : 0U) + 8U;
#else
  constexpr std::size_t kBlock = 32U;
  constexpr std::size_t small = (2U * 32U) + 32U + 32U + ((names != 0U) ? 32U : 0U) + 32U;
#endif
  BT_CHECK(t, (bt::Tape<float>::kArrayAlign == kBlock));
  BT_CHECK(t, (bt::Tape<float>::bytes_required(3U, 3U) == small));
}

void names(bt_test::Context& t) {
  static bt::FixedTape<float, 8> tape;
  tape.reset();
  auto w = tape.param(0.5F, BURTORCH_NAME("w1"));
  auto x = tape.leaf(1.0F);
#if BURTORCH_CONFIG_PARAM_NAMES
  BT_CHECK(t, (bt::param_name(tape, w.index()) != nullptr) && (bt::param_name(tape, w.index())[0] == 'w'));
#else
  BT_CHECK(t, bt::param_name(tape, w.index()) == nullptr);
#endif
  BT_CHECK(t, bt::param_name(tape, x.index()) == nullptr);
  BT_CHECK(t, w.value() == 0.5F);
}

struct HookLog {
  int calls = 0;
  bt::Status last = bt::Status::kOk;
};
void on_fault(bt::Status s, void* context) {
  HookLog* log = static_cast<HookLog*>(context);
  ++log->calls;
  log->last = s;
}

void fault_hook(bt_test::Context& t) {
  static bt::FixedTape<double, 2> tape;
  tape.reset();
  HookLog log;
  tape.set_fault_hook(&on_fault, &log);
  auto a = tape.leaf(1.0);
  auto b = tape.leaf(2.0);
  auto c = a + b;   // third node: capacity exceeded
  auto d = c * b;   // propagates silently
  static_cast<void>(d);
#if BURTORCH_CONFIG_FAULT_HOOK
  BT_CHECK(t, log.calls == 1);
  BT_CHECK(t, log.last == bt::Status::kCapacityExceeded);
#else
  BT_CHECK(t, log.calls == 0);
#endif
  BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
  tape.set_fault_hook(nullptr, nullptr);
}

void non_finite_detection(bt_test::Context& t) {
  static bt::FixedTape<double, 16> tape;
  tape.reset();
  auto a = tape.leaf(0.0);
  auto b = tape.leaf(1.0);
  auto ok = b * 2.0;
  BT_CHECK(t, tape.backward(ok) == bt::Status::kOk);
  BT_CHECK(t, bt::all_finite(tape));
  auto bad = bt::log(a);  // IEEE: -inf, not an error status
  BT_CHECK(t, std::isinf(bad.value()) && (bad.value() < 0.0));
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, !bt::all_finite(tape));
  auto q = b / a;  // +inf
  BT_CHECK(t, std::isinf(q.value()));
}

// Number formatting without stdio (DOT labels, logs on boards). Expected
// spellings are those of glibc's printf("%.<digits>g") with the exponent's
// '+' and leading zeros dropped and exponent -5 written positionally.
bool formats_as(double v, int digits, const char* expect) {
  char out[32];
  const std::size_t n = bt::format_double(v, out, sizeof(out), digits);
  const bool same = (n == std::strlen(expect)) && (std::strcmp(out, expect) == 0);
  if (!same) {
    bt_test::print("    formatted as '");
    bt_test::print(out);
    bt_test::print("'\n");
  }
  return same;
}

void number_formatting(bt_test::Context& t) {
  BT_CHECK(t, formats_as(0.0, 17, "0"));
  BT_CHECK(t, formats_as(-35.0, 17, "-35"));
  BT_CHECK(t, formats_as(612.5, 17, "612.5"));
  BT_CHECK(t, formats_as(0.5, 6, "0.5"));
  BT_CHECK(t, formats_as(138.83381924198252, 17, "138.83381924198252"));
  BT_CHECK(t, formats_as(138.83381924198252, 6, "138.834"));
  BT_CHECK(t, formats_as(24.70408163265306, 6, "24.7041"));
  BT_CHECK(t, formats_as(0.00123, 6, "0.00123"));
  BT_CHECK(t, formats_as(1.5e-7, 6, "1.5e-7"));
  BT_CHECK(t, formats_as(-2.5e20, 6, "-2.5e20"));
  BT_CHECK(t, formats_as(1234567.0, 6, "1.23457e6"));
  // Correctly rounded on every target (exact integer arithmetic, no libc):
  // the digits printf("%.*g") prints on a glibc host.
  BT_CHECK(t, formats_as(0.1, 17, "0.10000000000000001"));
  BT_CHECK(t, formats_as(0.3, 17, "0.29999999999999999"));
  BT_CHECK(t, formats_as(1.0 / 3.0, 17, "0.33333333333333331"));
  BT_CHECK(t, formats_as(2.675, 3, "2.67"));  // 2.67499999999999982236431605997495353221893310546875
  BT_CHECK(t, formats_as(0.95, 1, "0.9"));
  BT_CHECK(t, formats_as(9.5, 1, "1e1"));
  BT_CHECK(t, formats_as(-1e-5, 17, "-0.000010000000000000001"));  // the longest layout: 24 characters
  BT_CHECK(t, formats_as(1e23, 17, "9.9999999999999992e22"));
  BT_CHECK(t, formats_as(1e23, 16, "9.999999999999999e22"));
  BT_CHECK(t, formats_as(1e22, 17, "1e22"));
  BT_CHECK(t, formats_as(18446744073709551616.0, 17, "1.8446744073709552e19"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::max(), 17, "1.7976931348623157e308"));
  BT_CHECK(t, formats_as(-std::numeric_limits<double>::max(), 1, "-2e308"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::min(), 17, "2.2250738585072014e-308"));  // 2^-1022
  BT_CHECK(t, formats_as(0x0.fffffffffffffp-1022, 17, "2.2250738585072009e-308"));         // largest subnormal
  BT_CHECK(t, formats_as(5e-310, 17, "4.9999999999999847e-310"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::denorm_min(), 17, "4.9406564584124654e-324"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::denorm_min(), 1, "5e-324"));
  // Exact ties round to even.
  BT_CHECK(t, formats_as(2.5, 1, "2"));
  BT_CHECK(t, formats_as(3.5, 1, "4"));
  BT_CHECK(t, formats_as(0.125, 2, "0.12"));
  BT_CHECK(t, formats_as(0.375, 2, "0.38"));
  BT_CHECK(t, formats_as(4503599627370495.0, 15, "4.5035996273705e15"));
  BT_CHECK(t, formats_as(4503599627370485.0, 15, "4.50359962737048e15"));
  BT_CHECK(t, formats_as(9007199254740994.0, 17, "9007199254740994"));
  BT_CHECK(t, formats_as(9007199254740994.0, 15, "9.00719925474099e15"));
  BT_CHECK(t, formats_as(-0.0, 17, "-0"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::infinity(), 6, "inf"));
  BT_CHECK(t, formats_as(-std::numeric_limits<double>::infinity(), 6, "-inf"));
  BT_CHECK(t, formats_as(std::numeric_limits<double>::quiet_NaN(), 6, "nan"));
  char small[8];
  BT_CHECK(t, bt::format_double(1.0, small, sizeof(small)) == 0U);  // too small: nothing
  char u[24];
  BT_CHECK(t, (bt::format_unsigned(18446744073709551615ULL, u, sizeof(u)) == 20U) &&
                  (std::strcmp(u, "18446744073709551615") == 0));
}

// A parameter region stores no op code or operands for its leaves; graphs
// over it compute exactly what they compute on a plain tape.
void parameter_region(bt_test::Context& t) {
  // 9 bytes of metadata (8 operands + 1 op code) fewer per parameter.
  constexpr std::size_t plain = bt::Tape<double>::bytes_required(256U, 64U);
  constexpr std::size_t region = bt::Tape<double>::bytes_required(256U, 64U, 192U);
  BT_CHECK(t, plain - region == 192U * 9U);
  BT_CHECK(t, (bt::FixedTape<double, 256, 64, 192>::kBytes == region));

  static bt::FixedTape<double, 32, 32, 4> with_region;
  static bt::FixedTape<double, 32, 32> without;
  with_region.reset();
  without.reset();
  BT_CHECK(t, with_region.usage().params == 4U);
  // An interior node inside the region is refused (no metadata room): a
  // misuse, not a full tape.
  auto p0 = with_region.param(0.5);
  auto too_early = p0 * 2.0;
  BT_CHECK(t, !too_early.valid());
  BT_CHECK(t, with_region.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, with_region.usage().nodes_needed == 0U);
  BT_CHECK(t, with_region.usage().slots == 0U);
  with_region.reset();
  // A view list takes argument slots, no node: running out of slots inside
  // the region is a full tape (kCapacityExceeded, with the slots it
  // needed), as it is after the region. 32 slots hold 5 lists of 3 views.
  bt::Tape<double>& slots_only = with_region;  // no second tape: the Cortex-M0 suite's RAM is tight
  slots_only.reset();
  const bt::Value<double> q0 = slots_only.param(1.0);
  const bt::View one{q0.index(), 1U};
  const bt::View three[3] = {one, one, one};
  for (int k = 0; k < 4; ++k) {
    BT_CHECK(t, bt::view_list(slots_only, three, 3U).slot == static_cast<bt::Index>(7 * k));
  }
  BT_CHECK(t, bt::view_list(slots_only, three, 3U).slot == bt::kNoIndex);
  BT_CHECK(t, slots_only.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, slots_only.usage().slots_needed == 35U);
  with_region.reset();

  bt::Tape<double>* tapes[2] = {&with_region, &without};
  double results[2][6] = {};
  for (int k = 0; k < 2; ++k) {
    bt::Tape<double>& tape = *tapes[k];
    const bt::Value<double> w[4] = {tape.param(0.5), tape.param(-1.5), tape.param(2.0), tape.param(0.25)};
    const bt::Mark m = tape.mark();
    for (int sample = 0; sample < 3; ++sample) {
      const bt::Value<double> x[3] = {tape.leaf(1.0 + sample), tape.leaf(-0.5), tape.leaf(0.1 * sample)};
      auto h = bt::tanh(bt::inner_product_with_bias(w, x, 3U, w[3]));
      auto loss = bt::sqr(h - 0.3) + w[0] * w[1] / 4.0;
      BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
      results[k][0] += loss.value();
      BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
    }
    for (int i = 0; i < 4; ++i) {
      results[k][1 + i] = w[i].grad();
      BT_CHECK(t, bt::node_op(tape, static_cast<bt::Index>(i)) == bt::Op::kLeaf);
      BT_CHECK(t, bt::node_operands(tape, static_cast<bt::Index>(i)).a == bt::kNoIndex);
    }
    results[k][5] = static_cast<double>(tape.size());
  }
  for (int i = 0; i < 6; ++i) {
    BT_CHECK(t, results[0][i] == results[1][i]);
  }
  BT_CHECK(t, results[0][5] == 4.0);
  // Rewinding into the region and recording leaves again is fine.
  with_region.reset();
  static_cast<void>(with_region.param(0.5));
  static_cast<void>(with_region.param(-1.5));
  const bt::Mark two_params = with_region.mark();
  static_cast<void>(with_region.param(2.0));
  static_cast<void>(with_region.param(0.25));
  BT_CHECK(t, with_region.rewind(two_params) == bt::Status::kOk);
  auto again = with_region.param(3.0);
  BT_CHECK(t, again.valid() && again.index() == 2U);
  auto not_yet = again + again;  // index 3 is still inside the region
  BT_CHECK(t, !not_yet.valid());
  // A region larger than the tape is a bad argument.
  // (A buffer that holds the 8 nodes and slots: the region alone is wrong.)
  alignas(64) static unsigned char buffer[bt::Tape<float>::bytes_required(8U, 8U) + 64U];
  bt::Tape<float> bad(buffer, sizeof(buffer), 8U, 8U, 9U);
  BT_CHECK(t, bad.status() == bt::Status::kInvalidArgument);
}

void status_names(bt_test::Context& t) {
  BT_CHECK(t, bt::status_name(bt::Status::kOk)[0] == 'o');
  BT_CHECK(t, bt::status_name(bt::Status::kCapacityExceeded)[0] == 'c');
  BT_CHECK(t, bt::status_name(static_cast<bt::Status>(200))[0] == 'u');
}

const bt_test::TestCase kCases[] = {
    {"example_fp64", example_fp64},
    {"example_fp32", example_fp32},
    {"tiny_fp64", tiny_fp64},
    {"tiny_fp32", tiny_fp32},
    {"repeated_backward_accumulates_only_leaves", repeated_backward_accumulates_only_leaves},
    {"foreign_and_invalid_values", foreign_and_invalid_values},
    {"bad_buffers_and_marks", bad_buffers_and_marks},
    {"memory_formula", memory_formula},
    {"names", names},
    {"fault_hook", fault_hook},
    {"non_finite_detection", non_finite_detection},
    {"status_names", status_names},
    {"number_formatting", number_formatting},
    {"parameter_region", parameter_region},
};

}  // namespace

BT_TEST_MAIN("api", kCases)
