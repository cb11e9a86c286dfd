// SPDX-License-Identifier: Apache-2.0
// nn layers, losses, models and optimizers against PyTorch: values and
// gradients for the same weights and inputs (tests/golden/test_nn_golden.hpp, made
// by tools/golden/nn/make_layers.py). FP64 to 1e-10 relative, FP32 to 1e-4.
// Also the API's contracts: the options structs' defaults (torch.nn's
// initialisation, drawn in order), each layer's and model's params(), and
// optimizer steps, serial batches and clipping over a view that is not on
// the tape or wider than the optimizer's state: refused, nothing changed.
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
#include "golden/test_nn_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// One buffer for every test's tape (RAM of the small boards), sized for the
// largest: the small GPT in FP64.
constexpr nn::MlpOptions kSmallMlp{7U, 3U, 4U, 5U};
constexpr nn::GptOptions kSmallGpt{11U, 4U, 8U, 2U, 1U, 1e-5};
#if BURTORCH_TEST_SMALL_TARGET
// Tiny boards (16 KB RAM): layers, losses and optimizers only.
alignas(64) unsigned char g_arena[bt::Tape<double>::bytes_required(128U, 128U)];
#else
constexpr nn::MemoryPlan kGptPlan = nn::Gpt<double>::plan(kSmallGpt, nn::OptimizerKind::kSgd);
alignas(64) unsigned char g_arena[kGptPlan.tape_bytes];
#endif

using bt_test::check_array;
using bt_test::max_abs;
using bt_test::Tol;

template <class T>
bt::Index leaves(bt::Tape<T>& tape, const double* v, std::size_t n) {
  const bt::Index first = static_cast<bt::Index>(tape.size());
  for (std::size_t i = 0U; i < n; ++i) {
    static_cast<void>(tape.leaf(static_cast<T>(v[i])));
  }
  return first;
}

template <class T>
void overwrite(bt::Tape<T>& tape, bt::Index first, const double* v, std::size_t n) {
  for (std::size_t i = 0U; i < n; ++i) {
    tape.values()[first + i] = static_cast<T>(v[i]);
  }
}

// Sets the gradients of the nodes of v to g[0..v.count).
template <class T>
void overwrite_grads(bt::Tape<T>& tape, bt::View v, const double* g) {
  for (bt::Index i = 0U; i < v.count; ++i) {
    tape.grads()[v.first + i] = static_cast<T>(g[i]);
  }
}

// sum(view[i] * c[i]) as a root, c on the tape as leaves.
template <class T>
bt::Value<T> weighted_sum(bt::Tape<T>& tape, bt::View y, bt::Index c, std::size_t n) {
  bt::Value<T> ys[64];
  bt::Value<T> cs[64];
  for (std::size_t i = 0U; i < n; ++i) {
    ys[i] = bt::Value<T>(&tape, y.first + static_cast<bt::Index>(i));
    cs[i] = bt::Value<T>(&tape, c + static_cast<bt::Index>(i));
  }
  return bt::inner_product(ys, cs, n);
}

struct LinearCase {
  nn::Activation act;
  bool bias;
  const double* w;
  const double* b;
  const double* x;
  const double* c;
  const double* y;
  const double* gw;
  const double* gb;
  const double* gx;
};

template <class T>
void linear_case(bt_test::Context& t, const LinearCase& k) {
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 128U, 128U);
  nn::Rng rng(1U);
  nn::Linear<T> lin;
  nn::LinearOptions o;
  o.in = 5U;
  o.out = 3U;
  o.act = k.act;
  o.bias = k.bias;
  o.weight_init = nn::Init::zeros();
  o.bias_init = nn::Init::zeros();
  BT_CHECK(t, lin.create(tape, o, rng));
  overwrite(tape, lin.weight, k.w, 15U);
  if (k.bias) {
    overwrite(tape, lin.bias, k.b, 3U);
  }
  const bt::Index x = leaves(tape, k.x, 5U);
  const bt::Index c = leaves(tape, k.c, 3U);
  const bt::View y = lin.forward(tape, bt::View{x, 5U});
  BT_CHECK(t, y.count == 3U);
  BT_CHECK(t, tape.backward(weighted_sum(tape, y, c, 3U)) == bt::Status::kOk);
  check_array(t, tape.values() + y.first, k.y, 3U, "linear y");
  check_array(t, tape.grads() + lin.weight, k.gw, 15U, "linear dW");
  if (k.bias) {
    check_array(t, tape.grads() + lin.bias, k.gb, 3U, "linear db");
  }
  check_array(t, tape.grads() + x, k.gx, 5U, "linear dx");
}

