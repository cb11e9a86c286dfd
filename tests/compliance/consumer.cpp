// SPDX-License-Identifier: Apache-2.0
// A user's translation unit, as a compliance kit sees one: it instantiates
// every public template of libburtorch for float and double (every op in its
// two-operand, range, list and view-list forms, Tape and FixedTape, every
// layer (dense, normalization, attention, embedding, convolutions, pooling,
// GRU, frozen), loss, model and optimizer, checkpoints, the Graphviz
// export) and a
// tape of lanes, so static analysis of this file covers the template code a
// product compiles from our headers. tools/check.d/40-compliance-kit.sh runs
// tools/burtorch-compliance on it; it must report no unsuppressed finding.
// The program also runs: it returns 0 when every graph recorded and every
// call succeeded.
#include <array>
#include <cstddef>
#include <cstdint>

#include "burtorch/burtorch.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/nn.hpp"
#include "burtorch/core/simd.hpp"
// A tape of lanes needs the tape's out-of-line members: this file is the one
// translation unit that instantiates them (see lanes/lanes.hpp).
#include "burtorch/lanes/ops.hpp"  // a tape of Lanes: the lane ops and the tape's templates for it

namespace bt = burtorch;

using LanesF = bt::Lanes<float, 4U>;
using LanesD = bt::Lanes<double, 2U>;
template class burtorch::Tape<LanesF>;
template class burtorch::Tape<LanesD>;

