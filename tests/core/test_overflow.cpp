// SPDX-License-Identifier: Apache-2.0
// Capacity: a tape one node (or one argument slot) too small for a graph
// reports kCapacityExceeded for every op kind, returns an invalid handle that
// later ops propagate, never writes past its buffer, and loses nothing it
// already held. The same graph on a tape of exactly the needed size works.
#include <burtorch/burtorch.hpp>

#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

using V = bt::Value<double>;
using Scenario = V (*)(bt::Tape<double>&);

// Each scenario records 4 leaves and then exactly one op of one kind.
V leaves(bt::Tape<double>& tape, V* out) {
  for (int i = 0; i < 4; ++i) {
    out[i] = tape.leaf(0.5 + static_cast<double>(i));
  }
  return out[0];
}
#define SCENARIO(name, expression)          \
  V name(bt::Tape<double>& tape) {          \
    V x[4];                                 \
    static_cast<void>(leaves(tape, x));     \
    return (expression);                    \
  }
SCENARIO(s_add, x[0] + x[1])
SCENARIO(s_sub, x[0] - x[1])
SCENARIO(s_mul, x[0] * x[1])
SCENARIO(s_div, x[0] / x[1])
SCENARIO(s_neg, -x[0])
SCENARIO(s_add_c, x[0] + 2.0)
SCENARIO(s_c_sub, 2.0 - x[0])
SCENARIO(s_c_div, 2.0 / x[0])
SCENARIO(s_mul_c, x[0] * 2.0)
SCENARIO(s_div_c, x[0] / 2.0)
SCENARIO(s_relu, bt::relu(x[0]))
SCENARIO(s_tanh, bt::tanh(x[0]))
SCENARIO(s_exp, bt::exp(x[0]))
SCENARIO(s_log, bt::log(x[0]))
SCENARIO(s_neg_log, bt::neg_log(x[0]))
SCENARIO(s_sigmoid, bt::sigmoid(x[0]))
SCENARIO(s_inv, bt::inv(x[0]))
SCENARIO(s_sqr, bt::sqr(x[0]))
SCENARIO(s_pow3, bt::pow3(x[0]))
SCENARIO(s_sqrt, bt::sqrt(x[0]))
SCENARIO(s_inv_sqrt, bt::inv_sqrt(x[0]))
SCENARIO(s_gelu_tanh, bt::gelu_tanh(x[0]))
SCENARIO(s_silu, bt::silu(x[0]))
SCENARIO(s_abs, bt::abs(x[0]))
SCENARIO(s_leaky_relu, bt::leaky_relu(x[0], 0.1))
SCENARIO(s_bce, bt::bce_with_logits(x[0], 0.25))
SCENARIO(s_huber, bt::huber(x[0], 0.75))
SCENARIO(s_max_range, bt::reduce_max(x, 4U))
SCENARIO(s_max_run, bt::reduce_max(tape, bt::View{x[0].index(), 4U}))
SCENARIO(s_mean2, bt::mean(x[0], x[1]))
SCENARIO(s_add_squares2, bt::add_squares(x[0], x[1]))
SCENARIO(s_mean_squares2, bt::mean_squares(x[0], x[1]))
SCENARIO(s_neg_mean2, bt::negative_mean(x[0], x[1]))
SCENARIO(s_sum_range, bt::reduce_sum(x, 4U))
SCENARIO(s_sub_range, bt::reduce_sub(x, 4U))
SCENARIO(s_mul_range, bt::reduce_mul(x, 4U))
SCENARIO(s_mean_range, bt::reduce_mean(x, 4U))
SCENARIO(s_sum_sq_range, bt::reduce_sum_of_squares(x, 4U))
SCENARIO(s_mean_sq_range, bt::reduce_mean_squares(x, 4U))
SCENARIO(s_neg_mean_range, bt::reduce_negative_mean(x, 4U))
SCENARIO(s_var_range, bt::variance(x, 4U))
SCENARIO(s_var_biased_range, bt::variance_biased(x, 4U))
SCENARIO(s_mean_and_msq, bt::reduce_mean_and_mean_squares(x, 4U).mean_squares)
SCENARIO(s_dot_rr, bt::inner_product(x, x + 2, 2U))
SCENARIO(s_dot_bias, bt::inner_product_with_bias(x, x + 2, 2U, x[3]))
SCENARIO(s_input, tape.input(0.25))