template <class T>
void linear_all(bt_test::Context& t) {
  using namespace golden;
  const LinearCase cases[] = {
      {nn::Activation::kIdentity, true, linear_identity_w, linear_identity_b, linear_identity_x, linear_identity_c,
       linear_identity_y, linear_identity_gw, linear_identity_gb, linear_identity_gx},
      {nn::Activation::kTanh, true, linear_tanh_w, linear_tanh_b, linear_tanh_x, linear_tanh_c, linear_tanh_y,
       linear_tanh_gw, linear_tanh_gb, linear_tanh_gx},
      {nn::Activation::kTanh, false, linear_tanh_nobias_w, linear_tanh_nobias_b, linear_tanh_nobias_x,
       linear_tanh_nobias_c, linear_tanh_nobias_y, linear_tanh_nobias_gw, linear_tanh_nobias_gb,
       linear_tanh_nobias_gx},
      {nn::Activation::kRelu, true, linear_relu_w, linear_relu_b, linear_relu_x, linear_relu_c, linear_relu_y,
       linear_relu_gw, linear_relu_gb, linear_relu_gx},
      {nn::Activation::kSigmoid, true, linear_sigmoid_w, linear_sigmoid_b, linear_sigmoid_x, linear_sigmoid_c,
       linear_sigmoid_y, linear_sigmoid_gw, linear_sigmoid_gb, linear_sigmoid_gx},
  };
  for (const LinearCase& k : cases) {
    linear_case<T>(t, k);
  }
}
void linear_fp64(bt_test::Context& t) { linear_all<double>(t); }
void linear_fp32(bt_test::Context& t) { linear_all<float>(t); }

template <class T>
void layernorm(bt_test::Context& t) {
  using namespace golden;
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 128U, 128U);
  nn::Rng rng(1U);
  nn::LayerNorm<T> ln;
  nn::LayerNormOptions o;
  o.width = 7U;
  BT_CHECK(t, ln.create(tape, o, rng));
  overwrite(tape, ln.gamma, layernorm_g, 7U);
  overwrite(tape, ln.beta, layernorm_beta, 7U);
  const bt::Index x = leaves(tape, layernorm_x, 7U);
  const bt::Index c = leaves(tape, layernorm_c, 7U);
  const bt::View y = ln.forward(tape, bt::View{x, 7U});
  BT_CHECK(t, tape.size() == (28U + nn::LayerNorm<T>::nodes(o)));
  BT_CHECK(t, tape.backward(weighted_sum(tape, y, c, 7U)) == bt::Status::kOk);
  check_array(t, tape.values() + y.first, layernorm_y, 7U, "layernorm y");
  check_array(t, tape.grads() + x, layernorm_gx, 7U, "layernorm dx");
  check_array(t, tape.grads() + ln.gamma, layernorm_gg, 7U, "layernorm dgamma");
  check_array(t, tape.grads() + ln.beta, layernorm_gbeta, 7U, "layernorm dbeta");
}
void layernorm_fp64(bt_test::Context& t) { layernorm<double>(t); }
void layernorm_fp32(bt_test::Context& t) { layernorm<float>(t); }

#if !BURTORCH_TEST_SMALL_TARGET
template <class T>
void attention(bt_test::Context& t) {
  using namespace golden;
  constexpr bt::Index kD = 8U;
  constexpr bt::Index kSteps = 5U;
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 1024U, 2048U);
  nn::Rng rng(1U);
  nn::CausalSelfAttention<T> att;
  nn::AttentionOptions o;
  o.width = kD;
  o.heads = 2U;
  o.weight_init = nn::Init::zeros();
  o.proj_init = nn::Init::zeros();
  BT_CHECK(t, att.create(tape, o, rng));
  BT_CHECK(t, tape.size() == attention_params_n);
  overwrite(tape, 0U, attention_params, attention_params_n);
  const bt::Index x = leaves(tape, attention_x, kSteps * kD);
  const bt::Index c = leaves(tape, attention_c, kSteps * kD);
  bt::View xs[kSteps];
  bt::View ys[kSteps];
  for (bt::Index s = 0U; s < kSteps; ++s) {
    xs[s] = bt::View{x + (s * kD), kD};
  }
  const std::size_t before_nodes = tape.size();
  const std::size_t before_slots = tape.usage().slots;
  BT_CHECK(t, att.forward(tape, xs, kSteps, ys));
  BT_CHECK(t, (tape.size() - before_nodes) == nn::CausalSelfAttention<T>::nodes(o, kSteps));
  BT_CHECK(t, (tape.usage().slots - before_slots) == nn::CausalSelfAttention<T>::slots(o, kSteps));
  bt::Value<T> parts[kSteps];
  for (bt::Index s = 0U; s < kSteps; ++s) {
    parts[s] = weighted_sum(tape, ys[s], c + (s * kD), kD);
  }
  BT_CHECK(t, tape.backward(bt::reduce_sum(parts, kSteps)) == bt::Status::kOk);
  for (bt::Index s = 0U; s < kSteps; ++s) {
    check_array(t, tape.values() + ys[s].first, attention_y + (s * kD), kD, "attention y");
  }
  check_array(t, tape.grads(), attention_gparams, attention_gparams_n, "attention dparams");
  check_array(t, tape.grads() + x, attention_gx, attention_gx_n, "attention dx");
}
void attention_fp64(bt_test::Context& t) { attention<double>(t); }
void attention_fp32(bt_test::Context& t) { attention<float>(t); }
#endif

