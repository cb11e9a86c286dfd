// SPDX-License-Identifier: Apache-2.0
// Instructions to record each op of the paper's set (and the wide ops) and
// to run its backward, FP32, measured by tools/icount under
// qemu-system-arm -icount shift=0 (icount.hpp).
//
// For each op: `reps` times, rewind to a mark, record k calls of the op
// (timed), set the gradient of every node recorded since the mark to 1 and
// run backward from the newest one (timed). Done for k = k1 and k = k2; the
// difference divided by reps * (k2 - k1) is the cost of one call, free of
// every fixed cost (the counter reads, the rewind, backward's entry checks).
// Record costs still include the calling loop's own few instructions per
// iteration: the line "icount loop" times the same loop with an empty body,
// and tools/icount subtracts it. Backward costs are those of the sweep for
// that node: skip test, dispatch, the op's gradient (forced to 1, so no node
// is skipped as unreached).
//
// Operands: 64 leaf inputs x[i] = 0.25 + i / 64 (positive, so log, sqrt and
// inv stay finite; relu is active), a 16 x 16 weight matrix with 16 biases,
// and a 16-wide gain and shift for scale_shift. Range operands are 16
// consecutive leaves; list operands 16 leaves with a stride of 2 (not
// consecutive, so each is stored as 16 argument slots).
//
// Output: "icount op <name> <nodes per call> <k1> <k2> <reps> <record ticks
// k1> <record ticks k2> <backward ticks k1> <backward ticks k2>".
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <cstdint>

#include "icount.hpp"

namespace bt = burtorch;

