// SPDX-License-Identifier: Apache-2.0
// nn::Gru and truncated back-propagation through time against PyTorch
// (tests/golden/test_nn_gru_golden.hpp, made by tools/golden/nn/make_gru.py from
// torch.nn.GRU itself):
//  - GRU steps with and without biases: hidden states and the gradients of
//    every parameter, input and the initial state, FP64 to 1e-10 relative,
//    FP32 to 1e-4;
//  - a GRU + Linear head trained by tbptt_window, one window per optimizer
//    step, 100 SGD and 100 Adam steps: the loss of every window and every
//    parameter and the carried state after windows 25, 50, 75, 100, from
//    the weights create() draws (also checked against the golden init).
//    FP64 to 1e-8 relative, FP32 to 1e-4 (both against torch's FP64 run);
//  - the contracts: torch's initialisation and state_dict layout, widths
//    refused with nothing recorded, the memory plan equal to what a window
//    records (one node or slot less fails cleanly), the tape back at the
//    mark after every window, and no gradient crossing a window boundary.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "golden.hpp"
#include "harness.hpp"

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
#include "golden/test_nn_gru_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// --- the model of the trajectories: GRU(I -> H), Linear(H -> 1) per step,
// mean squared error over a window of W steps --------------------------------
struct Size {
  bt::Index input;
  bt::Index hidden;
  bt::Index window;
};
constexpr bt::Index kMaxWindow = 8U;
constexpr bt::Index kMaxInput = 4U;
constexpr bt::Index kMaxHidden = 8U;

constexpr Size kSmall{static_cast<bt::Index>(golden::traj_small_input), static_cast<bt::Index>(golden::traj_small_hidden),
                      static_cast<bt::Index>(golden::traj_small_window)};
#if !BURTORCH_TEST_SMALL_TARGET
constexpr Size kMain{static_cast<bt::Index>(golden::traj_main_input), static_cast<bt::Index>(golden::traj_main_hidden),
                     static_cast<bt::Index>(golden::traj_main_window)};
#endif
// The leak test records two windows on one graph: a tiny model.
constexpr Size kTiny{2U, 3U, 2U};

constexpr nn::GruOptions gru_options(const Size& s) noexcept {
  nn::GruOptions o{};
  o.input = s.input;
  o.hidden = s.hidden;
  o.weight_ih_name = BURTORCH_NAME("weight_ih_l0");
  o.weight_hh_name = BURTORCH_NAME("weight_hh_l0");
  o.bias_ih_name = BURTORCH_NAME("bias_ih_l0");
  o.bias_hh_name = BURTORCH_NAME("bias_hh_l0");
  return o;
}
constexpr nn::LinearOptions head_options(const Size& s) noexcept {
  nn::LinearOptions o{};
  o.in = s.hidden;
  o.out = 1U;
  return o;
}
template <class T>
constexpr std::size_t model_parameters(const Size& s) noexcept {
  return nn::Gru<T>::parameters(gru_options(s)) + nn::Linear<T>::parameters(head_options(s));
}
// One window: the carried state's leaves and the steps (Gru::window_*), the
// inputs as W * I leaves, one head output per step, the loss (W + 1).
template <class T>
constexpr std::size_t window_nodes(const Size& s) noexcept {
  return nn::Gru<T>::window_nodes(gru_options(s), s.window) + (static_cast<std::size_t>(s.window) * s.input) +
         (s.window * nn::Linear<T>::nodes(head_options(s))) + s.window + 1U;
}
template <class T>
constexpr std::size_t window_slots(const Size& s) noexcept {
  return nn::Gru<T>::window_slots(gru_options(s), s.window) + (s.window * nn::Linear<T>::view_slots(head_options(s)));
}
template <class T>
constexpr nn::MemoryPlan model_plan(const Size& s) noexcept {
  return nn::make_plan<T>(model_parameters<T>(s), window_nodes<T>(s), window_slots<T>(s), nn::OptimizerKind::kAdam);
}

constexpr std::size_t max_of(std::size_t a, std::size_t b) noexcept { return (a > b) ? a : b; }

// The plan's arithmetic, by hand: per step 16 H nodes and 14 slots.
static_assert(nn::Gru<float>::nodes(gru_options(Size{4U, 8U, 6U}), 1U) == 128U, "16 H nodes per step");
static_assert(nn::Gru<float>::slots(gru_options(Size{4U, 8U, 6U}), 1U) == 14U, "14 slots per step");
static_assert(model_parameters<float>(Size{4U, 8U, 6U}) == (96U + 192U + 48U + 9U), "GRU(4, 8) + Linear(8, 1)");
static_assert(window_nodes<float>(Size{4U, 8U, 6U}) == (8U + 24U + 768U + 6U + 7U), "one window of 6 steps");
static_assert(window_slots<float>(Size{4U, 8U, 6U}) == ((6U * 14U) + (6U * 7U)), "one window of 6 steps");