template <class T>
void losses(bt_test::Context& t) {
  using namespace golden;
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 128U, 128U);
  const bt::Index z = leaves(tape, ce_logits, 10U);
  const bt::Value<T> ce = nn::cross_entropy(tape, bt::View{z, 10U}, static_cast<bt::Index>(ce_target));
  BT_CHECK(t, tape.backward(ce) == bt::Status::kOk);
  // Logits near 1000: exp would overflow without the max shift.
  BT_CHECK(t, bt::all_finite(tape));
  // The loss is O(1) next to logits of 1000: FP32 keeps ~1e-4 absolute.
  BT_CHECK_CLOSE(t, static_cast<double>(ce.value()), ce_loss, Tol<T>::rel,
                 (sizeof(T) == 4U) ? 2e-4 : 1e-12);
  check_array(t, tape.grads() + z, ce_grad, 10U, "cross-entropy dz");

  tape.reset();
  const bt::Index p = leaves(tape, mse_pred, 6U);
  T target[6];
  for (std::size_t i = 0U; i < 6U; ++i) {
    target[i] = static_cast<T>(mse_target[i]);
  }
  const bt::Value<T> m = nn::mse(tape, bt::View{p, 6U}, target);
  BT_CHECK(t, tape.backward(m) == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(m.value()), mse_loss, Tol<T>::rel);
  check_array(t, tape.grads() + p, mse_grad, 6U, "mse dpred");

  // The form that says how many targets there are: the same loss and
  // gradients (PyTorch's); any other count is refused, nothing recorded.
  tape.reset();
  const bt::Index q = leaves(tape, mse_pred, 6U);
  const std::size_t before = tape.size();
  const bt::Value<T> short_count = nn::mse(tape, bt::View{q, 6U}, target, 5U);
  BT_CHECK(t, short_count.index() == bt::kNoIndex);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == before);
  tape.clear_status();
  const bt::Value<T> counted = nn::mse(tape, bt::View{q, 6U}, target, 6U);
  BT_CHECK(t, tape.backward(counted) == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(counted.value()), mse_loss, Tol<T>::rel);
  check_array(t, tape.grads() + q, mse_grad, 6U, "mse (counted) dpred");

  // One output against one target value: (p - y)^2 and d/dp = 2 (p - y),
  // in closed form; two outputs are refused, nothing recorded.
  tape.reset();
  const bt::Index one = leaves(tape, mse_pred, 2U);
  const std::size_t two_leaves = tape.size();
  const T y = static_cast<T>(mse_target[0]);
  const bt::Value<T> two = nn::mse(tape, bt::View{one, 2U}, y);
  BT_CHECK(t, two.index() == bt::kNoIndex);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == two_leaves);
  tape.clear_status();
  const bt::Value<T> single = nn::mse(tape, bt::View{one, 1U}, y);
  BT_CHECK(t, tape.backward(single) == bt::Status::kOk);
  const double r = static_cast<double>(static_cast<T>(mse_pred[0])) - static_cast<double>(y);
  BT_CHECK_NEAR(t, static_cast<double>(single.value()), r * r, Tol<T>::rel);
  BT_CHECK_NEAR(t, static_cast<double>(tape.grads()[one]), 2.0 * r, Tol<T>::rel);
}
void losses_fp64(bt_test::Context& t) { losses<double>(t); }
void losses_fp32(bt_test::Context& t) { losses<float>(t); }

#if !BURTORCH_TEST_SMALL_TARGET
template <class T>
void mlp(bt_test::Context& t) {
  using namespace golden;
  constexpr nn::MemoryPlan plan = nn::MakemoreMlp<T>::plan(kSmallMlp, nn::OptimizerKind::kSgd);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  static nn::MakemoreMlp<T> model;
  nn::Rng rng(3U);
  BT_CHECK(t, model.create(tape, kSmallMlp, rng));
  BT_CHECK(t, model.params().count == mlp_params_n);
  overwrite(tape, model.params().first, mlp_params, mlp_params_n);
  // Two contexts of 3; sized for any context length so that GCC, which
  // cannot see that the model reads only 3, finds no read past the array.
  std::uint8_t ctx[3U + nn::MakemoreMlp<T>::kMaxContext] = {};
  std::uint8_t tgt[2] = {};
  for (std::size_t i = 0U; i < 6U; ++i) {
    ctx[i] = static_cast<std::uint8_t>(mlp_contexts[i]);
  }
  tgt[0] = static_cast<std::uint8_t>(mlp_targets[0]);
  tgt[1] = static_cast<std::uint8_t>(mlp_targets[1]);
  T seen[2] = {T(0), T(0)};
  const T mean = nn::serial_batch(tape, model.params(), 2U,
                                  [&](bt::Tape<T>& tp, std::size_t i) {
                                    const bt::Value<T> l = model.loss(tp, &ctx[3U * i], tgt[i]);
                                    seen[i] = l.value();
                                    return l;
                                  });
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  check_array(t, seen, mlp_losses, 2U, "mlp losses");
  BT_CHECK_NEAR(t, static_cast<double>(mean), (mlp_losses[0] + mlp_losses[1]) / 2.0, Tol<T>::rel);
  check_array(t, tape.grads() + model.params().first, mlp_grads, mlp_grads_n, "mlp dparams");
  // Rewound to the parameters after the batch.
  BT_CHECK(t, tape.size() == model.params().count);
}
void mlp_fp64(bt_test::Context& t) { mlp<double>(t); }
void mlp_fp32(bt_test::Context& t) { mlp<float>(t); }