// List operands: the same leaves in another order need argument slots.
V s_sum_list(bt::Tape<double>& tape) {
  V x[4];
  static_cast<void>(leaves(tape, x));
  const V l[4] = {x[3], x[1], x[2], x[0]};
  return bt::reduce_sum(l, 4U);
}
V s_var_list(bt::Tape<double>& tape) {
  V x[4];
  static_cast<void>(leaves(tape, x));
  const V l[4] = {x[3], x[1], x[2], x[0]};
  return bt::variance(l, 4U);
}
V s_max_list(bt::Tape<double>& tape) {
  V x[4];
  static_cast<void>(leaves(tape, x));
  const V l[4] = {x[3], x[1], x[2], x[0]};
  return bt::reduce_max(l, 4U);
}
V s_dot_rl(bt::Tape<double>& tape) {
  V x[4];
  static_cast<void>(leaves(tape, x));
  const V l[2] = {x[3], x[1]};
  return bt::inner_product(x, l, 2U);
}
V s_dot_ll(bt::Tape<double>& tape) {
  V x[4];
  static_cast<void>(leaves(tape, x));
  const V w[2] = {x[2], x[0]};
  const V l[2] = {x[3], x[1]};
  return bt::inner_product(w, l, 2U);
}

struct Case {
  const char* name;
  Scenario build;
};
const Case kScenarios[] = {
    {"add", s_add}, {"sub", s_sub}, {"mul", s_mul}, {"div", s_div}, {"neg", s_neg}, {"add_c", s_add_c},
    {"c_sub", s_c_sub}, {"c_div", s_c_div}, {"mul_c", s_mul_c}, {"div_c", s_div_c}, {"relu", s_relu},
    {"tanh", s_tanh}, {"exp", s_exp}, {"log", s_log}, {"neg_log", s_neg_log}, {"sigmoid", s_sigmoid},
    {"inv", s_inv}, {"sqr", s_sqr}, {"pow3", s_pow3}, {"sqrt", s_sqrt}, {"inv_sqrt", s_inv_sqrt},
    {"mean2", s_mean2}, {"add_squares2", s_add_squares2}, {"mean_squares2", s_mean_squares2},
    {"neg_mean2", s_neg_mean2}, {"sum_range", s_sum_range}, {"sub_range", s_sub_range},
    {"mul_range", s_mul_range}, {"mean_range", s_mean_range}, {"sum_sq_range", s_sum_sq_range},
    {"mean_sq_range", s_mean_sq_range}, {"neg_mean_range", s_neg_mean_range}, {"var_range", s_var_range},
    {"var_biased_range", s_var_biased_range}, {"mean_and_msq", s_mean_and_msq}, {"dot_rr", s_dot_rr},
    {"dot_bias", s_dot_bias}, {"sum_list", s_sum_list}, {"var_list", s_var_list}, {"dot_rl", s_dot_rl},
    {"dot_ll", s_dot_ll}, {"gelu_tanh", s_gelu_tanh}, {"silu", s_silu}, {"abs", s_abs},
    {"leaky_relu", s_leaky_relu}, {"bce_with_logits", s_bce}, {"huber", s_huber}, {"max_range", s_max_range},
    {"max_run", s_max_run}, {"max_list", s_max_list}, {"input", s_input},
};

constexpr std::size_t kBig = 64U;
constexpr std::size_t kGuard = 256U;
constexpr unsigned char kCanary = 0xA5U;
alignas(64) unsigned char g_buffer[bt::Tape<double>::bytes_required(kBig, kBig) + kGuard];

// A tape over the start of g_buffer, sized exactly, with canary bytes from
// the end of its arrays to the end of the buffer.
struct Sized {
  std::size_t bytes;
  bt::Tape<double> tape;
  Sized(std::size_t nodes, std::size_t slots)
      : bytes(bt::Tape<double>::bytes_required(nodes, slots)), tape(prepare(nodes, slots), bytes, nodes, slots) {}
  static unsigned char* prepare(std::size_t nodes, std::size_t slots) {
    std::memset(g_buffer, 0, sizeof(g_buffer));
    const std::size_t used = bt::Tape<double>::bytes_required(nodes, slots);
    std::memset(&g_buffer[used], kCanary, sizeof(g_buffer) - used);
    return g_buffer;
  }
  bool canaries_intact() const {
    for (std::size_t i = bytes; i < sizeof(g_buffer); ++i) {
      if (g_buffer[i] != kCanary) {
        return false;
      }
    }
    return true;
  }
};