// One buffer for every tape of the suite, sized for the largest user.
// A step case: the parameters, leaves x, h0 and c, the steps, a dot per step
// and their sum.
constexpr std::size_t step_case_nodes(std::size_t input, std::size_t hidden, std::size_t steps, bool bias) noexcept {
  nn::GruOptions o{};
  o.input = static_cast<bt::Index>(input);
  o.hidden = static_cast<bt::Index>(hidden);
  o.bias = bias;
  const std::size_t t = steps;
  return nn::Gru<double>::parameters(o) + (t * o.input) + o.hidden + (t * o.hidden) + nn::Gru<double>::nodes(o, t) +
         t + 1U;
}
constexpr std::size_t kStepSlots = 64U;  // 3 steps of 14, a 3-slot dot per step
constexpr std::size_t step_case_bytes(std::size_t input, std::size_t hidden, std::size_t steps, bool bias) noexcept {
  nn::GruOptions o{};
  o.input = static_cast<bt::Index>(input);
  o.hidden = static_cast<bt::Index>(hidden);
  o.bias = bias;
  return bt::Tape<double>::bytes_required(step_case_nodes(input, hidden, steps, bias), kStepSlots,
                                          nn::Gru<double>::parameters(o));
}
constexpr std::size_t kStepBytes =
    max_of(step_case_bytes(static_cast<std::size_t>(golden::gru_bias_input), static_cast<std::size_t>(golden::gru_bias_hidden),
                           static_cast<std::size_t>(golden::gru_bias_steps), true),
           step_case_bytes(static_cast<std::size_t>(golden::gru_nobias_input),
                           static_cast<std::size_t>(golden::gru_nobias_hidden),
                           static_cast<std::size_t>(golden::gru_nobias_steps), false));
constexpr nn::MemoryPlan kTinyPlan = model_plan<double>(kTiny);
constexpr std::size_t kLeakBytes =
    bt::Tape<double>::bytes_required(kTinyPlan.parameters + (2U * kTinyPlan.sample_nodes), 2U * kTinyPlan.slots,
                                     kTinyPlan.parameters);
#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::MemoryPlan kLargest = model_plan<double>(kSmall);
#else
constexpr nn::MemoryPlan kLargest = model_plan<double>(kMain);
#endif
constexpr std::size_t kArenaBytes =
    max_of(max_of(kLargest.tape_bytes, kLeakBytes), kStepBytes);
alignas(64) unsigned char g_arena[kArenaBytes];
// Adam's moments, FP64 or FP32 (one run at a time).
constexpr std::size_t kStateScalars = 2U * kLargest.parameters;
alignas(8) unsigned char g_state[kStateScalars * sizeof(double)];
double g_saved[kTinyPlan.parameters];

template <class T>
T* optimizer_state() noexcept {
  return reinterpret_cast<T*>(g_state);  // BT-DEV-001: scratch carved from a byte buffer
}

using bt_test::Tol;

// The largest differences seen by compare() in the current test: relative
// (over values above 1 % of their array's largest magnitude) and absolute
// relative to that magnitude.
double g_worst_rel = 0.0;
double g_worst_abs = 0.0;

// Compares n values with the golden ones to rel, with an absolute floor of
// abs_floor * max |expected| (for values that cross zero, as
// tests/nn/test_nn_layers.cpp does); tracks the worst differences.
template <class T>
void compare(bt_test::Context& t, const T* got, const double* expected, std::size_t n, double rel, double abs_floor,
             const char* what) {
  double scale = 0.0;
  for (std::size_t i = 0U; i < n; ++i) {
    scale = (std::fabs(expected[i]) > scale) ? std::fabs(expected[i]) : scale;
  }
  bool all = true;
  for (std::size_t i = 0U; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double d = std::fabs(g - expected[i]);
    if (std::fabs(expected[i]) >= (0.01 * scale)) {
      const double r = d / std::fabs(expected[i]);
      g_worst_rel = (r > g_worst_rel) ? r : g_worst_rel;
    }
    const double a = (scale > 0.0) ? (d / scale) : d;
    g_worst_abs = (a > g_worst_abs) ? a : g_worst_abs;
    all = all && bt_test::near(g, expected[i], rel, abs_floor * scale);
  }
  if (!all) {
    for (std::size_t i = 0U; i < n; ++i) {
      BT_CHECK_CLOSE(t, static_cast<double>(got[i]), expected[i], rel, abs_floor * scale);
    }
    bt_test::print("    in ");
    bt_test::print(what);
    bt_test::print("\n");
  }
  BT_CHECK(t, all);
}

void report_worst(const bt_test::Context& t) {
  bt_test::print("  ");
  bt_test::print(t.test_name);
  bt_test::print(": worst difference from PyTorch: relative ");
  bt_test::print_double(g_worst_rel);
  bt_test::print(", absolute / largest ");
  bt_test::print_double(g_worst_abs);
  bt_test::print("\n");
  g_worst_rel = 0.0;
  g_worst_abs = 0.0;
}

template <class T>
bt::View leaves(bt::Tape<T>& tape, const double* v, std::size_t n) {
  return bt::record_view(tape, static_cast<bt::Index>(n), [&](bt::Index i) noexcept { return tape.leaf(static_cast<T>(v[i])); });
}

template <class T>
void overwrite(bt::Tape<T>& tape, bt::View at, const double* v) {
  for (bt::Index i = 0U; i < at.count; ++i) {
    tape.values()[at.first + i] = static_cast<T>(v[i]);
  }
}

// --- GRU steps against torch.nn.GRU ------------------------------------------
struct StepCase {
  bt::Index input;
  bt::Index hidden;
  bt::Index steps;
  bool bias;
  const double* params;
  const double* x;
  const double* h0;
  const double* c;
  const double* h;
  const double* gparams;
  const double* gx;
  const double* gh0;
};