namespace {

constexpr std::size_t kInputs = 64U;
constexpr std::size_t kWide = 16U;
constexpr std::size_t kParams = kInputs + (kWide * kWide) + kWide + kWide + kWide;
#if ICOUNT_SMALL_BOARD
// 16 KiB of RAM: fewer calls per measurement, more repetitions.
constexpr std::uint32_t kK1 = 2U;
constexpr std::uint32_t kK2 = 6U;
constexpr std::uint32_t kWideK1 = 1U;
constexpr std::uint32_t kWideK2 = 3U;
constexpr std::uint32_t kReps = 32U;
constexpr std::size_t kInterior = 64U;
constexpr std::size_t kSlots = 320U;
#else
constexpr std::uint32_t kK1 = 8U;
constexpr std::uint32_t kK2 = 40U;
constexpr std::uint32_t kWideK1 = 1U;
constexpr std::uint32_t kWideK2 = 5U;
constexpr std::uint32_t kReps = 16U;
constexpr std::size_t kInterior = 128U;
constexpr std::size_t kSlots = 2048U;
#endif

bt::FixedTape<float, kParams + kInterior, kSlots, kParams> g_tape;

struct Operands {
  bt::Value<float> x[kInputs];
  bt::Value<float> range_a[kWide];  // x[0..16)
  bt::Value<float> range_b[kWide];  // x[16..32)
  bt::Value<float> list_a[kWide];   // x[32], x[34], ..., x[62]
  bt::Value<float> list_b[kWide];   // x[33], x[35], ..., x[63]
  bt::Index weight = 0U;
  bt::Index bias = 0U;
  bt::Index scale = 0U;
  bt::Index shift = 0U;
  bt::ViewList one_run;   // x[0..16) as one run
  bt::ViewList two_runs;  // x[0..8) and x[16..24)
};

Operands g_in;

void fail(const char* what) {
  icount::print("FAIL: ");
  icount::print(what);
  icount::print(": ");
  icount::print(bt::status_name(g_tape.status()));
  icount::print("\n");
  bt::port::exit(1);
}

struct Sums {
  std::uint64_t record = 0U;
  std::uint64_t backward = 0U;
};

template <class F>
Sums run(const bt::Mark& start, std::uint32_t k, std::uint32_t reps, F& f) {
  Sums s;
  for (std::uint32_t r = 0U; r < reps; ++r) {
    if (g_tape.rewind(start) != bt::Status::kOk) {
      fail("rewind");
    }
    const std::uint64_t t0 = icount::ticks();
    for (std::uint32_t i = 0U; i < k; ++i) {
      f();
    }
    const std::uint64_t t1 = icount::ticks();
    s.record += t1 - t0;
    if (g_tape.status() != bt::Status::kOk) {
      fail("record");
    }
    float* const g = g_tape.grads();
    const std::size_t end = g_tape.size();
    for (std::size_t i = start.nodes; i < end; ++i) {
      g[i] = 1.0F;
    }
    const bt::Value<float> root(&g_tape, static_cast<bt::Index>(end - 1U));
    const std::uint64_t t2 = icount::ticks();
    const bt::Status st = g_tape.backward(root);
    const std::uint64_t t3 = icount::ticks();
    if (st != bt::Status::kOk) {
      fail("backward");
    }
    s.backward += t3 - t2;
  }
  return s;
}

template <class F>
void measure(const char* name, std::uint32_t nodes_per_call, bool wide, F f) {
  const std::uint32_t k1 = wide ? kWideK1 : kK1;
  const std::uint32_t k2 = wide ? kWideK2 : kK2;
  const bt::Mark start = g_tape.mark();
  const Sums a = run(start, k1, kReps, f);
  const Sums b = run(start, k2, kReps, f);
  if (g_tape.rewind(start) != bt::Status::kOk) {
    fail("rewind");
  }
  icount::print("icount op ");
  icount::print(name);
  const std::uint64_t fields[] = {nodes_per_call, k1, k2, kReps, a.record, b.record, a.backward, b.backward};
  for (const std::uint64_t v : fields) {
    icount::print(" ");
    icount::print_u(v);
  }
  icount::print("\n");
}

// The calling loop with nothing in it (an empty asm statement the compiler
// must keep): "icount loop <k1> <k2> <reps> <ticks k1> <ticks k2>", for the
// single-node and the wide settings.
void measure_loop(std::uint32_t k1, std::uint32_t k2) {
  std::uint64_t sums[2] = {0U, 0U};
  const std::uint32_t ks[2] = {k1, k2};
  for (std::uint32_t j = 0U; j < 2U; ++j) {
    for (std::uint32_t r = 0U; r < kReps; ++r) {
      const std::uint32_t k = ks[j];
      const std::uint64_t t0 = icount::ticks();
      for (std::uint32_t i = 0U; i < k; ++i) {
        __asm__ volatile("");
      }
      const std::uint64_t t1 = icount::ticks();
      sums[j] += t1 - t0;
    }
  }
  icount::print("icount loop ");
  const std::uint64_t fields[] = {k1, k2, kReps, sums[0], sums[1]};
  for (std::size_t i = 0U; i < 5U; ++i) {
    if (i != 0U) {
      icount::print(" ");
    }
    icount::print_u(fields[i]);
  }
  icount::print("\n");
}

void make_operands() {
  for (std::size_t i = 0U; i < kInputs; ++i) {
    g_in.x[i] = g_tape.param(0.25F + (static_cast<float>(i) / 64.0F));
  }
  g_in.weight = static_cast<bt::Index>(g_tape.size());
  for (std::size_t i = 0U; i < (kWide * kWide); ++i) {
    static_cast<void>(g_tape.param(0.01F * static_cast<float>((i % 7U) + 1U)));
  }
  g_in.bias = static_cast<bt::Index>(g_tape.size());
  for (std::size_t i = 0U; i < kWide; ++i) {
    static_cast<void>(g_tape.param(0.1F));
  }
  g_in.scale = static_cast<bt::Index>(g_tape.size());
  for (std::size_t i = 0U; i < kWide; ++i) {
    static_cast<void>(g_tape.param(1.5F));
  }
  g_in.shift = static_cast<bt::Index>(g_tape.size());
  for (std::size_t i = 0U; i < kWide; ++i) {
    static_cast<void>(g_tape.param(-0.5F));
  }
  for (std::size_t i = 0U; i < kWide; ++i) {
    g_in.range_a[i] = g_in.x[i];
    g_in.range_b[i] = g_in.x[kWide + i];
    g_in.list_a[i] = g_in.x[32U + (2U * i)];
    g_in.list_b[i] = g_in.x[33U + (2U * i)];
  }
  const bt::View one[1] = {{g_in.x[0].index(), 16U}};
  g_in.one_run = bt::view_list(g_tape, one, 1U);
  const bt::View two[2] = {{g_in.x[0].index(), 8U}, {g_in.x[16].index(), 8U}};
  g_in.two_runs = bt::view_list(g_tape, two, 2U);
  if (g_tape.status() != bt::Status::kOk) {
    fail("operands");
  }
}

}  // namespace