void every_op_kind(bt_test::Context& t) {
  for (const Case& c : kScenarios) {
    t.test_name = c.name;
    // Measure what the scenario needs on a big tape.
    std::size_t nodes = 0U;
    std::size_t slots = 0U;
    double reference = 0.0;
    {
      Sized big(kBig, kBig);
      const V out = c.build(big.tape);
      BT_CHECK(t, out.valid());
      nodes = big.tape.size();
      slots = big.tape.usage().slots;
      reference = out.value();
    }
    // Exactly enough: works and gives the same value.
    {
      Sized exact(nodes, slots);
      const V out = c.build(exact.tape);
      BT_CHECK(t, out.valid() && (exact.tape.status() == bt::Status::kOk));
      BT_CHECK(t, out.value() == reference);
      BT_CHECK(t, exact.tape.backward(out) == bt::Status::kOk);
      BT_CHECK(t, exact.canaries_intact());
    }
    // One node less: the op fails cleanly.
    {
      Sized small(nodes - 1U, slots);
      const V out = c.build(small.tape);
      BT_CHECK(t, !out.valid());
      BT_CHECK(t, small.tape.status() == bt::Status::kCapacityExceeded);
      BT_CHECK(t, small.tape.size() == nodes - 1U);
      BT_CHECK(t, small.tape.usage().slots <= slots);
      // The leaves it held are intact; later ops propagate the failure.
      BT_CHECK(t, small.tape.value(0U) == 0.5);
      const V later = out * out + 1.0;
      BT_CHECK(t, !later.valid());
      BT_CHECK(t, small.tape.backward(out) == bt::Status::kCapacityExceeded);
      BT_CHECK(t, small.tape.backward(V(&small.tape, 0U)) == bt::Status::kCapacityExceeded);
      BT_CHECK(t, small.canaries_intact());
    }
    // One argument slot less (ops that use slots): fails, takes no slots.
    if (slots > 0U) {
      Sized small(nodes, slots - 1U);
      const V out = c.build(small.tape);
      BT_CHECK(t, !out.valid());
      BT_CHECK(t, small.tape.status() == bt::Status::kCapacityExceeded);
      BT_CHECK(t, small.tape.size() == nodes - 1U);
      BT_CHECK(t, small.tape.usage().slots == 0U);
      BT_CHECK(t, small.canaries_intact());
    }
  }
  t.test_name = "every_op_kind";
}

// A zero-capacity tape (bad buffer) rejects everything without touching memory.
void unusable_tape(bt_test::Context& t) {
  std::memset(g_buffer, kCanary, sizeof(g_buffer));
  bt::Tape<double> tape(g_buffer, 8U, 4U, 4U);
  const V a = tape.leaf(1.0);
  BT_CHECK(t, !a.valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.backward(a) == bt::Status::kInvalidArgument);
  bool untouched = true;
  for (unsigned char byte : g_buffer) {
    untouched = untouched && (byte == kCanary);
  }
  BT_CHECK(t, untouched);
}

// After an overflow, rewinding to a mark and clearing the status recovers
// the tape (e.g. skip one oversized sample) with earlier nodes intact.
void recover_after_overflow(bt_test::Context& t) {
  Sized sized(6U, 0U);
  bt::Tape<double>& tape = sized.tape;
  const V w = tape.param(2.0);
  const bt::Mark m = tape.mark();
  V acc = w;
  for (int i = 0; i < 10; ++i) {
    acc = acc * w;  // needs 10 nodes; only 5 fit
  }
  BT_CHECK(t, !acc.valid());
  BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
  tape.clear_status();
  const V y = bt::sqr(w);
  BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
  BT_CHECK(t, y.value() == 4.0 && w.grad() == 4.0);
  BT_CHECK(t, sized.canaries_intact());
}

const bt_test::TestCase kCases[] = {
    {"every_op_kind", every_op_kind},
    {"unusable_tape", unusable_tape},
    {"recover_after_overflow", recover_after_overflow},
};

}  // namespace

BT_TEST_MAIN("overflow", kCases)