template <class T>
void step_case(bt_test::Context& t, const StepCase& k) {
  nn::GruOptions o;
  o.input = k.input;
  o.hidden = k.hidden;
  o.bias = k.bias;
  const std::size_t count = nn::Gru<T>::parameters(o);
  const std::size_t need = step_case_nodes(k.input, k.hidden, k.steps, k.bias);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), need, kStepSlots, count);
  nn::Rng rng(1U);
  nn::Gru<T> gru;
  BT_CHECK(t, gru.create(tape, o, rng));
  BT_CHECK(t, gru.params().count == count);
  overwrite(tape, gru.params(), k.params);
  const bt::View x = leaves(tape, k.x, static_cast<std::size_t>(k.steps) * k.input);
  const bt::View h0 = leaves(tape, k.h0, k.hidden);
  const bt::View c = leaves(tape, k.c, static_cast<std::size_t>(k.steps) * k.hidden);
  bt::View xs[kMaxWindow];
  bt::View hs[kMaxWindow];
  for (bt::Index s = 0U; s < k.steps; ++s) {
    xs[s] = bt::View{x.first + (s * k.input), k.input};
  }
  const bt::Mark start = tape.mark();
  BT_CHECK(t, gru.forward(tape, xs, k.steps, h0, hs));
  BT_CHECK(t, (tape.size() - start.nodes) == nn::Gru<T>::nodes(o, k.steps));
  BT_CHECK(t, (tape.usage().slots - start.slots) == nn::Gru<T>::slots(o, k.steps));
  // root = sum_t h_t . c_t
  const bt::View parts = bt::record_view(tape, k.steps, [&](bt::Index s) noexcept {
    return bt::inner_product(tape, bt::View{hs[s].first, k.hidden}, bt::View{c.first + (s * k.hidden), k.hidden}, nullptr);
  });
  BT_CHECK(t, tape.backward(bt::reduce(tape, bt::Op::kSumR, bt::View{parts.first, parts.count})) == bt::Status::kOk);
  BT_CHECK(t, tape.size() == need);
  for (bt::Index s = 0U; s < k.steps; ++s) {
    BT_CHECK(t, hs[s].count == k.hidden);
    compare(t, tape.values() + hs[s].first, k.h + (s * k.hidden), k.hidden, Tol<T>::rel, Tol<T>::abs_floor, "h");
  }
  compare(t, tape.grads() + gru.params().first, k.gparams, gru.params().count, Tol<T>::rel, Tol<T>::abs_floor,
          "d params");
  compare(t, tape.grads() + x.first, k.gx, x.count, Tol<T>::rel, Tol<T>::abs_floor, "d x");
  compare(t, tape.grads() + h0.first, k.gh0, h0.count, Tol<T>::rel, Tol<T>::abs_floor, "d h0");
  // step() alone gives the first step's state, bit for bit.
  T first[kMaxHidden];
  std::memcpy(first, tape.values() + hs[0].first, k.hidden * sizeof(T));
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  const bt::View again = gru.step(tape, xs[0], h0);
  BT_CHECK(t, (again.count == k.hidden) && (tape.size() == (start.nodes + nn::Gru<T>::nodes(o, 1U))));
  BT_CHECK(t, std::memcmp(tape.values() + again.first, first, k.hidden * sizeof(T)) == 0);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
}

template <class T>
void steps(bt_test::Context& t) {
  using namespace golden;
  const StepCase cases[] = {
      {static_cast<bt::Index>(gru_bias_input), static_cast<bt::Index>(gru_bias_hidden),
       static_cast<bt::Index>(gru_bias_steps), true, gru_bias_params, gru_bias_x, gru_bias_h0, gru_bias_c, gru_bias_h,
       gru_bias_gparams, gru_bias_gx, gru_bias_gh0},
      {static_cast<bt::Index>(gru_nobias_input), static_cast<bt::Index>(gru_nobias_hidden),
       static_cast<bt::Index>(gru_nobias_steps), false, gru_nobias_params, gru_nobias_x, gru_nobias_h0, gru_nobias_c,
       gru_nobias_h, gru_nobias_gparams, gru_nobias_gx, gru_nobias_gh0},
  };
  for (const StepCase& k : cases) {
    step_case<T>(t, k);
  }
  report_worst(t);
}
void steps_fp64(bt_test::Context& t) { steps<double>(t); }
void steps_fp32(bt_test::Context& t) { steps<float>(t); }

// --- the trajectory model ---------------------------------------------------
template <class T>
struct Model {
  nn::Gru<T> gru;
  nn::Linear<T> head;
  Size size{};

  bool create(bt::Tape<T>& tape, const Size& s, nn::Rng& rng) noexcept {
    size = s;
    return gru.create(tape, gru_options(s), rng) && head.create(tape, head_options(s), rng) &&
           (head.params().first == (gru.params().first + gru.params().count));
  }
  bt::View params() const noexcept {
    return bt::View{gru.params().first, gru.params().count + head.params().count};
  }
  // Records one window from h0: inputs x[W][I] as leaves, W steps, a head
  // output per step, mse against y[W]. *last: the last hidden state.
  bt::Value<T> window_loss(bt::Tape<T>& tape, bt::View h0, const T* x, const T* y, bt::View* last) const noexcept {
    const bt::View in = bt::record_view(tape, size.window * size.input, [&](bt::Index i) noexcept { return tape.leaf(x[i]); });
    bt::View xs[kMaxWindow];
    bt::View hs[kMaxWindow];
    for (bt::Index s = 0U; s < size.window; ++s) {
      xs[s] = bt::View{in.first + (s * size.input), size.input};
    }
    if (!gru.forward(tape, xs, size.window, h0, hs)) {
      return bt::Value<T>(&tape, bt::kNoIndex);
    }
    const bt::View pred = bt::record_view(tape, size.window, [&](bt::Index s) noexcept {
      return bt::Value<T>(&tape, head.forward(tape, hs[s]).first);
    });
    *last = hs[size.window - 1U];
    return nn::mse(tape, pred, y);
  }
};

