// SPDX-License-Identifier: Apache-2.0
// nn layers, losses, models and optimizers against PyTorch: values and
// gradients for the same weights and inputs (tests/test_nn_golden.hpp, made
// by tools/golden/nn/make_layers.py). FP64 to 1e-10 relative, FP32 to 1e-4.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>

#include "harness.hpp"

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
#include "test_nn_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// One buffer for every test's tape (RAM of the small boards), sized for the
// largest: the small GPT in FP64.
constexpr nn::MlpConfig kSmallMlp{7U, 3U, 4U, 5U};
constexpr nn::GptConfig kSmallGpt{11U, 4U, 8U, 2U, 1U, 1e-5};
#if BURTORCH_TEST_SMALL_TARGET
// Tiny boards (16 KB RAM): layers, losses and optimizers only.
alignas(64) unsigned char g_arena[bt::Tape<double>::bytes_required(128U, 128U)];
#else
constexpr nn::MemoryPlan kGptPlan = nn::Gpt<double>::plan(kSmallGpt, nn::OptimizerKind::kSgd);
alignas(64) unsigned char g_arena[kGptPlan.tape_bytes];
#endif

template <class T>
struct Tol;
template <>
struct Tol<double> {
  static constexpr double rel = 1e-10;
  static constexpr double abs_floor = 1e-12;
};
template <>
struct Tol<float> {
  static constexpr double rel = 1e-4;
  static constexpr double abs_floor = 2e-5;
};

double max_abs(const double* v, std::size_t n) {
  double m = 1.0;
  for (std::size_t i = 0U; i < n; ++i) {
    m = (std::fabs(v[i]) > m) ? std::fabs(v[i]) : m;
  }
  return m;
}

// Compares n values read from `got` (node values or gradients) with golden.
template <class T>
void check_array(bt_test::Context& t, const T* got, const double* expected, std::size_t n, const char* what) {
  const double abs_tol = Tol<T>::abs_floor * max_abs(expected, n);
  bool all = true;
  for (std::size_t i = 0U; i < n; ++i) {
    all = all && bt_test::near(static_cast<double>(got[i]), expected[i], Tol<T>::rel, abs_tol);
  }
  if (!all) {
    for (std::size_t i = 0U; i < n; ++i) {
      BT_CHECK_CLOSE(t, static_cast<double>(got[i]), expected[i], Tol<T>::rel, abs_tol);
    }
    bt_test::print("    in ");
    bt_test::print(what);
    bt_test::print("\n");
  }
  BT_CHECK(t, all);
}

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
void overwrite_grads(bt::Tape<T>& tape, nn::View v, const double* g) {
  for (bt::Index i = 0U; i < v.count; ++i) {
    tape.grads()[v.first + i] = static_cast<T>(g[i]);
  }
}

// sum(view[i] * c[i]) as a root, c on the tape as leaves.
template <class T>
bt::Value<T> weighted_sum(bt::Tape<T>& tape, nn::View y, bt::Index c, std::size_t n) {
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
  const nn::View y = lin.forward(tape, nn::View{x, 5U});
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
  const nn::View y = ln.forward(tape, nn::View{x, 7U});
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
  nn::View xs[kSteps];
  nn::View ys[kSteps];
  for (bt::Index s = 0U; s < kSteps; ++s) {
    xs[s] = nn::View{x + (s * kD), kD};
  }
  const std::size_t before_nodes = tape.size();
  const std::size_t before_slots = tape.slots_used();
  BT_CHECK(t, att.forward(tape, xs, kSteps, ys));
  BT_CHECK(t, (tape.size() - before_nodes) == nn::CausalSelfAttention<T>::nodes(o, kSteps));
  BT_CHECK(t, (tape.slots_used() - before_slots) == nn::CausalSelfAttention<T>::slots(o, kSteps));
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
  const bt::Value<T> ce = nn::cross_entropy(tape, nn::View{z, 10U}, static_cast<bt::Index>(ce_target));
  BT_CHECK(t, tape.backward(ce) == bt::Status::kOk);
  // Logits near 1000: exp would overflow without the max shift.
  BT_CHECK(t, tape.all_finite());
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
  const bt::Value<T> m = nn::mse(tape, nn::View{p, 6U}, target);
  BT_CHECK(t, tape.backward(m) == bt::Status::kOk);
  BT_CHECK_NEAR(t, static_cast<double>(m.value()), mse_loss, Tol<T>::rel);
  check_array(t, tape.grads() + p, mse_grad, 6U, "mse dpred");
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
  nn::View logits[4];
  BT_CHECK(t, model.logits(tape, tokens, 4U, logits));
  for (std::size_t s = 0U; s < 4U; ++s) {
    check_array(t, tape.values() + logits[s].first, gpt_logits + (11U * s), 11U, "gpt logits");
  }
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  const bt::Value<T> loss = model.loss(tape, tokens, targets, 4U);
  BT_CHECK(t, tape.size() == plan.nodes);
  BT_CHECK(t, tape.slots_used() == plan.slots);
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
  nn::OptimizerConfig<T> config;
  config.kind = kind;
  config.lr = (kind == nn::OptimizerKind::kSgd || kind == nn::OptimizerKind::kMomentum) ? T(0.1) : T(0.01);
  config.momentum = T(0.9);
  config.weight_decay = T(0.1);
  T state[12];
  nn::Optimizer<T> opt(config, state);
  bt::Tape<T> tape(g_arena, sizeof(g_arena), 16U, 16U);
  const nn::View w{leaves(tape, opt_w0, 6U), 6U};
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
  const nn::View g{leaves(tape, clip_above_in, 6U), 6U};
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
};

}  // namespace

BT_TEST_MAIN("nn_layers", kCases)