template <class T>
void gpt(bt_test::Context& t) {
  using namespace golden;
  constexpr nn::MemoryPlan plan = nn::Gpt<T>::plan(kSmallGpt, nn::OptimizerKind::kSgd);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  static nn::Gpt<T> model;
  nn::Rng rng(3U);
  BT_CHECK(t, model.create(tape, kSmallGpt, rng));
  BT_CHECK(t, model.params().count == gpt_params_n);
  overwrite(tape, model.params().first, gpt_params, gpt_params_n);
  std::uint8_t tokens[4];
  std::uint8_t targets[4];
  for (std::size_t i = 0U; i < 4U; ++i) {
    tokens[i] = static_cast<std::uint8_t>(gpt_tokens[i]);
    targets[i] = static_cast<std::uint8_t>(gpt_targets[i]);
  }
  const bt::Mark start = tape.mark();
  bt::View logits[4];
  BT_CHECK(t, model.logits(tape, tokens, 4U, logits));
  for (std::size_t s = 0U; s < 4U; ++s) {
    check_array(t, tape.values() + logits[s].first, gpt_logits + (11U * s), 11U, "gpt logits");
  }
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  const bt::Value<T> loss = model.loss(tape, tokens, targets, 4U);
  BT_CHECK(t, tape.size() == plan.nodes);
  BT_CHECK(t, tape.usage().slots == plan.slots);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(loss.value()), gpt_loss, Tol<T>::rel);
  check_array(t, tape.grads() + model.params().first, gpt_grads, gpt_grads_n, "gpt dparams");
}
void gpt_fp64(bt_test::Context& t) { gpt<double>(t); }
void gpt_fp32(bt_test::Context& t) { gpt<float>(t); }
#endif

template <class T>
void optimizer_case(bt_test::Context& t, nn::OptimizerKind kind, const double* expected, const char* what) {
  using namespace golden;
  nn::OptimizerOptions<T> config;
  config.kind = kind;
  config.lr = (kind == nn::OptimizerKind::kSgd || kind == nn::OptimizerKind::kMomentum) ? T(0.1) : T(0.01);
  config.momentum = T(0.9);
  config.weight_decay = T(0.1);
  T state[12];
  nn::Optimizer<T> opt(config, state);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 16U, 16U);
  const bt::View w{leaves(tape, opt_w0, 6U), 6U};
  for (std::size_t s = 0U; s < 3U; ++s) {
    overwrite_grads(tape, w, opt_grads + (6U * s));
    BT_CHECK(t, opt.step(tape, w) == bt::Status::kOk);
    check_array(t, tape.values() + w.first, expected + (6U * s), 6U, what);
  }
  BT_CHECK(t, opt.steps() == 3U);
}

template <class T>
void optimizers(bt_test::Context& t) {
  using namespace golden;
  optimizer_case<T>(t, nn::OptimizerKind::kSgd, opt_sgd, "sgd");
  optimizer_case<T>(t, nn::OptimizerKind::kMomentum, opt_momentum, "momentum");
  optimizer_case<T>(t, nn::OptimizerKind::kAdam, opt_adam, "adam");
  optimizer_case<T>(t, nn::OptimizerKind::kAdamW, opt_adamw, "adamw");
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 16U, 16U);
  static_cast<void>(tape.leaf(T(5)));  // the view need not start at node 0
  const bt::View g{leaves(tape, clip_above_in, 6U), 6U};
  overwrite_grads(tape, g, clip_above_in);
  const T norm = nn::clip_gradient_norm(tape, g, static_cast<T>(clip_above_max));
  BT_CHECK_NEAR(t, static_cast<double>(norm), clip_above_norm, Tol<T>::rel);
  // Scaled by max / (norm + 1e-6): the norm after is just below the maximum.
  BT_CHECK_NEAR(t, static_cast<double>(nn::gradient_norm(tape, g)),
                clip_above_max * clip_above_norm / (clip_above_norm + 1e-6), Tol<T>::rel);
  check_array(t, tape.grads() + g.first, clip_above_out, 6U, "clip above");
  BT_CHECK(t, tape.grads()[0] == T(0));
  overwrite_grads(tape, g, clip_below_in);
  static_cast<void>(nn::clip_gradient_norm(tape, g, static_cast<T>(clip_below_max)));
  check_array(t, tape.grads() + g.first, clip_below_out, 6U, "clip below");
}
void optimizers_fp64(bt_test::Context& t) { optimizers<double>(t); }
void optimizers_fp32(bt_test::Context& t) { optimizers<float>(t); }