// The generated stream (tools/golden/nn/make_gru.py, stream()): x_t[k] =
// uniform(-1, 1) in order, y_t = 0.5 x_{t-1}[0] - 0.25 x_{t-2}[1] + 0.125 x_t[I-1].
struct Stream {
  nn::Rng rng;
  bt::Index inputs;
  double prev1[kMaxInput] = {};
  double prev2[kMaxInput] = {};

  Stream(std::uint64_t seed, bt::Index n) noexcept : rng(seed), inputs(n) {}

  // The next `steps` steps: x[steps][inputs], y[steps], rounded to T.
  template <class T>
  void next(bt::Index steps, T* x, T* y) noexcept {
    for (bt::Index s = 0U; s < steps; ++s) {
      double now[kMaxInput] = {};
      for (bt::Index k = 0U; k < inputs; ++k) {
        now[k] = rng.uniform(-1.0, 1.0);
        x[(s * inputs) + k] = static_cast<T>(now[k]);
      }
      y[s] = static_cast<T>(((0.5 * prev1[0]) - (0.25 * prev2[1])) + (0.125 * now[inputs - 1U]));
      for (bt::Index k = 0U; k < inputs; ++k) {
        prev2[k] = prev1[k];
        prev1[k] = now[k];
      }
    }
  }
};

struct Trajectory {
  Size size;
  const double* init;
  const double* sgd_loss;
  const double* sgd_params;
  const double* sgd_carry;
  const double* adam_loss;
  const double* adam_params;
  const double* adam_carry;
};

template <class T>
void trajectory(bt_test::Context& t, const Trajectory& g, bool adam) {
  const Size s = g.size;
  const nn::MemoryPlan plan = model_plan<T>(s);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  BT_CHECK(t, tape.usage().node_capacity == plan.nodes);
  Model<T> model;
  nn::Rng init(static_cast<std::uint64_t>(golden::gru_init_seed));
  BT_CHECK(t, model.create(tape, s, init));
  const bt::View params = model.params();
  BT_CHECK(t, params.count == plan.parameters);
  // The weights create() draws are the generator's reimplementation of them,
  // to the last bit or two: a build that contracts lo + (hi - lo) * u into a
  // fused multiply-add (GCC's default for C++ where the target has one:
  // -march=x86-64-v3, AArch64) rounds a draw once instead of twice, which
  // moves it by up to an ulp of the bound.
  double bound = 0.0;
  for (bt::Index i = 0U; i < params.count; ++i) {
    bound = (std::fabs(g.init[i]) > bound) ? std::fabs(g.init[i]) : bound;
  }
  const double ulp = (sizeof(T) == 8U) ? 2.3e-16 : 1.2e-7;
  bool same = true;
  for (bt::Index i = 0U; i < params.count; ++i) {
    same = same && bt_test::near(static_cast<double>(tape.values()[params.first + i]), g.init[i], 0.0, 2.0 * ulp * bound);
  }
  BT_CHECK(t, same);
  nn::OptimizerOptions<T> config;
  config.kind = adam ? nn::OptimizerKind::kAdam : nn::OptimizerKind::kSgd;
  config.lr = static_cast<T>(adam ? golden::gru_adam_lr : golden::gru_sgd_lr);
  nn::Optimizer<T> opt(config, optimizer_state<T>(), kStateScalars);
  Stream stream(static_cast<std::uint64_t>(golden::gru_data_seed), s.input);
  T carry[kMaxHidden] = {};
  constexpr int kWindows = static_cast<int>(golden::gru_windows);
  static_assert(kWindows >= 20, "first and last ten windows");
  double first_ten = 0.0;
  double last_ten = 0.0;
  const double* loss_golden = adam ? g.adam_loss : g.sgd_loss;
  const double* params_golden = adam ? g.adam_params : g.sgd_params;
  const double* carry_golden = adam ? g.adam_carry : g.sgd_carry;
  bool rewound = true;
  bool peak_is_plan = true;
  for (int w = 0; w < kWindows; ++w) {
    T x[kMaxWindow * kMaxInput];
    T y[kMaxWindow];
    stream.next(s.window, x, y);
    const T loss = nn::tbptt_window(tape, params, carry, s.hidden, [&](bt::Tape<T>& tp, bt::View h0, bt::View* last) noexcept {
          const bt::Value<T> l = model.window_loss(tp, h0, x, y, last);
          peak_is_plan = peak_is_plan && (tp.size() == plan.nodes) && (tp.usage().slots == plan.slots);
          return l;
        });
    compare(t, &loss, loss_golden + w, 1U, Tol<T>::trajectory, 0.0, "loss");
    first_ten += (w < 10) ? static_cast<double>(loss) : 0.0;
    last_ten += (w >= (kWindows - 10)) ? static_cast<double>(loss) : 0.0;
    rewound = rewound && (tape.size() == params.count) && (tape.usage().slots == 0U);
    BT_CHECK(t, opt.step(tape, params) == bt::Status::kOk);
    if (((w + 1) % static_cast<int>(golden::gru_snapshot_every)) == 0) {
      const std::size_t at = static_cast<std::size_t>(((w + 1) / static_cast<int>(golden::gru_snapshot_every)) - 1);
      compare(t, tape.values() + params.first, params_golden + (at * params.count), params.count,
              Tol<T>::trajectory, Tol<T>::abs_floor, "parameters");
      compare(t, carry, carry_golden + (at * s.hidden), s.hidden, Tol<T>::trajectory, Tol<T>::abs_floor, "carry");
    }
  }
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, rewound);
  BT_CHECK(t, peak_is_plan);
  // Training did something: the last ten windows' loss is below the first ten's.
  BT_CHECK(t, last_ten < (0.9 * first_ten));
  report_worst(t);
}