int main() {
  icount::print("burtorch-ops-icount: record and backward per op, FP32\n");
  icount::calibrate(100000U);
  make_operands();
  measure_loop(kK1, kK2);
  measure_loop(kWideK1, kWideK2);

  const bt::Value<float> a = g_in.x[3];
  const bt::Value<float> b = g_in.x[40];
  const bt::Value<float>* ra = g_in.range_a;
  const bt::Value<float>* rb = g_in.range_b;
  const bt::Value<float>* la = g_in.list_a;
  const bt::Value<float>* lb = g_in.list_b;
  // Arithmetic between values and with constants.
  measure("add", 1U, false, [&] { static_cast<void>(a + b); });
  measure("sub", 1U, false, [&] { static_cast<void>(a - b); });
  measure("mul", 1U, false, [&] { static_cast<void>(a * b); });
  measure("div", 1U, false, [&] { static_cast<void>(a / b); });
  measure("neg", 1U, false, [&] { static_cast<void>(-a); });
  measure("add_const", 1U, false, [&] { static_cast<void>(a + 2.0F); });
  measure("sub_const", 1U, false, [&] { static_cast<void>(a - 2.0F); });
  measure("const_sub", 1U, false, [&] { static_cast<void>(2.0F - a); });
  measure("mul_const", 1U, false, [&] { static_cast<void>(a * 1.5F); });
  measure("div_const", 1U, false, [&] { static_cast<void>(a / 1.5F); });
  measure("const_div", 1U, false, [&] { static_cast<void>(2.0F / a); });
  // Scalar functions.
  measure("relu", 1U, false, [&] { static_cast<void>(bt::relu(a)); });
  measure("tanh", 1U, false, [&] { static_cast<void>(bt::tanh(a)); });
  measure("exp", 1U, false, [&] { static_cast<void>(bt::exp(a)); });
  measure("log", 1U, false, [&] { static_cast<void>(bt::log(a)); });
  measure("neg_log", 1U, false, [&] { static_cast<void>(bt::neg_log(a)); });
  measure("sigmoid", 1U, false, [&] { static_cast<void>(bt::sigmoid(a)); });
  measure("inv", 1U, false, [&] { static_cast<void>(bt::inv(a)); });
  measure("sqr", 1U, false, [&] { static_cast<void>(bt::sqr(a)); });
  measure("pow3", 1U, false, [&] { static_cast<void>(bt::pow3(a)); });
  measure("sqrt", 1U, false, [&] { static_cast<void>(bt::sqrt(a)); });
  measure("inv_sqrt", 1U, false, [&] { static_cast<void>(bt::inv_sqrt(a)); });
  measure("mean", 1U, false, [&] { static_cast<void>(bt::mean(a, b)); });
  measure("add_squares", 1U, false, [&] { static_cast<void>(bt::add_squares(a, b)); });
  measure("mean_squares", 1U, false, [&] { static_cast<void>(bt::mean_squares(a, b)); });
  measure("negative_mean", 1U, false, [&] { static_cast<void>(bt::negative_mean(a, b)); });
  // Reductions over 16 operands: range (consecutive) and list.
  measure("reduce_sum/16R", 1U, false, [&] { static_cast<void>(bt::reduce_sum(ra, kWide)); });
  measure("reduce_sum/16L", 1U, false, [&] { static_cast<void>(bt::reduce_sum(la, kWide)); });
  measure("reduce_sub/16R", 1U, false, [&] { static_cast<void>(bt::reduce_sub(ra, kWide)); });
  measure("reduce_sub/16L", 1U, false, [&] { static_cast<void>(bt::reduce_sub(la, kWide)); });
  measure("reduce_mul/16R", 1U, false, [&] { static_cast<void>(bt::reduce_mul(ra, kWide)); });
  measure("reduce_mul/16L", 1U, false, [&] { static_cast<void>(bt::reduce_mul(la, kWide)); });
  measure("reduce_mean/16R", 1U, false, [&] { static_cast<void>(bt::reduce_mean(ra, kWide)); });
  measure("reduce_mean/16L", 1U, false, [&] { static_cast<void>(bt::reduce_mean(la, kWide)); });
  measure("reduce_sum_of_squares/16R", 1U, false, [&] { static_cast<void>(bt::reduce_sum_of_squares(ra, kWide)); });
  measure("reduce_sum_of_squares/16L", 1U, false, [&] { static_cast<void>(bt::reduce_sum_of_squares(la, kWide)); });
  measure("reduce_mean_squares/16R", 1U, false, [&] { static_cast<void>(bt::reduce_mean_squares(ra, kWide)); });
  measure("reduce_mean_squares/16L", 1U, false, [&] { static_cast<void>(bt::reduce_mean_squares(la, kWide)); });
  measure("reduce_negative_mean/16R", 1U, false, [&] { static_cast<void>(bt::reduce_negative_mean(ra, kWide)); });
  measure("reduce_negative_mean/16L", 1U, false, [&] { static_cast<void>(bt::reduce_negative_mean(la, kWide)); });
  measure("variance/16R", 1U, false, [&] { static_cast<void>(bt::variance(ra, kWide)); });
  measure("variance/16L", 1U, false, [&] { static_cast<void>(bt::variance(la, kWide)); });
  measure("variance_biased/16R", 1U, false, [&] { static_cast<void>(bt::variance_biased(ra, kWide)); });
  measure("variance_biased/16L", 1U, false, [&] { static_cast<void>(bt::variance_biased(la, kWide)); });
  // Inner products of 16 pairs and log-sum-exp of 16.
  measure("inner_product/16RR", 1U, false, [&] { static_cast<void>(bt::inner_product(ra, rb, kWide)); });
  measure("inner_product/16RL", 1U, false, [&] { static_cast<void>(bt::inner_product(ra, lb, kWide)); });
  measure("inner_product/16LL", 1U, false, [&] { static_cast<void>(bt::inner_product(la, lb, kWide)); });
  measure("log_sum_exp/16R", 1U, false, [&] { static_cast<void>(bt::log_sum_exp(ra, kWide)); });
  measure("log_sum_exp/16L", 1U, false, [&] { static_cast<void>(bt::log_sum_exp(la, kWide)); });
  // Wide ops.
  const bt::Index w = g_in.weight;
  const bt::Index bias = g_in.bias;
  const bt::Index x0 = g_in.x[0].index();
  measure("dot_views/2x8", 1U, false, [&] {
    static_cast<void>(bt::inner_product(g_tape, w, g_in.two_runs, nullptr));
  });
  measure("matvec/16x16", 16U, true, [&] { static_cast<void>(bt::matvec(g_tape, w, 16U, g_in.one_run, bias)); });
  measure("scale_shift/16", 16U, true, [&] {
    static_cast<void>(bt::scale_shift(g_tape, g_in.scale, x0, g_in.shift, 16U));
  });
  icount::print("icount end\n");
  bt::port::exit(0);
}