// Refused steps change nothing. Adam with state for 6 parameters: views that
// are not on the tape, empty, wider than the state, or a tape holding an
// error are refused with a status, and the parameters, every gradient, the
// state's bytes, steps() and the tape's status stay as they were. Around
// the refusals, three accepted steps still follow torch.optim.Adam exactly
// (a refused step that counted would change the bias correction).
template <class T>
void optimizer_refuses(bt_test::Context& t) {
  using namespace golden;
  nn::OptimizerOptions<T> config;
  config.kind = nn::OptimizerKind::kAdam;
  config.lr = T(0.01);
  T state[12];
  nn::Optimizer<T> opt(config, state);
  BT_CHECK(t, opt.ready() && (opt.max_parameters() == 6U) && (opt.state_size() == 12U));
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 16U, 16U);
  static_cast<void>(tape.leaf(T(3)));
  const bt::View w{leaves(tape, opt_w0, 6U), 6U};
  const bt::Index extra = leaves(tape, opt_w0, 2U);  // a 7-wide view fits on the tape
  tape.grads()[0] = T(0.5);
  tape.grads()[extra] = T(-0.25);
  const bt::View refused[] = {
      bt::View{w.first, 7U},                                // wider than the state
      bt::View{static_cast<bt::Index>(tape.size()), 1U},    // just past the end
      bt::View{extra, 3U},                                  // runs past the end
      bt::View{w.first, 0U},                                // empty
      bt::kNoView,                                          // a failed layer's
      bt::View{bt::kNoIndex - 1U, 2U},                      // first + count wraps
  };
  const bt::Status why[] = {bt::Status::kCapacityExceeded, bt::Status::kInvalidArgument,
                            bt::Status::kInvalidArgument,  bt::Status::kInvalidArgument,
                            bt::Status::kInvalidArgument,  bt::Status::kInvalidArgument};
  T values[9];
  T grads[9];
  T moments[12];
  const std::size_t n = tape.size();
  BT_CHECK(t, n == 9U);
  auto unchanged = [&](std::uint64_t steps) {
    BT_CHECK(t, std::memcmp(values, tape.values(), n * sizeof(T)) == 0);
    BT_CHECK(t, std::memcmp(grads, tape.grads(), n * sizeof(T)) == 0);
    BT_CHECK(t, std::memcmp(moments, state, sizeof(state)) == 0);
    BT_CHECK(t, opt.steps() == steps);
    BT_CHECK(t, tape.size() == n);
  };
  auto refuse_all = [&](std::uint64_t steps) {
    std::memcpy(values, tape.values(), n * sizeof(T));
    std::memcpy(grads, tape.grads(), n * sizeof(T));
    std::memcpy(moments, state, sizeof(state));
    for (std::size_t k = 0U; k < (sizeof(refused) / sizeof(refused[0])); ++k) {
      BT_CHECK(t, opt.step(tape, refused[k]) == why[k]);
      BT_CHECK(t, tape.status() == bt::Status::kOk);  // the step's own outcome only
      unchanged(steps);
    }
    // A tape holding an error: its gradients may be a failed sample's.
    static_cast<void>(tape.report(bt::Status::kInvalidHandle));
    BT_CHECK(t, opt.step(tape, w) == bt::Status::kInvalidHandle);
    unchanged(steps);
    tape.clear_status();
  };
  refuse_all(0U);
  for (std::size_t s = 0U; s < 3U; ++s) {
    overwrite_grads(tape, w, opt_grads + (6U * s));
    BT_CHECK(t, opt.step(tape, w) == bt::Status::kOk);
    check_array(t, tape.values() + w.first, opt_adam + (6U * s), 6U, "adam around refused steps");
    BT_CHECK(t, (tape.values()[0] == T(3)) && (tape.grads()[0] == T(0.5)));  // outside the view
    BT_CHECK(t, tape.values()[extra] == static_cast<T>(opt_w0[0]));
    refuse_all(s + 1U);
  }

  // A state of 11 scalars holds 5 Adam parameters: 6 are refused.
  T small[11];
  nn::Optimizer<T> short_state(config, small, 11U);
  BT_CHECK(t, (short_state.max_parameters() == 5U) && (short_state.state_size() == 10U));
  std::memcpy(values, tape.values(), n * sizeof(T));
  BT_CHECK(t, short_state.step(tape, w) == bt::Status::kCapacityExceeded);
  BT_CHECK(t, std::memcmp(values, tape.values(), n * sizeof(T)) == 0);
  BT_CHECK(t, short_state.step(tape, bt::View{w.first, 5U}) == bt::Status::kOk);
  BT_CHECK(t, std::memcmp(values, tape.values(), n * sizeof(T)) != 0);
  // No state at all: Adam is not ready, SGD needs none.
  nn::Optimizer<T> no_state(config);
  BT_CHECK(t, !no_state.ready() && (no_state.max_parameters() == 0U));
  std::memcpy(values, tape.values(), n * sizeof(T));
  BT_CHECK(t, no_state.step(tape, w) == bt::Status::kInvalidArgument);
  BT_CHECK(t, no_state.step(tape, bt::View{w.first, 1U}) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (std::memcmp(values, tape.values(), n * sizeof(T)) == 0) && (no_state.steps() == 0U));
  nn::OptimizerOptions<T> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  nn::Optimizer<T> plain(sgd);
  BT_CHECK(t, plain.ready() && (plain.state_size() == 0U));
  BT_CHECK(t, plain.step(tape, bt::View{0U, static_cast<bt::Index>(n)}) == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(tape.values()[0]), 3.0 - (0.1 * 0.5), Tol<T>::rel);
}
// The state's layout, which checkpoints save (state_size() scalars): the
// first moment of parameter i of the view at state()[i], the second at
// state()[max_parameters() + i], also for a view narrower than the state.
template <class T>
void adam_state_layout(bt_test::Context& t) {
  nn::OptimizerOptions<T> config;
  config.kind = nn::OptimizerKind::kAdam;
  T state[12];
  for (T& x : state) {
    x = T(7);  // the constructor zeroes the whole capacity
  }
  nn::Optimizer<T> opt(config, state);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 16U, 16U);
  const double w[3] = {1.0, 2.0, 3.0};
  const double g[3] = {0.5, -2.0, 4.0};
  const bt::View v{leaves(tape, w, 3U), 3U};
  overwrite_grads(tape, v, g);
  BT_CHECK(t, opt.step(tape, v) == bt::Status::kOk);
  BT_CHECK(t, (opt.state() == state) && (opt.state_size() == 12U));
  for (std::size_t i = 0U; i < 3U; ++i) {
    BT_CHECK_NEAR(t, static_cast<double>(state[i]), 0.1 * g[i], Tol<T>::rel);
    BT_CHECK_NEAR(t, static_cast<double>(state[6U + i]), 0.001 * g[i] * g[i], Tol<T>::rel);
    BT_CHECK(t, (state[3U + i] == T(0)) && (state[9U + i] == T(0)));
  }
}