const Trajectory kSmallTrajectory{kSmall,
                                  golden::traj_small_init,
                                  golden::traj_small_sgd_loss,
                                  golden::traj_small_sgd_params,
                                  golden::traj_small_sgd_carry,
                                  golden::traj_small_adam_loss,
                                  golden::traj_small_adam_params,
                                  golden::traj_small_adam_carry};
void small_sgd_fp64(bt_test::Context& t) { trajectory<double>(t, kSmallTrajectory, false); }
void small_adam_fp64(bt_test::Context& t) { trajectory<double>(t, kSmallTrajectory, true); }
void small_sgd_fp32(bt_test::Context& t) { trajectory<float>(t, kSmallTrajectory, false); }
void small_adam_fp32(bt_test::Context& t) { trajectory<float>(t, kSmallTrajectory, true); }
#if !BURTORCH_TEST_SMALL_TARGET
const Trajectory kMainTrajectory{kMain,
                                 golden::traj_main_init,
                                 golden::traj_main_sgd_loss,
                                 golden::traj_main_sgd_params,
                                 golden::traj_main_sgd_carry,
                                 golden::traj_main_adam_loss,
                                 golden::traj_main_adam_params,
                                 golden::traj_main_adam_carry};
void main_sgd_fp64(bt_test::Context& t) { trajectory<double>(t, kMainTrajectory, false); }
void main_adam_fp64(bt_test::Context& t) { trajectory<double>(t, kMainTrajectory, true); }
void main_sgd_fp32(bt_test::Context& t) { trajectory<float>(t, kMainTrajectory, false); }
void main_adam_fp32(bt_test::Context& t) { trajectory<float>(t, kMainTrajectory, true); }
#endif

// --- contracts ----------------------------------------------------------------

// torch.nn.GRU's initialisation U(-1/sqrt(H), 1/sqrt(H)) for every weight and
// bias, drawn in state_dict order (the oracle: a second Rng with the same
// seed and the closed-form bound); the layout and params().
void options_defaults(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 256U, 16U);
  BT_CHECK(t, tape.usage().node_capacity == 256U);
  static_cast<void>(tape.leaf(5.0));  // the parameters need not start at node 0
  nn::Rng rng(7U);
  nn::Rng oracle(7U);
  nn::Gru<double> gru;
  BT_CHECK(t, (gru.params().first == bt::kNoIndex) && (gru.params().count == 0U));
  nn::GruOptions o;
  o.input = 3U;
  o.hidden = 4U;  // bound 1/2
  BT_CHECK(t, o.bias);
  BT_CHECK(t, gru.create(tape, o, rng));
  // weight_ih [12][3] at 1, weight_hh [12][4] at 37, bias_ih [12] at 85, bias_hh [12] at 97.
  BT_CHECK(t, (gru.weight_ih == 1U) && (gru.weight_hh == 37U) && (gru.bias_ih == 85U) && (gru.bias_hh == 97U));
  BT_CHECK(t, (gru.params().first == 1U) && (gru.params().count == 108U) && (tape.size() == 109U));
  BT_CHECK(t, nn::Gru<double>::parameters(o) == 108U);
  bool all = true;
  bool inside = true;
  for (bt::Index i = 0U; i < 108U; ++i) {
    const double v = tape.value(1U + i);
    all = all && bt_test::near(v, oracle.uniform(-0.5, 0.5), 1e-15, 1e-16);
    inside = inside && (std::fabs(v) <= 0.5);
  }
  BT_CHECK(t, all && inside);
  BT_CHECK(t, rng.next_u64() == oracle.next_u64());  // every draw accounted for

  // Without biases: only the two weight matrices.
  nn::Gru<double> plain;
  o.bias = false;
  o.hidden = 2U;
  BT_CHECK(t, plain.create(tape, o, rng));
  BT_CHECK(t, (plain.bias_ih == bt::kNoIndex) && (plain.bias_hh == bt::kNoIndex));
  BT_CHECK(t, (plain.params().first == 109U) && (plain.params().count == 30U) && (tape.size() == 139U));
  BT_CHECK(t, nn::Gru<double>::parameters(o) == 30U);

#if BURTORCH_CONFIG_PARAM_NAMES
  // The names go to their tensors.
  tape.reset();
  nn::Gru<double> named;
  const nn::GruOptions n = gru_options(Size{2U, 2U, 1U});
  BT_CHECK(t, named.create(tape, n, rng));
  BT_CHECK(t, (std::strcmp(bt::param_name(tape, 0U), "weight_ih_l0") == 0) && (std::strcmp(bt::param_name(tape, 11U), "weight_ih_l0") == 0));
  BT_CHECK(t, (std::strcmp(bt::param_name(tape, 12U), "weight_hh_l0") == 0) && (std::strcmp(bt::param_name(tape, 23U), "weight_hh_l0") == 0));
  BT_CHECK(t, (std::strcmp(bt::param_name(tape, 24U), "bias_ih_l0") == 0) && (std::strcmp(bt::param_name(tape, 35U), "bias_hh_l0") == 0));