namespace {

void on_fault(bt::Status fault, void* context) noexcept {
  static_cast<void>(fault);
  static_cast<void>(context);
}

constexpr std::size_t kNodes = 4096U;
constexpr std::size_t kN = 6U;

// Every recording op on one tape. Returns true when the tape stayed kOk.
template <class T>
bool record_ops(bt::Tape<T>& tp) {
  std::array<bt::Value<T>, kN> xs{};
  for (std::size_t i = 0U; i < kN; ++i) {
    xs[i] = tp.leaf(static_cast<T>(i + 1U) * T(0.25));
  }
  const bt::Value<T> a = xs[0U];
  const bt::Value<T> b = xs[1U];
  // Two operands, one operand, one constant (both sides).
  bt::Value<T> y = (a + b) - (a * b);
  y = y / b;
  y = -y;
  y = (y + T(1)) + (T(2) + y);
  y = (y - T(1)) - (T(3) - y);
  y = (y * T(2)) * (T(0.5) * y);
  y = (y / T(4)) + (T(1) / b);
  y += a;
  y -= b;
  y *= a;
  y /= b;
  y += T(1);
  y -= T(1);
  y *= T(2);
  y /= T(2);
  y = bt::relu(y) + bt::tanh(a) + bt::exp(a) + bt::log(b) + bt::neg_log(b) + bt::sigmoid(a);
  y = y + bt::inv(b) + bt::sqr(a) + bt::pow3(a) + bt::sqrt(b) + bt::inv_sqrt(b) + bt::mul_by_const(a, T(3));
  y = y + bt::mean(a, b) + bt::add_squares(a, b) + bt::mean_squares(a, b) + bt::negative_mean(a, b);
  // Reductions over a range (contiguous nodes) and over a list (scattered nodes).
  const std::array<bt::Value<T>, 3U> list = {xs[4U], xs[0U], xs[2U]};
  const std::array<const bt::Value<T>*, 2U> forms = {xs.data(), list.data()};
  for (const bt::Value<T>* const v : forms) {
    y = y + bt::reduce_sum(v, 3U) + bt::reduce_sub(v, 3U) + bt::reduce_mul(v, 3U) + bt::reduce_mean(v, 3U);
    y = y + bt::reduce_sum_of_squares(v, 3U) + bt::reduce_mean_squares(v, 3U) + bt::reduce_negative_mean(v, 3U);
    y = y + bt::variance(v, 3U) + bt::variance_biased(v, 3U) + bt::log_sum_exp(v, 3U);
    const bt::MeanAndMeanSquares<T> mm = bt::reduce_mean_and_mean_squares(v, 3U);
    y = y + mm.mean + mm.mean_squares;
    y = y + bt::inner_product(v, &xs[3U], 3U) + bt::inner_product_with_bias(v, &xs[3U], 3U, b);
  }
  // View form: a weight range against a list of runs.
  const std::array<bt::View, 2U> runs = {bt::View{0U, 2U}, bt::View{3U, 2U}};
  const bt::ViewList segs = bt::view_list(tp, runs.data(), runs.size());
  y = y + bt::inner_product_views(xs[1U], segs) + bt::inner_product_views_with_bias(xs[1U], segs, a);
  const bt::View rows = bt::matvec(tp, 0U, 1U, segs, bt::kNoIndex);
  const bt::View shifts = bt::scale_shift(tp, 0U, 1U, 2U, 2U);
  const bt::Value<T> row(&tp, rows.first);
  const bt::Value<T> shifted(&tp, shifts.first);
  const bt::Value<T> ranged = bt::inner_product(tp, bt::View{0U, 3U}, bt::View{2U, 3U}, nullptr);
  y = y + row + shifted + ranged;
  // Read-only accessors and the status protocol.
  tp.set_fault_hook(&on_fault, nullptr);
  const bt::Index last = static_cast<bt::Index>(tp.size()) - 1U;
  const bool described = (bt::node_op(tp, last) != bt::Op::kNone) && (bt::node_operands(tp, last).a != bt::kNoIndex) &&
                         (bt::slot_at(tp, 0U) != bt::kNoIndex) && (bt::param_name(tp, 0U) == nullptr) &&
                         (tp.usage().slot_capacity >= tp.usage().slots) && (tp.usage().params == 0U);
  static_cast<void>(bt::node_operands(tp, last).b);
  static_cast<void>(bt::node_constant(tp, last));
  static_cast<void>(tp.value(last));
  static_cast<void>(tp.grad(last));
  tp.clear_status();
  const bt::Mark before = tp.mark();
  const bt::Value<T> scratch = y * y;
  const bool scratch_ok = scratch.valid() && (tp.rewind(before) == bt::Status::kOk);
  tp.zero_grad();
  const bool ok = scratch_ok && (tp.backward(y) == bt::Status::kOk) && bt::all_finite(tp);
  return described && ok && (tp.status() == bt::Status::kOk);
}

// Layers, losses, models, optimizers and a serial batch.
template <class T>
bool train_layers(bt::Tape<T>& tp) {
  bt::nn::Rng rng(7U);
  bt::nn::Linear<T> linear;
  bt::nn::Embedding<T> embedding;
  bt::nn::LayerNorm<T> norm;
  bt::nn::CausalSelfAttention<T> attention;
  bt::nn::EmbeddingOptions embedding_options;
  embedding_options.rows = 5U;
  embedding_options.dim = 4U;
  embedding_options.name = "emb";
  bt::nn::LinearOptions linear_options;
  linear_options.in = 4U;
  linear_options.out = 4U;
  linear_options.act = bt::nn::Activation::kTanh;
  linear_options.weight_init = bt::nn::Init::fan_in_uniform(bt::nn::kGainTanh);
  linear_options.bias_init = bt::nn::Init::zeros();
  linear_options.weight_name = "w";
  linear_options.bias_name = "b";
  bt::nn::LayerNormOptions norm_options;
  norm_options.width = 4U;
  bt::nn::AttentionOptions attention_options;
  attention_options.width = 4U;
  attention_options.heads = 2U;
  attention_options.weight_init = bt::nn::Init::fan_in_normal(bt::nn::kGainLinear);
  attention_options.proj_init = bt::nn::Init::uniform(-0.1, 0.1);
  bool ok = embedding.create(tp, embedding_options, rng);
  ok = ok && linear.create(tp, linear_options, rng);
  ok = ok && norm.create(tp, norm_options, rng);
  ok = ok && attention.create(tp, attention_options, rng);
  const bt::View params{embedding.params().first,
                            static_cast<bt::Index>(embedding.params().count + linear.params().count +
                                                   norm.params().count + attention.params().count)};
  ok = ok && bt::nn::is_recorded(tp, params) && (params.count == tp.size());
  const std::array<T, 4U> target = {T(0), T(1), T(0), T(1)};
  const T mean_loss = bt::nn::serial_batch(tp, params, 2U, [&](bt::Tape<T>& t, std::size_t i) {
    const bt::View x = embedding.row(static_cast<bt::Index>(i));
    const bt::View h = bt::nn::add(t, linear.forward(t, x), x);
    const std::array<bt::View, 2U> steps = {norm.forward(t, h), h};
    std::array<bt::View, 2U> attended = {bt::kNoView, bt::kNoView};
    static_cast<void>(attention.forward(t, steps.data(), 2U, attended.data()));
    const bt::Value<T> ce = bt::nn::cross_entropy(t, attended[1U], 1U);
    return ce + bt::nn::mse(t, attended[0U], target.data());
  });
  ok = ok && (mean_loss >= T(0));  // false for NaN
  static std::array<T, 2U * kNodes> state{};
  const std::array<bt::nn::OptimizerKind, 4U> kinds = {bt::nn::OptimizerKind::kSgd, bt::nn::OptimizerKind::kMomentum,
                                           bt::nn::OptimizerKind::kAdam, bt::nn::OptimizerKind::kAdamW};
  for (const bt::nn::OptimizerKind kind : kinds) {
    bt::nn::OptimizerOptions<T> config;
    config.kind = kind;
    bt::nn::Optimizer<T> optimizer(config, state.data(), state.size());
    optimizer.set_lr(T(0.01));
    static_cast<void>(bt::nn::clip_gradient_norm(tp, params, T(1)));
    const bt::Status stepped = optimizer.step(tp, params);
    ok = ok && (stepped == bt::Status::kOk) && optimizer.ready() && (optimizer.steps() == 1U) &&
         (optimizer.max_parameters() >= params.count) && (bt::nn::gradient_norm(tp, params) >= T(0));
  }
  bt::nn::OptimizerOptions<T> sgd;
  bt::nn::Optimizer<T> stateless(sgd);
  ok = ok && (stateless.step(tp, bt::kNoView) == bt::Status::kInvalidArgument);
  return ok && (tp.status() == bt::Status::kOk);
}

constexpr bt::nn::MlpOptions mlp_config() {
  bt::nn::MlpOptions c;
  c.vocab = 5U;
  c.context = 3U;
  c.embed = 4U;
  c.hidden = 8U;
  return c;
}

constexpr bt::nn::GptOptions gpt_config() {
  bt::nn::GptOptions c;
  c.vocab = 5U;
  c.block = 3U;
  c.width = 4U;
  c.heads = 2U;
  c.layers = 1U;
  return c;
}

template <class T>
bool build_models() {
  constexpr bt::nn::MemoryPlan kMlp = bt::nn::MakemoreMlp<T>::plan(mlp_config(), bt::nn::OptimizerKind::kAdam);
  constexpr bt::nn::MemoryPlan kGpt = bt::nn::Gpt<T>::plan(gpt_config(), bt::nn::OptimizerKind::kSgd);
  constexpr std::size_t kMlpNodes = kMlp.nodes;
  constexpr std::size_t kMlpSlots = kMlp.slots;
  constexpr std::size_t kMlpParams = kMlp.parameters;
  constexpr std::size_t kGptNodes = kGpt.nodes;
  constexpr std::size_t kGptSlots = kGpt.slots;
  constexpr std::size_t kGptParams = kGpt.parameters;
  static bt::FixedTape<T, kMlpNodes, kMlpSlots, kMlpParams> mlp_tape;
  static bt::FixedTape<T, kGptNodes, kGptSlots, kGptParams> gpt_tape;
  bt::nn::Rng rng(3U);
  bt::nn::MakemoreMlp<T> mlp;
  const std::array<std::uint8_t, 3U> context = {1U, 2U, 3U};
  const bool mlp_ok = mlp.create(mlp_tape, mlp_config(), rng);
  const bt::Value<T> mlp_loss = mlp.loss(mlp_tape, context.data(), 4U);
  bt::nn::Gpt<T> gpt;
  const std::array<std::uint8_t, 3U> targets = {2U, 3U, 4U};
  const bool gpt_ok = gpt.create(gpt_tape, gpt_config(), rng);
  const bt::Value<T> gpt_loss = gpt.loss(gpt_tape, context.data(), targets.data(), 3U);
  return mlp_ok && gpt_ok && (mlp_tape.backward(mlp_loss) == bt::Status::kOk) &&
         (gpt_tape.backward(gpt_loss) == bt::Status::kOk) && (gpt.params().count == kGptParams) &&
         (mlp.params().count == kMlpParams);
}

// The other layers and every loss, as a product calls them: 1-D and 2-D
// convolutions, average and max pooling, a GRU, a frozen layer over FP32
// weights in flash, and mse, huber, l1, binary and softmax cross-entropy on
// their outputs, then one backward pass. A header finding that appears only
// when one of them is instantiated is found here.
template <class T>
bool more_layers(bt::Tape<T>& tp) {
  bt::nn::Rng rng(11U);
  bt::nn::Conv1dOptions c1;
  c1.in_channels = 2U;
  c1.out_channels = 2U;
  c1.kernel = 2U;
  c1.act = bt::nn::Activation::kRelu;
  bt::nn::Conv2dOptions c2;
  c2.in_channels = 1U;
  c2.out_channels = 2U;
  c2.kernel_h = 2U;
  c2.kernel_w = 2U;
  c2.act = bt::nn::Activation::kSigmoid;
  bt::nn::GruOptions g;
  g.input = 2U;
  g.hidden = 2U;
  bt::nn::Conv1d<T> conv1;
  bt::nn::Conv2d<T> conv2;
  bt::nn::Gru<T> gru;
  bool ok = conv1.create(tp, c1, rng) && conv2.create(tp, c2, rng) && gru.create(tp, g, rng);
  // 4 positions of 2 channels, and a 3 x 3 image of one channel.
  const std::array<T, 9U> in = {T(0.5), T(-0.25), T(1), T(0.75), T(-1), T(0.125), T(0.25), T(-0.5), T(2)};
  const bt::View x1 = bt::record_view(tp, 8U, [&](bt::Index k) { return tp.input(in[k]); });
  const bt::View x2 = bt::record_view(tp, 9U, [&](bt::Index k) { return tp.input(in[k]); });
  const bt::View y1 = conv1.forward(tp, x1, 4U);  // 3 positions x 2 channels
  const bt::View y2 = conv2.forward(tp, x2, bt::nn::Size2d{3U, 3U});  // 2 x 2 x 2 channels
  bt::nn::Pool1dOptions p1;
  p1.channels = 2U;
  p1.kernel = 2U;
  p1.stride = 1U;
  bt::nn::Pool2dOptions p2;
  p2.channels = 2U;
  p2.kernel_h = 2U;
  p2.kernel_w = 2U;
  const bt::View avg1 = bt::nn::AvgPool1d<T>{p1}.forward(tp, y1, 3U);  // 2 x 2
  const bt::View max1 = bt::nn::MaxPool1d<T>{p1}.forward(tp, y1, 3U);
  const bt::View avg2 = bt::nn::AvgPool2d<T>{p2}.forward(tp, y2, bt::nn::Size2d{2U, 2U});  // 1 x 1 x 2
  const bt::View max2 = bt::nn::MaxPool2d<T>{p2}.forward(tp, y2, bt::nn::Size2d{2U, 2U});
  // The GRU over the two pooled positions, from a zero state.
  const std::array<bt::View, 2U> steps = {bt::View{avg1.first, 2U}, bt::View{avg1.first + 2U, 2U}};
  std::array<bt::View, 2U> hs = {bt::kNoView, bt::kNoView};
  const bt::View h0 = bt::record_view(tp, 2U, [&](bt::Index) { return tp.input(T(0)); });
  ok = ok && gru.forward(tp, steps.data(), 2U, h0, hs.data());
  static constexpr std::array<float, 4U> kW = {0.5F, -0.25F, 0.125F, 1.0F};
  static constexpr std::array<float, 2U> kB = {0.0F, 0.25F};
  const bt::nn::FrozenLinear<T> frozen{{bt::frozen_f32(kW.data()), 2U, 2U}, {bt::frozen_f32(kB.data()), 2U},
                                       bt::nn::Activation::kTanh};
  ok = ok && (frozen.forward(tp, hs[0U]).count == 2U);
  const bt::View f = frozen.template forward<bt::nn::Activation::kTanh>(tp, hs[1U]);
  const std::array<T, 4U> target = {T(0), T(1), T(0.5), T(0.25)};
  const bt::Value<T> loss = bt::nn::mse(tp, max1, target.data()) + bt::nn::huber(tp, avg1, target.data(), T(0.5)) +
                            bt::nn::l1(tp, max2, target.data()) +
                            bt::nn::binary_cross_entropy_with_logits(tp, f, target.data()) +
                            bt::nn::cross_entropy(tp, avg2, 1U);
  tp.zero_grad();
  ok = ok && loss.valid() && (tp.backward(loss) == bt::Status::kOk) && bt::all_finite(tp);
  return ok && (tp.status() == bt::Status::kOk);
}

// Checkpoint of a tape's nodes, and the Graphviz export.
template <class T>
bool save_and_export(bt::Tape<T>& tp) {
  static std::array<std::uint8_t, 65536U> bytes{};
  bt::MemoryStream stream{bytes.data(), bytes.size(), 0U, 0U};
  const bt::Index n = static_cast<bt::Index>(tp.size());
  bool ok = bt::save_nodes(tp, 0U, n, true, bt::memory_sink(&stream)) == bt::Status::kOk;
  ok = ok && (bt::load_nodes(tp, 0U, n, true, bt::memory_source(&stream)) == bt::Status::kOk);
  static std::array<std::uint8_t, 65536U> scratch{};
  stream.position = 0U;
  ok = ok && (bt::load_nodes(tp, 0U, n, true, bt::memory_source(&stream), scratch.data(), scratch.size()) ==
              bt::Status::kOk);
  const std::array<bt::Section, 2U> sections = {bt::node_values(tp, 0U, n), bt::node_grads(tp, 0U, n)};
  bt::MemoryStream second{bytes.data(), bytes.size(), 0U, 0U};
  ok = ok && (bt::save_checkpoint(bt::memory_sink(&second), bt::ScalarKindOf<T>::value, sections.data(),
                                  sections.size()) == bt::Status::kOk);
  ok = ok && (bt::verify_checkpoint(bt::memory_source(&second), bt::ScalarKindOf<T>::value, sections.data(),
                                    sections.size()) ==
              bt::Status::kOk);
  second.position = 0U;
  ok = ok && (bt::load_checkpoint(bt::memory_source(&second), bt::ScalarKindOf<T>::value, sections.data(),
                                  sections.size(), scratch.data(), scratch.size()) == bt::Status::kOk);
  second.position = 0U;
  ok = ok && (bt::load_checkpoint(bt::memory_source(&second), bt::ScalarKindOf<T>::value, sections.data(),
                                  sections.size()) == bt::Status::kOk);
  ok = ok && (bt::checkpoint_bytes(sections.data(), sections.size()) == second.size);
  bt::MemoryStream dot{bytes.data(), bytes.size(), 0U, 0U};
  const bt::Value<T> root(&tp, n - 1U);
  ok = ok && (bt::write_graphviz(tp, root, bt::memory_sink(&dot)) == bt::Status::kOk);
  return ok;
}

template <class T>
bool exercise() {
  static bt::FixedTape<T, kNodes> tp;
  bool ok = record_ops<T>(tp);
  ok = save_and_export<T>(tp) && ok;
  tp.reset();
  ok = train_layers<T>(tp) && ok;
  tp.reset();
  ok = more_layers<T>(tp) && ok;
  return build_models<T>() && ok;
}

template <class L>
bool exercise_lanes() {
  static bt::FixedTape<L, 512U> tp;
  return record_ops<L>(tp);
}

// Lanes from one value per sample, and their sum.
bool lanes_from_samples() {
  const LanesF f = LanesF::of({1.0F, 2.0F, 3.0F, 4.0F});
  const LanesD d = LanesD::of({1.0, 2.0});
  return (f.sum() > 9.5F) && (d.sum() > 2.5);
}

}  // namespace

int main() {
  const bool ok = exercise<float>() && exercise<double>() && exercise_lanes<LanesF>() && exercise_lanes<LanesD>() &&
                  lanes_from_samples();
  return ok ? 0 : 1;
}