// The batch's 1/B folded into the step: serial_batch(..., opt) and its
// compile-time twin serial_batch<K>(..., opt) leave the parameters and the
// optimizer's state bitwise as serial_batch() then opt.step() do, for every
// rule, over three batches of three samples (1/3 is not exact: a fold into
// the learning rate would round differently); the gradients stay sums.
// A rule other than K is refused: NaN, kInvalidArgument on the tape,
// nothing updated; so is an empty batch.
alignas(64) unsigned char g_batch_arena[3][1024];

template <class T, nn::OptimizerKind K>
void batch_step_case(bt_test::Context& t) {
  constexpr std::size_t kN = 7U;
  constexpr std::size_t kB = 3U;
  T arena_state[3][2U * kN] = {};
  unsigned char(&arena)[3][1024] = g_batch_arena;
  static_assert(bt::Tape<double>::bytes_required(24U, 16U, kN) <= sizeof(arena[0]), "a tape per arena");
  nn::OptimizerOptions<T> config;
  config.kind = K;
  config.lr = T(0.05);
  config.weight_decay = T(0.1);
  bt::Tape<T> a(arena[0], sizeof(arena[0]), 24U, 16U, kN);
  bt::Tape<T> b(arena[1], sizeof(arena[1]), 24U, 16U, kN);
  bt::Tape<T> c(arena[2], sizeof(arena[2]), 24U, 16U, kN);
  bt::Tape<T>* tapes[3] = {&a, &b, &c};
  for (bt::Tape<T>* tp : tapes) {
    for (std::size_t i = 0U; i < kN; ++i) {
      static_cast<void>(tp->param(T(0.25) * static_cast<T>(i) - T(0.6)));
    }
  }
  nn::Optimizer<T> oa(config, arena_state[0]);
  nn::Optimizer<T> ob(config, arena_state[1]);
  nn::Optimizer<T> oc(config, arena_state[2]);
  const bt::View p{0U, static_cast<bt::Index>(kN)};
  std::size_t batch = 0U;
  // Sample i of a batch: (w . x_i - y_i)^2 over inputs that depend on i
  // and the batch.
  auto loss = [&](bt::Tape<T>& tp, std::size_t i) {
    bt::Value<T> x[kN];
    for (std::size_t k = 0U; k < kN; ++k) {
      x[k] = tp.input(T(0.125) * static_cast<T>(((k + 1U) * (i + 2U) + batch) % 7U) - T(0.3));
    }
    bt::Value<T> w[kN];
    for (std::size_t k = 0U; k < kN; ++k) {
      w[k] = bt::Value<T>(&tp, static_cast<bt::Index>(k));
    }
    return bt::sqr(bt::inner_product(w, x, kN) - (T(0.5) * static_cast<T>(i)));
  };
  for (batch = 0U; batch < 3U; ++batch) {
    const T la = nn::serial_batch(a, p, kB, loss);
    BT_CHECK(t, oa.step(a, p) == bt::Status::kOk);
    const T lb = nn::serial_batch(b, p, kB, loss, ob);
    const T lc = nn::serial_batch<K>(c, p, kB, loss, oc);
    BT_CHECK(t, (la == lb) && (la == lc) && std::isfinite(static_cast<double>(la)));
    long wrong = 0;
    for (std::size_t i = 0U; i < kN; ++i) {
      wrong += ((a.values()[i] == b.values()[i]) && (a.values()[i] == c.values()[i])) ? 0 : 1;
      // a's gradients are the means, b's and c's the sums.
      wrong += ((b.grads()[i] * (T(1) / T(3))) == a.grads()[i]) ? 0 : 1;
      wrong += (b.grads()[i] == c.grads()[i]) ? 0 : 1;
    }
    wrong += (std::memcmp(arena_state[0], arena_state[1], sizeof(arena_state[0])) == 0) ? 0 : 1;
    wrong += (std::memcmp(arena_state[0], arena_state[2], sizeof(arena_state[0])) == 0) ? 0 : 1;
    BT_CHECK(t, wrong == 0);
  }
  BT_CHECK(t, (oa.steps() == 3U) && (ob.steps() == 3U) && (oc.steps() == 3U));
  // Refusals: another rule at compile time, an empty batch.
  T before[kN];
  std::memcpy(before, c.values(), sizeof(before));
  constexpr nn::OptimizerKind kOther = (K == nn::OptimizerKind::kSgd) ? nn::OptimizerKind::kAdam : nn::OptimizerKind::kSgd;
  BT_CHECK(t, oc.template step<kOther>(c, p) == bt::Status::kInvalidArgument);
  BT_CHECK(t, std::isnan(static_cast<double>(nn::serial_batch<kOther>(c, p, kB, loss, oc))));
  BT_CHECK(t, c.status() == bt::Status::kInvalidArgument);
  c.clear_status();
  BT_CHECK(t, std::isnan(static_cast<double>(nn::serial_batch(c, p, 0U, loss, oc))));
  BT_CHECK(t, c.status() == bt::Status::kInvalidArgument);
  c.clear_status();
  BT_CHECK(t, (std::memcmp(before, c.values(), sizeof(before)) == 0) && (oc.steps() == 3U));
  // step<K> itself: as step().
  BT_CHECK(t, oc.template step<K>(c, p) == bt::Status::kOk);
  BT_CHECK(t, oa.step(a, p, T(1) / T(3)) == bt::Status::kOk);
}