#endif
}

// Refused: widths other than I and H, no steps, null arrays, a GRU that was
// not created, impossible options. kInvalidArgument, and nothing recorded
// (no node, no slot).
void refuses(bt_test::Context& t) {
  // GRU(3, 2): 42 parameters, 8 leaves, 4 steps of 32 nodes.
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 192U, 64U);
  BT_CHECK(t, tape.usage().node_capacity == 192U);
  nn::Rng rng(3U);
  nn::Gru<double> gru;
  nn::GruOptions o;
  o.input = 3U;
  o.hidden = 2U;
  const double zeros[8] = {};
  // Not created yet: refused too.
  const bt::View early = leaves(tape, zeros, 3U);
  BT_CHECK(t, gru.step(tape, early, bt::View{early.first, 2U}).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == 3U) && (tape.usage().slots == 0U));
  tape.reset();
  BT_CHECK(t, gru.create(tape, o, rng));
  const bt::View x = leaves(tape, zeros, 8U);
  const bt::View x3{x.first, 3U};
  const bt::View h2{x.first + 3U, 2U};
  const std::size_t nodes = tape.size();
  struct Bad {
    bt::View x;
    bt::View h;
  };
  const Bad bad[] = {
      {bt::View{x.first, 2U}, h2},  // input too narrow
      {bt::View{x.first, 4U}, h2},  // input too wide
      {x3, bt::View{x.first, 1U}},  // state too narrow
      {x3, bt::View{x.first, 3U}},  // state too wide
      {bt::kNoView, h2},            // a failed layer's output
      {x3, bt::kNoView},
  };
  for (const Bad& b : bad) {
    const bt::View y = gru.step(tape, b.x, b.h);
    BT_CHECK(t, (y.first == bt::kNoIndex) && (y.count == 0U));
    BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
    BT_CHECK(t, (tape.size() == nodes) && (tape.usage().slots == 0U));
    tape.clear_status();
  }
  // Views of the right widths that are not recorded (past the tape's end,
  // or discarded by a rewind): kInvalidHandle, nothing recorded either.
  const bt::View past{static_cast<bt::Index>(tape.size()), 2U};
  const bt::View straddles{static_cast<bt::Index>(tape.size()) - 1U, 3U};
  BT_CHECK(t, gru.step(tape, x3, past).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidHandle) && (tape.size() == nodes) && (tape.usage().slots == 0U));
  tape.clear_status();
  BT_CHECK(t, gru.step(tape, straddles, h2).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidHandle) && (tape.size() == nodes) && (tape.usage().slots == 0U));
  tape.clear_status();
  {
    bt::View ys[2] = {x3, straddles};
    bt::View out[2];
    BT_CHECK(t, !gru.forward(tape, ys, 2U, h2, out));
    BT_CHECK(t, (tape.status() == bt::Status::kInvalidHandle) && (tape.size() == nodes) && (tape.usage().slots == 0U));
    tape.clear_status();
    ys[1] = x3;
    BT_CHECK(t, !gru.forward(tape, ys, 2U, past, out));
    BT_CHECK(t, (tape.status() == bt::Status::kInvalidHandle) && (tape.size() == nodes) && (tape.usage().slots == 0U));
    tape.clear_status();
  }
  // forward(): one bad width anywhere, no steps, null arrays.
  bt::View xs[4] = {x3, x3, x3, x3};
  bt::View hs[4];
  xs[2] = bt::View{x.first, 2U};
  BT_CHECK(t, !gru.forward(tape, xs, 4U, h2, hs));
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == nodes) && (tape.usage().slots == 0U));
  tape.clear_status();
  xs[2] = x3;
  BT_CHECK(t, !gru.forward(tape, xs, 4U, bt::View{x.first, 3U}, hs));
  BT_CHECK(t, !gru.forward(tape, xs, 0U, h2, hs));
  BT_CHECK(t, !gru.forward(tape, nullptr, 1U, h2, hs));
  BT_CHECK(t, !gru.forward(tape, xs, 1U, h2, nullptr));
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == nodes) && (tape.usage().slots == 0U));
  tape.clear_status();
  // The same calls with the right widths record 4 steps.
  BT_CHECK(t, gru.forward(tape, xs, 4U, h2, hs));
  BT_CHECK(t, (tape.size() - nodes) == nn::Gru<double>::nodes(o, 4U));
  BT_CHECK(t, (hs[3].count == 2U) && (hs[3].first == (tape.size() - 2U)));

  // Impossible options: nothing created, params() empty.
  tape.reset();
  nn::Gru<double> none;
  const bt::Index widths[][2] = {{0U, 4U}, {4U, 0U}, {1U, 40000U}, {0xFFFFFFF0U, 1U}};
  for (const auto& w : widths) {
    nn::GruOptions p;
    p.input = w[0];
    p.hidden = w[1];
    BT_CHECK(t, !nn::Gru<double>::addressable(p));
    BT_CHECK(t, !none.create(tape, p, rng));
    BT_CHECK(t, (none.params().count == 0U) && (tape.size() == 0U));
    BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
    tape.reset();
  }
  // A full tape: create() fails with the tape's status, params() empty.
  bt::Tape<double> small(g_arena, sizeof(g_arena), 20U, 16U);
  BT_CHECK(t, !none.create(small, o, rng));  // 42 parameters on a 20-node tape
  BT_CHECK(t, (none.params().count == 0U) && (small.status() == bt::Status::kCapacityExceeded));
}

