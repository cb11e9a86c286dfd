// SPDX-License-Identifier: Apache-2.0
// The one translation unit that instantiates libburtorch's templates.
#include "model.hpp"

#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "crc16.h"

namespace fw {
namespace {

namespace bt = burtorch;
namespace nn = burtorch::nn;

// A fully connected layer: sizes, activation, and the initialisation for its gain.
constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act, double gain) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = act;
  o.weight_init = nn::Init::fan_in_uniform(gain);
  o.bias_init = nn::Init::zeros();
  return o;
}
constexpr nn::LinearOptions hidden_options() noexcept { return layer(2U, 4U, nn::Activation::kTanh, nn::kGainTanh); }
constexpr nn::LinearOptions output_options() noexcept {
  return layer(4U, 1U, nn::Activation::kSigmoid, nn::kGainSigmoid);
}

constexpr std::size_t kParameters =
    nn::Linear<float>::parameters(hidden_options()) + nn::Linear<float>::parameters(output_options());
// One sample: 2 input leaves, the two layers, the loss (mse of one output: 2 nodes).
constexpr std::size_t kSampleNodes =
    2U + nn::Linear<float>::nodes(hidden_options()) + nn::Linear<float>::nodes(output_options()) + 2U;
constexpr std::size_t kSampleSlots =
    nn::Linear<float>::view_slots(hidden_options()) + nn::Linear<float>::view_slots(output_options());
constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(kParameters, kSampleNodes, kSampleSlots, nn::OptimizerKind::kSgd);

struct Model {
  bt::FixedTape<float, kPlan.nodes, kPlan.slots, kPlan.parameters> tape;
  nn::Linear<float> hidden;
  nn::Linear<float> output;
  bt::Mark sample_start{};
  bool ready = false;
};

Model& model() noexcept {
  static Model instance;
  return instance;
}

}  // namespace

bool model_init() noexcept {
  Model& m = model();
  nn::Rng rng(11U);
  m.ready = m.hidden.create(m.tape, hidden_options(), rng) && m.output.create(m.tape, output_options(), rng);
  m.sample_start = m.tape.mark();
  return m.ready;
}

float model_train_step(float a, float b, float target) noexcept {
  Model& m = model();
  if (!m.ready) {
    return -1.0F;
  }
  m.tape.zero_grad();
  const bt::Value<float> x0 = m.tape.leaf(a);
  static_cast<void>(m.tape.leaf(b));
  const bt::View h = m.hidden.forward(m.tape, bt::View{x0.index(), 2U});
  const bt::View y = m.output.forward(m.tape, h);
  const bt::Value<float> loss = nn::mse(m.tape, y, &target);
  const float value_of_loss = loss.value();
  bool ok = m.tape.backward(loss) == bt::Status::kOk;
  nn::OptimizerOptions<float> config;
  config.lr = 0.5F;
  nn::Optimizer<float> sgd(config);
  const bt::View params{m.hidden.params().first,
                        static_cast<bt::Index>(m.hidden.params().count + m.output.params().count)};
  ok = ok && (sgd.step(m.tape, params) == bt::Status::kOk);
  ok = ok && (m.tape.rewind(m.sample_start) == bt::Status::kOk);
  return ok ? value_of_loss : -1.0F;
}

std::uint16_t model_checksum() noexcept {
  Model& m = model();
  std::array<float, kParameters> values{};
  for (std::size_t i = 0U; i < kParameters; ++i) {
    values[i] = m.tape.value(static_cast<bt::Index>(i));
  }
  std::array<std::uint8_t, sizeof(values)> bytes{};
  static_assert(sizeof(values) == sizeof(bytes), "byte view of the parameters");
  static_cast<void>(std::memcpy(bytes.data(), values.data(), sizeof(values)));
  return fw_crc16(bytes.data(), bytes.size());
}

}  // namespace fw