template <class T>
void batch_step_folds_the_mean(bt_test::Context& t) {
  batch_step_case<T, nn::OptimizerKind::kSgd>(t);
  batch_step_case<T, nn::OptimizerKind::kMomentum>(t);
  batch_step_case<T, nn::OptimizerKind::kAdam>(t);
  batch_step_case<T, nn::OptimizerKind::kAdamW>(t);
}

void optimizer_refuses_fp64(bt_test::Context& t) { optimizer_refuses<double>(t); }
void optimizer_refuses_fp32(bt_test::Context& t) { optimizer_refuses<float>(t); }

// serial_batch and the gradient helpers refuse a view that is not on the
// tape before touching anything (no sample runs, no gradient changes).
void views_off_the_tape(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 16U, 16U);
  const double v[4] = {1.0, 2.0, 3.0, 4.0};
  static_cast<void>(leaves(tape, v, 4U));
  overwrite_grads(tape, bt::View{0U, 4U}, v);
  int samples = 0;
  const double loss = nn::serial_batch(tape, bt::View{2U, 3U}, 2U, [&](bt::Tape<double>& tp, std::size_t) {
    ++samples;
    return bt::Value<double>(&tp, 0U);
  });
  BT_CHECK(t, std::isnan(loss) && (samples == 0) && (tape.status() == bt::Status::kInvalidArgument));
  tape.clear_status();
  BT_CHECK(t, std::isnan(nn::gradient_norm(tape, bt::kNoView)));
  BT_CHECK(t, std::isnan(nn::clip_gradient_norm(tape, bt::View{3U, 2U}, 0.1)));
  BT_CHECK(t, std::isnan(nn::clip_gradient_norm(tape, bt::View{0U, 0U}, 0.1)));
  for (bt::Index i = 0U; i < 4U; ++i) {
    BT_CHECK(t, (tape.grads()[i] == v[i]) && (tape.values()[i] == v[i]));
  }
  BT_CHECK(t, (tape.size() == 4U) && (tape.status() == bt::Status::kOk));
  // On the tape: the norm of grads 3 and 4 is 5.
  BT_CHECK(t, nn::gradient_norm(tape, bt::View{2U, 2U}) == 5.0);
}

// Defaults of the options structs: torch.nn's initialisation, drawn in
// order from the given Rng (the oracle: a second Rng with the same seed and
// the closed-form bounds). Each layer's params() is the range it created.
void options_defaults(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 128U, 16U);
  static_cast<void>(tape.leaf(9.0));  // parameters need not start at node 0
  nn::Rng rng(11U);
  nn::Rng oracle(11U);

  // Linear: weights [3][4], then 3 biases, all U(-1/sqrt(4), 1/sqrt(4)) =
  // U(-0.5, 0.5) (the bias's bound uses the fan-in 4 too), no activation.
  nn::Linear<double> lin;
  BT_CHECK(t, (lin.params().first == bt::kNoIndex) && (lin.params().count == 0U));
  nn::LinearOptions lo;
  lo.in = 4U;
  lo.out = 3U;
  BT_CHECK(t, lin.create(tape, lo, rng));
  BT_CHECK(t, (lin.act == nn::Activation::kIdentity) && (lin.weight == 1U) && (lin.bias == 13U));
  BT_CHECK(t, (lin.params().first == 1U) && (lin.params().count == 15U));
  BT_CHECK(t, (nn::Linear<double>::parameters(lo) == 15U) && (nn::Linear<double>::nodes(lo) == 3U));
  bool all = true;
  for (bt::Index i = 0U; i < 15U; ++i) {
    const double expected = oracle.uniform(-0.5, 0.5);
    all = all && bt_test::near(tape.value(1U + i), expected, 1e-15, 1e-16) && (std::fabs(tape.value(1U + i)) <= 0.5);
  }
  BT_CHECK(t, all);

  // Embedding: N(0, 1), exactly the Rng's normals.
  nn::Embedding<double> emb;
  nn::EmbeddingOptions eo;
  eo.rows = 3U;
  eo.dim = 2U;
  BT_CHECK(t, emb.create(tape, eo, rng));
  BT_CHECK(t, (emb.params().first == 16U) && (emb.params().count == 6U));
  for (bt::Index i = 0U; i < 6U; ++i) {
    BT_CHECK(t, tape.value(16U + i) == oracle.normal());
  }

  // LayerNorm: gains 1, biases 0, eps 1e-5, and no draws.
  nn::LayerNorm<double> ln;
  nn::LayerNormOptions no;
  no.width = 5U;
  BT_CHECK(t, ln.create(tape, no, rng));
  BT_CHECK(t, (ln.params().first == 22U) && (ln.params().count == 10U) && (ln.eps == 1e-5));
  for (bt::Index i = 0U; i < 5U; ++i) {
    BT_CHECK(t, (tape.value(ln.gamma + i) == 1.0) && (tape.value(ln.beta + i) == 0.0));
  }

  // Attention of width 4: one head; Wq, Wk, Wv, projection ~ U(-0.5, 0.5),
  // projection bias 0: 4 * 16 + 4 parameters, in that order.
  nn::CausalSelfAttention<double> att;
  nn::AttentionOptions ao;
  ao.width = 4U;
  BT_CHECK(t, att.create(tape, ao, rng));
  BT_CHECK(t, (att.heads == 1U) && (att.wq == 32U) && (att.wk == 48U) && (att.wv == 64U));
  BT_CHECK(t, (att.proj.weight == 80U) && (att.proj.bias == 96U));
  BT_CHECK(t, (att.params().first == 32U) && (att.params().count == 68U) && (tape.size() == 100U));
  all = true;
  for (bt::Index i = 0U; i < 64U; ++i) {
    all = all && bt_test::near(tape.value(32U + i), oracle.uniform(-0.5, 0.5), 1e-15, 1e-16);
  }
  for (bt::Index i = 0U; i < 4U; ++i) {
    all = all && (tape.value(96U + i) == 0.0);
  }
  BT_CHECK(t, all);
  // Every draw is accounted for: both generators are at the same point.
  BT_CHECK(t, rng.next_u64() == oracle.next_u64());
}