// A tape of exactly the plan trains a window; one node or one slot less
// fails cleanly: NaN, kCapacityExceeded, the carry unchanged, the tape back
// at the mark.
template <class T>
void plan_case(bt_test::Context& t, const Size& s, long node_delta, long slot_delta) {
  const nn::MemoryPlan plan = model_plan<T>(s);
  const std::size_t nodes = static_cast<std::size_t>(static_cast<long>(plan.nodes) + node_delta);
  const std::size_t slots = static_cast<std::size_t>(static_cast<long>(plan.slots) + slot_delta);
  BT_CHECK(t, bt::Tape<T>::bytes_required(nodes, slots, plan.parameters) <= sizeof(g_arena));
  bt::Tape<T> tape(g_arena, sizeof(g_arena), nodes, slots, plan.parameters);
  Model<T> model;
  nn::Rng rng(5U);
  BT_CHECK(t, model.create(tape, s, rng));
  Stream stream(8U, s.input);
  T x[kMaxWindow * kMaxInput];
  T y[kMaxWindow];
  T carry[kMaxHidden];
  for (bt::Index k = 0U; k < s.hidden; ++k) {
    carry[k] = static_cast<T>(0.25);
  }
  std::size_t peak_nodes = 0U;
  std::size_t peak_slots = 0U;
  stream.next(s.window, x, y);
  const T loss = nn::tbptt_window(tape, model.params(), carry, s.hidden, [&](bt::Tape<T>& tp, bt::View h0, bt::View* last) {
    const bt::Value<T> l = model.window_loss(tp, h0, x, y, last);
    peak_nodes = tp.size();
    peak_slots = tp.usage().slots;
    return l;
  });
  BT_CHECK(t, (tape.size() == plan.parameters) && (tape.usage().slots == 0U));
  if ((node_delta == 0) && (slot_delta == 0)) {
    BT_CHECK(t, tape.status() == bt::Status::kOk);
    BT_CHECK(t, std::isfinite(static_cast<double>(loss)));
    BT_CHECK(t, (peak_nodes == plan.nodes) && (peak_slots == plan.slots));
    BT_CHECK(t, carry[0] != static_cast<T>(0.25));
  } else {
    BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, std::isnan(static_cast<double>(loss)));
    for (bt::Index k = 0U; k < s.hidden; ++k) {
      BT_CHECK(t, carry[k] == static_cast<T>(0.25));
    }
  }
}

void plan_is_exact(bt_test::Context& t) {
  plan_case<double>(t, kSmall, 0, 0);
  plan_case<double>(t, kSmall, -1, 0);
  plan_case<double>(t, kSmall, 0, -1);
  plan_case<float>(t, kSmall, 0, 0);
  plan_case<float>(t, kSmall, -1, 0);
  plan_case<float>(t, kSmall, 0, -1);
#if !BURTORCH_TEST_SMALL_TARGET
  plan_case<double>(t, kMain, 0, 0);
  plan_case<double>(t, kMain, -1, 0);
  plan_case<double>(t, kMain, 0, -1);
#endif
}

// The gradient of a window is that window's alone. Window 2 through
// tbptt_window after window 1 (whose gradients were left on the parameters)
// equals, bit for bit, window 2 recorded on a fresh graph from the carried
// values; and differs from full back-propagation through both windows, which
// gives the same loss. After each window the tape is back at the mark.
void no_leak_across_windows(bt_test::Context& t) {
  const nn::MemoryPlan plan = kTinyPlan;
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.parameters + (2U * plan.sample_nodes), 2U * plan.slots,
                        plan.parameters);
  BT_CHECK(t, tape.usage().node_capacity == (plan.parameters + (2U * plan.sample_nodes)));
  Model<double> model;
  nn::Rng rng(21U);
  BT_CHECK(t, model.create(tape, kTiny, rng));
  const bt::View params = model.params();
  Stream stream(31U, kTiny.input);
  double x1[kMaxWindow * kMaxInput];
  double y1[kMaxWindow];
  double x2[kMaxWindow * kMaxInput];
  double y2[kMaxWindow];
  stream.next(kTiny.window, x1, y1);
  stream.next(kTiny.window, x2, y2);
  double carry[kMaxHidden] = {};
  auto window = [&](const double* x, const double* y) {
    return nn::tbptt_window(tape, params, carry, kTiny.hidden, [&](bt::Tape<double>& tp, bt::View h0, bt::View* last) {
      return model.window_loss(tp, h0, x, y, last);
    });
  };
  const double loss1 = window(x1, y1);
  BT_CHECK(t, std::isfinite(loss1) && (tape.size() == params.count) && (tape.usage().slots == 0U));
  double carry1[kMaxHidden];
  std::memcpy(carry1, carry, sizeof(carry));
  BT_CHECK(t, carry1[0] != 0.0);
  // Window 1's gradients are still on the parameters here; window 2 must not add to them.
  double window1_norm = nn::gradient_norm(tape, params);
  BT_CHECK(t, window1_norm > 0.0);
  const double loss2 = window(x2, y2);
  BT_CHECK(t, std::isfinite(loss2) && (tape.size() == params.count) && (tape.usage().slots == 0U));
  std::memcpy(g_saved, tape.grads() + params.first, params.count * sizeof(double));

  // Window 2 on a fresh graph from carry1 (entered as leaves).
  tape.zero_grad(params.first, params.count);
  const bt::Mark start = tape.mark();
  const bt::View h0 = leaves(tape, carry1, kTiny.hidden);
  bt::View last = bt::kNoView;
  const bt::Value<double> fresh = model.window_loss(tape, h0, x2, y2, &last);
  BT_CHECK(t, tape.backward(fresh) == bt::Status::kOk);
  BT_CHECK(t, fresh.value() == loss2);
  BT_CHECK(t, std::memcmp(g_saved, tape.grads() + params.first, params.count * sizeof(double)) == 0);
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);

  // Both windows on one graph (the state flows from window 1 into window 2),
  // back-propagated from window 2's loss.
  tape.zero_grad(params.first, params.count);
  const double zeros[kMaxHidden] = {};
  const bt::View z0 = leaves(tape, zeros, kTiny.hidden);
  bt::View h1 = bt::kNoView;
  static_cast<void>(model.window_loss(tape, z0, x1, y1, &h1));
  const bt::Value<double> full = model.window_loss(tape, h1, x2, y2, &last);
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, tape.backward(full) == bt::Status::kOk);
  BT_CHECK(t, full.value() == loss2);  // the same forward values
  BT_CHECK(t, std::memcmp(carry, tape.values() + last.first, kTiny.hidden * sizeof(double)) == 0);
  double differs = 0.0;
  for (bt::Index i = 0U; i < params.count; ++i) {
    const double d = std::fabs(tape.grads()[params.first + i] - g_saved[i]);
    differs = (d > differs) ? d : differs;
  }
  BT_CHECK(t, differs > 1e-6);  // the truncation is real: BPTT through both windows differs
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  BT_CHECK(t, tape.size() == params.count);
}

// tbptt_window refuses, before recording or calling anything: a parameter
// view not on the tape, no carry, width 0; and after the window: a last
// state of another width. NaN, kInvalidArgument, carry unchanged, tape at
// the mark.
void tbptt_refuses(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 192U, 64U);
  BT_CHECK(t, tape.usage().node_capacity == 192U);
  Model<double> model;
  nn::Rng rng(4U);
  BT_CHECK(t, model.create(tape, kTiny, rng));
  const bt::View params = model.params();
  double x[kMaxWindow * kMaxInput];
  double y[kMaxWindow];
  Stream stream(2U, kTiny.input);
  stream.next(kTiny.window, x, y);
  double carry[kMaxHidden] = {0.5, -0.5, 0.25};
  int calls = 0;
  auto loss_of = [&](bt::Tape<double>& tp, bt::View h0, bt::View* last) {
    ++calls;
    return model.window_loss(tp, h0, x, y, last);
  };
  struct Bad {
    bt::View params;
    double* carry;
    bt::Index width;
  };
  const Bad bad[] = {
      {bt::View{params.first, params.count + 1U}, carry, kTiny.hidden},  // past the tape's end
      {bt::kNoView, carry, kTiny.hidden},
      {params, nullptr, kTiny.hidden},
      {params, carry, 0U},
  };
  for (const Bad& b : bad) {
    const double l = nn::tbptt_window(tape, b.params, b.carry, b.width, loss_of);
    BT_CHECK(t, std::isnan(l) && (calls == 0) && (tape.status() == bt::Status::kInvalidArgument));
    BT_CHECK(t, (tape.size() == params.count) && (tape.usage().slots == 0U));
    BT_CHECK(t, (carry[0] == 0.5) && (carry[1] == -0.5) && (carry[2] == 0.25));
    tape.clear_status();
  }
  // The window hands back a last state of the wrong width.
  const double l = nn::tbptt_window(tape, params, carry, kTiny.hidden, [&](bt::Tape<double>& tp, bt::View h0, bt::View* last) {
    const bt::Value<double> loss = model.window_loss(tp, h0, x, y, last);
    last->count = kTiny.hidden - 1U;
    return loss;
  });
  BT_CHECK(t, std::isnan(l) && (tape.status() == bt::Status::kInvalidArgument));
  BT_CHECK(t, (tape.size() == params.count) && (tape.usage().slots == 0U));
  BT_CHECK(t, (carry[0] == 0.5) && (carry[1] == -0.5) && (carry[2] == 0.25));
  tape.clear_status();
  // And the same window accepted: the carry moves on.
  const double ok = nn::tbptt_window(tape, params, carry, kTiny.hidden, loss_of);
  BT_CHECK(t, std::isfinite(ok) && (calls == 1) && (tape.status() == bt::Status::kOk) && (carry[0] != 0.5));
  BT_CHECK(t, tape.size() == params.count);
}

const bt_test::TestCase kCases[] = {
    {"steps_fp64", steps_fp64},
    {"steps_fp32", steps_fp32},
    {"options_defaults", options_defaults},
    {"refuses", refuses},
    {"plan_is_exact", plan_is_exact},
    {"no_leak_across_windows", no_leak_across_windows},
    {"tbptt_refuses", tbptt_refuses},
    {"small_sgd_fp64", small_sgd_fp64},
    {"small_adam_fp64", small_adam_fp64},
    {"small_sgd_fp32", small_sgd_fp32},
    {"small_adam_fp32", small_adam_fp32},
#if !BURTORCH_TEST_SMALL_TARGET
    {"main_sgd_fp64", main_sgd_fp64},
    {"main_adam_fp64", main_adam_fp64},
    {"main_sgd_fp32", main_sgd_fp32},
    {"main_adam_fp32", main_adam_fp32},
#endif
};

}  // namespace

BT_TEST_MAIN("nn_gru", kCases)