// params() after a failed create() is kNoView: an optimizer step over it is
// refused. A Linear without bias owns only its weights.
void params_of_failed_layers(bt_test::Context& t) {
  bt::Tape<double> tape(g_arena, sizeof(g_arena), 16U, 16U);
  nn::Rng rng(1U);
  nn::Linear<double> no_bias;
  nn::LinearOptions lo;
  lo.in = 2U;
  lo.out = 3U;
  lo.bias = false;
  BT_CHECK(t, no_bias.create(tape, lo, rng));
  BT_CHECK(t, (no_bias.params().first == 0U) && (no_bias.params().count == 6U) && (no_bias.bias == bt::kNoIndex));
  nn::Linear<double> too_big;
  lo.in = 4U;
  lo.out = 4U;
  BT_CHECK(t, !too_big.create(tape, lo, rng));  // 16 weights on a 16-node tape holding 6
  BT_CHECK(t, (too_big.params().first == bt::kNoIndex) && (too_big.params().count == 0U));
  BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
  tape.reset();
  nn::CausalSelfAttention<double> att;
  nn::AttentionOptions ao;
  ao.width = 3U;
  ao.heads = 2U;  // does not divide 3
  BT_CHECK(t, !att.create(tape, ao, rng));
  BT_CHECK(t, (att.params().count == 0U) && (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == 0U));
  tape.reset();
  nn::OptimizerOptions<double> sgd;
  nn::Optimizer<double> opt(sgd);
  static_cast<void>(tape.leaf(1.0));
  BT_CHECK(t, opt.step(tape, too_big.params()) == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.value(0U) == 1.0);
}

#if !BURTORCH_TEST_SMALL_TARGET
// A model's params() is every parameter it created, wherever it starts;
// kNoView after a failed create().
void model_params(bt_test::Context& t) {
  constexpr nn::MemoryPlan plan = nn::MakemoreMlp<double>::plan(kSmallMlp, nn::OptimizerKind::kSgd);
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes + 1U, plan.slots);
  static_cast<void>(tape.leaf(1.0));
  static nn::MakemoreMlp<double> model;
  nn::Rng rng(3U);
  BT_CHECK(t, model.create(tape, kSmallMlp, rng));
  BT_CHECK(t, (model.params().first == 1U) && (model.params().count == golden::mlp_params_n));
  BT_CHECK(t, tape.size() == (1U + golden::mlp_params_n));
  nn::MlpOptions bad = kSmallMlp;
  bad.context = 0U;
  BT_CHECK(t, !model.create(tape, bad, rng));
  BT_CHECK(t, (model.params().first == bt::kNoIndex) && (model.params().count == 0U));
}
#endif

const bt_test::TestCase kCases[] = {
    {"linear_fp64", linear_fp64},         {"linear_fp32", linear_fp32},
    {"layernorm_fp64", layernorm_fp64},   {"layernorm_fp32", layernorm_fp32},
    {"losses_fp64", losses_fp64},         {"losses_fp32", losses_fp32},
#if !BURTORCH_TEST_SMALL_TARGET
    {"attention_fp64", attention_fp64},   {"attention_fp32", attention_fp32},
    {"mlp_fp64", mlp_fp64},               {"mlp_fp32", mlp_fp32},
    {"gpt_fp64", gpt_fp64},               {"gpt_fp32", gpt_fp32},
#endif
    {"optimizers_fp64", optimizers_fp64}, {"optimizers_fp32", optimizers_fp32},
    {"optimizer_refuses_fp64", optimizer_refuses_fp64},
    {"optimizer_refuses_fp32", optimizer_refuses_fp32},
    {"batch_step_folds_the_mean_fp64", batch_step_folds_the_mean<double>},
    {"batch_step_folds_the_mean_fp32", batch_step_folds_the_mean<float>},
    {"adam_state_layout_fp64", adam_state_layout<double>},
    {"adam_state_layout_fp32", adam_state_layout<float>},
    {"views_off_the_tape", views_off_the_tape},
    {"options_defaults", options_defaults},
    {"params_of_failed_layers", params_of_failed_layers},
#if !BURTORCH_TEST_SMALL_TARGET
    {"model_params", model_params},
#endif
};

}  // namespace

BT_TEST_MAIN("nn_layers", kCases)
